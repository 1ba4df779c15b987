/* SPDX-License-Identifier: MIT */
/* Layer 6.1: the event table (records, subscribers, sweep, forget) and the looks at an event. */
#include "table.h"
#include "table_record.h"
#include "cw/wait.h" /* cw_event_forget */
#include "driver.h"
#include "relax.h"
#include "spinlock.h"
#include "status.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SIZE 4096u
/* A sweep comes due when the table holds this many records, or twice as
 * many as the last sweep left: amortised, a few status reads per record. */
#define SWEEP_MIN 64u
static cw__record *table[TABLE_SIZE];
static cw__spinlock table_lock = CW__SPINLOCK_INITIALIZER;
static size_t live_records, sweep_at = SWEEP_MIN;

static unsigned bucket(cl_event event) {
    return (unsigned)(((uint64_t)(uintptr_t)event * 0x9E3779B97F4A7C15u) >> 52) & (TABLE_SIZE - 1);
}

/* Under table_lock. */
static cw__record **find(cl_event event) {
    cw__record **p = &table[bucket(event)];
    while (*p && (*p)->event != event)
        p = &(*p)->next;
    return p;
}

/* A record's subscribers, taken out of it under table_lock to be signalled
 * outside it: copied when they fit inline (the record may be torn down as
 * soon as the lock is let go), else the array itself. */
typedef struct taken_subs {
    uintptr_t *heap;
    uintptr_t one[CW__RECORD_INLINE_SUBS];
    uint32_t n;
} taken_subs;

/* Under table_lock: move r's subscribers into *t, leaving it none. */
static void take_subs(cw__record *r, taken_subs *t) {
    t->n = r->nsubs;
    t->heap = NULL;
    if (r->subs == r->one) {
        for (uint32_t i = 0; i < r->nsubs; ++i)
            t->one[i] = r->one[i];
    } else
        t->heap = r->subs;
    r->subs = r->one;
    r->nsubs = 0;
    r->cap = CW__RECORD_INLINE_SUBS;
}

/* Under table_lock: take the record at `at` out of the table, handing back
 * its subscribers in *t. Returns whether the caller now owns its teardown
 * (false: a sweep holds it, and its last unpin tears it down). */
static bool unlink_record(cw__record **at, taken_subs *t) {
    cw__record *r = *at;
    *at = r->next;
    r->next = NULL;
    --live_records;
    take_subs(r, t);
    return cw__pins_doom(&r->pins);
}

/* Outside table_lock: tell the subscribers something happened. Each one
 * reads the event's own status, so a signal never decides a verdict. */
static void signal_all(taken_subs *t) {
    const uintptr_t *subs = t->heap ? t->heap : t->one;
    for (uint32_t i = 0; i < t->n; ++i)
        cw__completion_signal_token(subs[i], CL_COMPLETE);
    free(t->heap);
    t->heap = NULL;
    t->n = 0;
}

/* The callback landed on `fired`: fan out to the subscribers. The record
 * stays (done) until a status read forgets it. */
static void record_wake(cw__watcher *w) {
    cw__record *r = cw__container_of(w, cw__record, watcher);
    taken_subs t = {NULL, {0}, 0};
    cw__driver *measure = NULL;
    uint64_t seen = 0, running = 0;
    cw__spinlock_lock(&table_lock);
    if (*find(r->event) == r) {
        r->done = true;
        take_subs(r, &t);
        measure = r->measure;
        seen = r->seen_ns;
        running = r->running_ns;
        r->measure = NULL;
    }
    cw__spinlock_unlock(&table_lock);
    if (measure) {
        cw__driver_lateness_landed(measure, cw__completion_landed_ns(r->fired), seen, running);
    }
    signal_all(&t);
}

static void CL_CALLBACK on_complete(cl_event event, cl_int status, void *data) {
    (void)event;
    /* `status` is the trigger status; the subscribers read the real one. */
    cw__completion_signal_token((uintptr_t)data, status);
}

