/* SPDX-License-Identifier: MIT */
/* cw layer 2 (internal): yielding spin lock. */
#ifndef CW_SPINLOCK_H
#define CW_SPINLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include "base.h"

/*
 * Test-and-test-and-set lock. A contender spins CW__BACKOFF_ROUNDS rounds of
 * exponential pause backoff (127 pauses), then calls sched_yield() between
 * checks, so a holder that was preempted on the contender's CPU gets that CPU
 * back and can release the lock. Without the yield, a contender that
 * preempted the holder spins until the scheduler's time slice ends
 * (milliseconds): lock-holder preemption.
 */
typedef struct cw__spinlock {
    atomic_int word;
} cw__spinlock;

#define CW__SPINLOCK_INITIALIZER                                                                   \
    { 0 }

void cw__spinlock_init(cw__spinlock *lock);

void cw__spinlock_lock(cw__spinlock *lock);
/* The same lock with another step once the spin budget is spent, in place of
 * sched_yield (the never-yielding baseline, baseline.h). */
void cw__spinlock_lock_then(cw__spinlock *lock, void (*spent)(void));
/* One load and at most one compare-and-swap: never spins, reads no clock. */
bool cw__spinlock_trylock(cw__spinlock *lock);
void cw__spinlock_unlock(cw__spinlock *lock);
/*
 * Take `lock` across fork (pthread_atfork): the child has one thread, and a
 * lock another thread of the parent held would stay held in it forever.
 * Call it once per lock (from the owner's pthread_once), for at most four
 * locks in the process; prepare takes them in the order they came.
 */
void cw__spinlock_keep_across_fork(cw__spinlock *lock);

/* A snapshot, for assertions: the answer may be stale when it returns. */
bool cw__spinlock_is_locked(cw__spinlock *lock);

#endif
