/* SPDX-License-Identifier: MIT */
/*
 * A program that reaches OpenCL as OpenCV, hashcat and darktable do: it
 * opens libOpenCL.so.1 itself (RTLD_LOCAL) and calls every entry point
 * through a pointer from dlsym on that handle, so an LD_PRELOAD sees none of
 * its calls and only the OpenCL layer reaches them. It runs a kernel and
 * waits in each way cw-run handles (a blocking write, clFinish,
 * clWaitForEvents, a blocking read and a blocking map), and prints what it
 * computed; the test compares that with a native run (same-output.sh).
 * It links no OpenCL library (CMakeLists.txt). Built with CW_LINKED it is
 * the same program linked with libOpenCL, its table filled with the linked
 * functions, for the check that no call is interposed twice
 * (mechanism.sh).
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* The entry points, looked up by name: X(name). */
#define ENTRIES(X)                                                                                 \
    X(clGetPlatformIDs)                                                                            \
    X(clGetDeviceIDs)                                                                              \
    X(clCreateContext)                                                                             \
    X(clCreateCommandQueue)                                                                        \
    X(clCreateBuffer)                                                                              \
    X(clCreateProgramWithSource)                                                                   \
    X(clBuildProgram)                                                                              \
    X(clCreateKernel)                                                                              \
    X(clSetKernelArg)                                                                              \
    X(clEnqueueWriteBuffer)                                                                        \
    X(clEnqueueNDRangeKernel)                                                                      \
    X(clEnqueueReadBuffer)                                                                         \
    X(clEnqueueMapBuffer)                                                                          \
    X(clEnqueueUnmapMemObject)                                                                     \
    X(clWaitForEvents)                                                                             \
    X(clFinish)                                                                                    \
    X(clReleaseEvent)                                                                              \
    X(clReleaseMemObject)                                                                          \
    X(clReleaseKernel)                                                                             \
    X(clReleaseProgram)                                                                            \
    X(clReleaseCommandQueue)                                                                       \
    X(clReleaseContext)

#define FIELD(name) __typeof__(name) *name;
static struct { ENTRIES(FIELD) } cl;

static const char *src = "__kernel void scale(__global float *x, float a, uint rounds) {\n"
                         "    size_t i = get_global_id(0);\n"
                         "    float v = x[i];\n"
                         "    for (uint r = 0; r < rounds; ++r) v = v * a + 1.0f;\n"
                         "    x[i] = v;\n"
                         "}\n";

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cl_int e_ = (call);                                                                        \
        if (e_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "dlopen_prog: %s: %d\n", #call, e_);                                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void) {
#ifdef CW_LINKED
#define LINK(name) cl.name = name;
    ENTRIES(LINK)
#else
    void *h = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen_prog: %s\n", dlerror());
        return 1;
    }
#define LOOK_UP(name)                                                                              \
    if (!(cl.name = (__typeof__(name) *)dlsym(h, #name))) {                                        \
        fprintf(stderr, "dlopen_prog: no %s\n", #name);                                            \
        return 1;                                                                                  \
    }
    ENTRIES(LOOK_UP)
#endif
    cl_platform_id platform;
    cl_device_id device;
    CHECK(cl.clGetPlatformIDs(1, &platform, NULL));
    CHECK(cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_int err;
    cl_context ctx = cl.clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = cl.clCreateCommandQueue(ctx, device, 0, &err);
    CHECK(err);
    cl_program prog = cl.clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(cl.clBuildProgram(prog, 1, &device, "", NULL, NULL));
    cl_kernel k = cl.clCreateKernel(prog, "scale", &err);
    CHECK(err);
    enum { N = 4096 };
    static float host[N];
    for (int i = 0; i < N; ++i)
        host[i] = (float)(i % 97) / 97.0f;
    cl_mem buf = cl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
    CHECK(err);
    float a = 0.5f;
    cl_uint rounds = 2000;
    CHECK(cl.clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(cl.clSetKernelArg(k, 1, sizeof a, &a));
    CHECK(cl.clSetKernelArg(k, 2, sizeof rounds, &rounds));
    size_t global = N;
    double sum = 0;
    for (int round = 0; round < 20; ++round) {
        CHECK(cl.clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
        cl_event ev;
        CHECK(cl.clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev));
        if (round % 2) {
            CHECK(cl.clWaitForEvents(1, &ev));
        } else {
            CHECK(cl.clFinish(q));
        }
        CHECK(cl.clReleaseEvent(ev));
        CHECK(cl.clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
        float *m = cl.clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ, 0, sizeof(float), 0, NULL,
                                         NULL, &err);
        CHECK(err);
        sum += m[0];
        CHECK(cl.clEnqueueUnmapMemObject(q, buf, m, 0, NULL, NULL));
        CHECK(cl.clFinish(q));
    }
    for (int i = 0; i < N; ++i)
        sum += host[i];
    printf("dlopen_prog: 20 rounds, checksum %.3f\n", sum);
    cl.clReleaseMemObject(buf);
    cl.clReleaseKernel(k);
    cl.clReleaseProgram(prog);
    cl.clReleaseCommandQueue(q);
    cl.clReleaseContext(ctx);
    return 0;
}
