/* SPDX-License-Identifier: MIT */
/*
 * clWaitForEvents on an event that is already complete, N times: the case
 * most waits under pyopencl's tests are (docs/cw-run-internals.md, "Already complete").
 * Prints the calling thread's CPU time per call, so that a run natively and
 * one under cw-run compare the interposed call's cost alone; with N = 0 it
 * is the set-up only (tests/preload/fastpath.sh subtracts it from
 * callgrind's instruction counts).
 * Usage: complete_waits N
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    char *end = NULL;
    long n = argc == 2 ? strtol(argv[1], &end, 10) : -1;
    if (n < 0 || !end || *end) {
        fprintf(stderr, "usage: complete_waits N\n");
        return 2;
    }
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS) {
        fprintf(stderr, "complete_waits: no OpenCL device\n");
        return 1;
    }
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &err);
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096, NULL, &err);
    int pattern = 1;
    cl_event ev;
    if (clEnqueueFillBuffer(q, m, &pattern, sizeof pattern, 0, 4096, 0, NULL, &ev) != CL_SUCCESS ||
        clFinish(q) != CL_SUCCESS) {
        fprintf(stderr, "complete_waits: the fill failed\n");
        return 1;
    }
    long bad = 0;
    double t0 = thread_cpu_ns();
    for (long i = 0; i < n; ++i)
        bad += clWaitForEvents(1, &ev) != CL_SUCCESS;
    double t1 = thread_cpu_ns();
    printf("calls %ld failed %ld cpu_ns_per_call %.1f\n", n, bad, n ? (t1 - t0) / n : 0.0);
    clReleaseEvent(ev);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
    return bad != 0;
}
