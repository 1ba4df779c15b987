/* SPDX-License-Identifier: MIT */
/* Layer 2: yielding spin lock. */
#include "relax.h"
#include "spinlock.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>

void cw__spinlock_init(cw__spinlock *lock) {
    atomic_init(&lock->word, 0);
}

bool cw__spinlock_trylock(cw__spinlock *lock) {
    /* The relaxed load first keeps a failing try from taking the cache line
     * exclusive; acquire on success orders the critical section after it. */
    int expected = 0;
    return atomic_load_explicit(&lock->word, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(&lock->word, &expected, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void lock_then(cw__spinlock *lock, void (*spent)(void)) {
    if (cw__spinlock_trylock(lock))
        return;
    cw__backoff backoff = CW__BACKOFF_INITIALIZER;
    for (;;) {
        /* Test before test-and-set: wait on a shared copy of the line. */
        while (atomic_load_explicit(&lock->word, memory_order_relaxed) != 0) {
            if (cw__backoff_spin(&backoff))
                continue;
            /* The spin budget is spent, so the holder is probably not running:
             * likely preempted, possibly by us on its CPU. */
            spent();
        }
        if (cw__spinlock_trylock(lock))
            return;
    }
}

/* Give the CPU away so that a preempted holder can run and release the lock. */
static void yield_cpu(void) {
    sched_yield();
}

void cw__spinlock_lock(cw__spinlock *lock) {
    lock_then(lock, yield_cpu);
}

void cw__spinlock_lock_then(cw__spinlock *lock, void (*spent)(void)) {
    lock_then(lock, spent);
}

void cw__spinlock_unlock(cw__spinlock *lock) {
    CW__INJECT();
    /* Release: everything written under the lock is visible to the next holder. */
    atomic_store_explicit(&lock->word, 0, memory_order_release);
}

bool cw__spinlock_is_locked(cw__spinlock *lock) {
    return atomic_load_explicit(&lock->word, memory_order_relaxed) != 0;
}

/* The locks held across fork. Registered before the fork that needs them
 * (their owners register at first use), read by the handlers. */
#define FORK_LOCKS 4u
static cw__spinlock *fork_locks[FORK_LOCKS];
static atomic_uint fork_count;
static pthread_mutex_t fork_register = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void) {
    unsigned n = atomic_load_explicit(&fork_count, memory_order_acquire);
    for (unsigned i = 0; i < n; ++i)
        cw__spinlock_lock(fork_locks[i]);
}

static void fork_done(void) {
    unsigned n = atomic_load_explicit(&fork_count, memory_order_acquire);
    for (unsigned i = n; i-- > 0;)
        cw__spinlock_unlock(fork_locks[i]);
}

static void install_fork_handlers(void) {
    pthread_atfork(fork_prepare, fork_done, fork_done);
}

void cw__spinlock_keep_across_fork(cw__spinlock *lock) {
    pthread_once(&fork_once, install_fork_handlers);
    pthread_mutex_lock(&fork_register);
    unsigned n = atomic_load_explicit(&fork_count, memory_order_relaxed);
    /* Only cw's own units register, each once: a fifth means cw grew a
     * lock, and FORK_LOCKS must grow with it. */
    if (n == FORK_LOCKS)
        cw__die("cw__spinlock_keep_across_fork", ENOSPC);
    fork_locks[n] = lock;
    /* Release: a handler that sees the count (acquire) sees the entry. */
    atomic_store_explicit(&fork_count, n + 1, memory_order_release);
    pthread_mutex_unlock(&fork_register);
}
