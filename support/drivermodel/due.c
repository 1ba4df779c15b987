/* SPDX-License-Identifier: MIT */
/* The queue of things due at a time (due.h). */
#include "due.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static bool before(const dm_due *a, const dm_due *b) {
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

void dm_due_push(dm_due_queue *q, dm_due *d) {
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        dm_due **v = realloc(q->v, cap * sizeof *v);
        if (!v) {
            fputs("cw driver model: out of memory\n", stderr);
            abort();
        }
        q->v = v;
        q->cap = cap;
    }
    size_t i = q->n++;
    while (i > 0 && before(d, q->v[(i - 1) / 2])) {
        q->v[i] = q->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->v[i] = d;
}

dm_due *dm_due_pop(dm_due_queue *q) {
    dm_due *top = q->v[0], *last = q->v[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && before(q->v[c + 1], q->v[c]))
            ++c;
        if (!before(q->v[c], last))
            break;
        q->v[i] = q->v[c];
        i = c;
    }
    if (q->n)
        q->v[i] = last;
    return top;
}
