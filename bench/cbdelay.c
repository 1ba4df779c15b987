/* SPDX-License-Identifier: MIT */
/*
 * cw-cbdelay: what the driver itself does, measured without cw.
 *   - How late event callbacks come: each launch (the latency kernel, then
 *     a busy kernel) is watched by a loop that reads its status, and has a
 *     CL_COMPLETE callback; the delay is the callback's time minus the
 *     time the loop began its last look that still saw it running (the
 *     launch's time where none did).
 *   - What the driver's own clWaitForEvents and clFinish cost: the waiting
 *     thread's CPU time (getrusage RUSAGE_THREAD) against the wait's wall
 *     time, over busy kernels of about --busy-ms; and its runnable time (on
 *     a CPU or waiting for one, /proc/thread-self/schedstat), which tells a
 *     spin from a block on a machine whose cores are busy.
 * It runs anywhere OpenCL runs (PoCL, rusticl, a GPU, under a driver model,
 * docs/driver-models.md). --expect-delay-us and --expect-spin turn what it
 * measured into a check (the drivermodel.cbdelay_* tests), for behaviour
 * only: a delay no shorter than 9/10 of the one configured (a driver
 * model times its delay from the command's end as its device saw it, and
 * the status read the delay is measured from may still see the command
 * running a little after that, by about 0.1 ms on a loaded machine), a wait
 * that is runnable for more than half of its wall time.
 */
#include <getopt.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clhost.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct arrival {
    _Atomic double at_us;
    atomic_int status;
} arrival;

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *data) {
    (void)ev;
    arrival *a = data;
    a->status = status;
    a->at_us = cwh_now_us();
}

static void die(const char *what, cl_int err) {
    fprintf(stderr, "cw-cbdelay: %s failed (%d)\n", what, err);
    exit(1);
}

typedef struct summary {
    double min, median, p90, max;
} summary;

static summary summarize(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    summary s = {v[0], v[n / 2], v[(int)(0.9 * (n - 1))], v[n - 1]};
    return s;
}

static cwh h;
static cwh_busy busy;
static cwh_latency lat;

