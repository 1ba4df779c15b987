/* SPDX-License-Identifier: MIT */
/* cw: wait for all or any of several events on one parker. */
#ifndef CW_WAITMANY_H
#define CW_WAITMANY_H

#include <stddef.h>
#include "cw/common.h"
#include <CL/cl.h>
#include "cw/wait.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most events one call accepts. */
#define CW_WAIT_MANY_MAX 65536u

/*
 * How they wait, whatever options->strategy says (it is still validated):
 * one CL_COMPLETE callback per unfinished event, each on a completion that
 * has the calling thread's one parker as its watcher (options->parker, or a
 * futex parker of its own), so n events cost n completions and one sleeping
 * thread, not n threads. A parker token only says "something changed": after
 * every wake-up they look at every completion. As with cw_wait, the status of
 * every unfinished event is read on the schedule of check_interval_us
 * (cw/wait.h), which catches failed commands. The options' flags (except
 * CW_WAIT_OWN_CALLBACK, ignored), timeout_us and check_interval_us apply as
 * for cw_wait, and so does what cw keeps of the events afterwards
 * (cw_event_forget). A caller's own parker may hold one leftover token
 * afterwards (a callback that landed as the wait ended); cw's waits re-check
 * after every park, so that only costs a spurious wake-up.
 *
 * Bad input, for both calls: `events` NULL, `n` 0, `n` > CW_WAIT_MANY_MAX, a
 * NULL entry, or an option out of range (as cw_wait) -> CW_ERR_INVALID_ARGUMENT,
 * with no event touched and no status written. Allocation failure or an
 * exhausted completion pool -> CW_ERR_NO_MEMORY, with the outputs
 * unspecified. With CW_WAIT_INTERRUPT_FD (any strategy: these calls park
 * on cw's parker whatever it names) both return CW_ERR_INTERRUPTED once the
 * descriptor is readable, with the outputs as on a timeout; with a parker
 * of the caller's they return CW_ERR_UNSUPPORTED.
 */

/*
 * Wait until every event is finished (complete or failed), or the timeout.
 * `statuses`, when not NULL, has n entries and receives each event's
 * execution status: CL_COMPLETE, the negative status of a failed command,
 * the OpenCL error for an event the implementation rejected, or with
 * CW_ERR_TIMEOUT the last status read (positive for the unfinished ones).
 * Returns
 *   CW_OK                  every event completed,
 *   CW_ERR_COMMAND_FAILED  every event finished, and at least one failed
 *                          (it waits for all even after a failure),
 *   CW_ERR_TIMEOUT         some event was unfinished at the deadline,
 *   CW_ERR_INVALID_EVENT / CW_ERR_OPENCL
 *                          reading an event's status (or registering its
 *                          callback) failed; it returns at once, that entry
 *                          of `statuses` has the error, later ones are
 *                          unspecified,
 *   and the bad-input codes above.
 */
CW_API int cw_wait_all(const cl_event *events, size_t n, const cw_wait_options *options,
                       cl_int *statuses);

/*
 * Wait until at least one event is finished, or the timeout. `*index`
 * (when not NULL) receives the finished event's index (the lowest one when
 * several are found finished at once), the index of the event whose status
 * could not be read, or n on timeout and bad input; `*status` receives that
 * event's execution status or OpenCL error (on timeout: the last status
 * read of events[0]; on bad input it is not written). Returns
 *   CW_OK                  events[*index] completed,
 *   CW_ERR_COMMAND_FAILED  events[*index] failed (a failure counts as finished),
 *   CW_ERR_TIMEOUT         none finished before the deadline,
 *   CW_ERR_INVALID_EVENT / CW_ERR_OPENCL reading a status failed,
 *   and the bad-input codes above.
 */
CW_API int cw_wait_any(const cl_event *events, size_t n, const cw_wait_options *options,
                       size_t *index, cl_int *status);

#ifdef __cplusplus
}
#endif
#endif
