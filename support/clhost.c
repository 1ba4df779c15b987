/* SPDX-License-Identifier: MIT */
#include "clhost.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The source tree's kernels/, for programs run from the build tree. */
#ifndef CW_KERNEL_DIR
#define CW_KERNEL_DIR "kernels"
#endif
/* Where an installed program finds the installed kernels: relative to the
 * directory of its executable (bin/ -> share/cw/kernels), so that a prefix
 * can move (cmake --install --prefix DIR, a copied tree); absolute when the
 * install directories were given absolute. */
#ifndef CW_KERNEL_REL
#define CW_KERNEL_REL "../share/cw/kernels"
#endif

static bool contains_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n)
            return true;
    }
    return n == 0;
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The kernels' directory: $CW_KERNEL_DIR when set; else the installed one
 * beside this executable when it exists; else the source tree's. One
 * directory for all of them, so that a program never mixes an installed
 * kernel with a source tree's. */
static void kernel_dir(char *out, size_t len) {
    const char *env = getenv("CW_KERNEL_DIR");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    if (CW_KERNEL_REL[0] == '/') {
        if (is_dir(CW_KERNEL_REL)) {
            snprintf(out, len, "%s", CW_KERNEL_REL);
            return;
        }
    } else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
        if (slash) {
            *slash = '\0';
            char dir[PATH_MAX];
            int w = snprintf(dir, sizeof dir, "%s/%s", exe, CW_KERNEL_REL);
            /* Resolved, so that messages name .../share/cw/kernels, not bin/../. */
            if (w > 0 && (size_t)w < sizeof dir && is_dir(dir) && realpath(dir, exe)) {
                snprintf(out, len, "%s", exe);
                return;
            }
        }
    }
    snprintf(out, len, "%s", CW_KERNEL_DIR);
}

static char *read_kernel(const char *dir, const char *name, char *msg, size_t msglen) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, msglen,
                 "cannot open the kernel %s: %s (set CW_KERNEL_DIR to the folder "
                 "of the *.cl files)",
                 path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)len + 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (!buf) {
        snprintf(msg, msglen, "cannot read %s", path);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static cl_int pick_platform(cwh *h, const char *want, char *msg, size_t msglen) {
    cl_platform_id ids[16];
    cl_uint count = 0;
    cl_int err = clGetPlatformIDs(16, ids, &count);
    if (err != CL_SUCCESS || count == 0) {
        snprintf(msg, msglen, "no OpenCL platform (clGetPlatformIDs: %d)", err);
        return err != CL_SUCCESS ? err : CL_INVALID_PLATFORM;
    }
    if (count > 16)
        count = 16;
    if (!want)
        want = getenv("CW_PLATFORM");
    bool fallback = !want || !*want;
    const char *pattern = fallback ? "Portable Computing Language" : want;
    for (int pass = 0; pass < (fallback ? 2 : 1); ++pass) {
        for (cl_uint i = 0; i < count; ++i) {
            char name[128] = "";
            clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
            cl_uint ndev = 0;
            if (clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, 1, &h->device, &ndev) != CL_SUCCESS ||
                ndev == 0)
                continue;
            if (pass == 1 || contains_nocase(name, pattern)) {
                h->platform = ids[i];
                return CL_SUCCESS;
            }
        }
    }
    snprintf(msg, msglen, "no OpenCL platform with a device matches \"%s\"", pattern);
    return CL_INVALID_PLATFORM;
}

