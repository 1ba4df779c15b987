/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.0 (internal): a platform's record, shared by driver.c (what is
 * learned) and probe.c (the probe) only. Every field is an atomic: a
 * callback of the probe may touch the record at any time, and records are
 * static, never freed.
 */
#ifndef CW_DRIVER_RECORD_H
#define CW_DRIVER_RECORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "driver.h"

enum { PROBE_NONE, PROBE_CLAIMED, PROBE_DONE };

struct cw__driver {
    _Atomic(cl_platform_id) platform; /* the key; NULL: free */
    _Atomic int probe;                /* PROBE_* */
    _Atomic bool fire;                /* a failed command's callback was seen */
    _Atomic bool failed_seen;         /* the probe saw its gated marker fail */
    _Atomic bool failed_called;       /* that marker's callback ran */
    _Atomic uint64_t lateness_ns;     /* moving estimate; valid once samples > 0 */
    _Atomic uint64_t samples;
    _Atomic uint64_t done_ns; /* the probe: when its second marker was seen finished; 0 not yet */
    _Atomic uint64_t cb_ns;   /* the probe: when that marker's callback ran; 0 not yet */
    _Atomic bool cb_over;     /* that callback has returned (the next probe may reset both) */
    _Atomic uint32_t late_probes;  /* the probe's lateness markers made so far */
    _Atomic uint64_t measuring_ns; /* when the outstanding lateness measurement began; 0 none */
    _Atomic uint64_t probed_ns;    /* when the probe was claimed; 0 not yet */
    _Atomic uint32_t vote_trials;  /* the driver-wait vote (policy.h) */
    _Atomic uint32_t vote_asleep;  /* of them, those that slept */
    /* Parked waits on a platform whose callbacks are not late, per class
     * (policy.h): the tickets handed out, then per way, way[true] the
     * driver's wait and way[false] the callback wait: counted trials, the
     * sum of their thread CPU time and the largest of them (0 where none
     * is known: a seeded record), and whether a driver's wait of the
     * class spun throughout (cw__policy_spun_through). */
    struct {
        _Atomic uint32_t tickets;
        _Atomic bool driver_spun;
        struct {
            _Atomic uint32_t n;
            _Atomic uint64_t cpu_ns, max_ns;
        } way[2];
    } cls[CW__CLASSES];
};

#endif
