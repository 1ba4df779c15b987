/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: the busy kernel's calibration, a child mode run on one worker.
 * Fits run time = a + b * iters from two points well above the launch's
 * fixed cost, solves for each short target and corrects once; a long
 * target (LONG_US and up) is the longest short one's iterations scaled. A target below what
 * the platform can do at the fewest iterations is reported as not reached.
 */
#include <math.h>
#include <stdio.h>

#include "bench.h"

#define MIN_ITERS 64u
#define MAX_ITERS 4000000000u
/* At an end of the iteration range, a run time off the target by more than
 * this fraction means the target cannot be reached. */
#define REACH_TOLERANCE 0.10

/* Median kernel run time of `reps` busy launches with `iters`, in us; -1 on failure. */
static double busy_runtime_us(child *c, unsigned iters, int reps) {
    kernel_spec k = {.kind = K_BUSY, .iters = iters};
    snprintf(k.name, sizeof k.name, "busy (calibration)");
    double t[32];
    /* The first launch of a process may build the program (PoCL compiles at
     * the first enqueue), so it says nothing about profiling or run time. */
    if (!c->calib_started) {
        c->calib_started = true;
        if (launch(c, &k, CW_STRATEGY_BLOCKING, NULL) != 0)
            return -1;
    }
    if (reps > 32)
        reps = 32;
    for (int r = 0; r < reps; ++r) {
        sample s;
        if (launch(c, &k, CW_STRATEGY_BLOCKING, &s) != 0)
            return -1;
        /* Event profiling that reports nothing useful (Mesa 22 rusticl reports
         * about 1 ns): fall back to the blocking launch's wall time. */
        if (!c->calib_wall && s.wall_us > 50 && s.kernel_us < 0.01 * s.wall_us) {
            c->calib_wall = true;
            char msg[256];
            snprintf(msg, sizeof msg,
                     "event profiling reports %.3f us for a launch of %.0f us wall: "
                     "busy calibration uses wall time instead",
                     s.kernel_us, s.wall_us);
            proto_note(c->out, msg);
        }
        t[r] = c->calib_wall ? s.wall_us : s.kernel_us;
    }
    return median_of(t, (size_t)reps);
}

static unsigned clamp_iters(double want) {
    return want < MIN_ITERS ? MIN_ITERS : want > MAX_ITERS ? MAX_ITERS : (unsigned)(want + 0.5);
}

static int calibrate(child *c, const options *o) {
    int reps = o->quick ? 5 : 9;
    double maxus = 0;
    for (int b = 0; b < o->nbusy; ++b)
        maxus = o->busy_us[b] > maxus ? o->busy_us[b] : maxus;
    /* Warm up first (kernel build or cache, the worker threads, the CPU's
     * clock): the first launches of a process run slower. */
    double warm_until = now_s() + (o->quick ? 0.05 : 0.2);
    while (now_s() < warm_until)
        if (busy_runtime_us(c, 256, 1) < 0)
            return 1;
    unsigned i1 = MIN_ITERS;
    double t1 = busy_runtime_us(c, i1, 3);
    /* Grow until the run time dominates fixed costs (or reaches the largest target). */
    double floor_us = maxus > 200 ? 200 : maxus;
    while (t1 >= 0 && t1 < floor_us && i1 < (1u << 28)) {
        i1 *= 2;
        t1 = busy_runtime_us(c, i1, 3);
    }
    if (t1 < 0)
        return 1;
    t1 = busy_runtime_us(c, i1, reps);
    unsigned i2 = i1 * 4;
    double t2 = busy_runtime_us(c, i2, reps);
    if (t2 < 0)
        return 1;
    double slope = (t2 - t1) / (double)(i2 - i1);
    double icpt = t1 - slope * (double)i1;
    if (!(slope > 0)) {
        child_error(c,
                    "calibration failed: run time does not grow with iterations (%g us at %u, "
                    "%g us at %u)",
                    t1, i1, t2, i2);
        return 1;
    }
    /* The short targets first, each from the line and corrected once; then
     * the long ones, scaled from the longest short target's iterations and
     * measured once, for the record: the kernel is linear in its
     * iterations, and on a shared machine one launch of 1 s is too noisy
     * to correct by (nine would make the calibration longer than the
     * cells). With no short target, a long one is calibrated as a short. */
    int ref = -1;
    for (int b = 0; b < o->nbusy; ++b)
        if (o->busy_us[b] < LONG_US && (ref < 0 || o->busy_us[b] > o->busy_us[ref]))
            ref = b;
    unsigned ref_iters = 0;
    double ref_us = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (int b = 0; b < o->nbusy; ++b) {
            bool is_long = o->busy_us[b] >= LONG_US && ref >= 0;
            if (is_long != (pass == 1))
                continue;
            unsigned iters;
            double got;
            if (is_long) {
                iters = clamp_iters((double)ref_iters * o->busy_us[b] / ref_us);
                if ((got = busy_runtime_us(c, iters, 1)) < 0)
                    return 1;
            } else {
                int n = o->busy_us[b] >= LONG_US ? 1 : reps;
                iters = clamp_iters((o->busy_us[b] - icpt) / slope);
                if ((got = busy_runtime_us(c, iters, n)) < 0)
                    return 1;
                /* One proportional correction when the straight line
                 * missed, unless the fewest iterations already overshoot:
                 * fewer cannot help. */
                if (got > 0 && fabs(got / o->busy_us[b] - 1) > 0.03 &&
                    !(iters == MIN_ITERS && got > o->busy_us[b])) {
                    iters = clamp_iters((double)iters * o->busy_us[b] / got);
                    if ((got = busy_runtime_us(c, iters, n)) < 0)
                        return 1;
                }
                if (b == ref) {
                    ref_iters = iters;
                    ref_us = got > 0 ? got : o->busy_us[b];
                }
            }
            /* Only the ends of the iteration range make a target
             * unreachable; elsewhere a miss is noise and the measured time
             * says by how much. */
            bool reached = !(iters == MIN_ITERS && got > o->busy_us[b] * (1 + REACH_TOLERANCE)) &&
                           !(iters == MAX_ITERS && got < o->busy_us[b] * (1 - REACH_TOLERANCE));
            proto_calibration(c->out, b, iters, o->busy_us[b], got, reached);
        }
    size_t bad = 0;
    if (cwh_busy_check(&c->h, &c->busy, &bad) != CL_SUCCESS || bad) {
        child_error(c, "busy kernel: WRONG RESULT during calibration (%zu bad)", bad);
        return 1;
    }
    return 0;
}

int child_calibrate(const options *o) {
    child c;
    if (child_open(&c, o) != 0)
        return 1;
    if (cwh_busy_init(&c.h, &c.busy, o->busy_global) != CL_SUCCESS) {
        child_error(&c, "cannot allocate the busy kernel's buffer");
        return 1;
    }
    int rc = calibrate(&c, o);
    cwh_busy_free(&c.busy);
    child_close(&c);
    fclose(c.out);
    return rc;
}