/* Under table_lock. */
static int add_sub(cw__record *r, uintptr_t token) {
    if (r->nsubs == r->cap) {
        uint32_t cap = r->cap * 2;
        uintptr_t *subs =
            r->subs == r->one ? malloc(cap * sizeof *subs) : realloc(r->subs, cap * sizeof *subs);
        if (!subs)
            return CW_ERR_NO_MEMORY;
        if (r->subs == r->one)
            for (uint32_t i = 0; i < r->nsubs; ++i)
                subs[i] = r->one[i];
        r->subs = subs;
        r->cap = cap;
    }
    r->subs[r->nsubs++] = token;
    return CW_OK;
}

/* Remove the record for `event`, if any, and wake its subscribers. */
static void forget(cl_event event) {
    taken_subs t = {NULL, {0}, 0};
    cw__record *r = NULL;
    bool owned = false;
    cw__spinlock_lock(&table_lock);
    cw__record **at = find(event);
    if (*at) {
        r = *at;
        owned = unlink_record(at, &t);
    }
    bool done = r && r->done;
    cw__spinlock_unlock(&table_lock);
    if (!r)
        return;
    signal_all(&t);
    if (!owned)
        return;
    if (!done) {
        cw__record_tear_down(r); /* disarms `fired`: a callback still to come finds a stale token */
        return;
    }
    /* The callback ran, and the thread that ran it may still be returning
     * from the fan-out that woke us: releasing `fired` now would wait for it,
     * spinning on our CPU while it may need that very CPU. A later call into
     * this unit tears it down, once that thread has left (run_deferred). */
    cw__record_defer_all(r);
}

/*
 * Read the status of up to `most` records nobody is subscribed to, outside
 * the lock, and forget the finished ones. Pinned records stay allocated even
 * if their callback fires meanwhile.
 */
