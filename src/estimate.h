/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6 (internal): how long waits on a command queue take (a moving
 * estimate the planning strategies share) and the auto strategy's choice of
 * a spin budget. A wrong estimate costs time or CPU, never a wrong result.
 */
#ifndef CW_ESTIMATE_H
#define CW_ESTIMATE_H

#include <CL/cl.h>
#include <stdint.h>

#include "cw/wait.h"

/* The estimate's key for the event's queue; 0 (no estimate) for user events
 * and when the queue cannot be read. */
uintptr_t cw__queue_key(cl_event event);

/* The expected wait on that queue in ns; 0 when there is none yet. */
uint64_t cw__estimate_get(uintptr_t key);

/* Feed the time a completed wait took. */
void cw__estimate_put(uintptr_t key, uint64_t ns);

/* Auto: the spin budget for this wait in ns, or 0 to park at once. */
uint64_t cw__auto_spin_ns(const cw_wait_options *o, uintptr_t key, uint64_t expected);

#endif
