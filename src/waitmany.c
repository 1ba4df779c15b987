/* SPDX-License-Identifier: MIT */
/* Layer 6.3, beside cw_wait: wait-all and wait-any over one shared parker. */
#include "completion.h"
#include "cw/waitmany.h"
#include "driver.h"
#include "estimate.h"
#include "stats_internal.h"
#include "status.h"
#include "strategy.h"
#include "table.h"

#include <stdbool.h>
#include <stdlib.h>

static int check_input(const cl_event *events, size_t n) {
    if (!events || n == 0 || n > CW_WAIT_MANY_MAX)
        return CW_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; ++i)
        if (!events[i])
            return CW_ERR_INVALID_ARGUMENT;
    return CW_OK;
}

/* The watcher of every completion of the call: it unparks the call's one
 * parker. The signaller wakes it after leaving the completion's lock, and
 * cw__completion_release waits for that wake, so the parker (possibly on the
 * caller's stack) outlives every use. */
typedef struct parker_watcher {
    cw__watcher watcher;
    cw_parker *parker;
} parker_watcher;

static void wake_parker(cw__watcher *w) {
    cw_unpark(cw__container_of(w, parker_watcher, watcher)->parker);
}

/* Subscribe a completion for events[i], watched by `pw`. */
static int watch(cl_event event, parker_watcher *pw, cw__completion **c, cl_int *st) {
    int rc = cw__completion_acquire(CW__COMPLETION_YIELD, c);
    if (rc != CW_OK) {
        *c = NULL;
        return rc;
    }
    cw__completion_watch(*c, &pw->watcher);
    if ((rc = cw__table_join(event, *c, CW__JOIN_SWEEP, st)) != CW_OK) {
        cw__table_leave(event, *c, false);
        *c = NULL;
    }
    return rc;
}

static void unwatch(cl_event event, cw__completion **c, bool finished) {
    cw__table_leave(event, *c, finished);
    *c = NULL;
}

/*
 * The one loop behind both calls. `all` selects wait-all; otherwise it ends
 * at the first finished event, stored in *which (n when none). st[i]
 * receives each event's status as described in waitmany.h. Entries of `c`
 * are the completions of the unfinished events (NULL once finished); every
 * one is released before returning, so a late callback finds a stale token.
 */
