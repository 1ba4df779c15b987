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
} cw__cond;

#define CW__COND_INITIALIZER                                                                       \
    { 0, 0 }

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
 * Wake while holding: the classic order, called and returning with the lock
 * held. A waiter woken onto the notifier's CPU may preempt it and spin on the
 * lock it still holds; with a yielding lock that costs a yield, with a
 * never-yielding lock a time slice. Only the benchmark's baselines use it.
 */
void cw__cond_notify_all(cw__cond *cond);

#endif
