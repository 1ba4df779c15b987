/* SPDX-License-Identifier: MIT */
/* The last command of each in-order queue (lastcmd.h). */
#include "lastcmd.h"

#include <pthread.h>
#include <stddef.h>

#include "settle.h"

/*
 * A small array, searched linearly under one mutex: programs use a handful
 * of queues, and a search of 64 pointers costs less than the retain it
 * accompanies. A queue that finds the table full is not tracked; its
 * clFinish then waits on a marker, as an out-of-order queue's does.
 */
#define SLOTS 64

typedef struct slot {
    cl_command_queue queue; /* NULL: free */
    cl_event event;         /* NULL: nothing unfinished recorded since the last take */
    cl_event registering;   /* whose callback cwp_last_put is registering */
    bool early;             /* that one's callback came before its recording */
    bool in_order;
    bool idle;
    uint64_t seq; /* enqueues recorded */
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

/*
 * The recorded command completed: the table needs its event no more, and
 * drops its reference here rather than at the queue's next enqueue,
 * clFinish or release, which may never come through the preload (a program
 * that releases the queue through the loader's own entry point): on
 * rusticl an event holds its queue and the queue its context, so that one
 * reference would keep all three alive.
 *
 * The event is alive while its callback runs (the driver holds it), so no
 * other event can have its address meanwhile; an entry that moved on (a
 * later enqueue, a take) is someone else's to release. The callback is
 * registered before the entry is recorded, while the caller's reference
 * still keeps the event valid; one that comes in between leaves `early`
 * for the recording to find (only for the event being registered: a
 * callback of an event taken earlier must not mark a later event at the
 * same address). `data` is the queue, only compared.
 */
static void CL_CALLBACK on_complete(cl_event event, cl_int status, void *data) {
    (void)status; /* a failed command is the real clFinish's to report, as on every path */
    bool mine = false;
    pthread_mutex_lock(&lock);
    slot *s = find((cl_command_queue)data);
    if (s && s->event == event) {
        /* Everything the preload saw before it on this in-order queue
         * finished too. */
        s->event = NULL;
        s->idle = true;
        mine = true;
    } else if (s && s->registering == event) {
        s->early = true;
    }
    pthread_mutex_unlock(&lock);
    if (mine)
        clReleaseEvent(event);
}

/* Under the lock: record `event` in `s`; returns the reference to drop.
 * Any enqueue ends the queue's idleness, on out-of-order queues too. */
static cl_event swap_in(slot *s, cl_event event) {
    if (!s)
        return event; /* not tracked: the caller's reference goes */
    ++s->seq;
    s->idle = false;
    if (!s->in_order)
        return event;
    cl_event old = s->event;
    s->event = event;
    return old;
}

void cwp_last_put(cl_command_queue queue, cl_event event) {
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&lock);
    slot *s = find(queue);
    bool in_order = s && s->in_order;
    if (in_order) {
        s->registering = event;
        s->early = false;
    }
    pthread_mutex_unlock(&lock);
    if (!s) {
        /* First sight of this queue: ask its properties outside the lock. */
        cl_command_queue_properties p = 0;
        in_order =
            clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL) == CL_SUCCESS &&
            !(p & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        pthread_mutex_lock(&lock);
        if (!(s = find(queue)) && (s = find(NULL)) != NULL) {
            s->queue = queue;
            s->event = NULL;
            s->registering = NULL;
            s->early = false;
            s->in_order = in_order;
            s->idle = false;
            s->seq = 0;
        }
        in_order = s && s->in_order;
        if (in_order) {
            s->registering = event;
            s->early = false;
        }
        pthread_mutex_unlock(&lock);
    }
    /* Without the callback (an error) the entry stays until the queue's
     * next enqueue, take or forget. One on a command that completed already
     * runs at once, here, and leaves `early`. */
    if (in_order)
        clSetEventCallback(event, CL_COMPLETE, on_complete, (void *)queue);
    pthread_mutex_lock(&lock);
    cl_event old = NULL, drop;
    s = find(queue);
    if (s && s->in_order && s->registering == event && s->early) {
        /* Its callback came first: finished, nothing to keep. */
        old = s->event;
        s->event = NULL;
        s->idle = true;
        ++s->seq;
        drop = event;
    } else {
        drop = swap_in(s, event);
    }
    if (s && s->registering == event) {
        s->registering = NULL;
        s->early = false;
    }
    pthread_mutex_unlock(&lock);
    cwp_settle_release(old);
    cwp_settle_release(drop);
}

/* Take the queue's recorded command out of its slot, and the slot itself
 * when `forget`. */
static cwp_last take(cl_command_queue queue, bool forget) {
    cwp_last l = {NULL, false, 0};
    pthread_mutex_lock(&lock);
    slot *s = queue ? find(queue) : NULL;
    if (s) {
        l.event = s->event;
        l.idle = s->idle && !s->event;
        l.seq = s->seq;
        s->event = NULL;
        if (forget)
            s->queue = NULL;
    }
    pthread_mutex_unlock(&lock);
    return l;
}

cwp_last cwp_last_take(cl_command_queue queue) {
    return take(queue, false);
}

void cwp_last_waited(cl_command_queue queue, const cwp_last *l, bool finished) {
    if (!finished)
        return;
    pthread_mutex_lock(&lock);
    slot *s = queue ? find(queue) : NULL;
    if (s && s->seq == l->seq && !s->event)
        s->idle = true;
    pthread_mutex_unlock(&lock);
}

void cwp_last_forget(cl_command_queue queue) {
    cwp_settle_release(take(queue, true).event);
}
