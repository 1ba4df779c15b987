/* SPDX-License-Identifier: MIT */
/* Layer 6.3: cw_wait and the ways a strategy waits (the table is strategy.c). */
#include "completion.h"
#include "driver.h"
#include "estimate.h"
#include "relax.h"
#include "stats_internal.h"
#include "status.h"
#include "strategy.h"
#include "table.h"

#include <sched.h>
#include <time.h>

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

/* Past the estimate backoff-poll's delays are capped at the time waited
 * so far >> this (1/8): the overshoot after the command ends stays within
 * that share of the wait. */
#define BACKOFF_OVERSHOOT_SHIFT 3u
/* The timer slack backoff-poll sleeps with: the least Linux takes (0 would
 * mean the thread's default). */
#define BACKOFF_TIMERSLACK_NS 1u

/* The thread's timer slack, lowered for a polling wait and restored on
 * every return path: Linux may defer a sleeper's wake-up by its slack (the
 * timer-slack table in bench/README.md). */
typedef struct slack_guard {
    uint64_t old;
    bool set;
} slack_guard;

static slack_guard slack_lower(void) {
    slack_guard g = {0, false};
    g.set = cw__timerslack_set(BACKOFF_TIMERSLACK_NS, &g.old) == CW_OK;
    return g;
}

static void slack_restore(const slack_guard *g) {
    if (g->set)
        cw__timerslack_set(g->old, NULL);
}

/*
 * What two polls tell of the command's end, one that saw it running (at
 * `running`) and the next, which saw it done (at `seen`): it lies between
 * them, and the plan keeps their middle (p->ended_ns) and half the gap
 * (p->ended_span_ns), 0 where the two lie within the polls' overshoot
 * share of the wait (>> `shift`): then the middle is the end, give or take
 * that share. Wider apart (the sleeps toward the expected end double from
 * 50 µs, a short delay overshoots by a wake-up's latency), the middle is
 * only a guess (cw__estimate_end_put).
 */
static void end_seen(cw__plan *p, uint64_t running, uint64_t seen, unsigned shift) {
    if (!p->start_ns || !running || seen <= running)
        return;
    uint64_t half = (seen - running) / 2u;
    p->ended_ns = running + half;
    p->ended_span_ns = seen - running > (seen - p->start_ns) >> shift ? half : 0;
}

/* poll_until's answer when it reached `stop` with the command running. */
#define POLL_STOPPED 1

/*
 * The loop of a polling wait: read the status, sleep the next of `s`'s
 * delays (up to CW__MICRODELAY_SPIN_NS spun), until the command is
 * finished, the deadline passes (CW_ERR_TIMEOUT) or `stop` does
 * (POLL_STOPPED). With `tell_end`, what the polls saw of a finished
 * command's end goes to `p` (end_seen): the end estimate.
 */
static int poll_until(cl_event event, cw__plan *p, cw__poll_steps *s, uint64_t stop, bool tell_end,
                      cl_int *cl_status) {
    uint64_t polls = 0, spins = 0, sleeps = 0, last_running = 0;
    uint64_t until = stop < p->deadline_ns ? stop : p->deadline_ns;
    int rc;
    for (;;) {
        rc = cw__status_read(event, cl_status);
        ++polls;
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            rc = cw__status_verdict(*cl_status);
            if (tell_end)
                end_seen(p, last_running, cw_now_ns(), s->overshoot_shift);
            break;
        }
        uint64_t now = cw_now_ns();
        last_running = now;
        if (now >= p->deadline_ns) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        if (now >= stop) {
            rc = POLL_STOPPED;
            break;
        }
        uint64_t d = cw__poll_steps_next(s, now, until);
        if (d > CW__MICRODELAY_SPIN_NS)
            ++sleeps;
        else
            ++spins;
        cw__microdelay(d);
    }
    cw__stat_add(CW__STAT_POLLS, polls);
    cw__stat_add(CW__STAT_SPINS, spins);
    cw__stat_add(CW__STAT_SLEEPS, sleeps);
    return rc;
}

