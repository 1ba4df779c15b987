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
    cl_event event;      /* the last command, the caller now owning its
                          * reference; NULL: none since the last take, its
                          * completion, out-of-order, not tracked */
    bool idle;           /* see above */
    uint64_t seq;        /* for cwp_last_waited: enqueues recorded so far */
    uint64_t commands;   /* of them, since the last take */
    uint64_t first_ns;   /* when the first of those was recorded (cwp_wall_ns) */
    uint64_t per_cmd_ns; /* the time a command has recently taken
                          * (cwp_last_waited); 0 when unknown */
} cwp_last;

/* Take the queue's record: a clFinish begins. The next take counts the
 * commands recorded after this one. */
cwp_last cwp_last_take(cl_command_queue queue);

/* How much longer the queue's work taken in `l` is expected to last at
 * `now_ns`: its commands at the time each has recently taken, from the
 * first one's recording, and no less than one command's time (a queue
 * behind that schedule still has its last command to run); 0 when
 * unknown. */
uint64_t cwp_last_expected(const cwp_last *l, uint64_t now_ns);

/*
 * A clFinish on `queue`, whose take returned `l`, waited from `begin_ns` to
 * `end_ns`, and returned CL_SUCCESS when `finished`. The time a command
 * takes is learned from it when `timed`: the time from the first of its
 * commands' recording to the end, per command (no more than the wait
 * itself: a program that enqueued one command long before the rest did not
 * keep the queue busy meanwhile), as a decaying maximum, max(sample,
 * previous / 2), so that one quick call does not undo a long history. A
 * wait that found a command failed is not timed: it ended at a status
 * check, whose interval comes from this very time, so learning it would
 * double the next failed wait's interval, and each after it, up to cw's
 * cap (1 s). A finished call leaves the queue idle, unless an enqueue was
 * recorded since its take.
 */
void cwp_last_waited(cl_command_queue queue, const cwp_last *l, uint64_t begin_ns, uint64_t end_ns,
                     bool finished, bool timed);

/* Forget `queue` before it is released (its handle may be reused). */
void cwp_last_forget(cl_command_queue queue);

#endif