static void sweep(size_t most) {
    /* One entry per pinned record: what the read found, and the subscribers
     * handed back if it is forgotten. */
    struct swept {
        cw__record *r;
        bool finished;
        taken_subs subs;
    } *e = calloc(most, sizeof *e);
    if (!e)
        return;
    size_t k = 0;
    cw__spinlock_lock(&table_lock);
    for (unsigned b = 0; b < TABLE_SIZE && k < most; ++b)
        for (cw__record *r = table[b]; r && k < most; r = r->next)
            if (r->nsubs == 0) {
                cw__pins_take(&r->pins);
                e[k++].r = r;
            }
    cw__spinlock_unlock(&table_lock);

    for (size_t i = 0; i < k; ++i) {
        cl_int st;
        /* The record's reference keeps the event valid; an error reading it
         * means it will never tell us more: forget it too. */
        e[i].finished = cw__status_read(e[i].r->event, &st) != CW_OK || st <= CL_COMPLETE;
    }

    cw__record *owned = NULL;
    cw__spinlock_lock(&table_lock);
    for (size_t i = 0; i < k; ++i) {
        cw__record *r = e[i].r;
        bool last = cw__pins_drop(&r->pins); /* false while it is in the table */
        cw__record **at = find(r->event);
        bool mine = last;
        if (e[i].finished && *at == r)
            mine = unlink_record(at, &e[i].subs);
        if (mine) {
            r->next = owned;
            owned = r;
        }
    }
    sweep_at = live_records * 2 > SWEEP_MIN ? live_records * 2 : SWEEP_MIN;
    cw__spinlock_unlock(&table_lock);
    for (size_t i = 0; i < k; ++i)
        signal_all(&e[i].subs);
    cw__record_tear_down_all(owned);
    free(e);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void keep_table_lock(void) {
    cw__spinlock_keep_across_fork(&table_lock);
}

/* Under table_lock: join the event's record, if it has one. */
enum { NO_RECORD, JOINED, ALREADY_DONE };
static int join_existing(cl_event event, uintptr_t token, int *rc) {
    cw__record *r = *find(event);
    if (!r)
        return NO_RECORD;
    if (r->done)
        return ALREADY_DONE; /* the caller signals itself: read the status */
    *rc = add_sub(r, token);
    return JOINED;
}

/* Join the event's record if it has one (a record whose callback ran
 * signals `token` at once), with *rc the outcome; NO_RECORD: the caller
 * registers, after a sweep if one is due, with a spare record in *fresh
 * when one is kept and `fresh` is not NULL. */
static int join_first(cl_event event, uintptr_t token, bool may_sweep, int *rc,
                      cw__record **fresh) {
    pthread_once(&fork_once, keep_table_lock);
    cw__record_run_deferred(false);
    *rc = CW_OK;
    cw__spinlock_lock(&table_lock);
    int joined = join_existing(event, token, rc);
    size_t due = may_sweep && joined == NO_RECORD && live_records >= sweep_at ? live_records : 0;
    if (fresh)
        *fresh = joined == NO_RECORD ? cw__record_spare_pop() : NULL;
    cw__spinlock_unlock(&table_lock);
    if (joined == ALREADY_DONE)
        cw__completion_signal_token(token, CL_COMPLETE);
    if (due)
        sweep(due);
    return joined;
}

/* The first subscriber registers the record's callback; later ones join. */
static int subscribe_shared(cl_event event, uintptr_t token, bool may_sweep, cl_int *cl_error) {
    int rc;
    cw__record *fresh;
    int joined = join_first(event, token, may_sweep, &rc, &fresh);
    if (joined != NO_RECORD)
        return rc;

    /* First subscriber: prepare a record (a spare one, or new) outside the
     * lock. Its reference on the event is taken before it is published, so
     * that whoever tears it down has a reference to drop. */
    if (fresh)
        memset(fresh, 0, sizeof *fresh);
    else if (!(fresh = calloc(1, sizeof *fresh)))
        return CW_ERR_NO_MEMORY;
    fresh->subs = fresh->one;
    fresh->cap = CW__RECORD_INLINE_SUBS;
    if ((rc = cw__completion_acquire(CW__COMPLETION_YIELD, &fresh->fired)) != CW_OK) {
        free(fresh);
        return rc;
    }
    fresh->watcher.wake = record_wake;
    fresh->event = event;
    cw__completion_watch(fresh->fired, &fresh->watcher);
    uintptr_t fired_token = cw__completion_token(fresh->fired);
    cl_int err = clRetainEvent(event);
    if (err != CL_SUCCESS) {
        cw__completion_release(fresh->fired, NULL);
        free(fresh);
        return cw__status_error(err, cl_error);
    }

    cw__spinlock_lock(&table_lock);
    joined = join_existing(event, token, &rc);
    if (joined == NO_RECORD) {
        cw__record **at = find(event);
        *at = fresh;
        ++live_records;
        if ((rc = add_sub(fresh, token)) != CW_OK) {
            taken_subs none;
            unlink_record(at, &none);
            free(none.heap);
            joined = JOINED; /* not published after all: discard it below */
        }
    }
    cw__spinlock_unlock(&table_lock);
    if (joined != NO_RECORD) { /* another thread registered first, or no memory */
        if (joined == ALREADY_DONE)
            cw__completion_signal_token(token, CL_COMPLETE);
        cw__record_tear_down(fresh);
        return rc;
    }

    /* The one registration, outside every lock: the callback may run inline
     * (the event finished already) and takes table_lock itself. From here on
     * `fresh` may be torn down by another thread at any time: only its
     * token, taken above, is used. */
    err = clSetEventCallback(event, CL_COMPLETE, on_complete, (void *)fired_token);
    if (err == CL_SUCCESS)
        return CW_OK;
    /* Rejected: no callback will come. Others may have subscribed meanwhile;
     * forgetting wakes them to read the status, which fails for them too. */
    forget(event);
    return cw__status_error(err, cl_error);
}

/*
 * A wait that asked for a callback of its own (CW_WAIT_OWN_CALLBACK) and has
 * no timeout ends only once the command has finished (or a status read
 * fails), so its registration cannot pile up with retries the way a
 * timed-out wait's would: it registers one with the token of its own
 * completion and keeps no record, no reference and no fan-out step. A
 * record already there (another wait or watch on the event) is joined as
 * usual, so the event gets no second callback on its account. The token
 * makes a callback that comes after the wait left (or never) harmless, as
 * for a record's.
 */
static int subscribe_own(cl_event event, uintptr_t token, cl_int *cl_error) {
    int rc;
    if (join_first(event, token, true, &rc, NULL) != NO_RECORD)
        return rc;
    cl_int err = clSetEventCallback(event, CL_COMPLETE, on_complete, (void *)token);
    return err == CL_SUCCESS ? CW_OK : cw__status_error(err, cl_error);
}

int cw__table_join(cl_event event, cw__completion *c, unsigned how, cl_int *cl_error) {
    uintptr_t token = cw__completion_token(c);
    cl_int err = CL_SUCCESS;
    int rc = how & CW__JOIN_OWN ? subscribe_own(event, token, &err)
                                : subscribe_shared(event, token, how & CW__JOIN_SWEEP, &err);
    if (rc != CW_OK)
        *cl_error = err; /* on success the caller's status stays as it was */
    return rc;
}

/* Under table_lock: take `c`'s token off the event's record; returns the
 * record (NULL: none). */
static cw__record *unsubscribe_locked(cl_event event, const cw__completion *c) {
    uintptr_t token = cw__completion_token(c);
    cw__record *r = *find(event);
    for (uint32_t i = 0; r && i < r->nsubs; ++i)
        if (r->subs[i] == token) {
            r->subs[i] = r->subs[--r->nsubs];
            break;
        }
    return r;
}

static void unsubscribe(cl_event event, cw__completion *c) {
    cw__spinlock_lock(&table_lock);
    unsubscribe_locked(event, c);
    cw__spinlock_unlock(&table_lock);
}

bool cw__table_leave(cl_event event, cw__completion *c, bool finished) {
    unsubscribe(event, c);
    bool signalled = cw__completion_release(c, NULL);
    if (finished)
        cw__table_forget(event);
    return signalled;
}

bool cw__table_leave_seen(cl_event event, cw__completion *c, uint64_t seen_ns, uint64_t running_ns,
                          cw__driver *d) {
    bool kept = false;
    cw__spinlock_lock(&table_lock);
    cw__record *r = unsubscribe_locked(event, c);
    if (r && !r->done && d) {
        r->measure = d;
        r->seen_ns = seen_ns;
        r->running_ns = running_ns;
        kept = true;
    }
    cw__spinlock_unlock(&table_lock);
    cw__completion_release(c, NULL);
    if (!kept)
        cw__table_forget(event);
    return kept;
}

void cw__table_forget(cl_event event) {
    cw__record_run_deferred(false);
    forget(event);
}

/* The caller's own word that cw is to hold nothing of the event: its
 * record goes at once, and every put-off teardown with it (waiting for
 * callbacks still returning), the event's own included. */
void cw_event_forget(cl_event event) {
    if (!event)
        return;
    forget(event);
    cw__record_run_deferred(true);
}

int cw__table_look(cl_event event, bool flush, cl_int *status) {
    int rc = cw__status_first_look(event, flush, status);
    if (rc == CW_OK && *status <= CL_COMPLETE)
        cw__table_forget(event);
    return rc;
}

int cw__table_recheck(cl_event event, cw__completion **c, cl_int *status) {
    int rc = cw__status_read(event, status);
    if (rc != CW_OK || *status <= CL_COMPLETE)
        return rc;
    /* No verdict behind the signal: wait on a fresh subscription. */
    cw__completion *fresh;
    rc = cw__completion_acquire_like(*c, &fresh);
    cw__table_leave(event, *c, false);
    *c = NULL;
    if (rc != CW_OK)
        return rc;
    if ((rc = cw__table_join(event, fresh, CW__JOIN_SWEEP, status)) != CW_OK) {
        cw__table_leave(event, fresh, false);
        return rc;
    }
    *c = fresh;
    return CW_OK;
}

size_t cw__table_records(void) {
    cw__record_run_deferred(true);
    cw__spinlock_lock(&table_lock);
    size_t n = live_records;
    cw__spinlock_unlock(&table_lock);
    return n;
}

size_t cw__table_sweep(void) {
    size_t n = cw__table_records();
    if (n)
        sweep(n);
    return cw__table_records();
}
