// SPDX-License-Identifier: MIT
// A C++ program outside cw's tree, built against an installed cw: another
// thread completes a user event while the main thread waits in cw_wait.
#include <cw.h>

#include <chrono>
#include <cstdio>
#include <thread>

int main() {
    cl_platform_id platforms[8];
    cl_uint np = 0;
    cl_device_id dev = nullptr;
    clGetPlatformIDs(8, platforms, &np);
    for (cl_uint i = 0; i < np && !dev; ++i)
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) != CL_SUCCESS)
            dev = nullptr;
    if (!dev) {
        std::fprintf(stderr, "consumer++: no OpenCL device\n");
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    cl_event ev = clCreateUserEvent(ctx, &err);
    std::thread completer([ev] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        clSetUserEventStatus(ev, CL_COMPLETE);
    });
    cw_wait_options o = {};
    o.strategy = CW_STRATEGY_COOPERATIVE;
    cl_int status = 1;
    int rc = cw_wait(ev, &o, &status);
    completer.join();
    std::printf("cw %s (headers %s), C++ %ld: %s wait: %s, status %d\n", cw_version_string(),
                CW_VERSION_STRING, static_cast<long>(__cplusplus), cw_strategy_name(o.strategy),
                cw_strerror(rc), status);
    clReleaseEvent(ev);
    clReleaseContext(ctx);
    return rc == CW_OK && status == CL_COMPLETE && cw_version() / 10000 == CW_VERSION_MAJOR ? 0 : 1;
}
