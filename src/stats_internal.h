/* SPDX-License-Identifier: MIT */
/* cw statistics (internal): the relaxed counters behind cw_stats_get (stats.c). */
#ifndef CW_STATS_INTERNAL_H
#define CW_STATS_INTERNAL_H

#include <stdint.h>

#include "cw/stats.h"

typedef enum cw__stat {
    CW__STAT_WAITS,
    CW__STAT_SPINS,
    CW__STAT_YIELDS,
    CW__STAT_PARKS,
    CW__STAT_SLEEPS,
    CW__STAT_POLLS,
    CW__STAT_TIMEOUTS,
    CW__STAT_LATENCY_COUNT,
    /* What auto learned and decided (cw_stats_auto_get). */
    CW__STAT_UNCHECKED,
    CW__STAT_DEFERRED,
    CW__STAT_CHECKS,
    CW__STAT_HYBRID,
    CW__STAT_HYBRID_CALLBACK_FIRST,
    CW__STAT_LATE_SEEN,
    CW__STAT_LATENESS_SAMPLES,
    CW__STAT_DRIVER_WAITS,
    CW__STAT_COUNT
} cw__stat;

void cw__stat_add(cw__stat which, uint64_t n);
/* One wake-up latency sample: a signal that landed at `landed_ns` was
 * seen at `now_ns` (the completion's landing time, cw_now_ns). */
void cw__stat_woken(uint64_t landed_ns, uint64_t now_ns);

#endif
