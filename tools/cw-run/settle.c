/* SPDX-License-Identifier: MIT */
/* The preload's own releases, put off while a failure spreads (settle.h). */
#include "settle.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef struct put_off {
    cl_event event;
    struct put_off *next;
} put_off;

/* Negative clSetUserEventStatus calls in progress. */
static atomic_uint failing;
/* Releases waiting for `failing` to come back to 0: pushed by any thread,
 * taken whole (an exchange, so no pop can see a stale `next`). */
static put_off *_Atomic put_offs;

static void release_put_offs(void) {
    put_off *p = atomic_exchange(&put_offs, NULL);
    while (p) {
        put_off *next = p->next;
        clReleaseEvent(p->event);
        free(p);
        p = next;
    }
}

void cwp_settle_failing_begin(void) {
    atomic_fetch_add(&failing, 1);
}

void cwp_settle_failing_end(void) {
    if (atomic_fetch_sub(&failing, 1) == 1)
        release_put_offs();
}

/*
 * Sequentially consistent throughout. The count: a wait that saw a command
 * failed read its status after the setter's increment (the driver's own
 * locks order the two), so this load sees the call in progress unless it
 * has returned. The push and the second load: the last setter's decrement
 * either comes before that load, which then sees 0 and releases what is
 * put off itself, or after the push, and then its exchange takes it.
 */
void cwp_settle_release(cl_event event) {
    if (!event)
        return;
    put_off *p;
    if (atomic_load(&failing) == 0 || !(p = malloc(sizeof *p))) {
        clReleaseEvent(event);
        return;
    }
    p->event = event;
    p->next = atomic_load(&put_offs);
    while (!atomic_compare_exchange_weak(&put_offs, &p->next, p))
        ;
    if (atomic_load(&failing) == 0)
        release_put_offs();
}
