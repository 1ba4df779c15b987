/* SPDX-License-Identifier: MIT */
/* Layer 6 beside cw_wait: the event-loop notifier, driven by plain epoll on PoCL. */
#include "harness.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clfixture.h"
#include "cw.h"
#include "estimate.h"

/* Any wait longer than this is a hang, not slowness: fail instead of blocking. */
#define HANG_MS 20000

static int epoll_on(cw_notifier *n) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    assert_true(ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN};
    assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, cw_notifier_fd(n), &ev), 0);
    return ep;
}

/* Whether the loop would find the notifier readable right now. */
static bool readable_now(int ep) {
    struct epoll_event ev;
    return epoll_wait(ep, &ev, 1, 0) == 1;
}

/* The event loop: sleep in epoll until readable, drain, until `want`
 * results were collected. Spurious wake-ups (a status check that found
 * nothing) are allowed; a silent descriptor is a failure. */
static void loop_until(cw_notifier *n, int ep, cw_notifier_result *out, size_t want, size_t batch) {
    size_t got = 0;
    while (got < want) {
        struct epoll_event ev;
        int k = epoll_wait(ep, &ev, 1, HANG_MS);
        assert_int_equal(k, 1);
        size_t room = want - got < batch ? want - got : batch;
        got += cw_notifier_drain(n, out + got, room);
    }
}

struct completer {
    cl_event *events;
    cl_int *status; /* what to set each event to */
    unsigned *order;
    size_t count;
    unsigned delay_us; /* before starting */
};

static void *complete_all(void *arg) {
    struct completer *c = arg;
    cw_test_sleep_us(c->delay_us);
    for (size_t i = 0; i < c->count; ++i) {
        unsigned j = c->order[i];
        assert_int_equal(clSetUserEventStatus(c->events[j], c->status[j]), CL_SUCCESS);
    }
    return NULL;
}

static void shuffle(unsigned *a, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        a[i] = (unsigned)i;
    for (size_t i = n; i > 1; --i) {
        size_t j = (size_t)rand_r(&seed) % i;
        unsigned t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/*
 * 1024 user events, watched on one notifier, completed in a random order by
 * another thread; every 8th fails (no callback on PoCL: the notifier's status
 * check must report it through the descriptor). One thread sleeps in
 * epoll_wait and sees every event exactly once, with its own status.
 */
static void thousand_events_in_random_order_over_epoll(void **state) {
    (void)state;
    enum { N = 1024 };
    static cl_event events[N];
    static cl_int status[N];
    static unsigned order[N];
    static unsigned seen[N];
    static cw_notifier_result results[N];
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(2000, &n), CW_OK);
    int ep = epoll_on(n);
    for (unsigned i = 0; i < N; ++i) {
        events[i] = user_event();
        status[i] = i % 8 == 5 ? -5 - (cl_int)(i % 3) : CL_COMPLETE;
        seen[i] = 0;
        assert_int_equal(cw_notifier_watch(n, events[i], 1000000u + i, NULL), CW_OK);
    }
    assert_int_equal(cw_notifier_pending(n), N);
    unsigned seed = (unsigned)cw_now_ns();
    printf("shuffle seed %u\n", seed);
    shuffle(order, N, seed);
    struct completer c = {events, status, order, N, 1000};
    pthread_t t = cw_test_spawn(complete_all, &c);
    loop_until(n, ep, results, N, 64);
    cw_test_join(t);
    for (unsigned k = 0; k < N; ++k) {
        uint64_t i = results[k].tag - 1000000u;
        assert_true(i < N);
        seen[i]++;
        assert_int_equal(results[k].status, status[i]);
        assert_int_equal(results[k].rc, status[i] == CL_COMPLETE ? CW_OK : CW_ERR_COMMAND_FAILED);
    }
    for (unsigned i = 0; i < N; ++i)
        assert_int_equal(seen[i], 1);
    /* Nothing more: no duplicate arrives later. */
    assert_int_equal(cw_notifier_pending(n), 0);
    cw_notifier_result extra;
    assert_int_equal(cw_notifier_drain(n, &extra, 1), 0);
    assert_false(readable_now(ep));
    close(ep);
    cw_notifier_destroy(n);
    for (unsigned i = 0; i < N; ++i)
        clReleaseEvent(events[i]);
    assert_int_equal(wait_completions(), 0);
}

/* The failure happens while the loop sleeps; no callback ever fires. */
static void failure_while_watched_arrives_through_fd(void **state) {
    (void)state;
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(2000, &n), CW_OK);
    int ep = epoll_on(n);
    struct later l = {.ev = user_event(), .delay_us = 20000, .status = -9};
    assert_int_equal(cw_notifier_watch(n, l.ev, 7, NULL), CW_OK);
    pthread_t t = cw_test_spawn(set_later, &l);
    cw_notifier_result r;
    loop_until(n, ep, &r, 1, 1);
    cw_test_join(t);
    assert_int_equal(r.tag, 7);
    assert_int_equal(r.rc, CW_ERR_COMMAND_FAILED);
    assert_int_equal(r.status, -9);
    assert_int_equal(cw_notifier_pending(n), 0);
    close(ep);
    cw_notifier_destroy(n);
    clReleaseEvent(l.ev);
}