cl_int cwh_open(cwh *h, const char *platform, bool profiling, char *msg, size_t msglen) {
    memset(h, 0, sizeof *h);
    cl_int err = pick_platform(h, platform, msg, msglen);
    if (err != CL_SUCCESS)
        return err;
    clGetPlatformInfo(h->platform, CL_PLATFORM_NAME, sizeof h->platform_name, h->platform_name,
                      NULL);
    clGetPlatformInfo(h->platform, CL_PLATFORM_VERSION, sizeof h->platform_version,
                      h->platform_version, NULL);
    clGetDeviceInfo(h->device, CL_DEVICE_NAME, sizeof h->device_name, h->device_name, NULL);
    clGetDeviceInfo(h->device, CL_DEVICE_VERSION, sizeof h->device_version, h->device_version,
                    NULL);
    clGetDeviceInfo(h->device, CL_DRIVER_VERSION, sizeof h->driver_version, h->driver_version,
                    NULL);

    h->context = clCreateContext(NULL, 1, &h->device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        snprintf(msg, msglen, "clCreateContext: %d", err);
        goto fail;
    }
    h->queue = clCreateCommandQueue(h->context, h->device,
                                    profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err != CL_SUCCESS) {
        snprintf(msg, msglen, "clCreateCommandQueue: %d", err);
        goto fail;
    }
    static const char *const files[3] = {"saxpy.cl", "busy.cl", "latency.cl"};
    char *src[3] = {NULL, NULL, NULL};
    char dir[PATH_MAX];
    kernel_dir(dir, sizeof dir);
    bool read_all = true;
    for (int i = 0; i < 3 && read_all; ++i)
        read_all = (src[i] = read_kernel(dir, files[i], msg, msglen)) != NULL;
    if (read_all)
        h->program = clCreateProgramWithSource(h->context, 3, (const char **)src, NULL, &err);
    for (int i = 0; i < 3; ++i)
        free(src[i]);
    if (!read_all) {
        err = CL_INVALID_VALUE;
        goto fail;
    }
    if (err != CL_SUCCESS) {
        snprintf(msg, msglen, "clCreateProgramWithSource: %d", err);
        goto fail;
    }
    err = clBuildProgram(h->program, 1, &h->device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[2048] = "";
        clGetProgramBuildInfo(h->program, h->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        snprintf(msg, msglen, "clBuildProgram: %d: %s", err, log);
        goto fail;
    }
    h->saxpy = clCreateKernel(h->program, "saxpy", &err);
    if (err == CL_SUCCESS)
        h->busy = clCreateKernel(h->program, "busy", &err);
    if (err == CL_SUCCESS)
        h->latency = clCreateKernel(h->program, "latency", &err);
    if (err != CL_SUCCESS) {
        snprintf(msg, msglen, "clCreateKernel: %d", err);
        goto fail;
    }
    return CL_SUCCESS;
fail:
    cwh_close(h);
    return err;
}

void cwh_close(cwh *h) {
    if (h->queue)
        clFinish(h->queue);
    if (h->latency)
        clReleaseKernel(h->latency);
    if (h->busy)
        clReleaseKernel(h->busy);
    if (h->saxpy)
        clReleaseKernel(h->saxpy);
    if (h->program)
        clReleaseProgram(h->program);
    if (h->queue)
        clReleaseCommandQueue(h->queue);
    if (h->context)
        clReleaseContext(h->context);
    memset(h, 0, sizeof *h);
}

cl_int cwh_saxpy_init(cwh *h, cwh_saxpy *s, cl_uint n) {
    cl_int err;
    memset(s, 0, sizeof *s);
    s->n = n;
    float *host = malloc(sizeof(float) * n);
    if (!host)
        return CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; i < n; ++i)
        host[i] = (float)i;
    s->x = clCreateBuffer(h->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * n,
                          host, &err);
    if (err == CL_SUCCESS) {
        for (cl_uint i = 0; i < n; ++i)
            host[i] = 1.0f;
        s->y = clCreateBuffer(h->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              sizeof(float) * n, host, &err);
    }
    free(host);
    if (err != CL_SUCCESS)
        cwh_saxpy_free(s);
    return err;
}

cl_int cwh_saxpy_enqueue(cwh *h, cwh_saxpy *s, float a, cl_uint num_wait, const cl_event *wait,
                         cl_event *event) {
    cl_int err = clSetKernelArg(h->saxpy, 0, sizeof a, &a);
    err |= clSetKernelArg(h->saxpy, 1, sizeof s->x, &s->x);
    err |= clSetKernelArg(h->saxpy, 2, sizeof s->y, &s->y);
    err |= clSetKernelArg(h->saxpy, 3, sizeof s->n, &s->n);
    if (err != CL_SUCCESS)
        return CL_INVALID_KERNEL_ARGS;
    size_t global = s->n;
    return clEnqueueNDRangeKernel(h->queue, h->saxpy, 1, NULL, &global, NULL, num_wait, wait,
                                  event);
}

