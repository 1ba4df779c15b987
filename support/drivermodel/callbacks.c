/* SPDX-License-Identifier: MIT */
/*
 * Event callbacks as the modelled driver delivers them: late (a fixed delay
 * plus random jitter), from a thread of the model's own, fired or not for
 * failed commands, and with a registration that stalls now and then.
 *
 * Each registration is a record the driver below calls back through a
 * trampoline. The record is shared by two sides, each holding a reference:
 * the driver's (dropped when the trampoline runs, which for a failed command
 * on PoCL 3.1 is never) and the model's (dropped once the application's
 * function has been called or the call dropped). Whichever side first learns
 * the final status claims the record, so each registration is called once.
 * Every live record is on one list, so memory the driver never hands back
 * stays reachable rather than leaked.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "due.h"
#include "model.h"

/* With failed=fire, the model looks at the status of events with pending
 * callbacks: at once, then after these delays, when a user event is set to a
 * negative status (the one way a test fails a command), and every
 * SCAN_SLOW_NS while any are pending, for failures from anywhere else. */
static const uint64_t scan_after_fail_ns[] = {1000000, 10000000, 100000000};
#define SCAN_SLOW_NS 100000000ull

typedef void(CL_CALLBACK *dm_fn)(cl_event, cl_int, void *);

typedef struct rec {
    dm_due at;               /* when it is called (first: due.h), ties in registration order */
    struct rec *prev, *next; /* every live record */
    cl_event ev;
    dm_fn fn;
    void *data;
    int refs;      /* the driver's and the model's, plus any scan's */
    bool claimed;  /* the final status is known: delivery is due or done */
    bool watched;  /* failed=fire: the scan looks at it */
    cl_int status; /* what the application's function is called with */
} rec;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static pthread_once_t started = PTHREAD_ONCE_INIT;
static rec live = {.prev = &live, .next = &live};
static size_t nwatched;
/* Records whose call is due. */
static dm_due_queue due;
static uint64_t next_seq;
static uint64_t rng;
/* Scan schedule: the next scan after a failure, and the slow one. */
static uint64_t scan_fail_at;
static int scan_fail_step = -1;
static atomic_ulong registrations;

static bool dm_fires_failed(void) {
    return dm_cfg.failed == DM_FAILED_FIRE || dm_cfg.failed == DM_FAILED_FIRE_COMPLETE;
}

/* xorshift64: the jitter needs spread, not quality. */
static uint64_t jitter_ns(void) {
    if (dm_cfg.jitter_us <= 0)
        return 0;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (rng % ((uint64_t)dm_cfg.jitter_us + 1)) * 1000;
}

static void unref_locked(rec *r, int n) {
    r->refs -= n;
    if (r->refs)
        return;
    r->prev->next = r->next;
    r->next->prev = r->prev;
    free(r);
}

/* The final status is known: schedule the call. Under the lock. */
static void claim_locked(rec *r, cl_int status) {
    r->claimed = true;
    /* PoCL 7.0 calls a failed command's CL_COMPLETE callback with the
     * status it was registered for, not the error. */
    r->status = status < 0 && dm_cfg.failed == DM_FAILED_FIRE_COMPLETE ? CL_COMPLETE : status;
    if (r->watched) {
        r->watched = false;
        --nwatched;
    }
    r->at.due = dm_now_ns() + (uint64_t)dm_cfg.callback_delay_us * 1000 + jitter_ns();
    dm_due_push(&due, &r->at);
    pthread_cond_signal(&wake);
}

/* Look at the status of every watched record; claim the failed ones. The
 * driver's functions are called without the lock: the driver calls the
 * trampoline, which takes it, with its own locks held. */
static void scan(void) {
    pthread_mutex_lock(&lock);
    size_t n = 0;
    rec **list = nwatched ? malloc(nwatched * sizeof *list) : NULL;
    for (rec *r = live.next; list && r != &live; r = r->next)
        if (r->watched) {
            r->refs++;
            list[n++] = r;
        }
    pthread_mutex_unlock(&lock);
    cl_int *st = n ? malloc(n * sizeof *st) : NULL;
    for (size_t i = 0; i < n; ++i) {
        st[i] = CL_COMPLETE;
        if (st)
            dm_next->clGetEventInfo(list[i]->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st[i],
                                    &st[i], NULL);
    }
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; ++i) {
        if (st && st[i] < 0 && !list[i]->claimed)
            claim_locked(list[i], st[i]);
        unref_locked(list[i], 1);
    }
    pthread_mutex_unlock(&lock);
    free(st);
    free(list);
}

/* The model's delivery thread: calls each due record's function in due
 * order, then releases the event it retained. Detached: at exit it is
 * simply gone, with whatever was still pending. */
