/* SPDX-License-Identifier: MIT */
/*
 * One default cw_wait (auto; a user event, so no estimate and no spin: it
 * parks at once, as cooperative does) on an event another thread completes
 * 10 ms later, before the first failed-command check is due. Only this
 * thread's calls are traced (trace_on, hook.c). An untraced wait that times
 * out comes first, so that the platform's one probe (src/driver.c) is not
 * counted as part of the wait.
 */
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "cw.h"

void trace_on(const char *path, int on);
static cl_event ev;

static void *complete_later(void *arg) {
    (void)arg;
    usleep(10000);
    clSetUserEventStatus(ev, CL_COMPLETE);
    return NULL;
}

int main(int argc, char **argv) {
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    if (argc != 2 || clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
        return 2;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_event first = clCreateUserEvent(ctx, &e);
    cw_wait_options once = {.timeout_us = 1000};
    cw_wait(first, &once, NULL);
    clSetUserEventStatus(first, CL_COMPLETE);
    cw_event_forget(first);
    clReleaseEvent(first);
    ev = clCreateUserEvent(ctx, &e);
    pthread_t t;
    pthread_create(&t, NULL, complete_later, NULL);
    cl_int st;
    trace_on(argv[1], 1);
    int rc = cw_wait(ev, NULL, &st);
    trace_on(argv[1], 0);
    pthread_join(t, NULL);
    printf("cw_wait: %d, status %d\n", rc, st);
    return rc;
}
