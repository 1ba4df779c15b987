/* SPDX-License-Identifier: MIT */
/* Layer 5: completion. A pool of slots addressed by (index, generation) tokens. */
#include "completion.h"
#include "cond.h"
#include "relax.h"
#include "spinlock.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

_Static_assert(sizeof(uintptr_t) >= 8, "a token packs a 32-bit index and generation");

/*
 * ticket = generation << 1 | armed. Arming (acquire) bumps the generation and
 * sets armed; exactly one of "a signaller claims it" and "the waiter disarms
 * it" clears armed, by compare-and-swap on the exact value. Generations are
 * 32 bits: a stale token could only match again after 2^32 reuses of the same
 * slot while its callback is still pending.
 */
struct cw_completion {
    _Atomic uint64_t ticket;
    atomic_int signalled; /* 1 once the signal has landed (written under the kind's lock) */
    atomic_int watched;   /* 1 once the signaller's unpark of `watcher` has returned */
    cw_parker *watcher;   /* set by the owner before the token is handed out */
    int32_t status;
    uint64_t landed_ns; /* when the signal landed (for the wake-up latency statistic) */
    uint32_t index;
    cw_completion_kind kind;
    cw_spinlock lock;
    cw_cond cond;
    pthread_mutex_t mutex; /* CW_COMPLETION_PTHREAD only */
    pthread_cond_t pcond;
    cw_completion *next_free;
};

#define CHUNK_SLOTS 256u
#define MAX_CHUNKS 4096u /* a million completions outstanding at once */

/* Chunks are published once and never freed: a callback that arrives after
 * its waiter left still finds valid memory behind any index it was given. */
static cw_completion *_Atomic chunks[MAX_CHUNKS];
static cw_spinlock pool_lock = CW_SPINLOCK_INITIALIZER;
static cw_completion *free_list;
static unsigned chunk_count;
static atomic_uint outstanding;

static int grow_pool(void) {
    if (chunk_count == MAX_CHUNKS)
        return CW_ERR_NO_MEMORY;
    cw_completion *chunk = calloc(CHUNK_SLOTS, sizeof *chunk);
    if (!chunk)
        return CW_ERR_NO_MEMORY;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0) {
        free(chunk);
        return CW_ERR_NO_MEMORY;
    }
    /* glibc never fails these for default attributes; should another libc,
     * it is a shortage of something, reported as such, never an abort. */
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    unsigned i = 0;
    for (; rc == 0 && i < CHUNK_SLOTS; ++i) {
        cw_completion *c = &chunk[i];
        c->index = chunk_count * CHUNK_SLOTS + i;
        atomic_init(&c->ticket, 0);
        atomic_init(&c->signalled, 0);
        atomic_init(&c->watched, 0);
        cw_spinlock_init(&c->lock);
        cw_cond_init(&c->cond);
        rc = pthread_mutex_init(&c->mutex, NULL);
        if (rc != 0)
            break;
        rc = pthread_cond_init(&c->pcond, &attr);
        if (rc != 0) {
            pthread_mutex_destroy(&c->mutex);
            break;
        }
        c->next_free = i + 1 < CHUNK_SLOTS ? &chunk[i + 1] : free_list;
    }
    pthread_condattr_destroy(&attr);
    if (rc != 0) {
        while (i-- > 0) {
            pthread_cond_destroy(&chunk[i].pcond);
            pthread_mutex_destroy(&chunk[i].mutex);
        }
        free(chunk);
        return rc == ENOMEM ? CW_ERR_NO_MEMORY : CW_ERR_NO_RESOURCES;
    }
    free_list = chunk;
    /* Release: a signaller that loads this pointer sees initialised slots. */
    atomic_store_explicit(&chunks[chunk_count], chunk, memory_order_release);
    chunk_count++;
    return CW_OK;
}

