/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.1 (internal): the event table, one record per event cw has a
 * CL_COMPLETE callback registered on, and the two steps every waiter takes
 * on an event through it (the first look, and the look after a signal).
 *
 * OpenCL cannot unregister a callback, so the first subscriber registers the
 * event's one callback and every later one (another wait, a wait after a
 * timeout, a wait-any round, a notifier watch) joins; when it fires, every
 * subscriber's token is signalled (possibly inline, before join returns). A
 * signal only means "read the status now". None of these is called with a
 * cw lock held.
 */
#ifndef CW_TABLE_H
#define CW_TABLE_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

#include "completion.h"

/* How a completion joins (flags). */
enum {
    /* The caller is a blocking wait, which cannot be inside an OpenCL
     * callback, so it may read the statuses of other events' records. */
    CW__JOIN_SWEEP = 1u,
    /* A wait without a timeout that asked for CW_WAIT_OWN_CALLBACK: without
     * a record it registers a callback for `c` alone and keeps nothing. */
    CW__JOIN_OWN = 2u,
};

/*
 * The first look of every front door: read the status; finished (complete
 * or failed) forgets the event's record, if any (it may hold a reference
 * and wait for a callback that never comes); CL_QUEUED gets its flush when
 * `flush`. Returns CW_OK with the status in *status (final when
 * *status <= CL_COMPLETE), or the error of a failed call with the OpenCL
 * error in *status.
 */
int cw__table_look(cl_event event, bool flush, cl_int *status);

/*
 * Subscribe `c` (acquired, watcher set) to the event's one callback.
 * Returns 0, CW_ERR_INVALID_EVENT or CW_ERR_OPENCL with the OpenCL error in
 * *cl_error, or CW_ERR_NO_MEMORY. On error `c` is subscribed to nothing but
 * is still the caller's, and may have been signalled (others on the record
 * are woken to read the status): give it back with cw__table_leave.
 */
int cw__table_join(cl_event event, cw__completion *c, unsigned how, cl_int *cl_error);

/*
 * Leave the event's subscribers and give `c` back; `finished`: the event
 * is finished, so forget its record too. Returns whether a signal had
 * landed on `c` (possibly as it left). A callback that runs later, or
 * never, finds a stale token and touches nothing.
 */
bool cw__table_leave(cl_event event, cw__completion *c, bool finished);

/*
 * As cw__table_leave for an event a status read found complete at `seen_ns`
 * while `c` had not been signalled (its callback is late), the read before
 * it having found it running at `running_ns`: the record, if the event has
 * one whose callback has not run, stays in the table until the callback
 * lands, which then gives `d` the lateness seen (landing minus `seen_ns`,
 * uncertain by `seen_ns - running_ns`: cw__driver_lateness_seen); a sweep
 * or the next look at the event drops it as usual. Returns whether a record was left to measure;
 * otherwise the event's record is forgotten as after a finished wait.
 */
struct cw__driver;
bool cw__table_leave_seen(cl_event event, cw__completion *c, uint64_t seen_ns, uint64_t running_ns,
                          struct cw__driver *d);

/*
 * After `*c` was signalled: read the event's own status (the callback
 * reports the trigger's, and the record may have been dropped while the
 * command runs). Final, or a failed read: returns as cw__table_look, `*c`
 * untouched. Unfinished: `*c` is swapped for a fresh completion of its kind
 * and watcher, joined with CW__JOIN_SWEEP; should that fail, *c is NULL,
 * nothing is held and the error is returned.
 */
int cw__table_recheck(cl_event event, cw__completion **c, cl_int *status);

/* Drop the event's record, if any, waking its subscribers: the command
 * finished, or the user said it never will (cw_event_forget). */
void cw__table_forget(cl_event event);

/* Records alive (events cw holds a callback registration and a reference on). */
size_t cw__table_records(void);

/* Read the status of every record nobody waits on, forget the finished ones,
 * and return how many records are left (for tests and leak checks). */
size_t cw__table_sweep(void);

#endif
