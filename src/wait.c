/* SPDX-License-Identifier: MIT */
/* Layer 6: cw_wait and the ways a strategy waits (the table is strategy.c). */
#include "clevent.h"
#include "completion.h"
#include "estimate.h"
#include "relax.h"
#include "stats_internal.h"
#include "strategy.h"

#include <sched.h>

static int wait_blocking(cl_event event, cl_int *cl_status) {
    cl_int err = clWaitForEvents(1, &event);
    if (err == CL_SUCCESS) {
        *cl_status = CL_COMPLETE;
        return CW_OK;
    }
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        int rc = cw__read_status(event, cl_status);
        return rc != CW_OK ? rc : cw__final_status(*cl_status);
    }
    return cw__cl_failure(err, cl_status);
}

/* With a deadline, poll reads the clock only once per this many status
 * reads, so that the loop stays a bare poll of the status (a clock read
 * costs tens of nanoseconds on a VM). */
#define POLL_CLOCK_EVERY 64u

static int wait_poll(cl_event event, uint64_t deadline, cl_int *cl_status) {
    int rc;
    unsigned i = 1;
    for (;; ++i) {
        rc = cw__read_status(event, cl_status);
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            rc = cw__final_status(*cl_status);
            break;
        }
        if (deadline != CW_DEADLINE_NONE && i % POLL_CLOCK_EVERY == 0 && cw_now_ns() >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        cw_relax();
    }
    cw__stat_add(CW__STAT_POLLS, i); /* once per wait: the loop itself stays a bare poll */
    return rc;
}

