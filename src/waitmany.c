/* SPDX-License-Identifier: MIT */
/* Layer 6, beside cw_wait: wait-all and wait-any over one shared parker. */
#include "clevent.h"
#include "completion.h"
#include "cw/waitmany.h"
#include "stats_internal.h"
#include "strategy.h"

#include <stdbool.h>
#include <stdlib.h>

static int check_input(const cl_event *events, size_t n, const cw_wait_options *o) {
    if (!events || n == 0 || n > CW_WAIT_MANY_MAX)
        return CW_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; ++i)
        if (!events[i])
            return CW_ERR_INVALID_ARGUMENT;
    return cw__validate_options(o);
}

/* One completion per unfinished event, watched by the call's one parker:
 * the signaller unparks it after leaving the completion's lock, and
 * cw_completion_release waits for that unpark, so the parker (possibly on
 * the caller's stack) outlives every use. */
static void unwatch(cl_event event, cw_completion **c) {
    cw__event_leave(event, *c);
    *c = NULL;
}

/*
 * The one loop behind both calls. `all` selects wait-all; otherwise it ends
 * at the first finished event, stored in *which (n when none). st[i]
 * receives each event's status as described in waitmany.h. Entries of `c`
 * are the completions of the unfinished events (NULL once finished); every
 * one is released before returning, so a late callback finds a stale token.
 */
static int wait_many(const cl_event *events, size_t n, const cw_wait_options *o, bool all,
                     cl_int *st, cw_completion **c, size_t *which) {
    cw_futex_parker own;
    cw_parker *parker = o->parker;
    if (!parker) {
        cw_futex_parker_init(&own);
        parker = &own.parker;
    }
    *which = n;
    size_t pending = 0;
    int rc = CW_OK;

    /* First look: finished events need no callback; unflushed work gets its
     * flush (as cw_wait does) before anything sleeps on it. */
    for (size_t i = 0; i < n; ++i) {
        rc = cw__read_status(events[i], &st[i]);
        if (rc != CW_OK) {
            *which = i;
            goto out;
        }
        if (st[i] <= CL_COMPLETE) {
            cw__event_retire(events[i]); /* an earlier wait's record, if any */
            if (!all) {
                *which = i;
                goto out;
            }
            continue;
        }
        if (!(o->flags & CW_WAIT_NO_FLUSH) &&
            (rc = cw__flush_if_queued(events[i], st[i], &st[i])) != CW_OK) {
            *which = i;
            goto out;
        }
    }
    /* One completion per unfinished event, each subscribed to its event's
     * one callback (shared with every other wait on it). */
    for (size_t i = 0; i < n; ++i) {
        if (st[i] <= CL_COMPLETE)
            continue;
        if ((rc = cw__event_join(events[i], CW_COMPLETION_YIELD, parker, &c[i], &st[i])) != CW_OK) {
            *which = i;
            goto out;
        }
        ++pending;
    }

    uint64_t deadline = cw__deadline_of(o);
    cw__check_schedule checks = cw__check_schedule_start(o->check_interval_us);
    uint64_t check = cw_deadline_after_ns(checks.interval_ns);
    for (;;) {
        /* A token means "something changed", and several unparks fold into
         * one token: look at every completion, not just one. */
        for (size_t i = 0; i < n; ++i) {
            if (!c[i] || !cw_completion_is_signalled(c[i]))
                continue;
            uint64_t landed = cw_completion_landed_ns(c[i]), now = cw_now_ns();
            cw__stat_latency(now > landed ? now - landed : 0);
            unwatch(events[i], &c[i]);
            /* A signal says "read the status": the callback's is the
             * trigger's, and cw's record of the event may have been dropped
             * while the command still runs; then watch it anew. */
            if ((rc = cw__read_status(events[i], &st[i])) != CW_OK) {
                *which = i;
                goto out;
            }
            if (st[i] > CL_COMPLETE) {
                if ((rc = cw__event_join(events[i], CW_COMPLETION_YIELD, parker, &c[i], &st[i])) !=
                    CW_OK) {
                    *which = i;
                    goto out;
                }
                continue;
            }
            --pending;
            cw__event_retire(events[i]);
            if (!all) {
                *which = i;
                goto out;
            }
        }
        if (pending == 0)
            goto out;
        uint64_t now = cw_now_ns();
        if (now >= check) {
            /* No callback comes for a failed command: read the statuses. */
            for (size_t i = 0; i < n; ++i) {
                if (!c[i])
                    continue;
                if ((rc = cw__read_status(events[i], &st[i])) != CW_OK) {
                    *which = i;
                    goto out;
                }
                if (st[i] > CL_COMPLETE)
                    continue;
                unwatch(events[i], &c[i]);
                cw__event_retire(events[i]);
                --pending;
                if (!all) {
                    *which = i;
                    goto out;
                }
            }
            if (pending == 0)
                goto out;
            cw__check_schedule_grow(&checks);
            check = cw_deadline_after_ns(checks.interval_ns);
        }
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            goto out;
        }
        cw__stat_add(CW__STAT_PARKS, 1);
        cw_park(parker, check < deadline ? check : deadline);
    }
out:
    for (size_t i = 0; i < n; ++i)
        if (c[i])
            unwatch(events[i], &c[i]);
    return rc;
}

/* Allocate the per-event state and run the loop, counting the wait. */
static int run(const cl_event *events, size_t n, const cw_wait_options *options, bool all,
               cl_int *statuses, size_t *which) {
    static const cw_wait_options defaults = {0};
    const cw_wait_options *o = options ? options : &defaults;
    int rc = check_input(events, n, o);
    if (rc != CW_OK)
        return rc;
    cw_completion **c = calloc(n, sizeof *c);
    cl_int *own = statuses ? NULL : malloc(n * sizeof *own);
    if (!c || (!statuses && !own)) {
        free(c);
        free(own);
        return CW_ERR_NO_MEMORY;
    }
    cl_int *st = statuses ? statuses : own;
    cw__stat_add(CW__STAT_WAITS, 1);
    rc = wait_many(events, n, o, all, st, c, which);
    if (rc == CW_ERR_TIMEOUT)
        cw__stat_add(CW__STAT_TIMEOUTS, 1);
    if (rc == CW_OK) {
        if (all) {
            for (size_t i = 0; i < n; ++i)
                if (st[i] < 0)
                    rc = CW_ERR_COMMAND_FAILED;
        } else if (*which < n && st[*which] < 0) {
            rc = CW_ERR_COMMAND_FAILED;
        }
    }
    free(c);
    free(own);
    return rc;
}

int cw_wait_all(const cl_event *events, size_t n, const cw_wait_options *options,
                cl_int *statuses) {
    size_t which;
    return run(events, n, options, true, statuses, &which);
}

int cw_wait_any(const cl_event *events, size_t n, const cw_wait_options *options, size_t *index,
                cl_int *status) {
    if (index)
        *index = n;
    if (!events || n == 0 || n > CW_WAIT_MANY_MAX)
        return CW_ERR_INVALID_ARGUMENT;
    cl_int *st = malloc(n * sizeof *st);
    if (!st)
        return CW_ERR_NO_MEMORY;
    size_t which = n;
    int rc = run(events, n, options, false, st, &which);
    if (index)
        *index = which;
    if (status && which < n)
        *status = st[which]; /* finished, or the error reading it */
    else if (status && rc == CW_ERR_TIMEOUT)
        *status = st[0]; /* every entry was read before anything slept */
    free(st);
    return rc;
}
