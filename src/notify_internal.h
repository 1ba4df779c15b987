/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.3 (internal): the notifier's watch and state, shared by
 * notify.c (watches, drain, destroy) and notify_checks.c (the
 * failed-command checks and their timer) only.
 */
#ifndef CW_NOTIFY_INTERNAL_H
#define CW_NOTIFY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "completion.h"
#include "cw/notify.h"
#include "strategy.h"

/*
 * One watch per awaited event, the watcher of its completion: the signal
 * (the event's callback, or the notifier's own status check) wakes it by
 * pushing it onto the notifier's ready list and making the eventfd
 * readable. The memory of a watch is freed only by drain, cancel's drain,
 * or destroy, and always after cw__completion_release, which
 * - disarms the completion when no signal claimed it, so that a callback
 *   arriving later, or never, finds a stale token and touches only the
 *   pool's ticket word, never this watch;
 * - otherwise waits until the signaller's wake returned, so that the push
 *   and the eventfd write below never touch freed memory.
 * Drain never makes that wait: the eventfd write wakes the loop's thread,
 * which may preempt the signaller on its CPU before its wake returns, and
 * waiting for it there (spinning, then yielding the CPU to whatever else is
 * runnable) cost the loop whole scheduler slices, milliseconds, on a busy
 * machine. A watch whose signaller is not done yet (cw__completion_settled)
 * lingers instead, off every list but `lingering`, and the next drain, or
 * destroy, frees it. Its result is delivered at once all the same.
 *
 * No OpenCL call is made with the notifier's mutex held (docs/design.md,
 * "Locks and OpenCL"): a callback that calls cw_notifier_watch waits for
 * it. Status reads and releases happen outside it; `pins` keeps a watch
 * alive meanwhile.
 */
typedef struct cw__watch {
    cw__watcher watcher; /* of `completion`: pushes the watch onto the ready list */
    cw_notifier *owner;
    cw__completion *completion;
    cl_event event; /* retained */
    uint64_t tag;
    /* Under owner->mutex: */
    bool cancelled;                /* reports nothing */
    bool registering;              /* its subscription is being made: the checks skip it */
    uint64_t due_ns;               /* its next failed-command check; UINT64_MAX: none */
    cw__pins pins;                 /* status checks reading it outside the mutex (base.h) */
    struct cw__watch *ready_next;  /* ready list (lock-free), then taken list (mutex) */
    cw__linger free;               /* a list of watches to free (local to one call, or lingering) */
    struct cw__watch *prev, *next; /* every live cw__watch */
} cw__watch;

struct cw_notifier {
    int epfd, efd, tfd;
    /* Serialises the owner's side; the signalling side never takes it, so a
     * callback can neither block on the loop nor deadlock with a drain that
     * waits for its wake in cw__completion_release. */
    pthread_mutex_t mutex;
    /* Pushed by signallers (LIFO), taken whole by drain. */
    cw__watch *_Atomic ready;
    cw__watch *taken_head, *taken_tail; /* taken from `ready`, not yet delivered (FIFO) */
    cw__watch *live;                    /* all watches not yet freed, cancelled ones included */
    cw__linger *lingering;              /* taken out, their signaller not done yet (free) */
    size_t pending;                     /* live watches not cancelled */
    cw__check_schedule checks;          /* the failed-command status checks; set at create */
    uint64_t check_due_ns;              /* when the armed timer expires; 0: disarmed */
};

/* Under the mutex: arm the timer to expire at `due` (CLOCK_MONOTONIC ns);
 * 0 or UINT64_MAX disarms. */
void cw__notify_set_timer_at(cw_notifier *n, uint64_t due);
/* Under the mutex: the earliest check due among the live watches not
 * cancelled; UINT64_MAX for none. */
uint64_t cw__notify_earliest_due(const cw_notifier *n);
/* Under the mutex: pin the watches whose check is due at `now` (an
 * allocated array of *count, NULL when none could be made) and set every
 * due watch's next check. */
cw__watch **cw__notify_pin_due(cw_notifier *n, uint64_t now, size_t *count);
/* Outside the mutex: read each pinned watch's status, signal the final ones. */
void cw__notify_check_pinned(cw__watch **pinned, size_t count);

#endif
