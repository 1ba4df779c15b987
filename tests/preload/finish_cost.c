/* SPDX-License-Identifier: MIT */
/*
 * finish_cost: what the ways cw-run can wait in clFinish cost, measured in
 * one process, interleaved round by round so that a shared machine's drift
 * falls on all of them alike (docs/cw-run-internals.md, "clFinish: the last command,
 * or a marker").
 *
 * Each launch enqueues the one-work-item latency kernel with an event and
 * then waits, as clpeak's --kernel-latency does:
 *   native  clFinish
 *   event   clWaitForEvents on the kernel's event (PoCL's own event wait)
 *   marker  clFlush, a marker, cw_wait on it, release it (cw-run's clFinish
 *           on an out-of-order queue, or when the last command is unknown)
 *   last    a reference on the kernel's event taken at the enqueue, cw_wait
 *           on it, the real clFinish, release (cw-run's clFinish on an
 *           in-order queue)
 *   shared  as last, without CW_WAIT_OWN_CALLBACK: the wait subscribes to
 *           cw's shared record of the event
 * The cw waits but `shared` pass CW_WAIT_OWN_CALLBACK, as cw-run does.
 * Per variant it prints the medians over the rounds of: the launch latency
 * (CL_PROFILING_COMMAND_START - QUEUED, clpeak's figure), the launching
 * thread's CPU time per launch, the process's CPU time per launch, the wall
 * time per launch and the launching thread's context switches per launch.
 * Run it without cw-run: it calls libcw itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include "clhost.h"
#include "cw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { NATIVE, EVENT, MARKER, LAST, SHARED, VARIANTS };
static const char *const names[VARIANTS] = {"native", "event", "marker", "last", "shared"};
enum { LATENCY, THREAD_CPU, PROCESS_CPU, WALL, SWITCHES, FIGURES };
static const char *const figure_names[FIGURES] = {"launch latency us", "thread CPU/launch us",
                                                  "process CPU/launch us", "wall/launch us",
                                                  "thread switches/launch"};

static double ns_of(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double tv_us(struct timeval t) {
    return (double)t.tv_sec * 1e6 + (double)t.tv_usec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(FILE *f) {
    fprintf(f, "usage: finish_cost [--rounds N] [--launches N] [--strategy NAME]\n"
               "  Interleaves five ways to wait for a one-work-item kernel (native\n"
               "  clFinish, clWaitForEvents, marker + cw_wait, cw_wait on the kernel's\n"
               "  event + clFinish, the same with cw's shared callback) and prints\n"
               "  medians over the rounds.\n"
               "  --rounds N     rounds, each running every variant (default 10)\n"
               "  --launches N   launches per variant and round (default 2000)\n"
               "  --strategy S   cw strategy of the cw variants (default cooperative)\n");
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cl_int e_ = (call);                                                                        \
        if (e_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "finish_cost: %s = %d\n", #call, e_);                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void wait_one(cwh *h, int variant, cl_event ev, const cw_wait_options *o) {
    cl_event m = NULL;
    cl_int st;
    switch (variant) {
    case NATIVE:
        CHECK(clFinish(h->queue));
        break;
    case EVENT:
        CHECK(clWaitForEvents(1, &ev));
        break;
    case MARKER:
        CHECK(clFlush(h->queue));
        CHECK(clEnqueueMarkerWithWaitList(h->queue, 0, NULL, &m));
        if (cw_wait(m, o, &st) != CW_OK)
            exit(1);
        clReleaseEvent(m);
        break;
    case LAST:
    case SHARED:
        if (cw_wait(ev, o, &st) != CW_OK)
            exit(1);
        CHECK(clFinish(h->queue));
        clReleaseEvent(ev); /* the reference taken at the enqueue */
        break;
    }
}

