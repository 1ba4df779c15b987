/* SPDX-License-Identifier: MIT */
/* cw layer 2 (internal): yielding spin lock. */
#ifndef CW_SPINLOCK_H
#define CW_SPINLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include "base.h"

/*
 * Test-and-test-and-set lock. A contender spins CW_BACKOFF_ROUNDS rounds of
 * exponential pause backoff (127 pauses), then calls sched_yield() between
 * checks, so a holder that was preempted on the contender's CPU gets that CPU
 * back and can release the lock. Without the yield, a contender that
 * preempted the holder spins until the scheduler's time slice ends
 * (milliseconds): lock-holder preemption.
 *
 * The never-yielding variant (CW_SPINLOCK_NOYIELD_INITIALIZER,
 * cw_spinlock_init_noyield) spins forever instead. It exists only so the
 * benchmark can show that problem; do not use it for real work.
 */
typedef struct cw_spinlock {
    atomic_int word;
    bool yields;
} cw_spinlock;

#define CW_SPINLOCK_INITIALIZER                                                                    \
    { 0, true }
#define CW_SPINLOCK_NOYIELD_INITIALIZER                                                            \
    { 0, false }

void cw_spinlock_init(cw_spinlock *lock);
void cw_spinlock_init_noyield(cw_spinlock *lock);

void cw_spinlock_lock(cw_spinlock *lock);
/* One load and at most one compare-and-swap: never spins, reads no clock. */
bool cw_spinlock_trylock(cw_spinlock *lock);
void cw_spinlock_unlock(cw_spinlock *lock);
/*
 * Take `lock` across fork (pthread_atfork): the child has one thread, and a
 * lock another thread of the parent held would stay held in it forever.
 * Call it once per lock (from the owner's pthread_once), for at most four
 * locks in the process; prepare takes them in the order they came.
 */
void cw_spinlock_keep_across_fork(cw_spinlock *lock);

/* A snapshot, for assertions: the answer may be stale when it returns. */
bool cw_spinlock_is_locked(cw_spinlock *lock);

#endif