/*
 * Backoff polling: no callback, no lock, no wake-up; the waiter reads the
 * status and sleeps (cw__poll_steps, an eighth of the wait at most past the
 * estimate; delays up to CW__MICRODELAY_SPIN_NS are spun).
 */
static int wait_backoff_poll(cl_event event, cw__plan *p, cl_int *cl_status) {
    cw__poll_steps s = cw__poll_steps_of(p, CW__MICRODELAY_SPIN_NS, BACKOFF_OVERSHOOT_SHIFT);
    slack_guard slack = slack_lower();
    int rc = poll_until(event, p, &s, CW_DEADLINE_NONE, false, cl_status);
    slack_restore(&slack);
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

/* Take a completion of the row's kind and join it to the event's callback,
 * as wait_callback and wait_hybrid do; on error nothing is held. */
static int acquire_and_join(cl_event event, cw__plan *p, cw__completion **c, cl_int *cl_status) {
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

/*
 * A status read found the command complete while `c` was not signalled: its
 * callback is late. Count it, and leave the event's record (if any) to
 * measure by how much when the callback lands (one measurement at a time
 * per platform), or leave as after any finished wait. `running_ns`: when
 * the read before saw the command running (the command ended since).
 * Where the device takes every CPU this thread may run on, the thread that
 * calls the callback (on PoCL the worker that set the status) may simply
 * be waiting for the CPU this thread holds: left to land after the wait,
 * the callback would come once this thread sleeps again, after the
 * program's own work, and one such sample turns a platform late for every
 * short wait. There the wait first gives the CPU away: it parks on `c` for
 * up to CW__LATE_FLOOR_NS (not past its deadline), and a callback that
 * lands meanwhile is measured as it came; only one later than that, with
 * the CPU free for it, is left to measure after the wait, and is late.
 */
static void leave_seen_first(cl_event event, cw__plan *p, cw__completion *c, uint64_t running_ns) {
    cw__stat_add(CW__STAT_LATE_SEEN, 1);
    uint64_t now = cw_now_ns();
    if (!cw__driver_measure_claim(p->driver, now)) {
        cw__table_leave(event, c, true);
        return;
    }
    if (cw__estimate_shares_cpus(p->queue_key)) {
        uint64_t until = after_ns(now, CW__LATE_FLOOR_NS);
        if (until > p->deadline_ns)
            until = p->deadline_ns;
        cw__stat_add(CW__STAT_PARKS, 1);
        if (cw__completion_wait(c, p->parker, until) == CW_OK || cw__completion_is_signalled(c)) {
            cw__driver_lateness_landed(p->driver, cw__completion_landed_ns(c), now, running_ns);
            cw__table_leave(event, c, true);
            return;
        }
    }
    if (!cw__table_leave_seen(event, c, now, running_ns, p->driver))
        cw__driver_measure_cancel(p->driver);
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

/* Auto parks without a spin: every this many waits per thread on a platform
 * whose callback lateness is known (every wait until it is), for waits
 * expected to last at most PEEK_MAX_NS, it reads the status half way
 * through the expected wait: the expected wait of callback waits includes
 * the callbacks' lateness, so a command found complete there before its
 * callback shows them late by up to half the wait, and measures by how
 * much. One wake-up in 64 costs next to nothing; a lateness that matters
 * to a longer wait (E/32) is seen by its spin or checks, or is not worth
 * the polls. */
#define PEEK_EVERY 64u
#define PEEK_MAX_NS 10000000u

static uint64_t peek_time(const cw__plan *p, uint64_t now) {
    static _Thread_local unsigned waits;
    if (p->row->spin != CW__SPIN_AUTO || p->spin_ns || !p->expected_ns ||
        p->expected_ns > PEEK_MAX_NS || !p->driver)
        return CW_DEADLINE_NONE;
    if (cw__driver_lateness_known(p->driver) && ++waits % PEEK_EVERY != 0)
        return CW_DEADLINE_NONE;
    return after_ns(now, p->expected_ns / 2u);
}

/*
 * The callback strategies. The event's one callback (shared by every wait on
 * it) signals this wait's completion; a signal means "read the status now"
 * (cw__table_recheck says why). With CW_WAIT_OWN_CALLBACK and no timeout the
 * first subscription is a callback of the wait's own; a later one, after a
 * signal without a verdict, goes through the event's shared record like any
 * other, so the wait adds at most one registration. Between signals the
 * waiter wakes to read the status on the check schedule (docs/design.md,
 * "Failed commands"): none where the platform's failed commands fire their
 * callbacks, the first one after the interval or, with the default
 * interval, after twice the expected wait. A spin budget, when there is
 * one, is spent first, with the same status checks inside it, so a long
 * spin cannot hide a failure; auto reads the status once when its spin ran
 * out, or when it parks, now and then past the expected end (peek_time),
 * which is how a callback later than the command is seen.
 */
static int wait_callback(cl_event event, cw__plan *p, cl_int *cl_status) {
    uint64_t deadline = p->deadline_ns;
    cw__completion *c;
    int rc = acquire_and_join(event, p, &c, cl_status);
    if (rc != CW_OK)
        return rc;
    /* One clock read after each step, shared by the decisions that follow
     * it: a stale `now` only errs towards parking with a deadline that has
     * passed, which returns at once. */
    uint64_t now = cw_now_ns();
    /* When a status read last saw the command running (the first look, at
     * about the start): a late callback is measured from the read that saw
     * the command done, uncertain by the time since this one. */
    uint64_t running = p->start_ns ? p->start_ns : now;
    uint64_t check = after_ns(now, cw__plan_first_check_ns(&p->checks, p->expected_ns,
                                                           cw__driver_failed_fire(p->driver)));
    uint64_t spin_end = p->spin_ns ? after_ns(now, p->spin_ns) : 0;
    bool peek = p->row->spin == CW__SPIN_AUTO && p->spin_ns;
    uint64_t peek_at = peek_time(p, now);
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
                /* Auto spun for longer than the wait was expected to last:
                 * has the command finished without its callback? */
                peek = false;
                rc = cw__status_read(event, cl_status);
                if (rc != CW_OK || *cl_status <= CL_COMPLETE) {
                    if (rc == CW_OK && *cl_status == CL_COMPLETE &&
                        !cw__completion_is_signalled(c)) {
                        leave_seen_first(event, p, c, running);
                        return CW_OK;
                    }
                    break;
                }
            }
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
            running = now;
        } else if (now >= check || now >= deadline || now >= peek_at) {
            rc = cw__status_read(event, cl_status);
            if (now >= check)
                cw__stat_add(CW__STAT_CHECKS, 1);
            peek_at = CW_DEADLINE_NONE;
            if (rc != CW_OK || *cl_status <= CL_COMPLETE) {
                if (rc == CW_OK && *cl_status == CL_COMPLETE && !cw__completion_is_signalled(c)) {
                    leave_seen_first(event, p, c, running);
                    return CW_OK;
                }
                break;
            }
            running = now;
            if (now >= check) {
                cw__plan_checks_grow(&p->checks, p->start_ns ? now - p->start_ns : 0);
                check = after_ns(now, p->checks.interval_ns);
            }
        }
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
    }
    return leave_with(event, c, rc, cl_status);
}