/* Events that finished before the watch: readable at once, no callback needed. */
static void finished_before_watch_is_readable_at_once(void **state) {
    (void)state;
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    int ep = epoll_on(n);
    assert_false(readable_now(ep));
    cl_event ok = user_event(), bad = user_event();
    assert_int_equal(clSetUserEventStatus(ok, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(bad, -3), CL_SUCCESS);
    assert_int_equal(cw_notifier_watch(n, ok, 1, NULL), CW_OK);
    assert_int_equal(cw_notifier_watch(n, bad, 2, NULL), CW_OK);
    assert_true(readable_now(ep));
    cw_notifier_result r[2];
    assert_int_equal(cw_notifier_drain(n, r, 2), 2);
    /* Drained in the order they finished. */
    assert_int_equal(r[0].tag, 1);
    assert_int_equal(r[0].rc, CW_OK);
    assert_int_equal(r[0].status, CL_COMPLETE);
    assert_int_equal(r[1].tag, 2);
    assert_int_equal(r[1].rc, CW_ERR_COMMAND_FAILED);
    assert_int_equal(r[1].status, -3);
    assert_false(readable_now(ep));
    close(ep);
    cw_notifier_destroy(n);
    clReleaseEvent(ok);
    clReleaseEvent(bad);
}

/* A real kernel, gated on a user event, enqueued without a flush: the watch
 * flushes it, the loop wakes when it ran, and its results are there. */
static void kernel_result_after_fd(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1u << 16), CL_SUCCESS);
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    int ep = epoll_on(n);
    struct later l = {.ev = user_event(), .delay_us = 10000, .status = CL_COMPLETE};
    cl_event ev[3];
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 2.0f, 1, &l.ev, &ev[0]), CL_SUCCESS);
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 2.0f, 0, NULL, &ev[1]), CL_SUCCESS);
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 2.0f, 0, NULL, &ev[2]), CL_SUCCESS);
    for (unsigned i = 0; i < 3; ++i)
        assert_int_equal(cw_notifier_watch(n, ev[i], i, NULL), CW_OK);
    pthread_t t = cw_test_spawn(set_later, &l);
    cw_notifier_result r[3];
    loop_until(n, ep, r, 3, 3);
    cw_test_join(t);
    unsigned tags = 0;
    for (unsigned i = 0; i < 3; ++i) {
        assert_int_equal(r[i].rc, CW_OK);
        assert_int_equal(r[i].status, CL_COMPLETE);
        tags |= 1u << r[i].tag;
    }
    assert_int_equal(tags, 7);
    size_t bad = 1;
    assert_int_equal(cwh_saxpy_check(&host, &sx, 2.0f, 3, &bad), CL_SUCCESS);
    assert_int_equal(bad, 0);
    close(ep);
    cw_notifier_destroy(n);
    for (unsigned i = 0; i < 3; ++i)
        clReleaseEvent(ev[i]);
    clReleaseEvent(l.ev);
    cwh_saxpy_free(&sx);
}

