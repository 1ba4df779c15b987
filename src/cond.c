/* SPDX-License-Identifier: MIT */
/* Layer 4: condition variable on the yielding spin lock. */
#include "cond.h"

#include <sched.h>

#include <stddef.h>

void cw__cond_init(cw__cond *cond) {
    cond->head = cond->tail = NULL;
    cond->relock = cw__spinlock_lock;
}

static void enqueue(cw__cond *cond, cw__cond_waiter *w) {
    w->next = NULL;
    w->prev = cond->tail;
    if (cond->tail)
        cond->tail->next = w;
    else
        cond->head = w;
    cond->tail = w;
}

static void unlink_waiter(cw__cond *cond, cw__cond_waiter *w) {
    if (w->prev)
        w->prev->next = w->next;
    else
        cond->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        cond->tail = w->prev;
    w->next = w->prev = NULL;
}

int cw__cond_wait(cw__cond *cond, cw__spinlock *lock, cw_parker *parker, uint64_t deadline_ns) {
    cw__cond_waiter self = {.parker = parker, .notified = false};
    enqueue(cond, &self);
    cw__spinlock_unlock(lock);

    int rc = cw_park(parker, deadline_ns);
    CW__INJECT();
    cond->relock(lock);
    if (!self.notified) {
        /* Timed out, or woke spuriously: nobody will unpark us for this node. */
        unlink_waiter(cond, &self);
        return rc;
    }
    if (rc != CW_OK) {
        /* A notifier dequeued us and its unpark is on the way (it unparks
         * after releasing the lock). Take that token before returning so it
         * cannot land in a parker that was reused or freed. The notification
         * wins over the timeout (or the interrupt, whose parker returns at
         * once while its descriptor stays readable, until the token lands):
         * reporting either here would lose it. */
        cw__spinlock_unlock(lock);
        /* Only the interrupt parker returns without the token here; yield
         * to the notifier, which may be preempted before its unpark. */
        while (cw_park(parker, CW_DEADLINE_NONE) != CW_OK)
            sched_yield();
        cond->relock(lock);
    }
    return CW_OK;
}

cw__cond_waiter *cw__cond_take_all(cw__cond *cond) {
    cw__cond_waiter *first = cond->head;
    for (cw__cond_waiter *w = first; w; w = w->next)
        w->notified = true;
    cond->head = cond->tail = NULL;
    return first;
}

void cw__cond_wake(cw__cond_waiter *w) {
    while (w) {
        /* Read everything first: once unparked the waiter may return and its
         * node (on its stack) is gone. Its parker stays valid until the
         * token lands, because a notified waiter always waits for it. */
        cw__cond_waiter *next = w->next;
        cw_parker *p = w->parker;
        cw_unpark(p);
        w = next;
    }
}

void cw__cond_notify_all_unlock(cw__cond *cond, cw__spinlock *lock) {
    cw__cond_waiter *w = cw__cond_take_all(cond);
    /* The whole point: the lock is free before anyone is woken, so a waiter
     * scheduled onto our CPU cannot spin on a lock we still hold. */
    cw__spinlock_unlock(lock);
    CW__INJECT();
    cw__cond_wake(w);
}
