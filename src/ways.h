/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.3 (internal): the ways a wait waits, once its first look found
 * the command unfinished. Each is a mechanism only: it follows its plan
 * (the options, resolved) and its choice (the policy's, or the row's for
 * a fixed strategy), never changes either, learns nothing, and says what
 * it saw in a report that wait.c hands to the learners (learn.c).
 */
#ifndef CW_WAYS_H
#define CW_WAYS_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>

#include "completion.h"
#include "policy.h"
#include "relax.h"
#include "strategy.h"

/* What a way saw, beyond its result and the status. */
typedef struct cw__report {
    /* The polls saw the command end between two reads: the middle, in
     * ns since the epoch of cw_now_ns, and half the gap (0: told within the
     * polls' share). 0: not told. */
    uint64_t ended_ns, ended_span_ns;
    /* A status read found the command complete before its callback came
     * (it is late): the completion, still joined to the event's callback,
     * for the learner to leave (cw__learn_seen_first); when the read saw
     * it, and when the read before saw it running. NULL: not so. */
    cw__completion *seen_first;
    uint64_t seen_ns, running_ns;
    /* The callback came before the polls past the expected end saw the
     * command done: within a poll's delay of the end, not late. */
    bool callback_in_time;
    /* The way's thread CPU time and wall time, where the choice is a
     * trial (0 where the thread CPU clock could not be read). */
    uint64_t cpu_ns, wall_ns;
} cw__report;

/* The driver's clWaitForEvents (blocking without a timeout). */
int cw__way_driver(cl_event event, cl_int *cl_status);
/* poll: read the status in a busy loop until `deadline_ns`. The polling
 * ways forget a finished event's record (they register no callback). */
int cw__way_poll(cl_event event, uint64_t deadline_ns, cl_int *cl_status);
/* backoff-poll: sleeps through the expected wait, then growing delays. */
int cw__way_backoff(cl_event event, const cw__plan *p, cl_int *cl_status);
/* Park (or spin, then park) on the event's callback, with the failed-command
 * checks and the choice's peeks. */
int cw__way_park(cl_event event, const cw__plan *p, const cw__choice *ch, cw__report *r,
                 cl_int *cl_status);
/* The callback registered, the status polled on the choice's steps. */
int cw__way_poll_steps(cl_event event, const cw__plan *p, const cw__choice *ch, cw__report *r,
                       cl_int *cl_status);
/* No callback: sleep toward the end, then poll, for the choice's
 * poll_for_ns; a longer wait then parks on the callback. */
int cw__way_sleep_poll(cl_event event, const cw__plan *p, const cw__choice *ch, cw__report *r,
                       cl_int *cl_status);

/* The timer slack a polling way sleeps with: the least Linux takes (0
 * would mean the thread's default); Linux may defer a sleeper's wake-up by
 * its slack (the timer-slack table in bench/README.md). Lowered for the
 * way and restored on every return path. */
#define CW__POLL_TIMERSLACK_NS 1u
typedef struct cw__slack {
    uint64_t old;
    bool set;
} cw__slack;

static inline cw__slack cw__slack_lower(void) {
    cw__slack g = {0, false};
    g.set = cw__timerslack_set(CW__POLL_TIMERSLACK_NS, &g.old) == CW_OK;
    return g;
}

static inline void cw__slack_restore(const cw__slack *g) {
    if (g->set)
        cw__timerslack_set(g->old, NULL);
}

/* The steps of auto's polling ways where callbacks are late: planned with
 * the choice's expected wait, its fine spacing; `wake_early`: the hybrid's
 * early wake-up. */
cw__poll_steps cw__late_steps(const cw__plan *p, const cw__choice *ch, bool wake_early);

/* What two polls tell of the command's end, one that saw it running (at
 * `running`) and the next, which saw it done (at `seen`), into r. */
void cw__end_seen(const cw__plan *p, cw__report *r, uint64_t running, uint64_t seen,
                  unsigned shift);

/* The thread's CPU time, ns; 0 where it cannot be read. */
uint64_t cw__thread_cpu_ns(void);

#endif
