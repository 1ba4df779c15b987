/* SPDX-License-Identifier: MIT */
/* Layer 4: condition variable on the yielding spin lock. */
#include "cond.h"

#include <stddef.h>

void cw_cond_init(cw_cond *cond) {
    cond->head = cond->tail = NULL;
}

static void enqueue(cw_cond *cond, cw_cond_waiter *w) {
    w->next = NULL;
    w->prev = cond->tail;
    if (cond->tail)
        cond->tail->next = w;
    else
        cond->head = w;
    cond->tail = w;
}

static void unlink_waiter(cw_cond *cond, cw_cond_waiter *w) {
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

int cw_cond_wait(cw_cond *cond, cw_spinlock *lock, cw_parker *parker, uint64_t deadline_ns) {
    cw_cond_waiter self = {.parker = parker, .notified = false};
    enqueue(cond, &self);
    cw_spinlock_unlock(lock);

    int rc = cw_park(parker, deadline_ns);
    CW_INJECT();
    cw_spinlock_lock(lock);
    if (!self.notified) {
        /* Timed out, or woke spuriously: nobody will unpark us for this node. */
        unlink_waiter(cond, &self);
        return rc;
    }
    if (rc == CW_ERR_TIMEOUT) {
        /* A notifier dequeued us and its unpark is on the way (it unparks
         * after releasing the lock). Take that token before returning so it
         * cannot land in a parker that was reused or freed. The notification
         * wins over the timeout: reporting a timeout here would lose it. */
        cw_spinlock_unlock(lock);
        while (cw_park(parker, CW_DEADLINE_NONE) != CW_OK)
            ;
        cw_spinlock_lock(lock);
    }
    return CW_OK;
}

/* Detach every waiter, marking them notified. */
static cw_cond_waiter *detach_all(cw_cond *cond) {
    cw_cond_waiter *first = cond->head;
    for (cw_cond_waiter *w = first; w; w = w->next)
        w->notified = true;
    cond->head = cond->tail = NULL;
    return first;
}

static void unpark_list(cw_cond_waiter *w) {
    while (w) {
        /* Read everything first: once unparked the waiter may return and its
         * node (on its stack) is gone. Its parker stays valid until the
         * token lands, because a notified waiter always waits for it. */
        cw_cond_waiter *next = w->next;
        cw_parker *p = w->parker;
        cw_unpark(p);
        w = next;
    }
}

void cw_cond_notify_all_unlock(cw_cond *cond, cw_spinlock *lock) {
    cw_cond_waiter *w = detach_all(cond);
    /* The whole point: the lock is free before anyone is woken, so a waiter
     * scheduled onto our CPU cannot spin on a lock we still hold. */
    cw_spinlock_unlock(lock);
    CW_INJECT();
    unpark_list(w);
}

void cw_cond_notify_all(cw_cond *cond) {
    unpark_list(detach_all(cond));
    CW_INJECT();
}