static void *deliver(void *arg) {
    (void)arg;
    uint64_t slow_at = dm_now_ns() + SCAN_SLOW_NS;
    pthread_mutex_lock(&lock);
    for (;;) {
        uint64_t now = dm_now_ns();
        if (dm_due_next(&due) <= now) {
            rec *r = (rec *)dm_due_pop(&due);
            pthread_mutex_unlock(&lock);
            r->fn(r->ev, r->status, r->data);
            dm_next->clReleaseEvent(r->ev);
            pthread_mutex_lock(&lock);
            unref_locked(r, 1);
            continue;
        }
        bool fail_due = scan_fail_step >= 0 && scan_fail_at <= now;
        if (fail_due || (nwatched && slow_at <= now)) {
            if (fail_due) {
                size_t steps = sizeof scan_after_fail_ns / sizeof scan_after_fail_ns[0];
                if ((size_t)++scan_fail_step < steps)
                    scan_fail_at = now + scan_after_fail_ns[scan_fail_step];
                else
                    scan_fail_step = -1;
            }
            slow_at = now + SCAN_SLOW_NS;
            pthread_mutex_unlock(&lock);
            scan();
            pthread_mutex_lock(&lock);
            continue;
        }
        uint64_t until = dm_due_next(&due);
        if (scan_fail_step >= 0 && scan_fail_at < until)
            until = scan_fail_at;
        if (nwatched && slow_at < until)
            until = slow_at;
        dm_cond_wait_until(&wake, &lock, until);
        if (until == UINT64_MAX)
            slow_at = dm_now_ns() + SCAN_SLOW_NS;
    }
    return NULL;
}

static void start(void) {
    rng = 0x9e3779b97f4a7c15ull ^ dm_cfg.seed;
    dm_thread_start(&wake, deliver, "callback thread");
}

/* The driver's call of a registration: the final status is known, unless
 * the model already claimed it (a failure it fired first). */
static void CL_CALLBACK trampoline(cl_event ev, cl_int status, void *data) {
    (void)ev;
    rec *r = data;
    cl_event drop = NULL;
    pthread_mutex_lock(&lock);
    if (!r->claimed) {
        if (status < 0 && dm_cfg.failed == DM_FAILED_DROP) {
            /* Never called: the model's reference goes now, with the event. */
            r->claimed = true;
            if (r->watched) {
                r->watched = false;
                --nwatched;
            }
            drop = r->ev;
        } else {
            claim_locked(r, status);
        }
    }
    unref_locked(r, drop ? 2 : 1); /* the driver's reference (and the model's) */
    pthread_mutex_unlock(&lock);
    if (drop)
        dm_next->clReleaseEvent(drop);
}

static void stall(void) {
    if (dm_cfg.stall_us <= 0)
        return;
    unsigned long n = atomic_fetch_add(&registrations, 1) + 1;
    if (n % (unsigned long)dm_cfg.stall_every == 0)
        dm_sleep_ns((uint64_t)dm_cfg.stall_us * 1000);
}

cl_int CL_API_CALL dm_set_event_callback(cl_event ev, cl_int type, dm_fn fn, void *data) {
    stall();
    if (!dm_config_wraps_callbacks(&dm_cfg) || !fn)
        return dm_next->clSetEventCallback(ev, type, fn, data);
    rec *r = calloc(1, sizeof *r);
    if (!r)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err = dm_next->clRetainEvent(ev);
    if (err != CL_SUCCESS) {
        free(r);
        return err;
    }
    pthread_once(&started, start);
    r->ev = ev;
    r->fn = fn;
    r->data = data;
    r->refs = 2;
    pthread_mutex_lock(&lock);
    r->at.seq = next_seq++;
    r->next = &live;
    r->prev = live.prev;
    live.prev->next = r;
    live.prev = r;
    if (dm_fires_failed()) {
        r->watched = true;
        ++nwatched;
    }
    pthread_mutex_unlock(&lock);
    err = dm_next->clSetEventCallback(ev, type, trampoline, r);
    if (err != CL_SUCCESS) {
        pthread_mutex_lock(&lock);
        if (r->watched) {
            r->watched = false;
            --nwatched;
        }
        unref_locked(r, 2);
        pthread_mutex_unlock(&lock);
        dm_next->clReleaseEvent(ev);
        return err;
    }
    if (dm_fires_failed()) {
        /* Registered on an event that had already failed: the driver below
         * may never call, so look now. */
        cl_int st = CL_COMPLETE;
        if (dm_next->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                CL_SUCCESS &&
            st < 0) {
            pthread_mutex_lock(&lock);
            if (!r->claimed)
                claim_locked(r, st);
            pthread_mutex_unlock(&lock);
        }
    }
    return CL_SUCCESS;
}

cl_int CL_API_CALL dm_set_user_event_status(cl_event ev, cl_int status) {
    cl_int err = dm_next->clSetUserEventStatus(ev, status);
    if (err == CL_SUCCESS && status < 0)
        dm_device_failure_seen();
    if (err == CL_SUCCESS && status < 0 && dm_fires_failed()) {
        pthread_once(&started, start);
        pthread_mutex_lock(&lock);
        scan_fail_step = 0;
        scan_fail_at = dm_now_ns();
        pthread_cond_signal(&wake);
        pthread_mutex_unlock(&lock);
    }
    return err;
}
