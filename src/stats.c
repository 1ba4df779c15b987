/* SPDX-License-Identifier: MIT */
/* Statistics: process-wide relaxed counters (cross-cutting, used by layer 6). */
#include "stats_internal.h"
#include "driver.h"

#include <stdatomic.h>
#include <string.h>

/*
 * One relaxed atomic add per event counted. The waits that count are
 * microseconds apart at the least, so contention on these lines is
 * negligible next to the futex and OpenCL calls around them; per-thread
 * counters summed on read would need a registry of threads for nothing.
 */
static _Atomic uint64_t counters[CW__STAT_COUNT];
static _Atomic uint64_t latency[CW_STATS_LATENCY_BUCKETS];

void cw__stat_add(cw__stat which, uint64_t n) {
    atomic_fetch_add_explicit(&counters[which], n, memory_order_relaxed);
}

void cw__stat_woken(uint64_t landed_ns, uint64_t now_ns) {
    uint64_t us = now_ns > landed_ns ? (now_ns - landed_ns) / 1000u : 0;
    unsigned b = 0;
    while (us && b < CW_STATS_LATENCY_BUCKETS - 1u) {
        us >>= 1;
        ++b;
    }
    atomic_fetch_add_explicit(&latency[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&counters[CW__STAT_LATENCY_COUNT], 1, memory_order_relaxed);
}

int cw_stats_get(cw_stats *out) {
    if (!out)
        return CW_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->waits = atomic_load_explicit(&counters[CW__STAT_WAITS], memory_order_relaxed);
    out->spins = atomic_load_explicit(&counters[CW__STAT_SPINS], memory_order_relaxed);
    out->yields = atomic_load_explicit(&counters[CW__STAT_YIELDS], memory_order_relaxed);
    out->parks = atomic_load_explicit(&counters[CW__STAT_PARKS], memory_order_relaxed);
    out->sleeps = atomic_load_explicit(&counters[CW__STAT_SLEEPS], memory_order_relaxed);
    out->polls = atomic_load_explicit(&counters[CW__STAT_POLLS], memory_order_relaxed);
    out->timeouts = atomic_load_explicit(&counters[CW__STAT_TIMEOUTS], memory_order_relaxed);
    out->latency_count =
        atomic_load_explicit(&counters[CW__STAT_LATENCY_COUNT], memory_order_relaxed);
    for (unsigned b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
        out->latency_us[b] = atomic_load_explicit(&latency[b], memory_order_relaxed);
    return CW_OK;
}

void cw_stats_reset(void) {
    for (unsigned i = 0; i < CW__STAT_COUNT; ++i)
        atomic_store_explicit(&counters[i], 0, memory_order_relaxed);
    for (unsigned b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
        atomic_store_explicit(&latency[b], 0, memory_order_relaxed);
}

int cw_stats_auto_get(cw_stats_auto *out, size_t size) {
    if (!out || size == 0)
        return CW_ERR_INVALID_ARGUMENT;
    cw_stats_auto a;
    memset(&a, 0, sizeof a);
    cw__driver_summary(&a.platforms_probed, &a.platforms_failed_fire, &a.platforms_failed_silent,
                       &a.platforms_late, &a.lateness_ns, &a.platforms_driver_wait);
#define GET(field, stat) a.field = atomic_load_explicit(&counters[stat], memory_order_relaxed)
    GET(lateness_samples, CW__STAT_LATENESS_SAMPLES);
    GET(unchecked_waits, CW__STAT_UNCHECKED);
    GET(deferred_checks, CW__STAT_DEFERRED);
    GET(checks, CW__STAT_CHECKS);
    GET(hybrid_waits, CW__STAT_HYBRID);
    GET(hybrid_callback_first, CW__STAT_HYBRID_CALLBACK_FIRST);
    GET(late_callbacks, CW__STAT_LATE_SEEN);
    GET(driver_waits, CW__STAT_DRIVER_WAITS);
#undef GET
    memcpy(out, &a, size < sizeof a ? size : sizeof a);
    return CW_OK;
}
