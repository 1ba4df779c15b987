/* SPDX-License-Identifier: MIT */
/* cw layer 5: completion, one per awaited event, signalled exactly once. */
#ifndef CW__COMPLETION_H
#define CW__COMPLETION_H

#include <stdbool.h>
#include <stdint.h>
#include "base.h"
#include "cw/parker.h"

/*
 * Lifetime rule. A completion is a slot of a process-wide pool; slots are
 * recycled, never freed. The signalling side (an OpenCL callback on a driver
 * thread, or any thread holding a token) does not point at the slot: it holds
 * a token = (slot index, generation). Signalling first claims the slot with
 * one compare-and-swap on that exact generation, so
 * - a slot is signalled at most once per generation;
 * - a waiter that gives up (timeout, failed command) disarms its generation
 *   and recycles the slot at once; a callback that runs later, or never
 *   (docs/design.md, "Failed commands"), finds a stale generation and
 *   touches nothing but the slot's ticket word, which is never freed.
 *   Nothing leaks, nothing is used after it was given back.
 */
typedef struct cw__completion cw__completion;

/* How the signalling side wakes the waiter. */
typedef enum cw__completion_kind {
    /* cw's default: yielding spin lock, waiters woken after the lock is released. */
    CW__COMPLETION_YIELD = 0,
    /* yielding spin lock, waiters woken while it is still held (the seed's fix). */
    CW__COMPLETION_YIELD_WAKE_LOCKED,
    /* never-yielding spin lock, woken while held: lock-holder preemption, for the benchmark. */
    CW__COMPLETION_NOYIELD_WAKE_LOCKED,
    /* pthread mutex and condition variable: an outside reference. */
    CW__COMPLETION_PTHREAD,
    CW__COMPLETION_KIND_COUNT
} cw__completion_kind;

/* Take an armed completion from the pool. CW_ERR_NO_MEMORY when none can be had. */
int cw__completion_acquire(cw__completion_kind kind, cw__completion **out);

/* A fresh armed completion of the kind of `c`, with its watcher. */
int cw__completion_acquire_like(const cw__completion *c, cw__completion **out);

/* The token the signalling side passes to cw__completion_signal_token. */
uintptr_t cw__completion_token(const cw__completion *c);

/*
 * Signal the completion identified by `token` with `status`. Returns true if
 * this call signalled it, false if the token is stale (the waiter gave up) or
 * it was already signalled. Safe from any thread, at any time, any number of
 * times.
 */
bool cw__completion_signal_token(uintptr_t token, int32_t status);

/*
 * Wait until signalled or the deadline passes, parking on `parker`. Returns 0
 * when signalled, CW_ERR_TIMEOUT otherwise, or CW_ERR_INTERRUPTED where an
 * interrupt parker's descriptor ended the park (the completion stays armed).
 */
int cw__completion_wait(cw__completion *c, cw_parker *parker, uint64_t deadline_ns);

/*
 * Whatever a signal wakes besides a thread blocked in cw__completion_wait: an
 * event's record fanning the signal out, a notifier's watch, the parker of
 * a wait on many events. It is embedded in its owner, which `wake` reaches
 * with cw__container_of.
 */
typedef struct cw__watcher cw__watcher;
struct cw__watcher {
    void (*wake)(cw__watcher *self);
};

/*
 * Also wake `watcher` when the completion is signalled. Call it before the
 * token is handed out (before the callback is registered). NULL removes it.
 *
 * The signaller calls watcher->wake once, after it released the
 * completion's lock, on its own thread. Unlike a parker that serves
 * cw__completion_wait, the watcher may be touched by its wake after the
 * signal is visible: cw__completion_release waits until that wake has
 * returned (a bounded wait: the signaller is running), so the watcher, and
 * anything its wake uses, must stay valid until release returns, and no
 * longer.
 */
void cw__completion_watch(cw__completion *c, cw__watcher *watcher);

/* Whether it was signalled (a snapshot; true is final). */
bool cw__completion_is_signalled(const cw__completion *c);

/*
 * For a watched completion that was signalled: whether its signaller is done
 * with it, its watcher's wake included, so that cw__completion_release
 * returns at once (a snapshot; true is final). The wake is the last thing
 * the signaller does, and a preempted one can take a whole scheduler slice
 * to finish it: an owner that must not wait for it (an event loop) asks
 * first and releases later.
 */
bool cw__completion_settled(const cw__completion *c);

/*
 * Objects that each hold a signalled completion, and must not be released
 * before its signaller is done with it, linger on a list of these nodes
 * (one embedded in each object, its completion set) until it is.
 * cw__linger_release hands each node whose completion has settled, or with
 * `all` every node (whose release then waits for its signaller), to
 * `release`, and returns the others as a list, *tail set to its last node
 * (NULL for none). The list is the caller's: no lock is taken.
 */
typedef struct cw__linger {
    struct cw__linger *next;
    cw__completion *completion;
} cw__linger;
cw__linger *cw__linger_release(cw__linger *list, bool all, void (*release)(cw__linger *),
                               cw__linger **tail);

/* The status passed to the signal; meaningful once signalled, and only
 * until the completion is released (the slot may then serve another wait). */
int32_t cw__completion_status(const cw__completion *c);

/*
 * Give the completion back. If it is still armed it is disarmed first, and a
 * later signal is ignored. If a signal was claimed but has not finished
 * landing, this waits for it (a bounded wait: the signaller is running).
 * Returns true if the completion had been signalled, and then stores the
 * signalled status in *status when `status` is not NULL: the only safe way to
 * learn the status of a signal that landed as its waiter gave up.
 */
bool cw__completion_release(cw__completion *c, int32_t *status);

/* When the signal landed (CLOCK_MONOTONIC ns), for the wake-up latency
 * statistic; meaningful once cw__completion_is_signalled. */
uint64_t cw__completion_landed_ns(const cw__completion *c);

/* Slots currently handed out (for leak checks in tests). */
unsigned cw__completion_outstanding(void);

#endif
