/* SPDX-License-Identifier: MIT */
/* Layer 6.1: the event table (records, subscribers, sweep, forget) and the looks at an event. */
#include "table.h"
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

/*
 * One record per event that cw has registered a CL_COMPLETE callback on.
 * OpenCL cannot unregister a callback, so registering one per wait would
 * grow the driver's list with every timed-out wait; instead every wait,
 * wait-any and notifier watch on the event subscribes its own completion's
 * token to the record, and the record's one callback signals them all.
 *
 * The callback holds the token of the record's completion (`fired`), never a
 * pointer: it lands through the completion pool, whose watcher is the
 * record's, and the watcher's wake fans the signal out. A record that was
 * torn down before its callback came (docs/design.md, "Failed commands")
 * leaves a stale token behind, which touches nothing.
 *
 * Lifetime: a record is in the table from its first subscription until
 * - a status read sees the command finished: any wait or watch on the event
 *   (cw__table_forget; the callback makes every subscriber read), or a
 *   sweep, which reads the status of records nobody waits on whenever their
 *   number has doubled, so a failed command's record goes even when no wait
 *   is left to see the failure (docs/design.md, "Failed commands").
 *   Only the blocking waits sweep: they cannot run inside an OpenCL callback
 *   (blocking there is undefined), and a sweep there could read the status
 *   of the very event whose callback is running ("Locks and OpenCL" in
 *   docs/design.md); the notifier, which callbacks may call, never sweeps,
 * - or the user drops it (cw_event_forget): the only way for an event that
 *   will never finish.
 * A record whose callback ran stays until then (`done`), so that a wait that
 * comes after the callback and before the status read joins it instead of
 * registering a second callback.
 * It holds a reference on the event meanwhile, so the event's address cannot
 * be reused by a new event while the record is keyed on it. Whoever takes it
 * out of the table owns its teardown, unless a sweep is reading it (`pins`,
 * base.h): then the last sweep to let go does it. Teardown never runs inside the
 * driver's callback: releasing `fired` there would wait for that very
 * callback.
 *
 * Locks: `table_lock` guards the table and every record's fields but
 * `event`, `fired` and `watcher`, which are set before it is published. No
 * OpenCL call and no completion lock is ever taken under it (docs/design.md,
 * "Locks and OpenCL").
 */
/* Subscribers a record holds without an allocation: most events have one
 * waiter, and a wait-any round or a notifier watch adds one more. */
#define RECORD_INLINE_SUBS 2u

typedef struct record {
    cw__watcher watcher; /* of `fired`: fans the callback's signal out */
    cl_event event;      /* retained while the record lives */
    cw__completion *fired;
    uintptr_t *subs; /* subscribed completion tokens: `one` while they fit */
    uint32_t nsubs, cap;
    uintptr_t one[RECORD_INLINE_SUBS];
    cw__pins pins;       /* sweeps reading the event's status outside the lock */
    bool done;           /* the callback ran: later subscribers are signalled at once */
    cw__driver *measure; /* seen finished at seen_ns before the callback: give it the lateness */
    uint64_t seen_ns, running_ns;
    struct record *next; /* table chain, then a teardown list */
} record;

#define TABLE_SIZE 4096u
/* A sweep comes due when the table holds this many records, or twice as
 * many as the last sweep left: amortised, a few status reads per record. */
#define SWEEP_MIN 64u
static record *table[TABLE_SIZE];
static cw__spinlock table_lock = CW__SPINLOCK_INITIALIZER;
static size_t live_records, sweep_at = SWEEP_MIN;
/* Finished records whose teardown waits for the next call (see forget). */
static record *_Atomic deferred;

static unsigned bucket(cl_event event) {
    return (unsigned)(((uint64_t)(uintptr_t)event * 0x9E3779B97F4A7C15u) >> 52) & (TABLE_SIZE - 1);
}

/* Under table_lock. */
static record **find(cl_event event) {
    record **p = &table[bucket(event)];
    while (*p && (*p)->event != event)
        p = &(*p)->next;
    return p;
}

/* A record's subscribers, taken out of it under table_lock to be signalled
 * outside it: copied when they fit inline (the record may be torn down as
 * soon as the lock is let go), else the array itself. */
typedef struct taken_subs {
    uintptr_t *heap;
    uintptr_t one[RECORD_INLINE_SUBS];
    uint32_t n;
} taken_subs;

/* Under table_lock: move r's subscribers into *t, leaving it none. */
static void take_subs(record *r, taken_subs *t) {
    t->n = r->nsubs;
    t->heap = NULL;
    if (r->subs == r->one) {
        for (uint32_t i = 0; i < r->nsubs; ++i)
            t->one[i] = r->one[i];
    } else
        t->heap = r->subs;
    r->subs = r->one;
    r->nsubs = 0;
    r->cap = RECORD_INLINE_SUBS;
}

/* Under table_lock: take the record at `at` out of the table, handing back
 * its subscribers in *t. Returns whether the caller now owns its teardown
 * (false: a sweep holds it, and its last unpin tears it down). */