/* One launch: iters 0 is the latency kernel, else busy with iters. */
static cl_event launch(cl_uint iters) {
    cl_event ev;
    cl_int err = iters ? cwh_busy_enqueue(&h, &busy, iters, 0, NULL, &ev)
                       : cwh_latency_enqueue(&h, &lat, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        die("enqueue", err);
    return ev;
}

/* Callback delay after completion seen by status polling, per launch. */
static summary callback_delay(cl_uint iters, int n, double *out) {
    for (int i = 0; i < n; ++i) {
        arrival a = {0};
        /* The command completes after this; where even the first look
         * finds it complete (this thread was preempted between the flush
         * and that look, as on a loaded machine), the delay is measured
         * from here, not from that look, which came after the completion
         * and would make the delay look shorter than it is. */
        double seen = cwh_now_us();
        cl_event ev = launch(iters);
        cl_int err = clSetEventCallback(ev, CL_COMPLETE, on_complete, &a);
        if (err != CL_SUCCESS)
            die("clSetEventCallback", err);
        clFlush(h.queue);
        cl_int st = 1;
        /* From the time the last look that still found it running began:
         * the command completed after that, so a delay measured from there
         * is never shorter than the real one (and longer by up to a look,
         * or by however long this thread was preempted before the next). */
        while (st > CL_COMPLETE) {
            double t = cwh_now_us();
            clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
            if (st > CL_COMPLETE)
                seen = t;
        }
        /* The callback may come before the loop saw the status: delay 0. */
        double limit = cwh_now_us() + 10e6;
        while (a.at_us == 0 && cwh_now_us() < limit) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
        if (a.at_us == 0) {
            fprintf(stderr, "cw-cbdelay: a callback did not come within 10 s\n");
            exit(1);
        }
        double d = a.at_us - seen;
        out[i] = d > 0 ? d : 0;
        clReleaseEvent(ev);
    }
    return summarize(out, n);
}

/* Busy iterations for about ms milliseconds of run time (blocking waits). */
static cl_uint calibrate(double ms) {
    cl_uint iters = 1024;
    double took = 0;
    for (;;) {
        /* The shortest of three: a loaded machine only makes runs longer. */
        took = INFINITY;
        for (int r = 0; r < 3; ++r) {
            cl_event ev = launch(iters);
            double t0 = cwh_now_us();
            clWaitForEvents(1, &ev);
            took = fmin(took, cwh_now_us() - t0);
            clReleaseEvent(ev);
        }
        if (took >= ms * 1e3 / 4 || iters >= (1u << 30))
            break;
        iters *= 4;
    }
    double want = iters * (ms * 1e3 / (took > 1 ? took : 1));
    return want < 64 ? 64 : want > 4e9 ? 4000000000u : (cl_uint)want;
}

/* The driver's own wait over n busy launches: this thread's CPU and
 * runnable time as fractions of the wall time, and the wall time per wait.
 * Only waits whose command a status read just before them still saw
 * running count (`n` of them, out of at most 4n launches): on a loaded
 * machine this thread may be preempted between the flush and the wait for
 * as long as the command runs, and a wait on a finished command is no
 * wait at all (its fixed costs, a lock that sleeps, would pass for a
 * driver that blocks). `counted` says how many did. */
typedef struct waitcost {
    double cpu, runnable, wall_ms;
    int counted;
} waitcost;

static waitcost driver_wait(cl_uint iters, int n, bool finish) {
    double cpu = 0, run = 0, wall = 0;
    int counted = 0;
    for (int i = 0; i < 4 * n && counted < n; ++i) {
        cl_event ev = launch(iters);
        clFlush(h.queue);
        cl_int st = CL_COMPLETE;
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        double c0 = cwh_cpu_us(RUSAGE_THREAD), r0 = cwh_runnable_us(), t0 = cwh_now_us();
        cl_int err = finish ? clFinish(h.queue) : clWaitForEvents(1, &ev);
        if (st > CL_COMPLETE) {
            wall += cwh_now_us() - t0;
            cpu += cwh_cpu_us(RUSAGE_THREAD) - c0;
            run += cwh_runnable_us() - r0;
            ++counted;
        }
        if (err != CL_SUCCESS)
            die(finish ? "clFinish" : "clWaitForEvents", err);
        clReleaseEvent(ev);
    }
    waitcost w = {wall > 0 ? cpu / wall : 0, wall > 0 ? run / wall : 0,
                  counted ? wall / counted / 1e3 : 0, counted};
    return w;
}

int main(int argc, char **argv) {
    int launches = 30;
    double busy_ms = 10, expect_delay_us = -1;
    bool expect_spin = false;
    const char *platform = NULL, *json = NULL;
    static const struct option opts[] = {{"launches", required_argument, NULL, 'n'},
                                         {"busy-ms", required_argument, NULL, 'b'},
                                         {"platform", required_argument, NULL, 'p'},
                                         {"json", required_argument, NULL, 'j'},
                                         {"expect-delay-us", required_argument, NULL, 'd'},
                                         {"expect-spin", no_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case 'n':
            launches = atoi(optarg);
            break;
        case 'b':
            busy_ms = atof(optarg);
            break;
        case 'p':
            platform = optarg;
            break;
        case 'j':
            json = optarg;
            break;
        case 'd':
            expect_delay_us = atof(optarg);
            break;
        case 's':
            expect_spin = true;
            break;
        default:
            printf("usage: cw-cbdelay [--launches N] [--busy-ms MS] [--platform NAME] [--json "
                   "FILE]\n                  [--expect-delay-us US] [--expect-spin]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (launches < 1 || launches > 100000 || !(busy_ms > 0)) {
        fprintf(stderr, "cw-cbdelay: --launches 1..100000, --busy-ms > 0\n");
        return 2;
    }
    char msg[256];
    cl_int err = cwh_open(&h, platform, false, msg, sizeof msg);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "cw-cbdelay: %s\n", msg);
        return 1;
    }
    if (cwh_busy_init(&h, &busy, 4096) != CL_SUCCESS || cwh_latency_init(&h, &lat) != CL_SUCCESS)
        die("buffers", CL_OUT_OF_RESOURCES);
    cl_device_type type = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    printf("platform: %s (%s)\ndevice: %s, %s, type %s\n", h.platform_name, h.platform_version,
           h.device_name, h.driver_version,
           type & CL_DEVICE_TYPE_GPU   ? "GPU"
           : type & CL_DEVICE_TYPE_CPU ? "CPU"
                                       : "other");
    /* Warm-up: the first launches build and load the kernels. */
    for (int i = 0; i < 3; ++i) {
        cl_event a = launch(0), b = launch(64);
        clWaitForEvents(1, &b);
        clReleaseEvent(a);
        clReleaseEvent(b);
    }
    cl_uint iters = calibrate(busy_ms);
    double *d = malloc(sizeof *d * (size_t)launches);
    summary sl = callback_delay(0, launches, d);
    summary sb = callback_delay(iters, launches, d);
    free(d);
    int nw = launches < 10 ? launches : 10;
    waitcost w = driver_wait(iters, nw, false), fin = driver_wait(iters, nw, true);
    printf("callback delay after completion, latency kernel (%d launches): min %.0f us, median "
           "%.0f us, p90 %.0f us, max %.0f us\n",
           launches, sl.min, sl.median, sl.p90, sl.max);
    printf("callback delay after completion, busy kernel of %u iterations (%d launches): min "
           "%.0f us, median %.0f us, p90 %.0f us, max %.0f us\n",
           iters, launches, sb.min, sb.median, sb.p90, sb.max);
    printf("driver's clWaitForEvents on the busy kernel: %.2f ms wall per wait, CPU %.2f of "
           "wall, runnable %.2f of wall (%d waits on a running command)\n",
           w.wall_ms, w.cpu, w.runnable, w.counted);
    printf("driver's clFinish on the busy kernel: %.2f ms wall per wait, CPU %.2f of wall, "
           "runnable %.2f of wall (%d waits on a running command)\n",
           fin.wall_ms, fin.cpu, fin.runnable, fin.counted);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f,
                "{\"platform\": \"%s\", \"device\": \"%s\", \"driver\": \"%s\", \"launches\": %d,\n"
                " \"latency_delay_us\": {\"min\": %.1f, \"median\": %.1f, \"p90\": %.1f, \"max\": "
                "%.1f},\n"
                " \"busy_iters\": %u, \"busy_delay_us\": {\"min\": %.1f, \"median\": %.1f, "
                "\"p90\": %.1f, \"max\": %.1f},\n"
                " \"wait_cpu_of_wall\": %.3f, \"wait_runnable_of_wall\": %.3f, \"wait_ms\": %.3f,\n"
                " \"finish_cpu_of_wall\": %.3f, \"finish_runnable_of_wall\": %.3f, "
                "\"finish_ms\": %.3f}\n",
                h.platform_name, h.device_name, h.driver_version, launches, sl.min, sl.median,
                sl.p90, sl.max, iters, sb.min, sb.median, sb.p90, sb.max, w.cpu, w.runnable,
                w.wall_ms, fin.cpu, fin.runnable, fin.wall_ms);
        fclose(f);
    }
    int rc = 0;
    /* 9/10: see the head comment. */
    double least_us = expect_delay_us * 0.9;
    if (expect_delay_us >= 0 && (sl.min < least_us || sb.min < least_us)) {
        fprintf(stderr,
                "cw-cbdelay: a callback came %.0f us after completion, less than %.0f (9/10 of "
                "%.0f)\n",
                fmin(sl.min, sb.min), least_us, expect_delay_us);
        rc = 1;
    }
    if (expect_spin && (!w.counted || !fin.counted)) {
        fprintf(stderr,
                "cw-cbdelay: no driver's wait found its command still running, in %d "
                "launches each\n",
                4 * nw);
        rc = 1;
    } else if (expect_spin && (w.runnable < 0.5 || fin.runnable < 0.5)) {
        fprintf(stderr,
                "cw-cbdelay: the driver's waits were runnable for %.2f and %.2f of their wall "
                "time, not a spin\n",
                w.runnable, fin.runnable);
        rc = 1;
    }
    cwh_busy_free(&busy);
    cwh_latency_free(&lat);
    cwh_close(&h);
    return rc;
}