int cw_completion_acquire(cw_completion_kind kind, cw_completion **out) {
    if (!out || (unsigned)kind >= CW_COMPLETION_KIND_COUNT)
        return CW_ERR_INVALID_ARGUMENT;
    cw_spinlock_lock(&pool_lock);
    int rc = free_list ? CW_OK : grow_pool();
    cw_completion *c = free_list;
    if (rc == CW_OK)
        free_list = c->next_free;
    cw_spinlock_unlock(&pool_lock);
    if (rc != CW_OK)
        return rc;

    /* Only stale signallers can see this slot now, and they touch nothing but
     * the ticket (their claim fails), so plain re-initialisation is safe. */
    c->kind = kind;
    c->status = 0;
    c->landed_ns = 0;
    c->next_free = NULL;
    c->watcher = NULL;
    atomic_store_explicit(&c->signalled, 0, memory_order_relaxed);
    atomic_store_explicit(&c->watched, 0, memory_order_relaxed);
    if (kind == CW_COMPLETION_NOYIELD_WAKE_LOCKED)
        cw_spinlock_init_noyield(&c->lock);
    else
        cw_spinlock_init(&c->lock);
    cw_cond_init(&c->cond);
    uint64_t gen =
        ((atomic_load_explicit(&c->ticket, memory_order_relaxed) >> 1) + 1) & 0xffffffffu;
    /* Release: a signaller whose claim succeeds (acquire) sees the fields above. */
    atomic_store_explicit(&c->ticket, gen << 1 | 1u, memory_order_release);
    atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed);
    *out = c;
    return CW_OK;
}

uintptr_t cw_completion_token(const cw_completion *c) {
    uint64_t gen = atomic_load_explicit(&c->ticket, memory_order_relaxed) >> 1;
    return (uintptr_t)(gen << 32 | c->index);
}

static cw_completion *lookup(uint32_t index) {
    if (index / CHUNK_SLOTS >= MAX_CHUNKS)
        return NULL;
    cw_completion *chunk = atomic_load_explicit(&chunks[index / CHUNK_SLOTS], memory_order_acquire);
    return chunk ? &chunk[index % CHUNK_SLOTS] : NULL;
}

/* Publish the signal and wake the waiters; the caller has claimed the slot. */
static void land(cw_completion *c, int32_t status) {
    /* Set before the token was handed out; the claim's acquire made it visible. */
    cw_parker *watcher = c->watcher;
    /* Read before the lock, published by the `signalled` release store below:
     * a waiter that sees the signal (acquire) sees the time it landed. */
    uint64_t landed = cw_now_ns();
    switch (c->kind) {
    case CW_COMPLETION_YIELD:
        cw_spinlock_lock(&c->lock);
        c->status = status;
        c->landed_ns = landed;
        atomic_store_explicit(&c->signalled, 1, memory_order_release);
        /* Wake after release: the woken waiter never finds the lock held. */
        cw_cond_notify_all_unlock(&c->cond, &c->lock);
        break;
    case CW_COMPLETION_YIELD_WAKE_LOCKED:
    case CW_COMPLETION_NOYIELD_WAKE_LOCKED:
        cw_spinlock_lock(&c->lock);
        c->status = status;
        c->landed_ns = landed;
        atomic_store_explicit(&c->signalled, 1, memory_order_release);
        /* Wake while holding: the preemption window the benchmark measures. */
        cw_cond_notify_all(&c->cond);
        cw_spinlock_unlock(&c->lock);
        break;
    case CW_COMPLETION_PTHREAD:
    default:
        pthread_mutex_lock(&c->mutex);
        c->status = status;
        c->landed_ns = landed;
        atomic_store_explicit(&c->signalled, 1, memory_order_release);
        pthread_cond_broadcast(&c->pcond);
        pthread_mutex_unlock(&c->mutex);
        break;
    }
    if (watcher) {
        /* After every lock is released, like the condition's waiters. The
         * slot cannot be recycled before `watched` is set: release waits for
         * it, so the store below is to a slot this signal still owns. */
        CW_INJECT();
        cw_unpark(watcher);
        atomic_store_explicit(&c->watched, 1, memory_order_release);
    }
}

