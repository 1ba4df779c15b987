/* SPDX-License-Identifier: MIT */
/* Layer 6.1: the event table's records: their spares and their teardown (table_record.h). */
#include "table_record.h"

#include <stdlib.h>

/* Finished records whose teardown waits for the next call (table.c, forget). */
static cw__linger *_Atomic deferred;

/*
 * Torn-down records kept for the next first subscriber, so that a wait on a
 * fresh event allocates nothing (a record, and its subscribers inline).
 * Pushed from any thread without a lock; popped only under table_lock, so
 * no two pops race and a pushed-back node cannot make a pop's
 * compare-and-swap succeed on a stale `next` (the ABA case). At most
 * SPARE_MAX are kept (a relaxed count: it may overshoot by the threads
 * pushing at once); the rest are freed.
 */
#define SPARE_MAX 64u
static cw__record *_Atomic spare;
static atomic_uint spare_count;

static void spare_push(cw__record *r) {
    if (atomic_fetch_add_explicit(&spare_count, 1, memory_order_relaxed) >= SPARE_MAX) {
        atomic_fetch_sub_explicit(&spare_count, 1, memory_order_relaxed);
        free(r);
        return;
    }
    cw__record *head = atomic_load_explicit(&spare, memory_order_relaxed);
    do
        r->next = head;
    while (!atomic_compare_exchange_weak_explicit(&spare, &head, r, memory_order_release,
                                                  memory_order_relaxed));
}

cw__record *cw__record_spare_pop(void) {
    cw__record *head = atomic_load_explicit(&spare, memory_order_acquire);
    while (head && !atomic_compare_exchange_weak_explicit(
                       &spare, &head, head->next, memory_order_acquire, memory_order_acquire))
        ;
    if (head)
        atomic_fetch_sub_explicit(&spare_count, 1, memory_order_relaxed);
    return head;
}

/* Outside every lock, on a thread that is not inside the event's callback. */
void cw__record_tear_down(cw__record *r) {
    cw__completion_release(r->fired, NULL); /* waits for a landing unpark to return */
    clReleaseEvent(r->event);
    spare_push(r);
}

void cw__record_tear_down_all(cw__record *r) {
    while (r) {
        cw__record *next = r->next;
        cw__record_tear_down(r);
        r = next;
    }
}

static void tear_down_node(cw__linger *l) {
    cw__record_tear_down(cw__container_of(l, cw__record, linger));
}

/* Push the lingering nodes `first` to `last` onto `deferred`. */
static void defer_nodes(cw__linger *first, cw__linger *last) {
    cw__linger *head = atomic_load_explicit(&deferred, memory_order_relaxed);
    do
        last->next = head;
    while (!atomic_compare_exchange_weak_explicit(&deferred, &head, first, memory_order_release,
                                                  memory_order_relaxed));
}

void cw__record_defer_all(cw__record *first) {
    cw__linger *head = NULL, *last = NULL;
    for (cw__record *r = first; r; r = r->next) {
        r->linger.completion = r->fired;
        r->linger.next = head;
        head = &r->linger;
        if (!last)
            last = head;
    }
    if (head)
        defer_nodes(head, last);
}

/*
 * Tear down the records whose teardown was put off (see forget). `wait`:
 * all of them, waiting for callbacks still returning (for the counts of
 * tests and leak checks). Otherwise only those whose callback's thread is
 * done with them (cw__linger_release): on one CPU the waiter that the
 * fan-out woke runs on while that thread, preempted, has yet to return,
 * and releasing its record's completion would spin and yield until it
 * has; the rest wait for a later call.
 */
void cw__record_run_deferred(bool wait) {
    if (!atomic_load_explicit(&deferred, memory_order_relaxed))
        return;
    cw__linger *list = atomic_exchange_explicit(&deferred, NULL, memory_order_acquire), *last;
    cw__linger *keep = cw__linger_release(list, wait, tear_down_node, &last);
    if (keep)
        defer_nodes(keep, last);
}
