/* SPDX-License-Identifier: MIT */
/* The last command of each in-order queue (lastcmd.h). */
#include "lastcmd.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * A small array, searched linearly under one mutex: programs use a handful
 * of queues, and a search of 64 pointers costs less than the retain it
 * accompanies. A queue that finds the table full is not tracked; its
 * clFinish then waits on a marker, as an out-of-order queue's does.
 */
#define SLOTS 64

typedef struct slot {
    cl_command_queue queue; /* NULL: free */
    cl_event event;         /* NULL: nothing recorded since the last take */
    bool in_order;
    uint64_t typical_ns; /* of clFinish's waits (cwp_last_waited) */
} slot;

static slot table[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork in another thread while this one holds the lock would leave it
 * held in the child for good: hold it across fork instead. */
static void fork_prepare(void) {
    pthread_mutex_lock(&lock);
}
static void fork_done(void) {
    pthread_mutex_unlock(&lock);
}
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) {
    pthread_atfork(fork_prepare, fork_done, fork_done);
}

static slot *find(cl_command_queue queue) {
    for (size_t i = 0; i < SLOTS; ++i)
        if (table[i].queue == queue)
            return &table[i];
    return NULL;
}

/* Under the lock: record `event` in `s`; returns the reference to drop. */
static cl_event swap_in(slot *s, cl_event event) {
    if (!s || !s->in_order)
        return event; /* not tracked: the caller's reference goes */
    cl_event old = s->event;
    s->event = event;
    return old;
}

void cwp_last_put(cl_command_queue queue, cl_event event) {
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&lock);
    slot *s = find(queue);
    cl_event drop = s ? swap_in(s, event) : NULL;
    pthread_mutex_unlock(&lock);
    if (!s) {
        /* First sight of this queue: ask its properties outside the lock. */
        cl_command_queue_properties p = 0;
        bool in_order =
            clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL) == CL_SUCCESS &&
            !(p & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        pthread_mutex_lock(&lock);
        if (!(s = find(queue)) && (s = find(NULL)) != NULL) {
            s->queue = queue;
            s->event = NULL;
            s->in_order = in_order;
            s->typical_ns = 0;
        }
        drop = swap_in(s, event);
        pthread_mutex_unlock(&lock);
    }
    if (drop)
        clReleaseEvent(drop);
}

/* Take the queue's recorded command out of its slot, and the slot itself
 * when `forget`; *typical_ns gets the slot's typical wait (0: no slot). */
static cl_event take(cl_command_queue queue, bool forget, uint64_t *typical_ns) {
    cl_event ev = NULL;
    *typical_ns = 0;
    pthread_mutex_lock(&lock);
    slot *s = queue ? find(queue) : NULL;
    if (s) {
        ev = s->event;
        s->event = NULL;
        *typical_ns = s->typical_ns;
        if (forget)
            s->queue = NULL;
    }
    pthread_mutex_unlock(&lock);
    return ev;
}

cl_event cwp_last_take(cl_command_queue queue, uint64_t *typical_ns) {
    return take(queue, false, typical_ns);
}

void cwp_last_waited(cl_command_queue queue, uint64_t ns) {
    pthread_mutex_lock(&lock);
    slot *s = queue ? find(queue) : NULL;
    if (s)
        s->typical_ns = ns > s->typical_ns / 2 ? ns : s->typical_ns / 2;
    pthread_mutex_unlock(&lock);
}

void cwp_last_forget(cl_command_queue queue) {
    uint64_t unused;
    cl_event ev = take(queue, true, &unused);
    if (ev)
        clReleaseEvent(ev);
}
