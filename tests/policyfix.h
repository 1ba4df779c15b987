/* SPDX-License-Identifier: MIT */
/*
 * The tests' questions to a platform's record, answered as the waits
 * answer them: a snapshot of the record (cw__driver_view_get) read by the
 * policy (src/policy.h). A class's way takes a ticket where a trial is
 * due, as a wait does.
 */
#ifndef CW_TEST_POLICYFIX_H
#define CW_TEST_POLICYFIX_H

#include "driver.h"
#include "policy.h"

static inline cw__driver_view view_of(const cw__driver *d) {
    cw__driver_view v;
    cw__driver_view_get(d, &v);
    return v;
}

static inline bool drv_late(const cw__driver *d, uint64_t expected_ns) {
    cw__driver_view v = view_of(d);
    return cw__policy_late(&v, expected_ns);
}

/* The driver-wait vote: open (trials still to make), and decided asleep. */
static inline bool vote_open(const cw__driver *d) {
    cw__driver_view v = view_of(d);
    return v.known && !cw__policy_vote_decided(v.vote_trials, v.vote_asleep);
}

static inline bool vote_sleeps(const cw__driver *d) {
    cw__driver_view v = view_of(d);
    return v.known && cw__policy_vote_decided(v.vote_trials, v.vote_asleep) &&
           cw__policy_vote_sleeps(v.vote_trials, v.vote_asleep);
}

/* Whether a wait expected to last `expected_ns` on a late platform would
 * be a vote's trial. */
static inline bool vote_trial(const cw__driver *d, uint64_t expected_ns) {
    return expected_ns && expected_ns <= CW__VOTE_TRIAL_MAX_NS && vote_open(d);
}

/* The way of a parked wait of its class on a timely platform. */
enum { WAY_CALLBACK, WAY_DRIVER, WAY_TRIAL_CALLBACK, WAY_TRIAL_DRIVER };

static inline int class_way(cw__driver *d, uint64_t expected_ns, uint64_t now_ns) {
    cw__facts f = {.now_ns = now_ns, .driver = view_of(d)};
    unsigned cls = cw__policy_class_of(expected_ns);
    bool driver;
    if (cw__policy_class_known(&f, cls, &driver))
        return driver ? WAY_DRIVER : WAY_CALLBACK;
    uint32_t ticket = cw__driver_class_ticket(d, cls);
    cw__driver_view v = view_of(d);
    bool trial;
    driver = cw__policy_trial_driver(&v.cls[cls], cls, ticket, &trial);
    if (trial)
        return driver ? WAY_TRIAL_DRIVER : WAY_TRIAL_CALLBACK;
    return driver ? WAY_DRIVER : WAY_CALLBACK;
}

static inline void class_sample(cw__driver *d, uint64_t expected_ns, bool driver, uint64_t cpu_ns,
                                uint64_t wall_ns) {
    cw__driver_class_sample(d, cw__policy_class_of(expected_ns), driver, cpu_ns, wall_ns);
}

/* Whether auto's wait would be the settled driver wait, before its look
 * (`parks`: no CPU is spare, so no spin is planned). */
static inline bool drv_settled(const cw__driver *d, uint64_t expected_ns, bool parks,
                               uint64_t now_ns) {
    cw__facts f = {.driver_wait_allowed = true,
                   .expected_ns = expected_ns,
                   .spare_cpu = !parks,
                   .spin_cap_ns = UINT64_MAX,
                   .now_ns = now_ns,
                   .turn = 1,
                   .driver = view_of(d)};
    cw__choice c;
    cw__policy_choose(&f, &c);
    return c.settled;
}

#endif