/*
 * Backoff polling: no callback, no lock, no wake-up; the waiter reads the
 * status and sleeps. The sleeps are what costs accuracy: with Linux's
 * default 50 µs timer slack a 10 µs sleep takes about 60 µs (README,
 * timer-slack table), so the slack is lowered to 1 ns for the wait and
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

static int wait_backoff_poll(cl_event event, uint64_t start, uint64_t expected, uint64_t deadline,
                             uint32_t check_interval_us, cl_int *cl_status) {
    /* No sleep outlasts the check interval either, so a failure is seen as
     * soon by this strategy as by the callback ones. */
    uint64_t longest =
        (uint64_t)(check_interval_us ? check_interval_us : CW_CHECK_INTERVAL_US_DEFAULT) * 1000u;
    uint64_t old_slack = 0;
    bool slack_set = cw_timerslack_set(BACKOFF_TIMERSLACK_NS, &old_slack) == CW_OK;
    uint64_t step = 1000; /* the next short delay, ns: 1 µs, doubling */
    uint64_t polls = 0, spins = 0, sleeps = 0;
    int rc;
    for (;;) {
        rc = cw__read_status(event, cl_status);
        ++polls;
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            rc = cw__final_status(*cl_status);
            break;
        }
        uint64_t now = cw_now_ns();
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        uint64_t elapsed = now - start, d;
        if (expected > elapsed + 2u * CW_MICRODELAY_SPIN_NS) {
            /* Sleep through the expected rest, waking a spin's length early,
             * but never longer than the time waited so far: an estimate
             * that is far too long (a first launch that compiled the
             * kernel) then costs a few extra polls, never a late answer. */
            d = expected - elapsed - CW_MICRODELAY_SPIN_NS;
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
        if (d > CW_MICRODELAY_SPIN_NS)
            ++sleeps;
        else
            ++spins;
        cw_microdelay(d);
    }
    if (slack_set)
        cw_timerslack_set(old_slack, NULL);
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
static bool spin_until(cw_completion *c, uint64_t end) {
    cw_backoff b = CW_BACKOFF_INITIALIZER;
    uint64_t spins = 0;
    bool signalled;
    while (!(signalled = cw_completion_is_signalled(c))) {
        if (!cw_backoff_spin(&b)) {
            b.round = CW_BACKOFF_ROUNDS - 1u; /* keep spinning at the longest round */
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
static bool yield_a_little(cw_completion *c) {
    bool signalled = false;
    unsigned i = 0;
    while (!signalled && i < CW_SPIN_PARK_YIELDS) {
        sched_yield();
        ++i;
        signalled = cw_completion_is_signalled(c);
    }
    cw__stat_add(CW__STAT_YIELDS, i);
    return signalled;
}

/*
 * The callback strategies. The event's one callback (shared by every wait on
 * it) signals this wait's completion; a signal means "read the status now",
 * because the callback reports the trigger status, not the command's (an
 * implementation may call the CL_COMPLETE callback of a failed command with
 * CL_COMPLETE), and because cw's record of the event may have been dropped
 * (cw_event_forget) while the command still runs, in which case the wait
 * subscribes again. With CW_WAIT_OWN_CALLBACK and no timeout the first
 * subscription is a callback of the wait's own (cw__event_subscribe_own);
 * a later one, after a signal without a verdict, goes through the event's
 * shared record like any other, so the wait adds at most one registration.
 * Between signals the waiter wakes to read the status on
 * the check schedule: a failed command may never fire the callback (PoCL 3.1
 * to 6.0, rusticl). A spin budget, when there is one, is spent first, with
 * the same status checks inside it, so a long spin cannot hide a failure.
 */
static int wait_callback(cl_event event, cw_completion_kind kind, const cw_wait_options *o,
                         uint64_t spin_ns, uint64_t deadline, cl_int *cl_status) {
    cw_futex_parker own;
    cw_parker *parker = o->parker;
    if (!parker) {
        cw_futex_parker_init(&own);
        parker = &own.parker;
    }
    cw_completion *c;
    int rc = (o->flags & CW_WAIT_OWN_CALLBACK) && deadline == CW_DEADLINE_NONE
                 ? cw__event_join_own(event, kind, &c, cl_status)
                 : cw__event_join(event, kind, NULL, &c, cl_status);
    if (rc != CW_OK)
        return rc;
    cw__check_schedule checks = cw__check_schedule_start(o->check_interval_us);
    /* One clock read after each step, shared by the decisions that follow
     * it: a read costs tens of nanoseconds on a VM, a share a short wait
     * notices. A stale `now` only errs towards parking with a deadline that
     * has passed, which returns at once. */
    uint64_t now = cw_now_ns();
    uint64_t check = after_ns(now, checks.interval_ns);
    uint64_t spin_end = spin_ns ? after_ns(now, spin_ns) : 0;
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
            signalled = cw_completion_wait(c, parker, until) == CW_OK;
        }
        if (!signalled)
            signalled = cw_completion_is_signalled(c);
        now = cw_now_ns();
        if (signalled) {
            /* Seen now; the landing time is valid until the release. */
            uint64_t landed = cw_completion_landed_ns(c);
            cw__stat_latency(now > landed ? now - landed : 0);
        }
        if (signalled || now >= check || now >= deadline) {
            rc = cw__read_status(event, cl_status);
            if (rc != CW_OK || *cl_status <= CL_COMPLETE)
                break;
        }
        if (signalled) {
            /* No verdict behind the signal: wait on a fresh subscription. */
            cw__event_leave(event, c);
            if ((rc = cw__event_join(event, kind, NULL, &c, cl_status)) != CW_OK)
                return rc;
        } else if (now >= check) {
            cw__check_schedule_grow(&checks);
            check = after_ns(now, checks.interval_ns);
        }
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
    }
    if (cw__event_leave(event, c) && rc == CW_ERR_TIMEOUT) {
        /* A signal landed as we gave up: report what happened, if anything. */
        cl_int st;
        if (cw__read_status(event, &st) == CW_OK && st <= CL_COMPLETE) {
            *cl_status = st;
            rc = CW_OK;
        }
    }
    return rc == CW_OK ? cw__final_status(*cl_status) : rc;
}

static int wait_one(cl_event event, const cw_wait_options *o, cl_int *cl_status) {
    const cw__strategy_row *row = cw__strategy_row_of(o->strategy);
    /* Only backoff-poll and the strategies that keep estimates time the wait. */
    uint64_t start = row->estimates || row->method == CW__BACKOFF ? cw_now_ns() : 0;
    /* clWaitForEvents validates and flushes by itself; keep it the bare call
     * so that it stays the benchmark's reference. It cannot time out: with a
     * timeout the wait takes the row's callback path (the pthread condition
     * variable: the same kind of sleep), plus the status checks. */
    if (row->method == CW__BLOCK && o->timeout_us == 0)
        return wait_blocking(event, cl_status);

    /* One status read up front: it rejects a bad handle before any
     * registration, returns at once for work that already finished or
     * failed (a failed command fires no callback on PoCL 3.1), and tells
     * whether a flush is needed: only a CL_QUEUED command can still be
     * waiting for one; CL_SUBMITTED and later are with the device already. */
    int rc = cw__read_status(event, cl_status);
    if (rc == CW_OK && *cl_status <= CL_COMPLETE) {
        /* Finished: an earlier wait's record of the event, if any, holds a
         * reference and may wait for a callback that never comes. */
        cw__event_retire(event);
        return cw__final_status(*cl_status);
    }
    if (rc != CW_OK)
        return rc;
    if (!(o->flags & CW_WAIT_NO_FLUSH) &&
        (rc = cw__flush_if_queued(event, *cl_status, cl_status)) != CW_OK)
        return rc;

    uint64_t deadline = cw__deadline_of(o);
    uintptr_t key = row->estimates ? cw__queue_key(event) : 0;
    uint64_t expected = key ? cw__estimate_get(key) : 0;
    uint64_t spin_ns = 0;
    if (row->spin == CW__SPIN_BUDGET)
        spin_ns = (uint64_t)(o->spin_us ? o->spin_us : CW_SPIN_US_DEFAULT) * 1000u;
    else if (row->spin == CW__SPIN_AUTO)
        spin_ns = cw__auto_spin_ns(o, key, expected);

    switch (row->method) {
    case CW__POLL:
        rc = wait_poll(event, deadline, cl_status);
        break;
    case CW__BACKOFF:
        rc = wait_backoff_poll(event, start, expected, deadline, o->check_interval_us, cl_status);
        break;
    case CW__BLOCK: /* with a timeout */
    case CW__CALLBACK:
    default:
        rc = wait_callback(event, row->kind, o, spin_ns, deadline, cl_status);
        break;
    }
    if (rc == CW_OK && key)
        cw__estimate_put(key, cw_now_ns() - start);
    if (rc == CW_OK || rc == CW_ERR_COMMAND_FAILED)
        cw__event_retire(event);
    return rc;
}

int cw_wait(cl_event event, const cw_wait_options *options, cl_int *cl_status) {
    static const cw_wait_options defaults = {0};
    const cw_wait_options *o = options ? options : &defaults;
    cl_int status_sink;
    if (!cl_status)
        cl_status = &status_sink;
    *cl_status = CL_SUCCESS;
    if (!event)
        return CW_ERR_INVALID_ARGUMENT;
    int rc = cw__validate_options(o);
    if (rc != CW_OK)
        return rc;
    cw__stat_add(CW__STAT_WAITS, 1);
    rc = wait_one(event, o, cl_status);
    if (rc == CW_ERR_TIMEOUT)
        cw__stat_add(CW__STAT_TIMEOUTS, 1);
    return rc;
}
