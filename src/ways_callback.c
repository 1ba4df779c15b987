/* SPDX-License-Identifier: MIT */
/* Layer 6.3: the ways that wait on the event's callback (ways.h). */
#include "ways.h"
#include "driver.h"
#include "stats_internal.h"
#include "status.h"
#include "table.h"

#include <sched.h>

/*
 * The spin phase of spin-park and auto: spin on the completion's flag (one
 * load per round; rounds of 1, 2, 4 ... 64 pauses, then 64 each) until it is
 * signalled or `end` passes. Returns whether the signal landed.
 */
static bool spin_until(cw__completion *c, uint64_t end) {
    cw__backoff b = CW__BACKOFF_INITIALIZER;
    uint64_t spins = 0;
    bool signalled;
    while (!(signalled = cw__completion_is_signalled(c))) {
        if (!cw__backoff_spin(&b)) {
            b.round = CW__BACKOFF_ROUNDS - 1u; /* keep spinning at the longest round */
            continue;
        }
        ++spins;
        if (cw_now_ns() >= end)
            break;
    }
    cw__stat_add(CW__STAT_SPINS, spins);
    return signalled;
}

/* After the spin budget: a few yields before parking. They matter when the
 * thread that will signal shares this CPU (1 CPU, 1 worker): spinning only
 * delayed it, a yield lets it run. */
static bool yield_a_little(cw__completion *c) {
    bool signalled = false;
    unsigned i = 0;
    while (!signalled && i < CW_SPIN_PARK_YIELDS) {
        sched_yield();
        ++i;
        signalled = cw__completion_is_signalled(c);
    }
    cw__stat_add(CW__STAT_YIELDS, i);
    return signalled;
}

/* Take a completion of the row's kind and join it to the event's callback;
 * on error nothing is held. */
static int acquire_and_join(cl_event event, const cw__plan *p, cw__completion **c,
                            cl_int *cl_status) {
    int rc = cw__completion_acquire(p->row->kind, c);
    if (rc != CW_OK)
        return rc;
    unsigned how = CW__JOIN_SWEEP;
    if ((p->flags & CW_WAIT_OWN_CALLBACK) && p->deadline_ns == CW_DEADLINE_NONE)
        how |= CW__JOIN_OWN;
    if ((rc = cw__table_join(event, *c, how, cl_status)) != CW_OK)
        cw__table_leave(event, *c, false);
    return rc;
}

/* After giving up at the deadline: a signal that landed as we left means
 * the event may have finished; report what happened, if anything. */
static int timeout_or_finished(cl_event event, bool signalled, cl_int *cl_status) {
    cl_int st;
    if (signalled && cw__status_read(event, &st) == CW_OK && st <= CL_COMPLETE) {
        *cl_status = st;
        cw__table_forget(event);
        return CW_OK;
    }
    return CW_ERR_TIMEOUT;
}

/* The end of a callback wait: give `c` back (forgetting the event's record
 * when it finished) and return the wait's answer, a timeout that raced
 * the landing signal included. */
static int leave_with(cl_event event, cw__completion *c, int rc, cl_int *cl_status) {
    bool landed = cw__table_leave(event, c, rc == CW_OK);
    if (rc == CW_ERR_TIMEOUT)
        rc = timeout_or_finished(event, landed, cl_status);
    return rc == CW_OK ? cw__status_verdict(*cl_status) : rc;
}

/* A status read found the command complete while `c` was not signalled:
 * its callback is late. The report keeps `c`, still joined, for the
 * learner to leave (it may wait a little for the callback to time it). */
static int seen_first(cw__completion *c, uint64_t seen_ns, uint64_t running_ns, cw__report *r) {
    cw__stat_add(CW__STAT_LATE_SEEN, 1);
    r->seen_first = c;
    r->seen_ns = seen_ns;
    r->running_ns = running_ns;
    return CW_OK;
}

/*
 * The callback ways. The event's one callback (shared by every wait on it)
 * signals this wait's completion; a signal means "read the status now"
 * (cw__table_recheck says why). With CW_WAIT_OWN_CALLBACK and no timeout the
 * first subscription is a callback of the wait's own; a later one, after a
 * signal without a verdict, goes through the event's shared record like any
 * other, so the wait adds at most one registration. Between signals the
 * waiter wakes to read the status on the check schedule (docs/design.md,
 * "Failed commands"): none where the platform's failed commands fire their
 * callbacks, the first one after the interval or, with the default
 * interval, after twice the expected wait. A spin budget, when there is
 * one, is spent first, with the same status checks inside it, so a long
 * spin cannot hide a failure; the choice may read the status once when the
 * spin ran out, or once into the park (its peeks), which is how a callback
 * later than the command is seen.
 */
int cw__way_park(cl_event event, const cw__plan *p, const cw__choice *ch, cw__report *r,
                 cl_int *cl_status) {
    uint64_t deadline = p->deadline_ns;
    cw__completion *c;
    int rc = acquire_and_join(event, p, &c, cl_status);
    if (rc != CW_OK)
        return rc;
    cw__check_schedule checks = p->checks;
    /* One clock read after each step, shared by the decisions that follow
     * it: a stale `now` only errs towards parking with a deadline that has
     * passed, which returns at once. */
    uint64_t now = cw_now_ns();
    /* When a status read last saw the command running (the first look, at
     * about the start): a late callback is measured from the read that saw
     * the command done, uncertain by the time since this one. */
    uint64_t running = p->start_ns ? p->start_ns : now;
    uint64_t check = cw__after_ns(
        now, cw__plan_first_check_ns(&checks, ch->plan_ns, cw__driver_failed_fire(p->driver)));
    uint64_t spin_end = ch->spin_ns ? cw__after_ns(now, ch->spin_ns) : 0;
    bool peek = ch->peek_after_spin && ch->spin_ns;
    uint64_t peek_at = ch->peek_ns ? cw__after_ns(now, ch->peek_ns) : CW_DEADLINE_NONE;
    for (;;) {
        uint64_t until = check < deadline ? check : deadline;
        if (peek_at < until)
            until = peek_at;
        bool signalled = false;
        if (now < spin_end) {
            signalled = spin_until(c, spin_end < until ? spin_end : until);
            now = cw_now_ns();
            if (!signalled && now >= spin_end)
                signalled = yield_a_little(c);
            if (!signalled && now >= spin_end && peek) {
                /* Spun for longer than the wait was expected to last: has
                 * the command finished without its callback? */
                peek = false;
                rc = cw__status_read(event, cl_status);
                if (rc != CW_OK || *cl_status <= CL_COMPLETE) {
                    if (rc == CW_OK && *cl_status == CL_COMPLETE && !cw__completion_is_signalled(c))
                        return seen_first(c, now, running, r);
                    break;
                }
            }
        }
        bool interrupted = false;
        if (!signalled && now >= spin_end && now < until) {
            cw__stat_add(CW__STAT_PARKS, 1);
            int parked = cw__completion_wait(c, p->parker, until);
            signalled = parked == CW_OK;
            interrupted = parked == CW_ERR_INTERRUPTED;
        }
        if (!signalled)
            signalled = cw__completion_is_signalled(c);
        now = cw_now_ns();
        if (signalled) {
            /* Seen now; the landing time is valid until the release. */
            cw__stat_woken(cw__completion_landed_ns(c), now);
            rc = cw__table_recheck(event, &c, cl_status);
            if (!c)
                return rc;
            if (rc != CW_OK || *cl_status <= CL_COMPLETE)
                break;
            running = now;
        } else if (now >= check || now >= deadline || now >= peek_at || interrupted) {
            /* An interrupt reads the status as a timeout does: a command
             * that finished meanwhile is reported as such. */
            rc = cw__status_read(event, cl_status);
            if (now >= check)
                cw__stat_add(CW__STAT_CHECKS, 1);
            peek_at = CW_DEADLINE_NONE;
            if (rc != CW_OK || *cl_status <= CL_COMPLETE) {
                if (rc == CW_OK && *cl_status == CL_COMPLETE && !cw__completion_is_signalled(c))
                    return seen_first(c, now, running, r);
                break;
            }
            if (interrupted) {
                rc = CW_ERR_INTERRUPTED;
                break;
            }
            running = now;
            if (now >= check) {
                cw__plan_checks_grow(&checks, p->start_ns ? now - p->start_ns : 0);
                check = cw__after_ns(now, checks.interval_ns);
            }
        }
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
    }
    return leave_with(event, c, rc, cl_status);
}

/*
 * The polling plan of auto's waits where callbacks are late: planned with
 * the choice's expected wait (when the queue's commands end, where polls
 * have told it, not how long its waits took: those hold the late callbacks
 * and every poll's overshoot). With `wake_early` it wakes
 * CW__LATE_EARLY_SHIFT of the expected wait before its end: a plan of
 * whole waits holds the overshoot of the waits before it, and polling from
 * a little before lets it come down to the command's own length.
 */
cw__poll_steps cw__late_steps(const cw__plan *p, const cw__choice *ch, bool wake_early) {
    uint64_t early = CW__MICRODELAY_SPIN_NS;
    if (wake_early)
        early += ch->plan_ns >> CW__LATE_EARLY_SHIFT;
    cw__poll_steps s = cw__poll_steps_of(p, early, CW__LATE_POLL_SHIFT);
    s.expected = ch->plan_ns;
    cw__poll_steps_hybrid(p, &s);
    cw__poll_steps_fine(&s, ch->fine_ns, ch->fine_early_ns);
    if (ch->sleep_to_end)
        s.least = s.expected;
    return s;
}

/*
 * Auto where callbacks come late, with a parker of the caller's or on a
 * lateness-sampling turn: the callback is registered as for any callback
 * wait, but the waiter does not count on it. It polls the status on the
 * late steps (sleep toward the expected end, then growing microdelays,
 * with the timer slack lowered), each delay spent on the completion,
 * spinning (under CW__BACKOFF_FLOOR_NS: a park that short overshoots by
 * about as much as it sleeps) or parked, so the callback still ends the
 * wait early when it comes first. Every poll is a status read, so a
 * failure is seen within the check interval, or with the default interval
 * within the longer of it and the time waited so far.
 */
int cw__way_poll_steps(cl_event event, const cw__plan *p, const cw__choice *ch, cw__report *r,
                       cl_int *cl_status) {
    cw__completion *c;
    int rc = acquire_and_join(event, p, &c, cl_status);
    if (rc != CW_OK)
        return rc;
    cw__stat_add(CW__STAT_HYBRID, 1);
    const uint64_t deadline = p->deadline_ns;
    cw__poll_steps s = cw__late_steps(p, ch, true);
    cw__slack slack = cw__slack_lower();
    uint64_t polls = 0, sleeps = 0, last_running = 0;
    bool first = false, interrupted = false;
    for (;;) {
        if (cw__completion_is_signalled(c)) {
            cw__stat_woken(cw__completion_landed_ns(c), cw_now_ns());
            bool polling = s.past_expected;
            rc = cw__table_recheck(event, &c, cl_status);
            if (!c) {
                cw__slack_restore(&slack);
                return rc;
            }
            if (rc != CW_OK || *cl_status <= CL_COMPLETE) {
                /* The callback beat the polls. Only while polling past the
                 * expected end is a poll's delay short enough to tell that
                 * it was not late. */
                cw__stat_add(CW__STAT_HYBRID_CALLBACK_FIRST, 1);
                r->callback_in_time = polling && rc == CW_OK;
                break;
            }
        }
        rc = cw__status_read(event, cl_status);
        ++polls;
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            first = *cl_status == CL_COMPLETE && !cw__completion_is_signalled(c);
            cw__end_seen(p, r, last_running, cw_now_ns(), s.overshoot_shift);
            break;
        }
        uint64_t now = cw_now_ns();
        last_running = now;
        if (now >= deadline || interrupted) {
            rc = interrupted ? CW_ERR_INTERRUPTED : CW_ERR_TIMEOUT;
            break;
        }
        uint64_t d = cw__poll_steps_next(&s, now, deadline);
        if (d < CW__BACKOFF_FLOOR_NS) {
            spin_until(c, now + d);
        } else {
            ++sleeps;
            cw__stat_add(CW__STAT_PARKS, 1);
            /* Interrupted: the status is read once more, at the top. */
            if (cw__completion_wait(c, p->parker, now + d) == CW_ERR_INTERRUPTED &&
                !cw__completion_is_signalled(c))
                interrupted = true;
        }
    }
    cw__slack_restore(&slack);
    cw__stat_add(CW__STAT_POLLS, polls);
    cw__stat_add(CW__STAT_SLEEPS, sleeps);
    if (first)
        return seen_first(c, cw_now_ns(), last_running ? last_running : p->start_ns, r);
    return leave_with(event, c, rc, cl_status);
}
