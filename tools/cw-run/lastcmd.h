/* SPDX-License-Identifier: MIT */
/*
 * The last command of each in-order queue, as far as the preload saw it
 * enqueued: its event, with a reference the table holds. clFinish waits on
 * that event with cw instead of enqueuing a marker, then lets the real
 * clFinish finish whatever the preload did not see (commands enqueued
 * through entry points it does not interpose), so a stale or missing entry
 * costs a native wait, never a wrong result.
 *
 * Thread-safe; no OpenCL call is made under the table's lock.
 */
#ifndef CWP_LASTCMD_H
#define CWP_LASTCMD_H

#include <CL/cl.h>
#include <stdint.h>

/* Record `event` as the last command of `queue`. The table takes over the
 * caller's reference: it keeps it (an in-order queue) or releases it (an
 * out-of-order queue, a full table). The previous entry's is released. */
void cwp_last_put(cl_command_queue queue, cl_event event);

/* The last command recorded for `queue`, with the caller now owning the
 * table's reference, or NULL (none since the last take, out-of-order).
 * *typical_ns: how long clFinish on this queue has recently waited (see
 * cwp_last_waited), 0 when unknown. */
cl_event cwp_last_take(cl_command_queue queue, uint64_t *typical_ns);

/* A clFinish on `queue` waited `ns`. The typical wait is a decaying maximum:
 * max(ns, previous / 2), so one short wait does not undo a long history. */
void cwp_last_waited(cl_command_queue queue, uint64_t ns);

/* Forget `queue` before it is released (its handle may be reused). */
void cwp_last_forget(cl_command_queue queue);

#endif