cl_int cwh_saxpy_check(cwh *h, cwh_saxpy *s, float a, unsigned launches, size_t *mismatches) {
    float *y = malloc(sizeof(float) * s->n);
    if (!y)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err =
        clEnqueueReadBuffer(h->queue, s->y, CL_TRUE, 0, sizeof(float) * s->n, y, 0, NULL, NULL);
    size_t bad = 0;
    for (cl_uint i = 0; err == CL_SUCCESS && i < s->n; ++i) {
        /* Accumulated in float on the device, so compare with a relative bound. */
        double want = 1.0 + (double)launches * a * (double)i;
        if (fabs(y[i] - want) > 1e-5 * fabs(want) + 1e-6 * launches)
            ++bad;
    }
    free(y);
    *mismatches = bad;
    return err;
}

void cwh_saxpy_free(cwh_saxpy *s) {
    if (s->x)
        clReleaseMemObject(s->x);
    if (s->y)
        clReleaseMemObject(s->y);
    s->x = s->y = NULL;
}

cl_int cwh_busy_init(cwh *h, cwh_busy *b, size_t global) {
    cl_int err;
    b->global = global;
    b->out = clCreateBuffer(h->context, CL_MEM_WRITE_ONLY, sizeof(float) * global, NULL, &err);
    return err;
}

cl_int cwh_busy_enqueue(cwh *h, cwh_busy *b, cl_uint iters, cl_uint num_wait, const cl_event *wait,
                        cl_event *event) {
    cl_int err = clSetKernelArg(h->busy, 0, sizeof b->out, &b->out);
    err |= clSetKernelArg(h->busy, 1, sizeof iters, &iters);
    if (err != CL_SUCCESS)
        return CL_INVALID_KERNEL_ARGS;
    return clEnqueueNDRangeKernel(h->queue, h->busy, 1, NULL, &b->global, NULL, num_wait, wait,
                                  event);
}

cl_int cwh_busy_check(cwh *h, cwh_busy *b, size_t *mismatches) {
    float *out = malloc(sizeof(float) * b->global);
    if (!out)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err = clEnqueueReadBuffer(h->queue, b->out, CL_TRUE, 0, sizeof(float) * b->global, out,
                                     0, NULL, NULL);
    size_t bad = 0;
    for (size_t i = 0; err == CL_SUCCESS && i < b->global; ++i)
        if (fabsf(out[i] - 2.0f) > 1e-6f)
            ++bad;
    free(out);
    *mismatches = bad;
    return err;
}

void cwh_busy_free(cwh_busy *b) {
    if (b->out)
        clReleaseMemObject(b->out);
    b->out = NULL;
}

cl_int cwh_latency_init(cwh *h, cwh_latency *l) {
    cl_uint zero = 0;
    cl_int err;
    l->count = clCreateBuffer(h->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero,
                              &zero, &err);
    return err;
}

cl_int cwh_latency_enqueue(cwh *h, cwh_latency *l, cl_uint num_wait, const cl_event *wait,
                           cl_event *event) {
    if (clSetKernelArg(h->latency, 0, sizeof l->count, &l->count) != CL_SUCCESS)
        return CL_INVALID_KERNEL_ARGS;
    size_t global = 1;
    return clEnqueueNDRangeKernel(h->queue, h->latency, 1, NULL, &global, NULL, num_wait, wait,
                                  event);
}

cl_int cwh_latency_check(cwh *h, cwh_latency *l, unsigned launches, size_t *mismatches) {
    cl_uint count = 0;
    cl_int err =
        clEnqueueReadBuffer(h->queue, l->count, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL);
    *mismatches = err == CL_SUCCESS && count != (cl_uint)launches;
    return err;
}

void cwh_latency_free(cwh_latency *l) {
    if (l->count)
        clReleaseMemObject(l->count);
    l->count = NULL;
}

cl_int cwh_event_runtime_ns(cl_event event, cl_ulong *ns) {
    cl_ulong start = 0, end = 0;
    cl_int err =
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    if (err == CL_SUCCESS)
        err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    *ns = end > start ? end - start : 0;
    return err;
}

double cwh_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double cwh_cpu_us(int who) {
    struct rusage ru;
    getrusage(who, &ru);
    return ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 +
           ru.ru_stime.tv_usec;
}

double cwh_runnable_us(void) {
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long run = 0, wait = 0;
    int ok = f && fscanf(f, "%llu %llu", &run, &wait) == 2;
    if (f)
        fclose(f);
    return ok ? (run + wait) / 1e3 : cwh_cpu_us(RUSAGE_THREAD);
}
