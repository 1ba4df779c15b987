/* SPDX-License-Identifier: MIT */
/*
 * A queue of things due at a time, earliest first (a binary min-heap on
 * the due time, ties in `seq` order): the model's late callbacks and its
 * timer device's kernels. Not thread-safe: its owner's lock guards it.
 */
#ifndef CW_DRIVERMODEL_DUE_H
#define CW_DRIVERMODEL_DUE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Embedded as the first member of what is queued, so that a popped entry
 * converts back to its owner. */
typedef struct dm_due {
    uint64_t due; /* dm_now_ns() time */
    uint64_t seq; /* ties: the lower first */
} dm_due;

typedef struct dm_due_queue {
    dm_due **v;
    size_t n, cap;
} dm_due_queue;

/* Queue d; aborts when out of memory (the model is for tests only). */
DM_HIDDEN void dm_due_push(dm_due_queue *q, dm_due *d);
/* The earliest entry, taken off the queue; the queue must not be empty. */
DM_HIDDEN dm_due *dm_due_pop(dm_due_queue *q);
/* The earliest entry's due time, UINT64_MAX when the queue is empty. */
static inline uint64_t dm_due_next(const dm_due_queue *q) {
    return q->n ? q->v[0]->due : UINT64_MAX;
}

#endif
