/* SPDX-License-Identifier: MIT */
/*
 * cw layer 4.5 (internal): the comparison baselines. The strategies
 * cooperative-wake-locked and cooperative-noyield exist so that the
 * benchmark can show what cw's wake order and yielding lock save; their
 * mechanism is here, out of the lock's and the condition's core. Do not use
 * any of it for real work.
 */
#ifndef CW_BASELINE_H
#define CW_BASELINE_H

#include "cond.h"
#include "spinlock.h"

/* The spin lock without its yield: once the spin budget is spent it keeps
 * spinning, so a contender that preempted the holder spins until the
 * scheduler's time slice ends (lock-holder preemption). */
void cw__baseline_lock_noyield(cw__spinlock *lock);

/* Make `cond` (initialised) a condition on the never-yielding lock: a woken
 * waiter retakes the lock with cw__baseline_lock_noyield. */
void cw__baseline_cond_noyield(cw__cond *cond);

/*
 * Wake while holding: the classic order, called and returning with the lock
 * held. A waiter woken onto the notifier's CPU may preempt it and spin on the
 * lock it still holds; with a yielding lock that costs a yield, with a
 * never-yielding lock a time slice.
 */
void cw__baseline_notify_all_locked(cw__cond *cond);

#endif