void cw_completion_watch(cw_completion *c, cw_parker *watcher) {
    c->watcher = watcher;
}

bool cw_completion_signal_token(uintptr_t token, int32_t status) {
    cw_completion *c = lookup((uint32_t)(token & 0xffffffffu));
    if (!c)
        return false;
    uint64_t armed = (uint64_t)(token >> 32) << 1 | 1u;
    CW_INJECT();
    /* Acquire pairs with the arming store: the slot's fields are initialised. */
    if (!atomic_compare_exchange_strong_explicit(&c->ticket, &armed, armed & ~(uint64_t)1,
                                                 memory_order_acquire, memory_order_relaxed))
        return false;
    CW_INJECT();
    land(c, status);
    return true;
}

bool cw_completion_is_signalled(const cw_completion *c) {
    return atomic_load_explicit(&((cw_completion *)c)->signalled, memory_order_acquire) != 0;
}

uint64_t cw_completion_landed_ns(const cw_completion *c) {
    return c->landed_ns;
}

int32_t cw_completion_status(const cw_completion *c) {
    return c->status;
}

static int wait_pthread(cw_completion *c, uint64_t deadline_ns) {
    struct timespec ts = cw__timespec(deadline_ns);
    int rc = CW_OK;
    pthread_mutex_lock(&c->mutex);
    while (!atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
        int e = deadline_ns == CW_DEADLINE_NONE ? pthread_cond_wait(&c->pcond, &c->mutex)
                                                : pthread_cond_timedwait(&c->pcond, &c->mutex, &ts);
        if (e == ETIMEDOUT && !atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&c->mutex);
    return rc;
}

int cw_completion_wait(cw_completion *c, cw_parker *parker, uint64_t deadline_ns) {
    if (cw_completion_is_signalled(c))
        return CW_OK;
    if (c->kind == CW_COMPLETION_PTHREAD)
        return wait_pthread(c, deadline_ns);
    int rc = CW_OK;
    cw_spinlock_lock(&c->lock);
    while (!atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
        if (cw_cond_wait(&c->cond, &c->lock, parker, deadline_ns) == CW_ERR_TIMEOUT &&
            !atomic_load_explicit(&c->signalled, memory_order_relaxed)) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
    }
    cw_spinlock_unlock(&c->lock);
    return rc;
}

bool cw_completion_release(cw_completion *c, int32_t *status) {
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
        cw_completion_wait(c, &fp.parker, CW_DEADLINE_NONE);
        if (c->kind == CW_COMPLETION_PTHREAD) {
            pthread_mutex_lock(&c->mutex);
            pthread_mutex_unlock(&c->mutex);
        } else {
            cw_spinlock_lock(&c->lock);
            cw_spinlock_unlock(&c->lock);
        }
        /* The signaller's unpark of the watcher runs after it left the lock:
         * the watcher's owner frees it once we return, so wait for the unpark
         * to finish. It is short and its thread is running, but it may be
         * preempted: spin briefly, then give the CPU away. Acquire pairs with
         * the signaller's release store. */
        cw_backoff b = CW_BACKOFF_INITIALIZER;
        while (c->watcher && !atomic_load_explicit(&c->watched, memory_order_acquire))
            if (!cw_backoff_spin(&b))
                sched_yield();
    }
    if (signalled && status)
        *status = c->status; /* landed: written before the signaller's unlock we passed */
    atomic_fetch_sub_explicit(&outstanding, 1, memory_order_relaxed);
    cw_spinlock_lock(&pool_lock);
    c->next_free = free_list;
    free_list = c;
    cw_spinlock_unlock(&pool_lock);
    return signalled;
}

unsigned cw_completion_outstanding(void) {
    return atomic_load_explicit(&outstanding, memory_order_relaxed);
}