/*
 * A watch on a kernel whose queue's waits take about a second: its first
 * check comes after twice that, so the gate opening 30 ms later is reported
 * by the callback alone, with no status check on the way (none is even
 * scheduled where the platform's failed commands fire their callbacks), and
 * a failure among watches of a user event (no estimate) still arrives
 * through the descriptor by the interval's check.
 */
static void watch_expected_long_makes_no_check(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    for (int i = 0; i < 24; ++i)
        cw__estimate_put((uintptr_t)host.queue, 1000000000u, true);
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    int ep = epoll_on(n);
    struct later l = {.ev = user_event(), .delay_us = 30000, .status = CL_COMPLETE};
    cl_event ev;
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &l.ev, &ev), CL_SUCCESS);
    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    assert_int_equal(cw_notifier_watch(n, ev, 7, NULL), CW_OK);
    pthread_t t = cw_test_spawn(set_later, &l);
    cw_notifier_result r;
    loop_until(n, ep, &r, 1, 1);
    cw_test_join(t);
    assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
    assert_int_equal(r.tag, 7);
    assert_int_equal(r.rc, CW_OK);
    assert_int_equal(a1.checks - a0.checks, 0);
    assert_int_equal(
        a1.deferred_checks - a0.deferred_checks + a1.unchecked_waits - a0.unchecked_waits, 1);
    /* Nothing pending: the timer is off, the descriptor quiet. */
    assert_false(readable_now(ep));

    cl_event fail = user_event();
    assert_int_equal(cw_notifier_watch(n, fail, 8, NULL), CW_OK);
    assert_int_equal(clSetUserEventStatus(fail, -5), CL_SUCCESS);
    loop_until(n, ep, &r, 1, 1);
    assert_int_equal(r.tag, 8);
    assert_int_equal(r.rc, CW_ERR_COMMAND_FAILED);
    close(ep);
    cw_notifier_destroy(n);
    clReleaseEvent(ev);
    clReleaseEvent(fail);
    clReleaseEvent(l.ev);
    cwh_saxpy_free(&sx);
}

static void CL_CALLBACK count_callback(cl_event ev, cl_int status, void *data) {
    (void)ev;
    (void)status;
    atomic_fetch_add((atomic_uint *)data, 1);
}

/* More results than the caller's array: the descriptor stays readable. */
static void drain_in_small_batches_keeps_fd_readable(void **state) {
    (void)state;
    enum { N = 10 };
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    int ep = epoll_on(n);
    cl_event ev[N];
    atomic_uint called = 0;
    for (unsigned i = 0; i < N; ++i) {
        ev[i] = user_event();
        assert_int_equal(cw_notifier_watch(n, ev[i], i, NULL), CW_OK);
        /* Registered after the watch's, so it runs after it: inline in
         * clSetUserEventStatus on PoCL, later where a driver delivers
         * callbacks late (the driver models). */
        assert_int_equal(clSetEventCallback(ev[i], CL_COMPLETE, count_callback, &called),
                         CL_SUCCESS);
    }
    for (unsigned i = 0; i < N; ++i)
        assert_int_equal(clSetUserEventStatus(ev[i], CL_COMPLETE), CL_SUCCESS);
    for (unsigned waited_ms = 0; atomic_load(&called) < N; ++waited_ms) {
        assert_true(waited_ms < HANG_MS);
        cw_test_sleep_us(1000);
    }
    cw_notifier_result r[N];
    size_t got = 0;
    while (got < N) {
        assert_true(readable_now(ep));
        size_t k = cw_notifier_drain(n, r + got, 3);
        assert_true(k == 3 || k == N - got);
        got += k;
    }
    for (unsigned i = 0; i < N; ++i)
        assert_int_equal(r[i].tag, i); /* completed in order, drained in order */
    assert_false(readable_now(ep));
    close(ep);
    cw_notifier_destroy(n);
    for (unsigned i = 0; i < N; ++i)
        clReleaseEvent(ev[i]);
}

