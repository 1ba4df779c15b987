/* SPDX-License-Identifier: MIT */
/*
 * A program outside cw's tree, built against an installed cw (find_package
 * or pkg-config): it waits on a user event with cw_wait and through a
 * notifier's descriptor, on the first OpenCL platform with a device.
 */
#include <poll.h>
#include <stdio.h>

#include <cw.h>

int main(void) {
    cl_platform_id platforms[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    clGetPlatformIDs(8, platforms, &np);
    for (cl_uint i = 0; i < np && !dev; ++i)
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    if (!dev) {
        fprintf(stderr, "consumer: no OpenCL device\n");
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_event ev = clCreateUserEvent(ctx, &err);

    /* The event-loop way: watch, complete, poll the descriptor, drain. */
    cw_notifier *n;
    if (cw_notifier_create(0, &n) != CW_OK || cw_notifier_watch(n, ev, 42, NULL) != CW_OK)
        return 1;
    clSetUserEventStatus(ev, CL_COMPLETE);
    struct pollfd p = {.fd = cw_notifier_fd(n), .events = POLLIN};
    cw_notifier_result r;
    if (poll(&p, 1, 10000) != 1 || cw_notifier_drain(n, &r, 1) != 1 || r.tag != 42 || r.rc != CW_OK)
        return 1;
    cw_notifier_destroy(n);

    /* The blocking way. */
    cw_wait_options o = {.strategy = CW_STRATEGY_COOPERATIVE};
    cl_int status = 1;
    int rc = cw_wait(ev, &o, &status);
    printf("cw %d.%d.%d: %s wait: %s, status %d\n", CW_VERSION_MAJOR, CW_VERSION_MINOR,
           CW_VERSION_PATCH, cw_strategy_name(o.strategy), cw_strerror(rc), status);
    clReleaseEvent(ev);
    clReleaseContext(ctx);
    return rc == CW_OK && status == CL_COMPLETE ? 0 : 1;
}
