/* SPDX-License-Identifier: MIT */
/* Layer 6.3, beside cw_wait: completions that signal an event loop's file descriptor. */
#include "notify_internal.h"
#include "driver.h"
#include "estimate.h"
#include "stats_internal.h"
#include "status.h"
#include "strategy.h"
#include "table.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/*
 * The descriptors' calls below cannot fail in a correct program: the
 * descriptors are the notifier's own, open until cw_notifier_destroy (no
 * EBADF), the buffers are the 8 bytes the kernel requires (no EINVAL), and
 * timer values come from cw__timespec.
 */
static void make_readable(cw_notifier *n) {
    uint64_t one = 1;
    /* EAGAIN would mean the counter is about to overflow: it is readable anyway. */
    if (write(n->efd, &one, sizeof one) != (ssize_t)sizeof one && errno != EAGAIN)
        cw__die("eventfd write", errno);
}

static void watch_wake(cw__watcher *self) {
    cw__watch *w = cw__container_of(self, cw__watch, watcher);
    cw_notifier *n = w->owner;
    cw__watch *head = atomic_load_explicit(&n->ready, memory_order_relaxed);
    do
        w->ready_next = head;
    /* Release: the drain that takes the list (acquire) sees ready_next. */
    while (!atomic_compare_exchange_weak_explicit(&n->ready, &head, w, memory_order_release,
                                                  memory_order_relaxed));
    /* Only a push onto an empty list writes. A non-empty list was announced
     * by the push that made it non-empty, and drain resets the eventfd before
     * it takes the list, so that announcement is still unconsumed. The
     * notifier is alive here: cw__completion_release waits for this wake to
     * return before the watch or the notifier can be freed. */
    if (!head)
        make_readable(n);
    /* The window a drain must not wait for (see the comment on `watch`). */
    CW__INJECT();
}

