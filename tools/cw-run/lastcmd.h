/* SPDX-License-Identifier: MIT */
/*
 * The last command of each in-order queue, as far as the preload saw it
 * enqueued: its event, with a reference the table holds until the command
 * completes. clFinish waits on that event with cw instead of enqueuing a
 * marker, then lets the real clFinish finish whatever the preload did not
 * see (commands enqueued through entry points it does not interpose), so a
 * stale or missing entry costs a native wait, never a wrong result.
 *
 * A queue is idle when the last command the preload saw on it has
 * completed, or a clFinish returned since, with no enqueue seen after
 * that: its clFinish is then the real one alone (which returns at once, or
 * finishes natively what the preload did not see), not a marker.
 *
 * Thread-safe; no OpenCL call is made under the table's lock.
 */
#ifndef CWP_LASTCMD_H
#define CWP_LASTCMD_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>

/* Record `event` as the last command of `queue`. The table takes over the
 * caller's reference: it keeps it (an in-order queue) until the command
 * completes, or releases it (an out-of-order queue, a full table). The
 * previous entry's is released. The queue is no longer idle. */
void cwp_last_put(cl_command_queue queue, cl_event event);

/* What clFinish learns about a queue. */
typedef struct cwp_last {
    cl_event event; /* the last command, the caller now owning its
                     * reference; NULL: none since the last take, its
                     * completion, out-of-order, not tracked */
    bool idle;      /* see above */
    uint64_t seq;   /* for cwp_last_waited: enqueues recorded so far */
} cwp_last;

/* Take the queue's record: a clFinish begins. */
cwp_last cwp_last_take(cl_command_queue queue);

/* A clFinish on `queue`, whose take returned `l`, returned CL_SUCCESS when
 * `finished`: that leaves the queue idle, unless an enqueue was recorded
 * since its take. */
void cwp_last_waited(cl_command_queue queue, const cwp_last *l, bool finished);

/* Forget `queue` before it is released (its handle may be reused). */
void cwp_last_forget(cl_command_queue queue);

#endif