static void cancelled_watch_reports_nothing(void **state) {
    (void)state;
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    int ep = epoll_on(n);
    cl_event a = user_event(), b = user_event();
    assert_int_equal(cw_notifier_watch(n, a, 1, NULL), CW_OK);
    assert_int_equal(cw_notifier_watch(n, b, 2, NULL), CW_OK);
    assert_int_equal(cw_notifier_cancel(n, 1), CW_OK);
    assert_int_equal(cw_notifier_cancel(n, 1), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_notifier_cancel(n, 99), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_notifier_pending(n), 1);
    assert_int_equal(clSetUserEventStatus(a, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(b, CL_COMPLETE), CL_SUCCESS);
    cw_notifier_result r[2];
    loop_until(n, ep, r, 1, 2);
    assert_int_equal(r[0].tag, 2);
    assert_int_equal(cw_notifier_drain(n, r, 2), 0);
    /* A watch cancelled after its callback ran is dropped as well. */
    cl_event c = user_event();
    assert_int_equal(cw_notifier_watch(n, c, 3, NULL), CW_OK);
    assert_int_equal(clSetUserEventStatus(c, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_notifier_cancel(n, 3), CW_OK);
    assert_int_equal(cw_notifier_drain(n, r, 2), 0);
    assert_int_equal(cw_notifier_pending(n), 0);
    close(ep);
    cw_notifier_destroy(n);
    clReleaseEvent(a);
    clReleaseEvent(b);
    clReleaseEvent(c);
    assert_int_equal(wait_completions(), 0);
}

/*
 * Destroy with pending watches; their callbacks run afterwards (and the
 * failed ones never): stale tokens, no use after free (ASan), no leak (LSan).
 * Also while another thread completes events during the destroy.
 */
static void destroy_with_pending_watches(void **state) {
    (void)state;
    enum { N = 64, ROUNDS = 40 };
    static cl_event events[N];
    static cl_int status[N];
    static unsigned order[N];
    for (unsigned round = 0; round < ROUNDS; ++round) {
        cw_notifier *n;
        assert_int_equal(cw_notifier_create(1000, &n), CW_OK);
        for (unsigned i = 0; i < N; ++i) {
            events[i] = user_event();
            status[i] = i % 4 == 3 ? -5 : CL_COMPLETE;
            assert_int_equal(cw_notifier_watch(n, events[i], i, NULL), CW_OK);
        }
        shuffle(order, N, round);
        struct completer c = {events, status, order, N, 0};
        bool racing = round % 2 == 1;
        pthread_t t;
        if (racing)
            t = cw_test_spawn(complete_all, &c);
        else
            cw_test_sleep_us(1500); /* let a status check come due: not required */
        cw_notifier_destroy(n);
        if (racing)
            cw_test_join(t);
        else
            complete_all(&c);
        for (unsigned i = 0; i < N; ++i)
            clReleaseEvent(events[i]);
        assert_int_equal(wait_completions(), 0);
    }
}

/* Owner-side calls from several threads while callbacks land: one drainer
 * thread, two watcher threads, one completer. */
struct watcher_thread {
    cw_notifier *n;
    cl_event *events;
    unsigned first, count;
};

static void *watch_range(void *arg) {
    struct watcher_thread *w = arg;
    for (unsigned i = w->first; i < w->first + w->count; ++i) {
        assert_int_equal(cw_notifier_watch(w->n, w->events[i], i, NULL), CW_OK);
        if (i % 3 == 0)
            assert_int_equal(clSetUserEventStatus(w->events[i], CL_COMPLETE), CL_SUCCESS);
    }
    return NULL;
}

static void watch_from_several_threads(void **state) {
    (void)state;
    enum { N = 600 };
    static cl_event events[N];
    static cw_notifier_result r[N];
    static unsigned seen[N];
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    int ep = epoll_on(n);
    for (unsigned i = 0; i < N; ++i) {
        events[i] = user_event();
        seen[i] = 0;
    }
    struct watcher_thread a = {n, events, 0, N / 2}, b = {n, events, N / 2, N / 2};
    pthread_t ta = cw_test_spawn(watch_range, &a), tb = cw_test_spawn(watch_range, &b);
    /* Drain what the watcher threads complete while they are still watching. */
    loop_until(n, ep, r, N / 3, 16);
    cw_test_join(ta);
    cw_test_join(tb);
    for (unsigned i = 0; i < N; ++i)
        if (i % 3 != 0)
            assert_int_equal(clSetUserEventStatus(events[i], CL_COMPLETE), CL_SUCCESS);
    loop_until(n, ep, r + N / 3, N - N / 3, 16);
    for (unsigned k = 0; k < N; ++k) {
        assert_true(r[k].tag < N);
        assert_int_equal(r[k].rc, CW_OK);
        seen[r[k].tag]++;
    }
    for (unsigned i = 0; i < N; ++i)
        assert_int_equal(seen[i], 1);
    close(ep);
    cw_notifier_destroy(n);
    for (unsigned i = 0; i < N; ++i)
        clReleaseEvent(events[i]);
}

static void bad_arguments_are_rejected(void **state) {
    (void)state;
    cw_notifier *n = NULL;
    assert_int_equal(cw_notifier_create(0, NULL), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_notifier_create(CW_CHECK_INTERVAL_US_MAX + 1, &n), CW_ERR_INVALID_ARGUMENT);
    assert_null(n);
    assert_int_equal(cw_notifier_fd(NULL), -1);
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    assert_true(cw_notifier_fd(n) >= 0);
    cl_int err = 1;
    assert_int_equal(cw_notifier_watch(n, NULL, 0, &err), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_notifier_watch(NULL, NULL, 0, NULL), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_notifier_drain(n, NULL, 4), 0);
    assert_int_equal(cw_notifier_drain(NULL, NULL, 0), 0);
    assert_int_equal(cw_notifier_cancel(NULL, 0), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_notifier_pending(n), 0);
    cw_notifier_destroy(n);
    cw_notifier_destroy(NULL);
    assert_int_equal(wait_completions(), 0);
}

/* Open descriptors of this process (the lowest free one is not enough:
 * a failure could leak one above it). */
static int open_fds(void) {
    int n = 0;
    for (int fd = 0; fd < 4096; ++fd)
        if (fcntl(fd, F_GETFD) != -1)
            ++n;
    return n;
}

/* Out of descriptors is a returned code of its own, with nothing leaked;
 * the host process goes on. Each limit lets one more descriptor open than
 * the last, so every one of the three creations fails once. */
static void out_of_descriptors_is_no_resources(void **state) {
    (void)state;
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    int before = open_fds();
    int lowest = dup(0);
    assert_true(lowest >= 0);
    close(lowest);
    for (int extra = 0; extra < 3; ++extra) {
        struct rlimit low = old;
        low.rlim_cur = (rlim_t)(lowest + extra);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        cw_notifier *n = (cw_notifier *)&n;
        int rc = cw_notifier_create(0, &n);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
        assert_int_equal(rc, CW_ERR_NO_RESOURCES);
        assert_null(n);
        assert_int_equal(open_fds(), before);
    }
    /* With descriptors to spare it works again. */
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(0, &n), CW_OK);
    cw_notifier_destroy(n);
    assert_int_equal(open_fds(), before);
}

/*
 * The notifier used from inside OpenCL callbacks while a loop thread drains
 * it. Mesa's rusticl runs an event's callbacks holding that event's lock: a
 * drain that kept the notifier's mutex while it read the same event's status
 * and a callback waiting for that mutex would deadlock. A watchdog turns a
 * hang into a failure instead of a ctest timeout.
 */
struct from_callback {
    cw_notifier *n;
    cl_event next; /* watched from inside the callback */
    uint64_t tag;
};

static void CL_CALLBACK watch_from_callback(cl_event ev, cl_int status, void *data) {
    (void)ev;
    (void)status;
    struct from_callback *c = data;
    cw_notifier_watch(c->n, c->next, c->tag, NULL);
    (void)cw_notifier_pending(c->n);
    (void)cw_notifier_cancel(c->n, UINT64_MAX); /* no such tag: only takes the mutex */
}

struct drainer {
    cw_notifier *n;
    atomic_int stop;
    atomic_ulong results;
};

static void *drain_loop(void *arg) {
    struct drainer *d = arg;
    int fd = cw_notifier_fd(d->n);
    cw_notifier_result r[8];
    while (!atomic_load(&d->stop)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        poll(&p, 1, 1);
        atomic_fetch_add(&d->results, cw_notifier_drain(d->n, r, 8));
    }
    return NULL;
}

static atomic_int watchdog_done;

static void *watchdog(void *arg) {
    (void)arg;
    for (int i = 0; i < 3000 && !atomic_load(&watchdog_done); ++i)
        cw_test_sleep_us(10000);
    if (!atomic_load(&watchdog_done)) {
        fprintf(stderr, "watchdog: no progress in 30 s: deadlock between a callback and the "
                        "notifier\n");
        _exit(3);
    }
    return NULL;
}

static void watch_from_callbacks_while_draining(void **state) {
    (void)state;
    enum { N = 400 };
    static cl_event first[N], second[N];
    static struct from_callback ctx[N];
    cw_notifier *n;
    assert_int_equal(cw_notifier_create(1000, &n), CW_OK); /* frequent status checks */
    struct drainer d = {.n = n};
    atomic_store(&watchdog_done, 0);
    pthread_t dog = cw_test_spawn(watchdog, NULL);
    pthread_t t = cw_test_spawn(drain_loop, &d);
    for (unsigned i = 0; i < N; ++i) {
        first[i] = user_event();
        second[i] = user_event();
        ctx[i] = (struct from_callback){n, second[i], N + i};
        assert_int_equal(cw_notifier_watch(n, first[i], i, NULL), CW_OK);
        assert_int_equal(clSetEventCallback(first[i], CL_COMPLETE, watch_from_callback, &ctx[i]),
                         CL_SUCCESS);
    }
    /* The callbacks run here, in the thread that completes the user events,
     * each watching its second event, while the drainer reads statuses. */
    for (unsigned i = 0; i < N; ++i)
        assert_int_equal(clSetUserEventStatus(first[i], CL_COMPLETE), CL_SUCCESS);
    for (unsigned i = 0; i < N; ++i)
        assert_int_equal(clSetUserEventStatus(second[i], i % 5 == 4 ? -5 : CL_COMPLETE),
                         CL_SUCCESS);
    while (atomic_load(&d.results) < 2 * N)
        cw_test_sleep_us(1000);
    atomic_store(&d.stop, 1);
    cw_test_join(t);
    atomic_store(&watchdog_done, 1);
    cw_test_join(dog);
    assert_int_equal(atomic_load(&d.results), 2 * N);
    assert_int_equal(cw_notifier_pending(n), 0);
    cw_notifier_destroy(n);
    for (unsigned i = 0; i < N; ++i) {
        clReleaseEvent(first[i]);
        clReleaseEvent(second[i]);
    }
}

static const struct CMUnitTest notify_tests[] = {
    cmocka_unit_test(thousand_events_in_random_order_over_epoll),
    cmocka_unit_test(failure_while_watched_arrives_through_fd),
    cmocka_unit_test(finished_before_watch_is_readable_at_once),
    cmocka_unit_test(kernel_result_after_fd),
    cmocka_unit_test(watch_expected_long_makes_no_check),
    cmocka_unit_test(drain_in_small_batches_keeps_fd_readable),
    cmocka_unit_test(cancelled_watch_reports_nothing),
    cmocka_unit_test(destroy_with_pending_watches),
    cmocka_unit_test(watch_from_several_threads),
    cmocka_unit_test(bad_arguments_are_rejected),
    cmocka_unit_test(out_of_descriptors_is_no_resources),
    cmocka_unit_test(watch_from_callbacks_while_draining),
};

CW_TEST_MAIN(notify_tests, open_host, close_host)