/* Past the expected end auto's hybrid wait polls with delays of at most the
 * time waited so far >> this (1/16): finer than backoff-poll's, since it
 * waits so on drivers whose callbacks come too late to wait for. Delays
 * shorter than CW__BACKOFF_FLOOR_NS it spins on the completion rather than
 * parks: a park that short overshoots by about as much as it sleeps, and
 * such a driver's own wait spins (docs/design.md, "Late callbacks"). */
#define HYBRID_OVERSHOOT_SHIFT 4u
/* The hybrid wakes this share of the expected wait (1/16) before its end. */
#define HYBRID_EARLY_SHIFT 4u

/*
 * The polling plan of auto's waits where callbacks are late, the hybrid's
 * and the late wait's: planned with when the queue's commands end, where
 * polls have told it (cw__estimate_end_get), not with how long its waits
 * took: those hold the late callbacks of the callback waits and every
 * poll's overshoot, and a wait that slept toward them would keep that
 * overshoot for good. With `wake_early` (the hybrid) it wakes
 * HYBRID_EARLY_SHIFT of the expected wait before its end: without an end
 * estimate the estimate is of whole waits, the overshoot included, so a
 * wait that slept to its very end would keep the overshoot of the waits
 * before it for good; polling from a little before lets it come down to
 * the command's own length.
 */