static int wait_many(const cl_event *events, size_t n, cw__plan *p, bool all, cl_int *st,
                     cw__completion **c, size_t *which) {
    parker_watcher pw = {{wake_parker}, p->parker};
    *which = n;
    size_t pending = 0;
    int rc = CW_OK;

    /* First look at each: finished events need no callback; unflushed work
     * gets its flush before anything sleeps on it. */
    bool flush = !(p->flags & CW_WAIT_NO_FLUSH);
    for (size_t i = 0; i < n; ++i) {
        if ((rc = cw__table_look(events[i], flush, &st[i])) != CW_OK ||
            (!all && st[i] <= CL_COMPLETE)) {
            *which = i;
            goto out;
        }
    }
    /* A poll ends with the first look: wait-any found nothing finished,
     * wait-all may have. */
    if (p->flags & CW_WAIT_POLL) {
        for (size_t i = 0; i < n; ++i)
            if (st[i] > CL_COMPLETE)
                rc = CW_ERR_TIMEOUT;
        if (!all)
            rc = CW_ERR_TIMEOUT;
        goto out;
    }
    /* One completion per unfinished event, each subscribed to its event's
     * one callback (shared with every other wait on it). The first check
     * waits for the expected wait of the events whose failure may fire no
     * callback: the longest of their queues' for wait-all, the shortest for
     * wait-any (0, none, when one has no estimate); no check is needed when
     * every event's platform fires callbacks for failed commands. */
    bool fire = true;
    uint64_t expected = all ? 0 : UINT64_MAX;
    for (size_t i = 0; i < n; ++i) {
        if (st[i] <= CL_COMPLETE)
            continue;
        cw__driver *d = cw__driver_of(events[i]);
        cw__driver_probe(d, events[i]);
        if (!cw__driver_failed_fire(d)) {
            /* Only the events that may fail silently need the check. */
            fire = false;
            uint64_t e = cw__estimate_of(events[i]);
            expected = all ? (e > expected ? e : expected) : (e < expected ? e : expected);
        }
        if ((rc = watch(events[i], &pw, &c[i], &st[i])) != CW_OK) {
            *which = i;
            goto out;
        }
        ++pending;
    }

    uint64_t start = cw_now_ns();
    uint64_t check = cw_deadline_after_ns(cw__plan_first_check_ns(&p->checks, expected, fire));
    bool interrupted = false;
    for (;;) {
        /* A token means "something changed", and several unparks fold into
         * one token: look at every completion, not just one. */
        for (size_t i = 0; i < n; ++i) {
            if (!c[i] || !cw__completion_is_signalled(c[i]))
                continue;
            cw__stat_woken(cw__completion_landed_ns(c[i]), cw_now_ns());
            rc = cw__table_recheck(events[i], &c[i], &st[i]);
            if (rc != CW_OK) {
                *which = i;
                goto out;
            }
            if (st[i] > CL_COMPLETE)
                continue; /* watched anew */
            --pending;
            unwatch(events[i], &c[i], true);
            if (!all) {
                *which = i;
                goto out;
            }
        }
        if (pending == 0)
            goto out;
        uint64_t now = cw_now_ns();
        if (now >= check) {
            /* The failed-command check (docs/design.md, "Failed commands"). */
            cw__stat_add(CW__STAT_CHECKS, 1);
            for (size_t i = 0; i < n; ++i) {
                if (!c[i])
                    continue;
                if ((rc = cw__status_read(events[i], &st[i])) != CW_OK) {
                    *which = i;
                    goto out;
                }
                if (st[i] > CL_COMPLETE)
                    continue;
                unwatch(events[i], &c[i], true);
                --pending;
                if (!all) {
                    *which = i;
                    goto out;
                }
            }
            if (pending == 0)
                goto out;
            cw__plan_checks_grow(&p->checks, now - start);
            check = cw_deadline_after_ns(p->checks.interval_ns);
        }
        if (now >= p->deadline_ns || interrupted) {
            rc = interrupted ? CW_ERR_INTERRUPTED : CW_ERR_TIMEOUT;
            goto out;
        }
        cw__stat_add(CW__STAT_PARKS, 1);
        /* Interrupted: the signals that came are taken at the top, then the
         * wait ends as at its deadline. */
        interrupted = cw_park(p->parker, check < p->deadline_ns ? check : p->deadline_ns) ==
                      CW_ERR_INTERRUPTED;
    }
out:
    for (size_t i = 0; i < n; ++i)
        if (c[i])
            unwatch(events[i], &c[i], false);
    return rc;
}

/* Allocate the per-event state and run the loop, counting the wait. */
static int run(const cl_event *events, size_t n, const cw_wait_options *options, bool all,
               cl_int *statuses, size_t *which) {
    cw__plan plan;
    int rc = check_input(events, n);
    if (rc == CW_OK)
        rc = cw__plan_make(options, &plan);
    if (rc != CW_OK)
        return rc;
    cw__completion **c = calloc(n, sizeof *c);
    cl_int *own = statuses ? NULL : malloc(n * sizeof *own);
    if (!c || (!statuses && !own)) {
        free(c);
        free(own);
        return CW_ERR_NO_MEMORY;
    }
    cl_int *st = statuses ? statuses : own;
    cw__stat_add(CW__STAT_WAITS, 1);
    rc = wait_many(events, n, &plan, all, st, c, which);
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
    else if (status && (rc == CW_ERR_TIMEOUT || rc == CW_ERR_INTERRUPTED))
        *status = st[0]; /* every entry was read before anything slept */
    free(st);
    return rc;
}
