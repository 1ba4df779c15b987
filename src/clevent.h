/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6 (internal): the one place that talks to OpenCL about an event.
 * Every waiter (cw_wait, wait-all/any, the notifier) reads statuses, flushes,
 * maps OpenCL errors and registers callbacks through these, so that the
 * rules below hold for all of them alike.
 */
#ifndef CW_CLEVENT_H
#define CW_CLEVENT_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "completion.h"
#include "cw/wait.h" /* CW_CHECK_INTERVAL_*: the documented check schedule */

/* Map the OpenCL error of a call on an event to cw's code, handing the error
 * back in *cl_status. */
int cw__cl_failure(cl_int err, cl_int *cl_status);

/* The event's execution status, or cw's code for the failed call (with the
 * OpenCL error in *status). */
int cw__read_status(cl_event event, cl_int *status);

/* The verdict on a final status (CL_COMPLETE or negative). */
static inline int cw__final_status(cl_int st) {
    return st == CL_COMPLETE ? CW_OK : CW_ERR_COMMAND_FAILED;
}

/* Flush the event's queue when `status` (just read) is CL_QUEUED: only such a
 * command can still be waiting for a flush; from CL_SUBMITTED on it is with
 * the device already, and user events have no queue. */
int cw__flush_if_queued(cl_event event, cl_int status, cl_int *cl_status);

/*
 * Subscribe completion `c` to the event's one CL_COMPLETE callback: the first
 * subscriber registers it with the driver, every later one (another wait, a
 * wait after a timeout, a wait-any round, a notifier watch) only joins. When
 * the callback fires, every subscriber's token is signalled (possibly inline,
 * before this returns); a signal only means "read the status now". Returns 0,
 * CW_ERR_INVALID_EVENT or CW_ERR_OPENCL with the OpenCL error in *cl_error,
 * or CW_ERR_NO_MEMORY. Never called with a cw lock held. `may_sweep`: the
 * caller is a blocking wait, which cannot be inside an OpenCL callback, so
 * it may read the statuses of other events' records (see clevent.c).
 */
int cw__event_subscribe(cl_event event, cw_completion *c, bool may_sweep, cl_int *cl_error);

/*
 * For a wait without a timeout that asked for CW_WAIT_OWN_CALLBACK: join the
 * event's record if it has one, otherwise register a CL_COMPLETE callback
 * that signals `c` alone, keeping nothing (see clevent.c). Same returns and
 * rules as cw__event_subscribe, sweeping allowed.
 */
int cw__event_subscribe_own(cl_event event, cw_completion *c, cl_int *cl_error);
/* Leave the event's subscribers (before releasing `c`), so that waits that
 * time out again and again on one event keep its list short. */
void cw__event_unsubscribe(cl_event event, cw_completion *c);

/* For the blocking waits: take a completion of `kind` (watched by `watcher`
 * when not NULL) and subscribe it, sweeping allowed. On error *c is NULL and
 * nothing is held; a rejected subscription leaves the OpenCL error in
 * *cl_error. */
int cw__event_join(cl_event event, cw_completion_kind kind, cw_parker *watcher, cw_completion **c,
                   cl_int *cl_error);

/* cw__event_join for a wait without a timeout that asked for
 * CW_WAIT_OWN_CALLBACK: subscribes with cw__event_subscribe_own. */
int cw__event_join_own(cl_event event, cw_completion_kind kind, cw_completion **c,
                       cl_int *cl_error);
/* Leave the event's subscribers and give the completion back. Returns
 * whether a signal had landed on it (possibly as we left). Releasing disarms
 * it if no signal claimed it: a callback that runs later, or never, finds a
 * stale token and touches nothing. */
bool cw__event_leave(cl_event event, cw_completion *c);

/*
 * A status read saw the command finished (complete or failed): drop cw's
 * record of the event now, waking its subscribers, so that it holds nothing
 * (PoCL 3.1 and rusticl fire no callback for a failed command) and a later
 * event at the same address gets a record of its own.
 */
void cw__event_retire(cl_event event);

/* Records alive (events cw holds a callback registration and a reference on). */
size_t cw__event_records(void);

/* Read the status of every record nobody waits on, retire the finished ones,
 * and return how many records are left (for tests and leak checks). */
size_t cw__event_sweep(void);

/*
 * When a callback wait reads the event's status, because a failed command
 * fires no callback on PoCL 3.1 to 6.0 or rusticl: first after the option's
 * interval (CW_CHECK_INTERVAL_US_DEFAULT for 0), then every
 * CW_CHECK_INTERVAL_GROWTH times it. One schedule for cw_wait, wait-all/any
 * and the notifier, so the documented 16 ms, then every 32 ms, holds for all,
 * and a failure is reported within 2 * the interval wherever it waits.
 */
typedef struct cw__check_schedule {
    uint64_t first_ns, interval_ns;
} cw__check_schedule;

static inline cw__check_schedule cw__check_schedule_start(uint32_t check_interval_us) {
    uint64_t first =
        (uint64_t)(check_interval_us ? check_interval_us : CW_CHECK_INTERVAL_US_DEFAULT) * 1000u;
    cw__check_schedule s = {first, first};
    return s;
}

/* After a check: the next interval, doubled up to the cap. */
static inline void cw__check_schedule_grow(cw__check_schedule *s) {
    if (s->interval_ns < CW_CHECK_INTERVAL_GROWTH * s->first_ns)
        s->interval_ns *= 2;
}

#endif