int main(int argc, char **argv) {
    int rounds = 10, launches = 2000;
    cw_wait_options o = {0};
    o.strategy = CW_STRATEGY_COOPERATIVE;
    o.flags = CW_WAIT_OWN_CALLBACK;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--launches") && i + 1 < argc) {
            launches = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--strategy") && i + 1 < argc) {
            if (cw_strategy_from_name(argv[++i], &o.strategy) != CW_OK) {
                fprintf(stderr, "finish_cost: unknown strategy %s\n", argv[i]);
                return 2;
            }
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (rounds < 1 || launches < 1) {
        usage(stderr);
        return 2;
    }
    /* The shared variant's options, made once, outside the timed loops. */
    cw_wait_options shared = o;
    shared.flags &= ~(unsigned)CW_WAIT_OWN_CALLBACK;
    cwh h;
    cwh_latency l;
    char msg[256];
    if (cwh_open(&h, NULL, true, msg, sizeof msg) != CL_SUCCESS) {
        fprintf(stderr, "finish_cost: %s\n", msg);
        return 1;
    }
    CHECK(cwh_latency_init(&h, &l));
    double *fig = calloc((size_t)VARIANTS * FIGURES * (size_t)rounds, sizeof *fig);
    if (!fig)
        return 1;
#define FIG(v, f, r) fig[((size_t)(v)*FIGURES + (f)) * (size_t)rounds + (size_t)(r)]
    printf("finish_cost on %s, %d rounds of %d launches per variant, cw strategy %s\n",
           h.device_name, rounds, launches, cw_strategy_name(o.strategy));
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < VARIANTS; ++k) {
            int v = (k + r) % VARIANTS; /* the order rotates from round to round */
            struct rusage t0, p0, t1, p1;
            getrusage(RUSAGE_THREAD, &t0);
            getrusage(RUSAGE_SELF, &p0);
            double c0 = ns_of(CLOCK_THREAD_CPUTIME_ID), w0 = ns_of(CLOCK_MONOTONIC), lat = 0;
            for (int i = 0; i < launches; ++i) {
                cl_event ev;
                CHECK(cwh_latency_enqueue(&h, &l, 0, NULL, &ev));
                if (v == LAST || v == SHARED)
                    CHECK(clRetainEvent(ev)); /* as cw-run records the last command */
                wait_one(&h, v, ev, v == SHARED ? &shared : &o);
                cl_ulong start, queued;
                CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                              NULL));
                CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued,
                                              &queued, NULL));
                lat += (double)(start - queued) / 1e3;
                clReleaseEvent(ev);
            }
            double c1 = ns_of(CLOCK_THREAD_CPUTIME_ID), w1 = ns_of(CLOCK_MONOTONIC);
            getrusage(RUSAGE_THREAD, &t1);
            getrusage(RUSAGE_SELF, &p1);
            FIG(v, LATENCY, r) = lat / launches;
            FIG(v, THREAD_CPU, r) = (c1 - c0) / 1e3 / launches;
            FIG(v, PROCESS_CPU, r) = (tv_us(p1.ru_utime) + tv_us(p1.ru_stime) - tv_us(p0.ru_utime) -
                                      tv_us(p0.ru_stime)) /
                                     launches;
            FIG(v, WALL, r) = (w1 - w0) / 1e3 / launches;
            FIG(v, SWITCHES, r) =
                (double)(t1.ru_nvcsw + t1.ru_nivcsw - t0.ru_nvcsw - t0.ru_nivcsw) / launches;
        }
        fprintf(stderr, "  round %d/%d done\n", r + 1, rounds);
    }
    size_t wrong = 0;
    CHECK(cwh_latency_check(&h, &l, (unsigned)(rounds * launches * VARIANTS), &wrong));
    printf("%-24s", "median over the rounds");
    for (int v = 0; v < VARIANTS; ++v)
        printf("%10s", names[v]);
    printf("\n");
    for (int f = 0; f < FIGURES; ++f) {
        double med[VARIANTS];
        for (int v = 0; v < VARIANTS; ++v) {
            qsort(&FIG(v, f, 0), (size_t)rounds, sizeof(double), cmp_double);
            med[v] = rounds % 2 ? FIG(v, f, rounds / 2)
                                : (FIG(v, f, rounds / 2 - 1) + FIG(v, f, rounds / 2)) / 2;
        }
        printf("%-24s", figure_names[f]);
        for (int v = 0; v < VARIANTS; ++v)
            printf("%10.2f", med[v]);
        printf("\n%-24s", "  ratio to native");
        for (int v = 0; v < VARIANTS; ++v)
            printf("%10.3f", med[NATIVE] ? med[v] / med[NATIVE] : 0.0);
        printf("\n");
    }
    printf("launches counted by the kernel: %s\n", wrong ? "WRONG" : "all");
    free(fig);
    cwh_latency_free(&l);
    cwh_close(&h);
    return wrong ? 1 : 0;
}
