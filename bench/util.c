/* SPDX-License-Identifier: MIT */
/* cw-bench: small helpers and the summary statistics. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

const char *prog = "cw-bench";

const char *const metric_names[M_COUNT] = {"cpu",      "wall",      "kernel",        "overhead",
                                           "wait_cpu", "wait_wall", "added_latency", "wakeups"};
const char *const metric_units[M_COUNT] = {"_us", "_us", "_us", "_us", "_us", "_us", "_us", ""};
const char *const stat_names[S_COUNT] = {"mean", "median", "p90", "p99", "max", "sd"};
const char *const auto_stats_names[NSTATS_AUTO] = {
    "unchecked_waits",       "deferred_checks", "checks",      "hybrid_waits",
    "hybrid_callback_first", "late_callbacks",  "driver_waits"};
const char *const learned_names[NLEARNED] = {
    "platforms_probed", "platforms_failed_fire", "platforms_failed_silent", "platforms_late",
    "lateness_ns",      "lateness_samples",      "platforms_driver_wait"};
const char *const stats_names[8] = {"waits",  "spins", "yields",   "parks",
                                    "sleeps", "polls", "timeouts", "latency_count"};

const char *strategy_name(int s) {
    return s == S_AUTO_LATENCY ? "auto-latency" : cw_strategy_name((cw_strategy)s);
}

int strategy_from_name(const char *name, int *out) {
    cw_strategy s;
    if (!strcmp(name, "auto-latency")) {
        *out = S_AUTO_LATENCY;
        return 0;
    }
    if (cw_strategy_from_name(name, &s) != CW_OK)
        return -1;
    *out = (int)s;
    return 0;
}

bool strategy_fixed(int s) {
    return s != CW_STRATEGY_AUTO && s != CW_STRATEGY_DEFAULT && s != S_AUTO_LATENCY;
}

void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double run_share(double left, int n) {
    if (left <= 0 || n <= 0)
        return 0;
    double share = RUN_SHARE_FACTOR * left / n;
    return share < left ? share : left;
}

int64_t ts_ns(const struct timespec *ts) {
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile_sorted(const double *v, size_t n, double q) {
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;
    return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

void summarize(double *v, size_t n, double out[S_COUNT]) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += v[i];
    qsort(v, n, sizeof *v, cmp_double);
    out[S_MEAN] = n ? sum / (double)n : NAN;
    out[S_MEDIAN] = quantile_sorted(v, n, 0.5);
    out[S_P90] = quantile_sorted(v, n, 0.9);
    out[S_P99] = quantile_sorted(v, n, 0.99);
    out[S_MAX] = n ? v[n - 1] : NAN;
    double sq = 0;
    for (size_t i = 0; i < n; ++i)
        sq += (v[i] - out[S_MEAN]) * (v[i] - out[S_MEAN]);
    out[S_SD] = n > 1 ? sqrt(sq / (double)(n - 1)) : NAN;
}

double median_of(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return quantile_sorted(v, n, 0.5);
}
