/* SPDX-License-Identifier: MIT */
/*
 * A known sequence of interposed calls, for cw-run --trace
 * (tests/preload/trace.py): each of two threads, on a queue of its own
 * with profiling enabled, makes ROUNDS rounds of its own sequence, and
 * prints it, one call name a line, prefixed with its thread's index:
 *
 *   thread 0: blocking write, clWaitForEvents on a non-blocking read's
 *             event, blocking read, clFinish
 *   thread 1: clWaitForEvents on a non-blocking write's event, clFinish,
 *             blocking read
 *
 * No kernel, so no compiler: it runs in well under a second.
 * Usage: trace_calls [ROUNDS]   (default 5)
 *        trace_calls --pid      print the pid and exit, without OpenCL: a
 *                               program whose output differs every run
 *                               (tests/preload/compare.sh)
 */
#include <CL/cl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clprog.h"

enum { N = 1024 };

static cl_context ctx;
static cl_device_id device;
static int rounds = 5;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

/* The calls are printed after the thread's last one, in one go, so that
 * the two threads' lines do not interleave. */
typedef struct thread_log {
    int index;
    const char *calls[64];
    int n;
} thread_log;

static void note(thread_log *l, const char *call) {
    if (l->n < 64)
        l->calls[l->n++] = call;
}

static void *thread_main(void *arg) {
    thread_log *l = arg;
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    CHECK(err);
    int host[N] = {0}, back[N];
    for (int r = 0; r < rounds; ++r) {
        cl_event ev;
        if (l->index == 0) {
            CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
            note(l, "clEnqueueWriteBuffer");
            CHECK(clEnqueueReadBuffer(q, m, CL_FALSE, 0, sizeof back, back, 0, NULL, &ev));
            CHECK(clWaitForEvents(1, &ev));
            note(l, "clWaitForEvents");
            clReleaseEvent(ev);
            CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
            note(l, "clEnqueueReadBuffer");
            CHECK(clFinish(q));
            note(l, "clFinish");
        } else {
            CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, sizeof host, host, 0, NULL, &ev));
            CHECK(clWaitForEvents(1, &ev));
            note(l, "clWaitForEvents");
            clReleaseEvent(ev);
            CHECK(clFinish(q));
            note(l, "clFinish");
            CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
            note(l, "clEnqueueReadBuffer");
        }
    }
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    pthread_mutex_lock(&print_lock);
    for (int i = 0; i < l->n; ++i)
        printf("%d %s\n", l->index, l->calls[i]);
    pthread_mutex_unlock(&print_lock);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--pid")) {
        printf("%ld\n", (long)getpid());
        return 0;
    }
    if (argc > 1)
        rounds = atoi(argv[1]);
    if (rounds < 1 || rounds > 16) {
        fprintf(stderr, "usage: trace_calls [ROUNDS, 1 to 16]\n");
        return 2;
    }
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_int err;
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    thread_log logs[2] = {{.index = 0}, {.index = 1}};
    pthread_t t[2];
    for (int i = 0; i < 2; ++i)
        if (pthread_create(&t[i], NULL, thread_main, &logs[i]) != 0)
            return 3;
    for (int i = 0; i < 2; ++i)
        pthread_join(t[i], NULL);
    clReleaseContext(ctx);
    return 0;
}
