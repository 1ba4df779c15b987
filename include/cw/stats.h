/* SPDX-License-Identifier: MIT */
/* cw statistics: cheap process-wide counters of what the waits did. */
#ifndef CW_STATS_H
#define CW_STATS_H

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

/* Zero every counter. */
CW_API void cw_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif
