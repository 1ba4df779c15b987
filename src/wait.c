/* SPDX-License-Identifier: MIT */
/* Layer 6.3: cw_wait and the ways a strategy waits (the table is strategy.c). */
#include "completion.h"
#include "estimate.h"
#include "relax.h"
#include "stats_internal.h"
#include "status.h"
#include "strategy.h"
#include "table.h"

#include <sched.h>

static int wait_blocking(cl_event event, cl_int *cl_status) {
    cl_int err = clWaitForEvents(1, &event);
    if (err == CL_SUCCESS) {
        *cl_status = CL_COMPLETE;
        return CW_OK;
    }
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        int rc = cw__status_read(event, cl_status);
        return rc != CW_OK ? rc : cw__status_verdict(*cl_status);
    }
    return cw__status_error(err, cl_status);
}

/* With a deadline, poll reads the clock only once per this many status
 * reads, so that the loop stays a bare poll of the status (a clock read
 * costs tens of nanoseconds on a VM). */
#define POLL_CLOCK_EVERY 64u

static int wait_poll(cl_event event, uint64_t deadline, cl_int *cl_status) {
    int rc;
    unsigned i = 1;
    for (;; ++i) {
        rc = cw__status_read(event, cl_status);
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            rc = cw__status_verdict(*cl_status);
            break;
        }
        if (deadline != CW_DEADLINE_NONE && i % POLL_CLOCK_EVERY == 0 && cw_now_ns() >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        cw__relax();
    }
    cw__stat_add(CW__STAT_POLLS, i); /* once per wait: the loop itself stays a bare poll */
    return rc;
}

/*
 * Backoff polling: no callback, no lock, no wake-up; the waiter reads the
 * status and sleeps. The sleeps are what costs accuracy: Linux may defer a
 * sleeper's wake-up by its timer slack (the timer-slack table in
 * bench/README.md), so the slack is lowered to 1 ns for the wait and
 * restored on every return path.
 */
/*
 * The shortest sleep backoff-poll plans through an expected wait. With the
 * cap below (no sleep longer than the time waited so far), a command that
 * runs R ns is seen done by max(2 R, R + this) plus the wake-up latency,
 * whatever the estimate says.
 */
#define BACKOFF_FLOOR_NS 50000u
/* The timer slack backoff-poll sleeps with: the least Linux takes (0 would
 * mean the thread's default). */
#define BACKOFF_TIMERSLACK_NS 1u

static int wait_backoff_poll(cl_event event, const cw__plan *p, cl_int *cl_status) {
    uint64_t start = p->start_ns, expected = p->expected_ns, deadline = p->deadline_ns;
    /* No sleep outlasts the check interval either, so a failure is seen as
     * soon by this strategy as by the callback ones. */
    uint64_t longest = p->checks.first_ns;
    uint64_t old_slack = 0;
    bool slack_set = cw__timerslack_set(BACKOFF_TIMERSLACK_NS, &old_slack) == CW_OK;
    uint64_t step = 1000; /* the next short delay, ns: 1 µs, doubling */
    uint64_t polls = 0, spins = 0, sleeps = 0;
    int rc;
    for (;;) {
        rc = cw__status_read(event, cl_status);
        ++polls;
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            rc = cw__status_verdict(*cl_status);
            break;
        }
        uint64_t now = cw_now_ns();
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        uint64_t elapsed = now - start, d;
        if (expected > elapsed + 2u * CW__MICRODELAY_SPIN_NS) {
            /* Sleep through the expected rest, waking a spin's length early,
             * but never longer than the time waited so far: an estimate
             * that is far too long (a first launch that compiled the
             * kernel) then costs a few extra polls, never a late answer. */
            d = expected - elapsed - CW__MICRODELAY_SPIN_NS;
            uint64_t cap = elapsed > BACKOFF_FLOOR_NS ? elapsed : BACKOFF_FLOOR_NS;
            if (d > cap)
                d = cap;
        } else {
            /* Past the estimate (or none): poll at growing intervals, capped
             * at an eighth of the time waited so far, so the overshoot after
             * the command finishes stays within about 12% of the wait. */
            uint64_t cap = elapsed / 8u < 1000u ? 1000u : elapsed / 8u;
            d = step < cap ? step : cap;
            step = d * 2u;
        }
        if (d > longest)
            d = longest;
        if (d > deadline - now)
            d = deadline - now;
        if (d > CW__MICRODELAY_SPIN_NS)
            ++sleeps;
        else
            ++spins;
        cw__microdelay(d);
    }
    if (slack_set)
        cw__timerslack_set(old_slack, NULL);
    cw__stat_add(CW__STAT_POLLS, polls);
    cw__stat_add(CW__STAT_SPINS, spins);
    cw__stat_add(CW__STAT_SLEEPS, sleeps);
    return rc;
}

/* `now` + `ns`, saturating at "no deadline". */
static uint64_t after_ns(uint64_t now, uint64_t ns) {
    return ns >= CW_DEADLINE_NONE - now ? CW_DEADLINE_NONE : now + ns;
}

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

/*
 * The callback strategies. The event's one callback (shared by every wait on
 * it) signals this wait's completion; a signal means "read the status now"
 * (cw__table_recheck says why). With CW_WAIT_OWN_CALLBACK and no timeout the
 * first subscription is a callback of the wait's own; a later one, after a
 * signal without a verdict, goes through the event's shared record like any
 * other, so the wait adds at most one registration. Between signals the
 * waiter wakes to read the status on the check schedule (docs/design.md,
 * "Failed commands"). A spin budget, when there is one, is spent first,
 * with the same status checks inside it, so a long spin cannot hide a
 * failure.
 */
static int wait_callback(cl_event event, cw__plan *p, cl_int *cl_status) {
    uint64_t deadline = p->deadline_ns;
    cw__completion *c;
    int rc = cw__completion_acquire(p->row->kind, &c);
    if (rc != CW_OK)
        return rc;
    unsigned how = CW__JOIN_SWEEP;
    if ((p->flags & CW_WAIT_OWN_CALLBACK) && deadline == CW_DEADLINE_NONE)
        how |= CW__JOIN_OWN;
    if ((rc = cw__table_join(event, c, how, cl_status)) != CW_OK) {
        cw__table_leave(event, c, false);
        return rc;
    }
    /* One clock read after each step, shared by the decisions that follow
     * it: a stale `now` only errs towards parking with a deadline that has
     * passed, which returns at once. */
    uint64_t now = cw_now_ns();
    uint64_t check = after_ns(now, p->checks.interval_ns);
    uint64_t spin_end = p->spin_ns ? after_ns(now, p->spin_ns) : 0;
    for (;;) {
        uint64_t until = check < deadline ? check : deadline;
        bool signalled = false;
        if (now < spin_end) {
            signalled = spin_until(c, spin_end < until ? spin_end : until);
            now = cw_now_ns();
            if (!signalled && now >= spin_end)
                signalled = yield_a_little(c);
        }
        if (!signalled && now >= spin_end && now < until) {
            cw__stat_add(CW__STAT_PARKS, 1);
            signalled = cw__completion_wait(c, p->parker, until) == CW_OK;
        }
        if (!signalled)
            signalled = cw__completion_is_signalled(c);
        now = cw_now_ns();
        if (signalled) {
            /* Seen now; the landing time is valid until the release. */
            uint64_t landed = cw__completion_landed_ns(c);
            cw__stat_latency(now > landed ? now - landed : 0);
            rc = cw__table_recheck(event, &c, cl_status);
            if (!c)
                return rc;
            if (rc != CW_OK || *cl_status <= CL_COMPLETE)
                break;
        } else if (now >= check || now >= deadline) {
            rc = cw__status_read(event, cl_status);
            if (rc != CW_OK || *cl_status <= CL_COMPLETE)
                break;
            if (now >= check) {
                cw__plan_checks_grow(&p->checks);
                check = after_ns(now, p->checks.interval_ns);
            }
        }
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
    }
    bool finished = rc == CW_OK;
    if (cw__table_leave(event, c, finished) && rc == CW_ERR_TIMEOUT) {
        /* A signal landed as we gave up: report what happened, if anything. */
        cl_int st;
        if (cw__status_read(event, &st) == CW_OK && st <= CL_COMPLETE) {
            *cl_status = st;
            cw__table_forget(event);
            rc = CW_OK;
        }
    }
    return rc == CW_OK ? cw__status_verdict(*cl_status) : rc;
}

static int wait_one(cl_event event, cw__plan *p, cl_int *cl_status) {
    /* clWaitForEvents validates and flushes by itself; keep it the bare call
     * so that it stays the benchmark's reference. It cannot time out: with a
     * timeout the wait takes the row's callback path (the pthread condition
     * variable: the same kind of sleep), plus the status checks. */
    if (p->bare_block)
        return wait_blocking(event, cl_status);

    /* One look up front: it rejects a bad handle before any registration,
     * returns at once for work that already finished or failed, and gives
     * a queued command its flush. */
    int rc = cw__table_look(event, !(p->flags & CW_WAIT_NO_FLUSH), cl_status);
    if (rc != CW_OK || *cl_status <= CL_COMPLETE)
        return rc != CW_OK ? rc : cw__status_verdict(*cl_status);
    if (p->row->estimates)
        cw__estimate_plan(p, event);

    switch (p->row->method) {
    case CW__POLL:
        rc = wait_poll(event, p->deadline_ns, cl_status);
        break;
    case CW__BACKOFF:
        rc = wait_backoff_poll(event, p, cl_status);
        break;
    case CW__BLOCK: /* with a timeout */
    case CW__CALLBACK:
    default:
        rc = wait_callback(event, p, cl_status); /* its leave forgets a finished event */
        break;
    }
    if (rc == CW_OK && p->queue_key)
        cw__estimate_put(p->queue_key, cw_now_ns() - p->start_ns);
    bool polled = p->row->method == CW__POLL || p->row->method == CW__BACKOFF;
    if (polled && (rc == CW_OK || rc == CW_ERR_COMMAND_FAILED))
        cw__table_forget(event);
    return rc;
}

int cw_wait(cl_event event, const cw_wait_options *options, cl_int *cl_status) {
    cl_int status_sink;
    if (!cl_status)
        cl_status = &status_sink;
    *cl_status = CL_SUCCESS;
    if (!event)
        return CW_ERR_INVALID_ARGUMENT;
    cw__plan plan;
    int rc = cw__plan_make(options, &plan);
    if (rc != CW_OK)
        return rc;
    cw__stat_add(CW__STAT_WAITS, 1);
    rc = wait_one(event, &plan, cl_status);
    if (rc == CW_ERR_TIMEOUT)
        cw__stat_add(CW__STAT_TIMEOUTS, 1);
    return rc;
}