static bool unlink_record(record **at, taken_subs *t) {
    record *r = *at;
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
static record *_Atomic spare;
static atomic_uint spare_count;

static void spare_push(record *r) {
    if (atomic_fetch_add_explicit(&spare_count, 1, memory_order_relaxed) >= SPARE_MAX) {
        atomic_fetch_sub_explicit(&spare_count, 1, memory_order_relaxed);
        free(r);
        return;
    }
    record *head = atomic_load_explicit(&spare, memory_order_relaxed);
    do
        r->next = head;
    while (!atomic_compare_exchange_weak_explicit(&spare, &head, r, memory_order_release,
                                                  memory_order_relaxed));
}

/* Under table_lock. */
static record *spare_pop(void) {
    record *head = atomic_load_explicit(&spare, memory_order_acquire);
    while (head && !atomic_compare_exchange_weak_explicit(
                       &spare, &head, head->next, memory_order_acquire, memory_order_acquire))
        ;
    if (head)
        atomic_fetch_sub_explicit(&spare_count, 1, memory_order_relaxed);
    return head;
}

/* Outside every lock, on a thread that is not inside the event's callback. */
static void tear_down(record *r) {
    cw__completion_release(r->fired, NULL); /* waits for a landing unpark to return */
    clReleaseEvent(r->event);
    spare_push(r);
}

static void tear_down_all(record *r) {
    while (r) {
        record *next = r->next;
        tear_down(r);
        r = next;
    }
}

/* Push a list of finished records (linked by `next`) onto `deferred`. */
static void defer_all(record *first) {
    record *last = first;
    while (last->next)
        last = last->next;
    record *head = atomic_load_explicit(&deferred, memory_order_relaxed);
    do
        last->next = head;
    while (!atomic_compare_exchange_weak_explicit(&deferred, &head, first, memory_order_release,
                                                  memory_order_relaxed));
}

/*
 * Tear down the records whose teardown was put off (see forget). `wait`:
 * all of them, waiting for callbacks still returning (for the counts of
 * tests and leak checks). Otherwise only those whose callback's thread is
 * done with them (cw__completion_settled): on one CPU the waiter that the
 * fan-out woke runs on while that thread, preempted, has yet to return,
 * and releasing its record's completion would spin and yield until it
 * has; the rest wait for a later call.
 */
static void run_deferred_how(bool wait) {
    if (!atomic_load_explicit(&deferred, memory_order_relaxed))
        return;
    record *r = atomic_exchange_explicit(&deferred, NULL, memory_order_acquire);
    record *later = NULL;
    while (r) {
        record *next = r->next;
        if (wait || cw__completion_settled(r->fired))
            tear_down(r);
        else {
            r->next = later;
            later = r;
        }
        r = next;
    }
    if (later)
        defer_all(later);
}

static void run_deferred(void) {
    run_deferred_how(false);
}

/* The callback landed on `fired`: fan out to the subscribers. The record
 * stays (done) until a status read forgets it. */
static void record_wake(cw__watcher *w) {
    record *r = cw__container_of(w, record, watcher);
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
static int add_sub(record *r, uintptr_t token) {
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
    record *r = NULL;
    bool owned = false;
    cw__spinlock_lock(&table_lock);
    record **at = find(event);
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
        tear_down(r); /* disarms `fired`: a callback still to come finds a stale token */
        return;
    }
    /* The callback ran, and the thread that ran it may still be returning
     * from the fan-out that woke us: releasing `fired` now would wait for it,
     * spinning on our CPU while it may need that very CPU. A later call into
     * this unit tears it down, once that thread has left (run_deferred). */
    defer_all(r);
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
        record *r;
        bool finished;
        taken_subs subs;
    } *e = calloc(most, sizeof *e);
    if (!e)
        return;
    size_t k = 0;
    cw__spinlock_lock(&table_lock);
    for (unsigned b = 0; b < TABLE_SIZE && k < most; ++b)
        for (record *r = table[b]; r && k < most; r = r->next)
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

    record *owned = NULL;
    cw__spinlock_lock(&table_lock);
    for (size_t i = 0; i < k; ++i) {
        record *r = e[i].r;
        bool last = cw__pins_drop(&r->pins); /* false while it is in the table */
        record **at = find(r->event);
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
    tear_down_all(owned);
    free(e);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void keep_table_lock(void) {
    cw__spinlock_keep_across_fork(&table_lock);
}

/* Under table_lock: join the event's record, if it has one. */
enum { NO_RECORD, JOINED, ALREADY_DONE };
static int join_existing(cl_event event, uintptr_t token, int *rc) {
    record *r = *find(event);
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
static int join_first(cl_event event, uintptr_t token, bool may_sweep, int *rc, record **fresh) {
    pthread_once(&fork_once, keep_table_lock);
    run_deferred();
    *rc = CW_OK;
    cw__spinlock_lock(&table_lock);
    int joined = join_existing(event, token, rc);
    size_t due = may_sweep && joined == NO_RECORD && live_records >= sweep_at ? live_records : 0;
    if (fresh)
        *fresh = joined == NO_RECORD ? spare_pop() : NULL;
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
    record *fresh;
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
    fresh->cap = RECORD_INLINE_SUBS;
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
        record **at = find(event);
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
        tear_down(fresh);
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
static record *unsubscribe_locked(cl_event event, const cw__completion *c) {
    uintptr_t token = cw__completion_token(c);
    record *r = *find(event);
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
    record *r = unsubscribe_locked(event, c);
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
    run_deferred();
    forget(event);
}

/* The caller's own word that cw is to hold nothing of the event: its
 * record goes at once, and every put-off teardown with it (waiting for
 * callbacks still returning), the event's own included. */
void cw_event_forget(cl_event event) {
    if (!event)
        return;
    forget(event);
    run_deferred_how(true);
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
    run_deferred_how(true);
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
