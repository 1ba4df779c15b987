/* SPDX-License-Identifier: MIT */
/*
 * OpenCL host set-up shared by cw's tests, example and benchmark: pick a
 * platform, build the kernels in kernels/, and enqueue saxpy or the
 * compute-bound kernel. It never waits: waiting is cw's job.
 */
#ifndef CW_CLHOST_H
#define CW_CLHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <CL/cl.h>

typedef struct cwh {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel saxpy;
    cl_kernel busy;
    cl_kernel latency;
    char platform_name[128];
    char platform_version[128];
    char device_name[256];
    char device_version[128];
    char driver_version[128];
} cwh;

/*
 * Open the first platform whose name contains `platform` (case-insensitive;
 * NULL: $CW_PLATFORM, else "Portable Computing Language", else the first
 * platform with a device), its first device, a context, an in-order queue
 * (with profiling when asked) and the kernels. On failure returns the OpenCL
 * error (or CL_INVALID_PLATFORM when no platform matches) and writes a
 * message to `msg`.
 */
cl_int cwh_open(cwh *h, const char *platform, bool profiling, char *msg, size_t msglen);
void cwh_close(cwh *h);

/*
 * saxpy over n floats: x[i] = i, y[i] = 1, so after k launches with factor a,
 * y[i] = 1 + k*a*i. The device accumulates in float: past a few thousand
 * launches with one `a` rounding exceeds the check's tolerance, so long runs
 * alternate a and -a (cw-bench does) and check with launches % 2.
 */
typedef struct cwh_saxpy {
    cl_mem x, y;
    cl_uint n;
} cwh_saxpy;

cl_int cwh_saxpy_init(cwh *h, cwh_saxpy *s, cl_uint n);
/* Enqueues without flushing. */
cl_int cwh_saxpy_enqueue(cwh *h, cwh_saxpy *s, float a, cl_uint num_wait, const cl_event *wait,
                         cl_event *event);
/* Reads y back and counts elements that differ from 1 + launches*a*i (relative 1e-5). */
cl_int cwh_saxpy_check(cwh *h, cwh_saxpy *s, float a, unsigned launches, size_t *mismatches);
void cwh_saxpy_free(cwh_saxpy *s);

/* busy.cl: `global` work-items, each running `iters` dependent FMAs. */
typedef struct cwh_busy {
    cl_mem out;
    size_t global;
} cwh_busy;

cl_int cwh_busy_init(cwh *h, cwh_busy *b, size_t global);
cl_int cwh_busy_enqueue(cwh *h, cwh_busy *b, cl_uint iters, cl_uint num_wait, const cl_event *wait,
                        cl_event *event);
/* Counts work-items whose result is not 2.0f (valid for iters >= 64). */
cl_int cwh_busy_check(cwh *h, cwh_busy *b, size_t *mismatches);
void cwh_busy_free(cwh_busy *b);

/* latency.cl: one work-item that adds 1 to a counter. */
typedef struct cwh_latency {
    cl_mem count;
} cwh_latency;

cl_int cwh_latency_init(cwh *h, cwh_latency *l);
cl_int cwh_latency_enqueue(cwh *h, cwh_latency *l, cl_uint num_wait, const cl_event *wait,
                           cl_event *event);
/* Reads the counter back; *mismatches is 1 when it is not `launches`, else 0. */
cl_int cwh_latency_check(cwh *h, cwh_latency *l, unsigned launches, size_t *mismatches);
void cwh_latency_free(cwh_latency *l);

/* Kernel run time from event profiling, in ns (queue opened with profiling). */
cl_int cwh_event_runtime_ns(cl_event event, cl_ulong *ns);

/* Clocks of the measuring tools, in µs: CLOCK_MONOTONIC; the CPU time of
 * RUSAGE_THREAD or RUSAGE_SELF; and the calling thread's time on a CPU or
 * waiting for one (Linux schedstat; its CPU time where that is missing). A
 * spinning thread is runnable all the time however loaded the machine is,
 * and a blocked one is not, so the last tells a spin from a block where
 * CPU time, on a machine whose cores are taken, may not. */
double cwh_now_us(void);
double cwh_cpu_us(int who);
double cwh_runnable_us(void);

#endif
