/* SPDX-License-Identifier: MIT */
/* Layer 5: completion. A pool of slots addressed by (index, generation) tokens. */
#include "completion.h"
#include "baseline.h"
#include "cond.h"
#include "relax.h"
#include "spinlock.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

_Static_assert(sizeof(uintptr_t) >= 8, "a token packs a 32-bit index and generation");

typedef struct wake_ops wake_ops;

/*
 * ticket = generation << 1 | armed. Arming (acquire) bumps the generation and
 * sets armed; exactly one of "a signaller claims it" and "the waiter disarms
 * it" clears armed, by compare-and-swap on the exact value. Generations are
 * 32 bits: a stale token could only match again after 2^32 reuses of the same
 * slot while its callback is still pending.
 *
 * The lock and the wake order are chosen once, at acquire (`ops`); the slot
 * holds the one lock they use. A stale signaller touches only `ticket`, so
 * the union may change members between generations.
 */
struct cw__completion {
    _Atomic uint64_t ticket;
    atomic_int signalled; /* 1 once the signal has landed (written under the slot's lock) */
    atomic_int watched;   /* 1 once the signaller's wake of `watcher` has returned */
    cw__watcher *watcher; /* set by the owner before the token is handed out */
    int32_t status;
    uint64_t landed_ns; /* when the signal landed (for the wake-up latency statistic) */
    uint32_t index;
    const wake_ops *ops;
    union {
        struct {
            cw__spinlock lock;
            cw__cond cond;
        } spin;
        struct {
            pthread_mutex_t mutex;
            pthread_cond_t cond;
        } pt;
    } u;
    cw__completion *next_free;
};

/*
 * How a kind takes its lock, publishes the signal and wakes, waits, and lets
 * a releasing owner pass through the lock once the signaller has left it.
 * `publish` stores status, landing time and `signalled` (release); it runs
 * with the lock held.
 */
struct wake_ops {
    int (*init)(cw__completion *c);
    void (*fini)(cw__completion *c);
    void (*land)(cw__completion *c, int32_t status, uint64_t landed);
    int (*wait)(cw__completion *c, cw_parker *parker, uint64_t deadline_ns);
    void (*pass)(cw__completion *c);
};

static void publish(cw__completion *c, int32_t status, uint64_t landed) {
    c->status = status;
    c->landed_ns = landed;
    atomic_store_explicit(&c->signalled, 1, memory_order_release);
}

static int init_yield(cw__completion *c) {
    cw__spinlock_init(&c->u.spin.lock);
    cw__cond_init(&c->u.spin.cond);
    return CW_OK;
}

static int init_noyield(cw__completion *c) {
    init_yield(c);
    cw__baseline_cond_noyield(&c->u.spin.cond);
    return CW_OK;
}

/* Every side takes the slot's lock as its condition's waiters retake it:
 * yielding, or for the noyield baseline never. */
static void lock_spin(cw__completion *c) {
    c->u.spin.cond.relock(&c->u.spin.lock);
}

static void fini_spin(cw__completion *c) {
    (void)c;
}

static void land_after_unlock(cw__completion *c, int32_t status, uint64_t landed) {
    lock_spin(c);
    publish(c, status, landed);
    /* Wake after release: the woken waiter never finds the lock held. */
    cw__cond_notify_all_unlock(&c->u.spin.cond, &c->u.spin.lock);
}

static void land_locked(cw__completion *c, int32_t status, uint64_t landed) {
    lock_spin(c);
    publish(c, status, landed);
    /* Wake while holding: the preemption window the benchmark measures. */
    cw__baseline_notify_all_locked(&c->u.spin.cond);
    cw__spinlock_unlock(&c->u.spin.lock);
}

static int wait_spin(cw__completion *c, cw_parker *parker, uint64_t deadline_ns) {
    int rc = CW_OK;
    lock_spin(c);
    while (!atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
        /* CW_ERR_TIMEOUT, or CW_ERR_INTERRUPTED from the interrupt parker. */
        int w = cw__cond_wait(&c->u.spin.cond, &c->u.spin.lock, parker, deadline_ns);
        if (w != CW_OK && !atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
            rc = w;
            break;
        }
    }
    cw__spinlock_unlock(&c->u.spin.lock);
    return rc;
}

