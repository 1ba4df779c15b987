/* SPDX-License-Identifier: MIT */
/* cw: completions that signal a file descriptor, for event loops. */
#ifndef CW_NOTIFY_H
#define CW_NOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include "cw/common.h"
#include <CL/cl.h>
#include "cw/wait.h" /* CW_CHECK_INTERVAL_* */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A notifier lets an event loop (epoll, libuv, asyncio) await many OpenCL
 * events on one file descriptor, with no thread per wait:
 *
 *   cw_notifier_create(0, &n);
 *   cw_notifier_watch(n, event, tag, NULL);    // any number of events
 *   ... the loop polls cw_notifier_fd(n) for readability (level-triggered) ...
 *   k = cw_notifier_drain(n, results, max);   // each watch comes back once
 *
 * Each watch takes a completion from cw's pool and registers its CL_COMPLETE
 * callback; the callback, on a driver thread, pushes the watch onto a
 * lock-free list and makes the descriptor readable. The loop then drains the
 * finished watches and reads each event's real execution status.
 *
 * Failed commands, whose CL_COMPLETE callback some implementations never run
 * (cw/wait.h, check_interval_us): the descriptor therefore also becomes
 * readable when a status check is due (a timer inside it, armed only while
 * watches are pending): the next drain reads the status of every watch
 * whose check is due and finishes those that failed. Each watch checks on
 * the schedule of cw_wait_options.check_interval_us (cw/wait.h), from
 * `check_interval_us`, or later for a watch expected to be long with the
 * default interval, and not at all where failed commands fire callbacks.
 *
 * The descriptor is an epoll instance holding an eventfd (the callbacks'
 * wake-ups) and a timerfd (the checks): a single descriptor the loop only
 * polls for readability and never reads itself. It is close-on-exec.
 *
 * Threads: the callbacks run on any thread; watch, cancel, drain and pending
 * may be called from any thread, an OpenCL callback's included (they
 * serialise on a mutex, and cw makes no OpenCL call while holding it);
 * destroy from one thread once nothing else uses the notifier. On Mesa's
 * rusticl, which runs an event's callbacks holding that event's lock, do not
 * drain from inside a callback of an event the notifier watches: the drain
 * reads that event's status.
 */
typedef struct cw_notifier cw_notifier;

/* One finished watch. */
typedef struct cw_notifier_result {
    uint64_t tag;  /* as given to cw_notifier_watch */
    int rc;        /* CW_OK, CW_ERR_COMMAND_FAILED, CW_ERR_INVALID_EVENT or CW_ERR_OPENCL */
    cl_int status; /* CL_COMPLETE, the negative execution status, or the OpenCL error */
} cw_notifier_result;

/*
 * Create a notifier. `check_interval_us`: first status-check interval, 0 for
 * CW_CHECK_INTERVAL_US_DEFAULT, at most CW_CHECK_INTERVAL_US_MAX. Returns 0,
 * CW_ERR_INVALID_ARGUMENT, CW_ERR_NO_MEMORY, or CW_ERR_NO_RESOURCES when the
 * three descriptors cannot be had (out of file descriptors, epoll limits).
 */
CW_API int cw_notifier_create(uint32_t check_interval_us, cw_notifier **out);

/*
 * Destroy it, with or without pending watches. Pending watches are dropped
 * without a result: their completions are given back to the pool, so a
 * callback that runs later, or never, touches nothing of the notifier.
 */
CW_API void cw_notifier_destroy(cw_notifier *n);

/* The descriptor to poll for readability. Valid until cw_notifier_destroy. */
CW_API int cw_notifier_fd(const cw_notifier *n);

/*
 * Watch `event` (retained until its result is drained, or, for a cancelled
 * watch or one whose callback had not yet returned when its result was
 * drained, until the next drain or destroy); `tag` comes back in its result.
 * It shares the event's one CL_COMPLETE callback with every other wait and
 * watch on it (see cw_event_forget). Like cw_wait, it flushes the
 * event's queue when the command is still CL_QUEUED, so that an unflushed
 * command cannot be awaited forever. An event that already finished is
 * reported by the next drain. Returns 0, CW_ERR_INVALID_ARGUMENT,
 * CW_ERR_INVALID_EVENT, CW_ERR_OPENCL (the OpenCL error in *cl_error when not
 * NULL) or CW_ERR_NO_MEMORY; on error nothing is watched.
 */
CW_API int cw_notifier_watch(cw_notifier *n, cl_event event, uint64_t tag, cl_int *cl_error);

/*
 * Cancel the pending watch with `tag` (the oldest one, if several share it):
 * no result will be reported for it. Returns 0, or CW_ERR_INVALID_ARGUMENT
 * when no pending watch has that tag (it was already drained, or never
 * watched).
 */
CW_API int cw_notifier_cancel(cw_notifier *n, uint64_t tag);

/*
 * Collect up to `max` finished watches into `out`, each exactly once, and
 * return how many. Call it when the descriptor is readable; it resets the
 * descriptor, runs the status check when it is due, and leaves the
 * descriptor readable when more than `max` results are waiting. Returns 0
 * on a spurious wake-up.
 */
CW_API size_t cw_notifier_drain(cw_notifier *n, cw_notifier_result *out, size_t max);

/* Watches not yet drained or cancelled. */
CW_API size_t cw_notifier_pending(cw_notifier *n);

#ifdef __cplusplus
}
#endif
#endif
