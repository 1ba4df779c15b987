/* SPDX-License-Identifier: MIT */
/* Layer 2: yielding spin lock. */
#include "relax.h"
#include "spinlock.h"

#include <sched.h>

void cw_spinlock_init(cw_spinlock *lock) {
    atomic_init(&lock->word, 0);
    lock->yields = true;
}

void cw_spinlock_init_noyield(cw_spinlock *lock) {
    atomic_init(&lock->word, 0);
    lock->yields = false;
}

bool cw_spinlock_trylock(cw_spinlock *lock) {
    /* The relaxed load first keeps a failing try from taking the cache line
     * exclusive; acquire on success orders the critical section after it. */
    int expected = 0;
    return atomic_load_explicit(&lock->word, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(&lock->word, &expected, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

void cw_spinlock_lock(cw_spinlock *lock) {
    if (cw_spinlock_trylock(lock))
        return;
    cw_backoff backoff = CW_BACKOFF_INITIALIZER;
    for (;;) {
        /* Test before test-and-set: wait on a shared copy of the line. */
        while (atomic_load_explicit(&lock->word, memory_order_relaxed) != 0) {
            if (cw_backoff_spin(&backoff))
                continue;
            /* The spin budget is spent, so the holder is probably not running:
             * likely preempted, possibly by us on its CPU. Give the CPU away
             * so it can run and release the lock. */
            if (lock->yields)
                sched_yield();
            else
                cw_relax();
        }
        if (cw_spinlock_trylock(lock))
            return;
    }
}

void cw_spinlock_unlock(cw_spinlock *lock) {
    CW_INJECT();
    /* Release: everything written under the lock is visible to the next holder. */
    atomic_store_explicit(&lock->word, 0, memory_order_release);
}

bool cw_spinlock_is_locked(cw_spinlock *lock) {
    return atomic_load_explicit(&lock->word, memory_order_relaxed) != 0;
}