static cw__poll_steps late_steps(cw__plan *p, bool wake_early) {
    uint64_t end = cw__estimate_end_get(p->queue_key);
    if (end)
        p->expected_ns = end;
    uint64_t early = CW__MICRODELAY_SPIN_NS;
    if (wake_early)
        early += p->expected_ns >> HYBRID_EARLY_SHIFT;
    cw__poll_steps s = cw__poll_steps_of(p, early, HYBRID_OVERSHOOT_SHIFT);
    cw__poll_steps_hybrid(p, &s);
    return s;
}

/*
 * Auto on a platform whose callbacks come late (cw__driver_late), with a
 * parker of the caller's or on a lateness-sampling turn (wait_late): the
 * callback is registered as for any callback wait, but the waiter does not
 * count on it. It polls the status on backoff-poll's steps (cw__poll_steps:
 * sleep toward the expected end of the wait, then growing microdelays, with
 * the timer slack lowered), each delay spent on the completion, spinning
 * (up to CW__MICRODELAY_SPIN_NS) or parked, so the callback still ends the
 * wait early when it comes first. Every poll is a status read, so a failure
 * is seen within the check interval, or with the default interval within
 * the longer of it and the time waited so far, as the callback waits see it.
 */
static int wait_hybrid(cl_event event, cw__plan *p, cl_int *cl_status) {
    uint64_t deadline = p->deadline_ns;
    cw__completion *c;
    int rc = acquire_and_join(event, p, &c, cl_status);
    if (rc != CW_OK)
        return rc;
    cw__stat_add(CW__STAT_HYBRID, 1);
    cw__poll_steps s = late_steps(p, true);
    slack_guard slack = slack_lower();
    uint64_t polls = 0, sleeps = 0, last_running = 0;
    bool seen_first = false;
    for (;;) {
        if (cw__completion_is_signalled(c)) {
            uint64_t now = cw_now_ns(), landed = cw__completion_landed_ns(c);
            cw__stat_latency(now > landed ? now - landed : 0);
            bool polling = s.past_expected;
            rc = cw__table_recheck(event, &c, cl_status);
            if (!c) {
                slack_restore(&slack);
                return rc;
            }
            if (rc != CW_OK || *cl_status <= CL_COMPLETE) {
                /* The callback beat the polls: it came within a poll's
                 * delay of the end, which is not late. Only while polling
                 * past the expected end is that delay short enough to tell. */
                cw__stat_add(CW__STAT_HYBRID_CALLBACK_FIRST, 1);
                if (polling && rc == CW_OK)
                    cw__driver_lateness_sample(p->driver, 0);
                break;
            }
        }
        rc = cw__status_read(event, cl_status);
        ++polls;
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            seen_first = *cl_status == CL_COMPLETE && !cw__completion_is_signalled(c);
            /* The command ended between the last poll that found it
             * running and this one: the estimate takes what the two tell
             * (end_seen), not this poll, or a wait that slept past the end
             * (the sleeps double while the estimate is ahead) would teach
             * the next wait to sleep as far. */
            end_seen(p, last_running, cw_now_ns(), s.overshoot_shift);
            break;
        }
        uint64_t now = cw_now_ns();
        last_running = now;
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        uint64_t d = cw__poll_steps_next(&s, now, deadline);
        if (d < CW__BACKOFF_FLOOR_NS) {
            spin_until(c, now + d);
        } else {
            ++sleeps;
            cw__stat_add(CW__STAT_PARKS, 1);
            cw__completion_wait(c, p->parker, now + d);
        }
    }
    slack_restore(&slack);
    cw__stat_add(CW__STAT_POLLS, polls);
    cw__stat_add(CW__STAT_SLEEPS, sleeps);
    if (seen_first) {
        leave_seen_first(event, p, c, last_running ? last_running : p->start_ns);
        return CW_OK;
    }
    return leave_with(event, c, rc, cl_status);
}

/* One late wait in this many per thread registers its callback (the
 * hybrid) although the callback is not waited for, so that the platform's
 * lateness stays measured: the hybrid's polls see the command done before
 * its callback and time the callback's landing. */
#define LATE_SAMPLE_EVERY 256u

/* A late wait's first delay past the expected end, and its shortest
 * there: the shortest one that is slept. A command not done by its
 * expected end is late by its device's own jitter (a timer's, an
 * interrupt's: tens of µs), so the 1, 2, 4 µs spins of backoff-poll would
 * mostly cost CPU; on a CPU the device shares they would also delay it.
 * The cap of 1/16 of the time waited would bring delays under it again
 * for the first 16 x this of a wait: a short wait would spin through its
 * device's jitter. */
#define LATE_FIRST_DELAY_NS (CW__MICRODELAY_SPIN_NS + 1000u)
/* A late wait polls on the hybrid's finer cap past the expected end (1/16
 * of the time waited, HYBRID_OVERSHOOT_SHIFT, not backoff-poll's 1/8): its
 * wall time is the one auto offers where the driver's own wait spins, and
 * a long kernel's first launches, planned with an end estimate still
 * rising toward it, poll past that estimate for much of the wait. It polls
 * for at least this share of the callback's lateness L (16 L): from there
 * on a poll may overshoot by more than the callback is late. */
#define LATE_POLL_SHIFT 4u
_Static_assert(LATE_POLL_SHIFT == HYBRID_OVERSHOOT_SHIFT,
               "a late wait polls as long as its polls are finer than the callback's lateness");

/*
 * Auto where callbacks are late and the driver's own wait does not sleep:
 * a callback that comes L after its command cannot end the wait sooner
 * than the polls, so registering it only costs CPU (the registration, the
 * record, the callback's wake-up of a thread that is polling anyway). The
 * wait polls on backoff-poll's steps with the hybrid's cap, planned with
 * the end estimate and with no callback, through the longer of 16 L and
 * twice the expected wait;
 * a wait that lasts longer than that (the first launch of a long kernel,
 * planned with a short estimate) has outgrown the lateness: it registers
 * the callback and parks as the callback waits do, the callback then
 * ending it at most L after its command, no later than a poll would. The
 * polls read the status, so a failure is seen as by backoff-poll.
 */
static int wait_late(cl_event event, cw__plan *p, cl_int *cl_status) {
    static _Thread_local unsigned waits;
    if (p->parker != &p->own.parker || ++waits % LATE_SAMPLE_EVERY == 0)
        return wait_hybrid(event, p, cl_status);
    cw__stat_add(CW__STAT_HYBRID, 1);
    cw__poll_steps s = late_steps(p, false);
    s.step = s.shortest = LATE_FIRST_DELAY_NS;
    uint64_t start = p->start_ns ? p->start_ns : cw_now_ns();
    uint64_t poll_for = cw__driver_lateness_ns(p->driver) << LATE_POLL_SHIFT;
    if (poll_for < 2u * p->expected_ns)
        poll_for = 2u * p->expected_ns;
    uint64_t stop = after_ns(start, poll_for);
    slack_guard slack = slack_lower();
    int rc = poll_until(event, p, &s, stop, true, cl_status);
    slack_restore(&slack);
    if (rc != POLL_STOPPED) {
        if (rc == CW_OK || rc == CW_ERR_COMMAND_FAILED)
            cw__table_forget(event);
        return rc;
    }
    p->spin_ns = 0;
    return wait_callback(event, p, cl_status);
}

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether auto may hand this wait to the driver's own clWaitForEvents: no
 * timeout (it has none), no CW_WAIT_NO_FLUSH (it flushes), no parker of
 * the caller's (a runtime that must get its thread back while the command
 * runs: only a wait that parks on it may serve it). */
static bool own_wait_allowed(const cw__plan *p) {
    return p->deadline_ns == CW_DEADLINE_NONE && !(p->flags & CW_WAIT_NO_FLUSH) &&
           p->parker == &p->own.parker;
}

/*
 * Auto on a platform whose callbacks are late, where own_wait_allowed: the
 * driver's own clWaitForEvents, timed while the platform's first few are
 * (cw__driver_own_wait_sample), then used for good where it sleeps.
 * Returns false (and waits not) where it does not, or not yet known, with
 * no trial left or this wait not one to try it on (too long, or of no
 * known length: cw__driver_own_wait_trial): the late wait then.
 */
static bool wait_own(cl_event event, cw__plan *p, cl_int *cl_status, int *rc) {
    if (!own_wait_allowed(p))
        return false;
    bool sleeps = cw__driver_own_wait_sleeps(p->driver);
    if (!sleeps && !cw__driver_own_wait_trial(p->driver, p->expected_ns))
        return false;
    cw__stat_add(CW__STAT_DRIVER_WAITS, 1);
    if (sleeps) {
        *rc = wait_blocking(event, cl_status);
        return true;
    }
    uint64_t cpu = thread_cpu_ns(), wall = cw_now_ns();
    *rc = wait_blocking(event, cl_status);
    uint64_t cpu_end = thread_cpu_ns(), wall_end = cw_now_ns();
    if (cpu && cpu_end >= cpu && *rc == CW_OK)
        cw__driver_own_wait_sample(p->driver, cpu_end - cpu, wall_end - wall);
    return true;
}

/*
 * Auto's wait on a platform whose callbacks are not late (driver.h,
 * cw__driver_long_way), of a known expected length, that parks at once (no
 * spin planned: expected to last at least CW__OWN_WAIT_MIN_NS, or shorter
 * where no CPU is spare), so that no spin is a reason for a callback. The
 * callback wait or the driver's own, as the platform's trials for waits of
 * its length decided; a trial times its way's thread CPU time.
 */
static int wait_long(cl_event event, cw__plan *p, cl_int *cl_status) {
    cw__long_way way =
        cw__driver_long_way(p->driver, p->expected_ns, p->start_ns ? p->start_ns : cw_now_ns());
    if (way == CW__LONG_CALLBACK)
        return wait_callback(event, p, cl_status);
    bool own = way == CW__LONG_OWN || way == CW__LONG_TRIAL_OWN;
    if (own)
        cw__stat_add(CW__STAT_DRIVER_WAITS, 1);
    if (way == CW__LONG_OWN)
        return wait_blocking(event, cl_status);
    uint64_t cpu = thread_cpu_ns(), wall = cw_now_ns();
    int rc = own ? wait_blocking(event, cl_status) : wait_callback(event, p, cl_status);
    uint64_t cpu_end = thread_cpu_ns(), wall_end = cw_now_ns();
    if (cpu && cpu_end >= cpu && rc == CW_OK)
        cw__driver_long_sample(p->driver, p->expected_ns, own, cpu_end - cpu, wall_end - wall);
    return rc;
}

/* Auto's spin budget, once the wait's platform is known: none where its
 * callbacks are late for this wait, whose ways (the driver's own wait, the
 * late and the hybrid waits) never spin on the callback, so that they pay
 * nothing for the spare-CPU rule's view of the machine (estimate.c). */
static void plan_spin(cw__plan *p) {
    if (p->row->spin == CW__SPIN_AUTO && !cw__driver_late(p->driver, p->expected_ns))
        cw__estimate_plan_spin(p);
}

/*
 * Auto, where the platform has settled on the driver's own clWaitForEvents
 * for a wait of this length (cw__driver_own_settled): that call and
 * nothing else, not even the first look, since clWaitForEvents rejects a
 * bad handle, returns for finished work and flushes by itself. Every step
 * of cw's own around it is thread CPU time that `blocking` does not pay
 * (a status read, a flush, the queue asked twice were a few percent of a
 * 1 ms kernel's wait on PoCL). The estimate is planned first, which asks
 * the event for its queue (and so validates it); a user event (no queue)
 * or a bad handle goes the usual way. Returns false where it did not wait.
 */
static bool wait_settled_own(cl_event event, cw__plan *p, cl_int *cl_status, int *rc) {
    if (p->row->spin != CW__SPIN_AUTO || !own_wait_allowed(p))
        return false;
    cw__estimate_plan(p, event);
    if (!p->queue_key)
        return false;
    p->driver = cw__driver_of(event);
    plan_spin(p);
    if (!cw__driver_own_settled(p->driver, p->expected_ns, !p->spin_ns, p->start_ns))
        return false;
    cw__driver_probe(p->driver, event);
    cw__stat_add(CW__STAT_DRIVER_WAITS, 1);
    *rc = wait_blocking(event, cl_status);
    return true;
}

/* The wait of the plan's row, for an event the first look found unfinished. */
static int wait_row(cl_event event, cw__plan *p, cl_int *cl_status) {
    bool planned = p->queue_key;
    if (p->row->estimates && !planned)
        cw__estimate_plan(p, event);
    bool callback = p->row->method == CW__CALLBACK || p->row->method == CW__BLOCK;
    if (callback) {
        /* What the platform does decides the checks (and auto's way of
         * waiting); the first callback wait on a platform probes it. */
        if (!p->driver)
            p->driver = cw__driver_of(event);
        cw__driver_probe(p->driver, event);
        if (!planned)
            plan_spin(p);
    }
    int rc;
    switch (p->row->method) {
    case CW__POLL:
        return wait_poll(event, p->deadline_ns, cl_status);
    case CW__BACKOFF:
        return wait_backoff_poll(event, p, cl_status);
    case CW__BLOCK: /* with a timeout */
    case CW__CALLBACK:
    default:
        /* Its leave forgets a finished event. */
        if (p->row->spin == CW__SPIN_AUTO && cw__driver_late(p->driver, p->expected_ns)) {
            if (!wait_own(event, p, cl_status, &rc))
                rc = wait_late(event, p, cl_status);
            return rc;
        }
        if (p->row->spin == CW__SPIN_AUTO && p->expected_ns && !p->spin_ns && own_wait_allowed(p))
            return wait_long(event, p, cl_status);
        return wait_callback(event, p, cl_status);
    }
}

static int wait_one(cl_event event, cw__plan *p, cl_int *cl_status) {
    /* clWaitForEvents validates and flushes by itself; keep it the bare call
     * so that it stays the benchmark's reference. It cannot time out: with a
     * timeout the wait takes the row's callback path (the pthread condition
     * variable: the same kind of sleep), plus the status checks. */
    if (p->bare_block)
        return wait_blocking(event, cl_status);

    int rc;
    /* A poll is the first look alone: no registration, no estimate fed
     * (its length says nothing of the queue's waits). */
    if (p->flags & CW_WAIT_POLL) {
        rc = cw__table_look(event, !(p->flags & CW_WAIT_NO_FLUSH), cl_status);
        if (rc != CW_OK || *cl_status <= CL_COMPLETE)
            return rc != CW_OK ? rc : cw__status_verdict(*cl_status);
        return CW_ERR_TIMEOUT;
    }
    bool settled = wait_settled_own(event, p, cl_status, &rc);
    if (!settled) {
        /* One look up front: it rejects a bad handle before any
         * registration, returns at once for work that already finished or
         * failed, and gives a queued command its flush. */
        rc = cw__table_look(event, !(p->flags & CW_WAIT_NO_FLUSH), cl_status);
        if (rc != CW_OK || *cl_status <= CL_COMPLETE)
            return rc != CW_OK ? rc : cw__status_verdict(*cl_status);
        rc = wait_row(event, p, cl_status);
    }
    /* A settled wait that did not last a microdelay found its command done,
     * or as good as done: as for a first look that finds it done, its
     * length says nothing of the queue's waits, and it would cut the
     * estimate to a quarter (cw__estimate_put), putting the next waits off
     * the settled path, to dearer ways, for the few waits it takes to come
     * back. On one CPU the driver's worker often runs the whole command
     * between the enqueue and the wait. */
    if (rc == CW_OK && p->queue_key) {
        uint64_t took = cw_now_ns() - p->start_ns;
        if (!settled || took >= CW__MICRODELAY_SPIN_NS) {
            cw__estimate_put(p->queue_key, took);
            if (p->ended_ns)
                cw__estimate_end_put(p->queue_key, p->ended_ns - p->start_ns, p->ended_span_ns);
        }
    }
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
