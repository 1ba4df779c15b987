/* SPDX-License-Identifier: MIT */
/* cw layer 4 (internal): condition variable on the yielding spin lock. */
#ifndef CW_COND_H
#define CW_COND_H

#include <stdbool.h>
#include <stdint.h>
#include "base.h"
#include "cw/parker.h"
#include "spinlock.h"

/* A waiter's queue entry. It lives on the waiter's stack for one wait. */
typedef struct cw__cond_waiter {
    struct cw__cond_waiter *next;
    struct cw__cond_waiter *prev;
    cw_parker *parker;
    bool notified; /* set under the lock by the notifier that dequeued it */
} cw__cond_waiter;

/* FIFO of waiters, protected by the spin lock the caller pairs it with. */
typedef struct cw__cond {
    cw__cond_waiter *head;
    cw__cond_waiter *tail;
    /* How a woken waiter retakes the lock: cw__spinlock_lock, or the
     * never-yielding baseline's lock (baseline.h). */
    void (*relock)(cw__spinlock *lock);
} cw__cond;

#define CW__COND_INITIALIZER                                                                       \
    { 0, 0, cw__spinlock_lock }

void cw__cond_init(cw__cond *cond);

/*
 * Called with `lock` held: queue the caller, release the lock, park on
 * `parker` until notified or `deadline_ns` (CW_DEADLINE_NONE: no deadline),
 * retake the lock. Returns 0 when notified (or on a spurious wake-up: re-check
 * the predicate), CW_ERR_TIMEOUT when the deadline passed first. A
 * notification that races with the timeout wins: it is never lost.
 *
 * `parker` must serve only this wait while it lasts; the wait consumes every
 * token addressed to it before returning, so the parker can be reused or freed.
 */
int cw__cond_wait(cw__cond *cond, cw__spinlock *lock, cw_parker *parker, uint64_t deadline_ns);

/*
 * Wake after releasing: called with `lock` held, dequeue every waiter,
 * release the lock, then unpark. A woken waiter that runs at once, even on
 * the notifier's CPU, finds the lock free: no lock-holder preemption window.
 * Returns with the lock released.
 */
void cw__cond_notify_all_unlock(cw__cond *cond, cw__spinlock *lock);

/*
 * The two halves of a notification, for an order of one's own (the
 * baselines' wake under the lock): take every waiter under the lock,
 * marking it notified, then wake the list taken. A taken waiter waits for
 * its wake-up, so every one taken must be woken.
 */
cw__cond_waiter *cw__cond_take_all(cw__cond *cond);
void cw__cond_wake(cw__cond_waiter *taken);

#endif
