/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.2 (internal): how long waits on a command queue take (a moving
 * estimate the planning strategies share) and what auto can see of the
 * machine. A wrong estimate costs time or CPU, never a wrong result.
 */
#ifndef CW_ESTIMATE_H
#define CW_ESTIMATE_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>

#include "strategy.h"

/* The event's queue's key and expected wait (one OpenCL query, which also
 * rejects a bad handle). */
void cw__estimate_plan(cw__plan *p, cl_event event);

/* The expected wait on the queue of `event` in ns (one OpenCL query); 0
 * when there is none (yet, or a user event). */
uint64_t cw__estimate_of(cl_event event);

/* The expected wait on the queue of `key` in ns; 0 when there is none yet. */
uint64_t cw__estimate_get(uintptr_t key);

/* Whether a CPU is spare for this thread to spin on beside the device of
 * the queue of `key`: one beyond those its work takes (a CPU device's
 * compute units, none for a GPU), and fewer runnable threads system-wide
 * than the thread's allowed CPUs; with `any_other`, merely a second
 * allowed CPU. Re-read at most every CW__SPARE_SAMPLE_NS. */
bool cw__estimate_spare_cpu(uintptr_t key, bool any_other);

/* Whether that device takes every CPU the calling thread may run on (as
 * many host CPUs as it is allowed, or cannot be told): its driver's
 * threads then run on the waiting thread's CPUs and wait for them. The
 * allowed CPUs are those of auto's view, re-read at most every 50 ms. */
bool cw__estimate_shares_cpus(uintptr_t key);

/* Feed the time a completed wait took on that queue; `rise`: a wait over
 * twice the estimate may raise it at once (estimate.c; false only for the
 * benchmark's ablation). */
void cw__estimate_put(uintptr_t key, uint64_t ns, bool rise);

/*
 * A second estimate per queue, of when its commands end rather than of how
 * long waits on it took: fed only by auto's waits where callbacks are late,
 * whose polls tell the end within a poll's delay or bound it between two
 * polls, and read by them. The wait estimate holds
 * every strategy's waits, and a callback wait's include the callback's
 * lateness (20 ms on a driver that delivers them so): a hybrid that slept
 * toward that would sleep past the end. 0: none yet (use the wait
 * estimate); *dev_ns: how far told ends lie from it, on average. The put
 * makes no new slot: it follows cw__estimate_put's.
 */
uint64_t cw__estimate_end_get(uintptr_t key, uint64_t *dev_ns);
/* A command's end, `ns` into its wait, give or take `span_ns` (0: told
 * within the polls' share). */
void cw__estimate_end_put(uintptr_t key, uint64_t ns, uint64_t span_ns, bool rise);

#endif
