/* SPDX-License-Identifier: MIT */
/* cw statistics: cheap process-wide counters of what the waits did. */
#ifndef CW_STATS_H
#define CW_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "cw/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Wake-up latency histogram buckets, log2 of microseconds: bucket 0 counts
 * latencies below 1 µs, bucket k (1 <= k < last) those in [2^(k-1), 2^k) µs,
 * and the last bucket everything from 2^(CW_STATS_LATENCY_BUCKETS-2) µs
 * (16.4 ms) on.
 */
#define CW_STATS_LATENCY_BUCKETS 16

/*
 * Counters since the process started or the last cw_stats_reset. Every
 * cw_wait, cw_wait_all and cw_wait_any counts, whatever its strategy.
 */
typedef struct cw_stats {
    uint64_t waits;    /* calls that got past argument checking */
    uint64_t spins;    /* pause rounds spun on a completion or between polls */
    uint64_t yields;   /* sched_yield calls while waiting */
    uint64_t parks;    /* times a waiter went to sleep on its parker */
    uint64_t sleeps;   /* backoff-poll delays longer than 10 µs, which it sleeps */
    uint64_t polls;    /* execution-status reads by the polling strategies */
    uint64_t timeouts; /* waits that returned CW_ERR_TIMEOUT */
    /*
     * Wake-up latency: from the moment a callback's signal landed in the
     * completion to the moment its waiter saw it (after a spin or a park).
     * Only waits that saw a callback's signal are counted: blocking and
     * polling waits, and waits that found the event finished, are not.
     */
    uint64_t latency_count;
    uint64_t latency_us[CW_STATS_LATENCY_BUCKETS];
} cw_stats;

/* A snapshot of the counters. CW_ERR_INVALID_ARGUMENT for a NULL `out`.
 * Counters are updated with relaxed atomics: a snapshot taken while waits
 * run is not one instant, but each counter is exact once they returned. */
CW_API int cw_stats_get(cw_stats *out);

/* Zero every counter (of cw_stats and cw_stats_auto; not what cw learned). */
CW_API void cw_stats_reset(void);

/*
 * What cw learned of the drivers, and what the waits decided from it
 * (cw_stats_get(3), "What auto decided"). The counters count since the
 * process started or the last cw_stats_reset; the `platforms_*` fields and
 * `lateness_ns` are what is known now, which cw_stats_reset leaves alone.
 * Later releases may append fields: cw_stats_auto_get fills the first
 * `size` bytes only.
 */
typedef struct cw_stats_auto {
    /* Platforms probed (one probe each, by the first callback wait on it):
     * of them, those whose failed commands were seen to fire their
     * CL_COMPLETE callbacks, those whose probe saw a failed command and no
     * callback (so far), and those whose callbacks come late (at least
     * 50 µs after the command, as learned). */
    uint64_t platforms_probed;
    uint64_t platforms_failed_fire;
    uint64_t platforms_failed_silent;
    uint64_t platforms_late;
    /* The largest learned callback lateness of a platform, ns. */
    uint64_t lateness_ns;
    /* Lateness measurements taken (the probe's; callbacks that landed
     * after a status read had found their command complete; hybrid waits
     * that the callback ended). */
    uint64_t lateness_samples;
    /* Waits (cw_wait, wait-all/any) and notifier watches that scheduled no
     * failed-command check: their platform's failed commands fire. */
    uint64_t unchecked_waits;
    /* Waits and watches whose first check was put after twice their
     * expected wait, past the check interval. */
    uint64_t deferred_checks;
    /* Failed-command status checks made (each a wake-up of a parked waiter,
     * or one pass of the notifier over its due watches). */
    uint64_t checks;
    /* Auto waits that polled because callbacks are late (with no callback,
     * or as a hybrid that keeps it), and of them, those that the callback
     * ended before a poll saw the end. */
    uint64_t hybrid_waits;
    uint64_t hybrid_callback_first;
    /* Status reads that found a command complete before its callback had
     * come (auto's read after its spin, a check, a hybrid poll). */
    uint64_t late_callbacks;
    /* Auto waits that the driver's own clWaitForEvents served: where
     * callbacks are late and it sleeps, and waits auto parks for at once
     * (200 µs to 4 ms expected, or shorter where no CPU is spare) where it
     * took the waiting thread less CPU time than a callback wait for waits
     * of that length; and the platforms whose long waits (200 µs to 4 ms)
     * it serves. */
    uint64_t driver_waits;
    uint64_t platforms_driver_wait;
} cw_stats_auto;

/* Fill the first `size` bytes of *out (pass sizeof *out) with a snapshot.
 * CW_ERR_INVALID_ARGUMENT for a NULL `out` or a `size` of 0. */
CW_API int cw_stats_auto_get(cw_stats_auto *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif
