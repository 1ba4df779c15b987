/* SPDX-License-Identifier: MIT */
/* Layer 6.3: the ways that read the status, and the driver's wait (ways.h). */
#include "ways.h"
#include "stats_internal.h"
#include "status.h"
#include "table.h"

#include <time.h>

int cw__way_driver(cl_event event, cl_int *cl_status) {
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

/* A polling way ends with the event's record, if any, forgotten where the
 * command finished: it registered no callback that would, and the record
 * (of another wait) may hold a reference and wait for a callback that never
 * comes. Returns rc. */
static int forget_if_final(cl_event event, int rc) {
    if (rc == CW_OK || rc == CW_ERR_COMMAND_FAILED)
        cw__table_forget(event);
    return rc;
}

/* With a deadline, poll reads the clock only once per this many status
 * reads, so that the loop stays a bare poll of the status (a clock read
 * costs tens of nanoseconds on a VM). */
#define POLL_CLOCK_EVERY 64u

int cw__way_poll(cl_event event, uint64_t deadline, cl_int *cl_status) {
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
    return forget_if_final(event, rc);
}

/* Past the estimate backoff-poll's delays are capped at the time waited
 * so far >> this (1/8): the overshoot after the command ends stays within
 * that share of the wait. */
#define BACKOFF_OVERSHOOT_SHIFT 3u

/*
 * The two polls either side of the end: it lies between them, and the
 * report keeps their middle and half the gap, 0 where the two lie within
 * the polls' overshoot share of the wait (>> `shift`): then the middle is
 * the end, give or take that share. Wider apart (the sleeps toward the
 * expected end double from 50 µs, a short delay overshoots by a wake-up's
 * latency), the middle is only a guess (cw__estimate_end_put).
 */
void cw__end_seen(const cw__plan *p, cw__report *r, uint64_t running, uint64_t seen,
                  unsigned shift) {
    if (!p->start_ns || !running || seen <= running)
        return;
    uint64_t half = (seen - running) / 2u;
    r->ended_ns = running + half;
    r->ended_span_ns = seen - running > (seen - p->start_ns) >> shift ? half : 0;
}

/* poll_until's answer when it reached `stop` with the command running. */
#define POLL_STOPPED 1

/*
 * The loop of a polling way: read the status, sleep the next of `s`'s
 * delays (up to CW__MICRODELAY_SPIN_NS spun), until the command is
 * finished, the deadline passes (CW_ERR_TIMEOUT) or `stop` does
 * (POLL_STOPPED). With `r`, what the polls saw of a finished command's end
 * goes into it.
 */
static int poll_until(cl_event event, const cw__plan *p, cw__poll_steps *s, uint64_t stop,
                      cw__report *r, cl_int *cl_status) {
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
            if (r)
                cw__end_seen(p, r, last_running, cw_now_ns(), s->overshoot_shift);
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
int cw__way_backoff(cl_event event, const cw__plan *p, cl_int *cl_status) {
    cw__poll_steps s = cw__poll_steps_of(p, CW__MICRODELAY_SPIN_NS, BACKOFF_OVERSHOOT_SHIFT);
    cw__slack slack = cw__slack_lower();
    int rc = poll_until(event, p, &s, CW_DEADLINE_NONE, NULL, cl_status);
    cw__slack_restore(&slack);
    return forget_if_final(event, rc);
}

/*
 * Auto where callbacks are late and the driver's wait does not sleep: a
 * callback that comes L after its command cannot end the wait sooner than
 * the polls, so registering it only costs CPU (the registration, the
 * record, the callback's wake-up of a thread that is polling anyway). The
 * wait polls on the late steps, no callback, for the choice's poll_for_ns;
 * a wait that lasts longer (the first launch of a long kernel, planned
 * with a short estimate) has outgrown the lateness: it registers the
 * callback and parks, the callback then ending it at most L after its
 * command, no later than a poll would. The polls read the status, so a
 * failure is seen as by backoff-poll. A delay past the expected end is
 * never under CW__LATE_FIRST_DELAY_NS (the shortest that is slept) unless
 * the choice polls finely: a command not done by its expected end is late
 * by its device's own jitter (tens of µs), and 1 µs spins would mostly
 * cost CPU, on a CPU the device shares delaying it too.
 */
int cw__way_sleep_poll(cl_event event, const cw__plan *p, const cw__choice *ch, cw__report *r,
                       cl_int *cl_status) {
    cw__stat_add(CW__STAT_HYBRID, 1);
    cw__poll_steps s = cw__late_steps(p, ch, false);
    if (!ch->fine_ns)
        s.step = s.shortest = CW__LATE_FIRST_DELAY_NS;
    uint64_t start = p->start_ns ? p->start_ns : cw_now_ns();
    uint64_t stop = cw__after_ns(start, ch->poll_for_ns);
    cw__slack slack = cw__slack_lower();
    int rc = poll_until(event, p, &s, stop, r, cl_status);
    cw__slack_restore(&slack);
    if (rc != POLL_STOPPED)
        return forget_if_final(event, rc);
    cw__choice park = *ch;
    park.way = CW__WAY_PARK;
    park.spin_ns = 0;
    park.peek_ns = 0;
    return cw__way_park(event, p, &park, r, cl_status);
}

uint64_t cw__thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
