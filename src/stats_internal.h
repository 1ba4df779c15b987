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
    CW__STAT_COUNT
} cw__stat;

void cw__stat_add(cw__stat which, uint64_t n);
/* One wake-up latency sample, in nanoseconds. */
void cw__stat_latency(uint64_t ns);

#endif