static void pass_spin(cw__completion *c) {
    lock_spin(c);
    cw__spinlock_unlock(&c->u.spin.lock);
}

/* The pthread kind's condition variable times out on CLOCK_MONOTONIC, the
 * clock of cw's deadlines; the attribute is made once. */
static pthread_condattr_t monotonic_attr;
static int monotonic_attr_rc;
static pthread_once_t monotonic_once = PTHREAD_ONCE_INIT;

static void make_monotonic_attr(void) {
    monotonic_attr_rc = pthread_condattr_init(&monotonic_attr);
    if (monotonic_attr_rc == 0)
        monotonic_attr_rc = pthread_condattr_setclock(&monotonic_attr, CLOCK_MONOTONIC);
}

static int init_pthread(cw__completion *c) {
    pthread_once(&monotonic_once, make_monotonic_attr);
    int rc = monotonic_attr_rc;
    if (rc == 0)
        rc = pthread_mutex_init(&c->u.pt.mutex, NULL);
    if (rc == 0 && (rc = pthread_cond_init(&c->u.pt.cond, &monotonic_attr)) != 0)
        pthread_mutex_destroy(&c->u.pt.mutex);
    /* glibc never fails these; should another libc, it is a shortage of
     * something, reported as such, never an abort. */
    return rc == 0 ? CW_OK : rc == ENOMEM ? CW_ERR_NO_MEMORY : CW_ERR_NO_RESOURCES;
}

static void fini_pthread(cw__completion *c) {
    pthread_cond_destroy(&c->u.pt.cond);
    pthread_mutex_destroy(&c->u.pt.mutex);
}

static void land_pthread(cw__completion *c, int32_t status, uint64_t landed) {
    pthread_mutex_lock(&c->u.pt.mutex);
    publish(c, status, landed);
    pthread_cond_broadcast(&c->u.pt.cond);
    pthread_mutex_unlock(&c->u.pt.mutex);
}