int cw_notifier_create(uint32_t check_interval_us, cw_notifier **out) {
    if (!out || check_interval_us > CW_CHECK_INTERVAL_US_MAX)
        return CW_ERR_INVALID_ARGUMENT;
    *out = NULL;
    cw_notifier *n = calloc(1, sizeof *n);
    if (!n)
        return CW_ERR_NO_MEMORY;
    n->efd = n->tfd = n->epfd = -1;
    int e = 0;
    if ((n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
        (n->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) < 0 ||
        (n->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        e = errno;
    /* Level-triggered members: the outer descriptor stays readable until a
     * drain has read both, whichever loop polls it and however it polls. */
    struct epoll_event ev = {.events = EPOLLIN};
    ev.data.fd = n->efd;
    if (e == 0 && epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->efd, &ev) != 0)
        e = errno;
    ev.data.fd = n->tfd;
    if (e == 0 && epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->tfd, &ev) != 0)
        e = errno;
    if (e == 0)
        e = pthread_mutex_init(&n->mutex, NULL);
    if (e != 0) {
        /* Every failure here is a shortage (descriptors, epoll watches,
         * kernel memory): the embedder decides what to do, cw never aborts. */
        if (n->efd >= 0)
            close(n->efd);
        if (n->tfd >= 0)
            close(n->tfd);
        if (n->epfd >= 0)
            close(n->epfd);
        free(n);
        return e == ENOMEM ? CW_ERR_NO_MEMORY : CW_ERR_NO_RESOURCES;
    }
    atomic_init(&n->ready, NULL);
    n->checks = cw__plan_checks(check_interval_us);
    *out = n;
    return CW_OK;
}

int cw_notifier_fd(const cw_notifier *n) {
    return n ? n->epfd : -1;
}

static void link_live(cw_notifier *n, cw__watch *w) {
    w->prev = NULL;
    w->next = n->live;
    if (n->live)
        n->live->prev = w;
    n->live = w;
    ++n->pending;
    /* The timer is armed for the earliest check due (cw_notifier_watch). */
    if (w->due_ns != UINT64_MAX && (!n->check_due_ns || w->due_ns < n->check_due_ns))
        cw__notify_set_timer_at(n, w->due_ns);
}

static void unlink_live(cw_notifier *n, cw__watch *w) {
    if (w->prev)
        w->prev->next = w->next;
    else
        n->live = w->next;
    if (w->next)
        w->next->prev = w->prev;
}

/* A watch stops being pending (delivered or cancelled). */
static void end_pending(cw_notifier *n) {
    if (--n->pending == 0)
        cw__notify_set_timer_at(n, 0);
}

/* Under the mutex: report nothing for `w`, and have the next drain free it:
 * claiming the completion ourselves (or finding a signal did) puts the watch
 * on the ready list; freeing it here could leave it on that list. */
static void cancel_locked(cw_notifier *n, cw__watch *w) {
    w->cancelled = true;
    end_pending(n);
    cw__completion_signal_token(cw__completion_token(w->completion), CL_COMPLETE);
}

/* Outside the mutex. The release comes first: see the comment on `watch`. */
static void free_watch(cw__watch *w) {
    cw__table_leave(w->event, w->completion, false);
    clReleaseEvent(w->event);
    free(w);
}

/* Under the mutex: `w` is out of every list; free it now (onto `*later`,
 * outside the mutex) or when the last status check reading it is done. */
static void doom(cw__watch *w, cw__linger **later) {
    if (!cw__pins_doom(&w->pins))
        return;
    w->free.completion = w->completion;
    w->free.next = *later;
    *later = &w->free;
}

static void free_node(cw__linger *l) {
    free_watch(cw__container_of(l, cw__watch, free));
}

/* Its own link: a signaller racing with destroy may still push a watch onto
 * the ready list (writing ready_next) until free_watch's release returns,
 * which it waits for. */
static void free_all(cw__linger *list) {
    cw__linger *tail;
    (void)cw__linger_release(list, true, free_node, &tail);
}

/* Outside the mutex, for drain: free the watches whose signaller is done
 * with them; the others linger until a later drain or destroy. Every watch
 * here came off the ready list, so a signal claimed it. */
static void free_settled(cw_notifier *n, cw__linger *list) {
    cw__linger *tail, *keep = cw__linger_release(list, false, free_node, &tail);
    if (keep) {
        pthread_mutex_lock(&n->mutex);
        tail->next = n->lingering;
        n->lingering = keep;
        pthread_mutex_unlock(&n->mutex);
    }
}

int cw_notifier_watch(cw_notifier *n, cl_event event, uint64_t tag, cl_int *cl_error) {
    cl_int sink;
    if (!cl_error)
        cl_error = &sink;
    *cl_error = CL_SUCCESS;
    if (!n || !event)
        return CW_ERR_INVALID_ARGUMENT;
    cl_int st = 0;
    int rc = cw__table_look(event, true, &st);
    if (rc != CW_OK) {
        *cl_error = st;
        return rc;
    }
    cw__watch *w = calloc(1, sizeof *w);
    if (!w)
        return CW_ERR_NO_MEMORY;
    rc = cw__completion_acquire(CW__COMPLETION_YIELD, &w->completion);
    if (rc != CW_OK) {
        free(w);
        return rc;
    }
    w->watcher.wake = watch_wake;
    w->owner = n;
    w->tag = tag;
    w->event = event;
    cw__completion_watch(w->completion, &w->watcher);
    clRetainEvent(event);

    bool finished = st <= CL_COMPLETE;
    /* Its first failed-command check: none where the platform's failed
     * commands fire their callbacks, else after the interval, or twice the
     * expected wait (default interval). The notifier makes no probe (it
     * may run inside a callback); it uses what a wait learned. */
    w->due_ns = UINT64_MAX;
    if (!finished) {
        bool fire = cw__driver_failed_fire(cw__driver_of(event));
        uint64_t delay =
            cw__plan_first_check_ns(&n->checks, fire ? 0 : cw__estimate_of(event), fire);
        if (delay != CW_DEADLINE_NONE)
            w->due_ns = cw_deadline_after_ns(delay);
    }
    pthread_mutex_lock(&n->mutex);
    link_live(n, w);
    if (finished) /* finished or failed already: no callback needed */
        cw__completion_signal_token(cw__completion_token(w->completion), st);
    else
        w->registering = true;
    pthread_mutex_unlock(&n->mutex);
    if (finished)
        return CW_OK; /* the look forgot an earlier wait's record, if any */

    /* The callback may run inline inside the subscription: it only pushes
     * the watch onto the ready list and never takes the mutex. */
    rc = cw__table_join(event, w->completion, 0, cl_error);
    pthread_mutex_lock(&n->mutex);
    w->registering = false;
    if (rc != CW_OK)
        cancel_locked(n, w); /* on error nothing is watched; a drain frees it */
    pthread_mutex_unlock(&n->mutex);
    return rc;
}

/* Under the mutex: unpin; a watch doomed meanwhile goes onto `*later`. */
static void unpin(cw__watch **pinned, size_t count, cw__linger **later) {
    for (size_t i = 0; i < count; ++i) {
        cw__watch *w = pinned[i];
        if (cw__pins_drop(&w->pins))
            doom(w, later);
    }
}

/* Outside the mutex: the result of a delivered watch (owned by the drain). */
static void result_of(const cw__watch *w, cw_notifier_result *r) {
    r->tag = w->tag;
    cl_int st = 0;
    int rc = cw__status_read(w->event, &st);
    if (rc != CW_OK) {
        r->rc = rc;
        r->status = st;
        return;
    }
    /* The callback reports the trigger status; the event's own is the
     * authority. Should an implementation run the callback before it
     * publishes a final status, fall back to the signalled one. */
    if (st > CL_COMPLETE)
        st = cw__completion_status(w->completion);
    r->status = st;
    r->rc = st == CL_COMPLETE ? CW_OK : st < 0 ? CW_ERR_COMMAND_FAILED : CW_ERR_OPENCL;
    if (st <= CL_COMPLETE)
        cw__table_forget(w->event);
}

size_t cw_notifier_drain(cw_notifier *n, cw_notifier_result *out, size_t max) {
    if (!n || (!out && max))
        return 0;
    pthread_mutex_lock(&n->mutex);
    /* Freed at the end, outside the mutex: the watches left lingering by
     * earlier drains first. */
    cw__linger *later = n->lingering;
    n->lingering = NULL;
    /* Reset the eventfd before taking the list: a push after the reset that
     * finds the list empty writes again, so no push goes unannounced. */
    uint64_t count;
    if (read(n->efd, &count, sizeof count) < 0 && errno != EAGAIN)
        cw__die("eventfd read", errno);
    /* Nearly every drain comes before the check is due: a clock read (vDSO)
     * spares it a system call. A timer that expired is never missed: it
     * expired at check_due_ns or later on the same clock, and setting the
     * timer again (or disarming it) clears an expiry not read. */
    ssize_t got = -1;
    if (n->check_due_ns && cw_now_ns() >= n->check_due_ns) {
        got = read(n->tfd, &count, sizeof count);
        if (got < 0 && errno != EAGAIN)
            cw__die("timerfd read", errno);
    }
    if (got == (ssize_t)sizeof count && n->pending > 0) {
        size_t npinned;
        cw__watch **pinned = cw__notify_pin_due(n, cw_now_ns(), &npinned);
        cw__notify_set_timer_at(n, cw__notify_earliest_due(n));
        if (npinned)
            cw__stat_add(CW__STAT_CHECKS, 1);
        if (pinned) {
            pthread_mutex_unlock(&n->mutex);
            cw__notify_check_pinned(pinned, npinned);
            pthread_mutex_lock(&n->mutex);
            unpin(pinned, npinned, &later);
            free(pinned);
        }
    }

    /* Acquire pairs with the pushes' release. The list is LIFO: reverse it
     * onto the tail of the taken FIFO. */
    cw__watch *lifo = atomic_exchange_explicit(&n->ready, NULL, memory_order_acquire);
    cw__watch *fifo = NULL;
    while (lifo) {
        cw__watch *next = lifo->ready_next;
        lifo->ready_next = fifo;
        fifo = lifo;
        lifo = next;
    }
    if (fifo) {
        if (n->taken_tail)
            n->taken_tail->ready_next = fifo;
        else
            n->taken_head = fifo;
        for (n->taken_tail = fifo; n->taken_tail->ready_next;)
            n->taken_tail = n->taken_tail->ready_next;
    }

    /* Take up to `max` deliverable watches; cancelled ones are only freed. */
    cw__watch *deliver = NULL, **tail = &deliver;
    size_t k = 0;
    while (n->taken_head && k < max) {
        cw__watch *w = n->taken_head;
        n->taken_head = w->ready_next;
        if (!n->taken_head)
            n->taken_tail = NULL;
        unlink_live(n, w);
        w->ready_next = NULL;
        if (w->cancelled) {
            doom(w, &later);
            continue;
        }
        end_pending(n);
        *tail = w;
        tail = &w->ready_next;
        ++k;
    }
    if (n->taken_head)
        make_readable(n); /* more than `max` finished: come back for the rest */
    /* The timer may have been armed for a watch just delivered. */
    if (k && n->check_due_ns)
        cw__notify_set_timer_at(n, n->pending ? cw__notify_earliest_due(n) : 0);
    pthread_mutex_unlock(&n->mutex);

    /* The results, outside the mutex: they read each event's status. */
    size_t i = 0;
    for (cw__watch *w = deliver; w; w = w->ready_next)
        result_of(w, &out[i++]);
    if (deliver) {
        pthread_mutex_lock(&n->mutex);
        for (cw__watch *w = deliver, *next; w; w = next) {
            next = w->ready_next;
            doom(w, &later);
        }
        pthread_mutex_unlock(&n->mutex);
    }
    free_settled(n, later);
    return k;
}

int cw_notifier_cancel(cw_notifier *n, uint64_t tag) {
    if (!n)
        return CW_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&n->mutex);
    cw__watch *found = NULL;
    for (cw__watch *w = n->live; w; w = w->next)
        if (!w->cancelled && w->tag == tag)
            found = w; /* the list is newest first: keep the last match, the oldest */
    if (found)
        cancel_locked(n, found);
    pthread_mutex_unlock(&n->mutex);
    return found ? CW_OK : CW_ERR_INVALID_ARGUMENT;
}

size_t cw_notifier_pending(cw_notifier *n) {
    if (!n)
        return 0;
    pthread_mutex_lock(&n->mutex);
    size_t p = n->pending;
    pthread_mutex_unlock(&n->mutex);
    return p;
}

void cw_notifier_destroy(cw_notifier *n) {
    if (!n)
        return;
    /* Every live watch, on the ready list or not, is on `live`, every one
     * taken out but not freed on `lingering`, and nothing else uses the
     * notifier now, so nothing is pinned. Releasing a watch's completion
     * disarms it (a later callback is ignored) or waits for an unpark in
     * progress; after that nothing references the notifier. */
    pthread_mutex_lock(&n->mutex);
    cw__linger *all = n->lingering; /* their release waits for the signallers */
    n->lingering = NULL;
    while (n->live) {
        cw__watch *w = n->live;
        n->live = w->next;
        w->free.completion = w->completion;
        w->free.next = all;
        all = &w->free;
    }
    pthread_mutex_unlock(&n->mutex);
    free_all(all);
    pthread_mutex_destroy(&n->mutex);
    close(n->epfd);
    close(n->efd);
    close(n->tfd);
    free(n);
}
