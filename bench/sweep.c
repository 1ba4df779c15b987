/* SPDX-License-Identifier: MIT */
/*
 * cw-bench --sweep: driver models nobody tuned for. Each draw is a model
 * made of the layer's parameters (docs/driver-models.md), each from its
 * documented range, on top of the real driver, with one kernel and one CPU
 * configuration; a draw depends on the seed and its index alone, so a seed
 * gives the same models in any run.
 */
#include <math.h>
#include <string.h>

#include "bench.h"

/* The kernels a draw picks from: the 1-work-item kernel to 100 ms. */
const char *const sweep_kernels[SWEEP_NKERNELS] = {"latency",  "saxpy",     "busy-100us",
                                                   "busy-1ms", "busy-20ms", "busy-100ms"};
const double sweep_busy_us[SWEEP_NBUSY] = {100, 1000, 20000, 100000};

/* splitmix64: a well-mixed stream from any seed, the index folded in. */
static uint64_t next(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double uniform(uint64_t *x) {
    return (double)(next(x) >> 11) / 9007199254740992.0;
}

/* A whole number, log-uniform in [lo, hi]: delays from microseconds to
 * tens of milliseconds all get drawn. */
static long log_uniform(uint64_t *x, double lo, double hi) {
    return lround(exp(log(lo) + uniform(x) * (log(hi) - log(lo))));
}

static int pick(uint64_t *x, int n) {
    return (int)(next(x) % (uint64_t)n);
}

void sweep_draw_model(unsigned long seed, int index, sweep_draw *d) {
    uint64_t x = (uint64_t)seed * 0x100000001b3ull ^ ((uint64_t)index + 1) * 0xd6e8feb86659fd93ull;
    memset(d, 0, sizeof *d);
    char *p = d->spec;
    size_t left = sizeof d->spec;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(p, left, __VA_ARGS__);                                                   \
        p += w_;                                                                                   \
        left -= (size_t)w_;                                                                        \
    } while (0)
    /* Parameters on top of the real driver (pocl3), each drawn. */
    PUT("pocl3");
    /* Late callbacks: none a quarter of the time, else 1 us to 50 ms. */
    long delay = uniform(&x) < 0.25 ? 0 : log_uniform(&x, 1, SWEEP_MAX_DELAY_US);
    PUT(",callback_delay_us=%ld", delay);
    long jitter = uniform(&x) < 0.5 ? 0 : log_uniform(&x, 1, delay > 100 ? (double)delay : 100);
    PUT(",jitter_us=%ld", jitter);
    static const char *const waits[] = {"block", "spin", "yield", "spinblock"};
    int w = pick(&x, 4);
    if (w == 3)
        PUT(",wait=spinblock:%ld", log_uniform(&x, 1, 10000));
    else
        PUT(",wait=%s", waits[w]);
    static const char *const failed[] = {"real", "fire", "fire_complete", "drop"};
    PUT(",failed=%s", failed[pick(&x, 4)]);
    if (uniform(&x) < 0.5)
        PUT(",stall_us=%ld,stall_every=%ld", log_uniform(&x, 10, 10000), log_uniform(&x, 1, 256));
    bool timer = uniform(&x) < 0.5;
    /* A timer-driven device's busy kernel runs its target (cw-bench sets
     * busy_ns); other kernels run kernel_us. */
    if (timer)
        PUT(",device=timer,kernel_us=%ld", log_uniform(&x, 1, 10000));
    PUT(",seed=%ld", (long)(next(&x) & 0x7fffffff));
#undef PUT
    int k = pick(&x, SWEEP_NKERNELS);
    snprintf(d->kernel, sizeof d->kernel, "%s", sweep_kernels[k]);
    d->cpus = uniform(&x) < 0.5 ? 1 : 0;
}