static int wait_pthread(cw__completion *c, cw_parker *parker, uint64_t deadline_ns) {
    (void)parker; /* an outside reference: it sleeps on its own condition variable */
    struct timespec ts = cw__timespec(deadline_ns);
    int rc = CW_OK;
    pthread_mutex_lock(&c->u.pt.mutex);
    while (!atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
        int e = deadline_ns == CW_DEADLINE_NONE
                    ? pthread_cond_wait(&c->u.pt.cond, &c->u.pt.mutex)
                    : pthread_cond_timedwait(&c->u.pt.cond, &c->u.pt.mutex, &ts);
        if (e == ETIMEDOUT && !atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&c->u.pt.mutex);
    return rc;
}

static void pass_pthread(cw__completion *c) {
    pthread_mutex_lock(&c->u.pt.mutex);
    pthread_mutex_unlock(&c->u.pt.mutex);
}

static const wake_ops kind_ops[CW__COMPLETION_KIND_COUNT] = {
    [CW__COMPLETION_YIELD] = {init_yield, fini_spin, land_after_unlock, wait_spin, pass_spin},
    [CW__COMPLETION_YIELD_WAKE_LOCKED] = {init_yield, fini_spin, land_locked, wait_spin, pass_spin},
    [CW__COMPLETION_NOYIELD_WAKE_LOCKED] = {init_noyield, fini_spin, land_locked, wait_spin,
                                            pass_spin},
    [CW__COMPLETION_PTHREAD] = {init_pthread, fini_pthread, land_pthread, wait_pthread,
                                pass_pthread},
};

#define CHUNK_SLOTS 256u
#define MAX_CHUNKS 4096u /* a million completions outstanding at once */

/* Chunks are published once and never freed: a callback that arrives after
 * its waiter left still finds valid memory behind any index it was given. */
static cw__completion *_Atomic chunks[MAX_CHUNKS];
static cw__spinlock pool_lock = CW__SPINLOCK_INITIALIZER;
static cw__completion *free_list;
static unsigned chunk_count;
static atomic_uint outstanding;

static int grow_pool(void) {
    if (chunk_count == MAX_CHUNKS)
        return CW_ERR_NO_MEMORY;
    cw__completion *chunk = calloc(CHUNK_SLOTS, sizeof *chunk);
    if (!chunk)
        return CW_ERR_NO_MEMORY;
    for (unsigned i = 0; i < CHUNK_SLOTS; ++i) {
        cw__completion *c = &chunk[i];
        c->index = chunk_count * CHUNK_SLOTS + i;
        atomic_init(&c->ticket, 0);
        atomic_init(&c->signalled, 0);
        atomic_init(&c->watched, 0);
        c->next_free = i + 1 < CHUNK_SLOTS ? &chunk[i + 1] : free_list;
    }
    free_list = chunk;
    /* Release: a signaller that loads this pointer sees initialised slots. */
    atomic_store_explicit(&chunks[chunk_count], chunk, memory_order_release);
    chunk_count++;
    return CW_OK;
}

static void give_back(cw__completion *c) {
    cw__spinlock_lock(&pool_lock);
    c->next_free = free_list;
    free_list = c;
    cw__spinlock_unlock(&pool_lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void keep_pool_lock(void) {
    cw__spinlock_keep_across_fork(&pool_lock);
}

int cw__completion_acquire(cw__completion_kind kind, cw__completion **out) {
    if (!out || (unsigned)kind >= CW__COMPLETION_KIND_COUNT)
        return CW_ERR_INVALID_ARGUMENT;
    pthread_once(&fork_once, keep_pool_lock);
    cw__spinlock_lock(&pool_lock);
    int rc = free_list ? CW_OK : grow_pool();
    cw__completion *c = free_list;
    if (rc == CW_OK)
        free_list = c->next_free;
    cw__spinlock_unlock(&pool_lock);
    if (rc != CW_OK)
        return rc;

    /* Only stale signallers can see this slot now, and they touch nothing but
     * the ticket (their claim fails), so plain re-initialisation is safe. */
    c->ops = &kind_ops[kind];
    if ((rc = c->ops->init(c)) != CW_OK) {
        give_back(c);
        return rc;
    }
    c->status = 0;
    c->landed_ns = 0;
    c->next_free = NULL;
    c->watcher = NULL;
    atomic_store_explicit(&c->signalled, 0, memory_order_relaxed);
    atomic_store_explicit(&c->watched, 0, memory_order_relaxed);
    uint64_t gen =
        ((atomic_load_explicit(&c->ticket, memory_order_relaxed) >> 1) + 1) & 0xffffffffu;
    /* Release: a signaller whose claim succeeds (acquire) sees the fields above. */
    atomic_store_explicit(&c->ticket, gen << 1 | 1u, memory_order_release);
    atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed);
    *out = c;
    return CW_OK;
}

int cw__completion_acquire_like(const cw__completion *c, cw__completion **out) {
    int rc = cw__completion_acquire((cw__completion_kind)(c->ops - kind_ops), out);
    if (rc == CW_OK)
        cw__completion_watch(*out, c->watcher);
    return rc;
}

uintptr_t cw__completion_token(const cw__completion *c) {
    uint64_t gen = atomic_load_explicit(&c->ticket, memory_order_relaxed) >> 1;
    return (uintptr_t)(gen << 32 | c->index);
}

static cw__completion *lookup(uint32_t index) {
    if (index / CHUNK_SLOTS >= MAX_CHUNKS)
        return NULL;
    cw__completion *chunk =
        atomic_load_explicit(&chunks[index / CHUNK_SLOTS], memory_order_acquire);
    return chunk ? &chunk[index % CHUNK_SLOTS] : NULL;
}

/* Publish the signal and wake the waiters; the caller has claimed the slot. */
static void land(cw__completion *c, int32_t status) {
    /* Set before the token was handed out; the claim's acquire made it visible. */
    cw__watcher *watcher = c->watcher;
    /* Read before the lock, published by the `signalled` release store: a
     * waiter that sees the signal (acquire) sees the time it landed. */
    c->ops->land(c, status, cw_now_ns());
    if (watcher) {
        /* After every lock is released, like the condition's waiters. The
         * slot cannot be recycled before `watched` is set: release waits for
         * it, so the store below is to a slot this signal still owns. */
        CW__INJECT();
        watcher->wake(watcher);
        atomic_store_explicit(&c->watched, 1, memory_order_release);
    }
}

void cw__completion_watch(cw__completion *c, cw__watcher *watcher) {
    c->watcher = watcher;
}

bool cw__completion_signal_token(uintptr_t token, int32_t status) {
    cw__completion *c = lookup((uint32_t)(token & 0xffffffffu));
    if (!c)
        return false;
    uint64_t armed = (uint64_t)(token >> 32) << 1 | 1u;
    CW__INJECT();
    /* Acquire pairs with the arming store: the slot's fields are initialised. */
    if (!atomic_compare_exchange_strong_explicit(&c->ticket, &armed, armed & ~(uint64_t)1,
                                                 memory_order_acquire, memory_order_relaxed))
        return false;
    CW__INJECT();
    land(c, status);
    return true;
}

bool cw__completion_is_signalled(const cw__completion *c) {
    return atomic_load_explicit(&((cw__completion *)c)->signalled, memory_order_acquire) != 0;
}

bool cw__completion_settled(const cw__completion *c) {
    /* Acquire pairs with the signaller's store after its wake: release's
     * waits (landed, lock passed, wake returned) then find all done. */
    return atomic_load_explicit(&((cw__completion *)c)->watched, memory_order_acquire) != 0;
}

uint64_t cw__completion_landed_ns(const cw__completion *c) {
    return c->landed_ns;
}

int32_t cw__completion_status(const cw__completion *c) {
    return c->status;
}

int cw__completion_wait(cw__completion *c, cw_parker *parker, uint64_t deadline_ns) {
    if (cw__completion_is_signalled(c))
        return CW_OK;
    return c->ops->wait(c, parker, deadline_ns);
}

bool cw__completion_release(cw__completion *c, int32_t *status) {
    uint64_t t = atomic_load_explicit(&c->ticket, memory_order_relaxed);
    bool disarmed = (t & 1u) && atomic_compare_exchange_strong_explicit(
                                    &c->ticket, &t, t & ~(uint64_t)1, memory_order_relaxed,
                                    memory_order_relaxed);
    bool signalled = !disarmed;
    if (signalled) {
        /* A signaller claimed the slot. Wait for its signal to land, then
         * pass through its lock once more so that it has left the slot's
         * lock and condition before the slot can be handed out again. */
        cw_futex_parker fp;
        cw_futex_parker_init(&fp);
        cw__completion_wait(c, &fp.parker, CW_DEADLINE_NONE);
        c->ops->pass(c);
        /* The signaller's wake of the watcher runs after it left the lock:
         * the watcher's owner frees it once we return, so wait for the wake
         * to finish. It is short and its thread is running, but it may be
         * preempted: spin briefly, then give the CPU away. Acquire pairs with
         * the signaller's release store. */
        cw__backoff b = CW__BACKOFF_INITIALIZER;
        while (c->watcher && !atomic_load_explicit(&c->watched, memory_order_acquire))
            if (!cw__backoff_spin(&b))
                sched_yield();
    }
    if (signalled && status)
        *status = c->status; /* landed: written before the signaller's unlock we passed */
    /* Nobody uses the lock any more: a stale signaller touches only the ticket. */
    c->ops->fini(c);
    atomic_fetch_sub_explicit(&outstanding, 1, memory_order_relaxed);
    give_back(c);
    return signalled;
}

unsigned cw__completion_outstanding(void) {
    return atomic_load_explicit(&outstanding, memory_order_relaxed);
}

cw__linger *cw__linger_release(cw__linger *list, bool all, void (*release)(cw__linger *),
                               cw__linger **tail) {
    cw__linger *keep = NULL;
    *tail = NULL;
    while (list) {
        cw__linger *next = list->next;
        if (all || cw__completion_settled(list->completion)) {
            release(list);
        } else {
            list->next = keep;
            keep = list;
            if (!*tail)
                *tail = list;
        }
        list = next;
    }
    return keep;
}
