/* SPDX-License-Identifier: MIT */
/* Layer 6: cw_wait on PoCL with every strategy. */
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "clfixture.h"
#include "policyfix.h"
#include "clshim.h"
#include "table.h"
#include "cw.h"
#include "driver.h"
#include "estimate.h"
#include "relax.h"

#define FOR_EACH_STRATEGY(s) for (cw_strategy s = CW_STRATEGY_DEFAULT; s < CW_STRATEGY_COUNT; ++s)
/* Every strategy, with the shared callback (0) and with one of the wait's own. */
#define FOR_EACH_STRATEGY_AND_CALLBACK(s, f)                                                       \
    FOR_EACH_STRATEGY(s)                                                                           \
    for (unsigned f = 0; f <= CW_WAIT_OWN_CALLBACK; f += CW_WAIT_OWN_CALLBACK)

static void saxpy_result_after_each_strategy(void **state) {
    (void)state;
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        cwh_saxpy sx;
        assert_int_equal(cwh_saxpy_init(&host, &sx, 1u << 16), CL_SUCCESS);
        cw_wait_options o = {.strategy = s, .flags = f};
        for (int k = 0; k < 3; ++k) {
            cl_event ev;
            assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 2.0f, 0, NULL, &ev), CL_SUCCESS);
            cl_int st = 1;
            assert_int_equal(cw_wait(ev, &o, &st), CW_OK);
            assert_int_equal(st, CL_COMPLETE);
            clReleaseEvent(ev);
        }
        size_t bad = 1;
        assert_int_equal(cwh_saxpy_check(&host, &sx, 2.0f, 3, &bad), CL_SUCCESS);
        assert_int_equal(bad, 0);
        cwh_saxpy_free(&sx);
    }
}

static void busy_kernel_result_after_each_strategy(void **state) {
    (void)state;
    cwh_busy b;
    assert_int_equal(cwh_busy_init(&host, &b, 256), CL_SUCCESS);
    FOR_EACH_STRATEGY(s) {
        cw_wait_options o = {.strategy = s};
        cl_event ev;
        assert_int_equal(cwh_busy_enqueue(&host, &b, 20000, 0, NULL, &ev), CL_SUCCESS);
        assert_int_equal(cw_wait(ev, &o, NULL), CW_OK);
        clReleaseEvent(ev);
        size_t bad = 1;
        assert_int_equal(cwh_busy_check(&host, &b, &bad), CL_SUCCESS);
        assert_int_equal(bad, 0);
    }
    cwh_busy_free(&b);
}

/* A kernel gated on a user event that another thread completes 100 ms later. */
static void gated_kernel_completed_100ms_later(void **state) {
    (void)state;
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        cwh_saxpy sx;
        assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
        struct later l = {.ev = user_event(), .delay_us = 100000, .status = CL_COMPLETE};
        cl_event ev;
        assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &l.ev, &ev), CL_SUCCESS);
        uint64_t t0 = cw_now_ns();
        pthread_t t = cw_test_spawn(set_later, &l);
        cw_wait_options o = {.strategy = s, .flags = f};
        cl_int st = 1;
        assert_int_equal(cw_wait(ev, &o, &st), CW_OK);
        assert_int_equal(st, CL_COMPLETE);
        assert_true(cw_now_ns() - t0 >= 100000000u); /* it really waited for the gate */
        cw_test_join(t);
        size_t bad = 1;
        assert_int_equal(cwh_saxpy_check(&host, &sx, 1.0f, 1, &bad), CL_SUCCESS);
        assert_int_equal(bad, 0);
        clReleaseEvent(ev);
        clReleaseEvent(l.ev);
        cwh_saxpy_free(&sx);
    }
}

static void failed_user_event_returns_error(void **state) {
    (void)state;
    FOR_EACH_STRATEGY(s) {
        cl_event ev = user_event();
        assert_int_equal(clSetUserEventStatus(ev, -5), CL_SUCCESS);
        cw_wait_options o = {.strategy = s};
        cl_int st = 0;
        assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_COMMAND_FAILED);
        assert_int_equal(st, -5);
        clReleaseEvent(ev);
    }
}

/* The failure happens while the waiter sleeps. PoCL 3.1 fires no CL_COMPLETE
 * callback for it, so a callback-only wait would hang here; cw's periodic
 * status check must return the error. */
static void failure_while_waiting_returns_error(void **state) {
    (void)state;
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        struct later l = {.ev = user_event(), .delay_us = 20000, .status = -5};
        pthread_t t = cw_test_spawn(set_later, &l);
        cw_wait_options o = {.strategy = s, .flags = f, .check_interval_us = 2000};
        cl_int st = 0;
        assert_int_equal(cw_wait(l.ev, &o, &st), CW_ERR_COMMAND_FAILED);
        assert_int_equal(st, -5);
        cw_test_join(t);
        clReleaseEvent(l.ev);
    }
}

/* A kernel depending on a failed event fails too; the wait reports it. */
static void dependent_of_failed_event_returns_error(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        struct later l = {.ev = user_event(), .delay_us = 10000, .status = -9};
        cl_event ev;
        assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &l.ev, &ev), CL_SUCCESS);
        pthread_t t = cw_test_spawn(set_later, &l);
        cw_wait_options o = {.strategy = s, .flags = f, .check_interval_us = 2000};
        cl_int st = 0;
        assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_COMMAND_FAILED);
        assert_true(st < 0);
        cw_test_join(t);
        clReleaseEvent(ev);
        clReleaseEvent(l.ev);
    }
    cwh_saxpy_free(&sx);
}

static void completed_event_returns_at_once(void **state) {
    (void)state;
    FOR_EACH_STRATEGY(s) {
        cl_event ev = user_event();
        assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
        cw_wait_options o = {.strategy = s};
        cl_int st = 1;
        assert_int_equal(cw_wait(ev, &o, &st), CW_OK);
        assert_int_equal(st, CL_COMPLETE);
        clReleaseEvent(ev);
    }
}

/* CW_WAIT_POLL looks once and returns, whatever the strategy and the
 * timeout: an unset user event gives CW_ERR_TIMEOUT with its status, long
 * before the 10 s timeout (a wait that did wait would take all of it), and
 * nothing is registered or kept; a finished or failed one gives the wait's
 * own answer. */
static void poll_flag_returns_at_once(void **state) {
    (void)state;
    size_t records = cw__table_records();
    FOR_EACH_STRATEGY(s) {
        cl_event ev = user_event();
        cw_wait_options o = {.strategy = s, .flags = CW_WAIT_POLL, .timeout_us = 10000000};
        cl_int st = 0;
        uint64_t t0 = cw_now_ns();
        assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_TIMEOUT);
        assert_true(cw_now_ns() - t0 < 5000000000u);
        assert_int_equal(st, CL_SUBMITTED);
        assert_int_equal(wait_completions(), 0);
        assert_int_equal(cw__table_records(), records);
        o.timeout_us = 0; /* no timeout: a poll still returns */
        assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_TIMEOUT);
        assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
        assert_int_equal(cw_wait(ev, &o, &st), CW_OK);
        assert_int_equal(st, CL_COMPLETE);
        clReleaseEvent(ev);

        ev = user_event();
        assert_int_equal(clSetUserEventStatus(ev, -7), CL_SUCCESS);
        assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_COMMAND_FAILED);
        assert_int_equal(st, -7);
        clReleaseEvent(ev);
    }
    assert_int_equal(cw__table_records(), records);
}

/* The waiter times out; the callback fires 10 ms after cw_wait returned, on a
 * slot that went back to the pool (run under AddressSanitizer in CI). A
 * second wait on the same event then succeeds. */
static void timeout_then_callback_fires_later(void **state) {
    (void)state;
    FOR_EACH_STRATEGY(s) {
        /* blocking included: with a timeout it waits as pthread does */
        atomic_bool timed_out = false;
        struct later l = {
            .ev = user_event(), .delay_us = 30000, .status = CL_COMPLETE, .after = &timed_out};
        pthread_t t = cw_test_spawn(set_later, &l);
        cw_wait_options o = {.strategy = s, .timeout_us = 5000};
        cl_int st = 0;
        uint64_t t0 = cw_now_ns();
        int rc = cw_wait(l.ev, &o, &st);
        atomic_store(&timed_out, true);
        assert_int_equal(rc, CW_ERR_TIMEOUT);
        assert_true(cw_now_ns() - t0 >= 5000000u);
        assert_int_equal(st, CL_SUBMITTED);
        assert_int_equal(wait_completions(), 0);
        cw_test_join(t); /* the callback has run by now */
        o.timeout_us = 0;
        assert_int_equal(cw_wait(l.ev, &o, &st), CW_OK);
        assert_int_equal(st, CL_COMPLETE);
        clReleaseEvent(l.ev);
    }
}

/* A gate set to `status` once `counter` (a count of the test shim's) has
 * moved past `since`: once the wait has reached the call it counts, the
 * only such call meanwhile, whatever the machine's load; or after about
 * 2 s without one, when the test's check of that call fails. */
struct after_call {
    cl_event gate;
    cl_int status;
    atomic_ulong *counter;
    unsigned long since;
};

static void *open_after_call(void *arg) {
    struct after_call *a = arg;
    for (int i = 0; i < 20000 && atomic_load(a->counter) == a->since; ++i)
        cw_test_sleep_us(100);
    clSetUserEventStatus(a->gate, a->status);
    return NULL;
}

/* Work enqueued but not flushed: every strategy but blocking (which flushes
 * inside clWaitForEvents) calls clFlush on the event's queue, unless told not
 * to. With CW_WAIT_NO_FLUSH flushing is the caller's job: here the thread
 * that opens the gate flushes. (Without that, the wait hangs on rusticl,
 * which submits nothing before a flush; PoCL runs unflushed work anyway.) */
static void wait_flushes_unflushed_work(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    unsigned launches = 0;
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        if (s == CW_STRATEGY_BLOCKING)
            continue;
        for (int no_flush = 0; no_flush < 2; ++no_flush) {
            /* Gate the kernel so it is certainly not complete when cw_wait
             * starts: it stays CL_QUEUED until the gate opens. The gate
             * opens after cw_wait's own flush where it must flush (a
             * timed gate could open before its first look on a loaded
             * machine, and the command then need no flush), and 5 ms in,
             * with a flush of its own, where it must not. */
            struct later l = {.ev = user_event(),
                              .delay_us = 5000,
                              .status = CL_COMPLETE,
                              .flush = no_flush ? host.queue : NULL};
            struct after_call a = {.gate = l.ev,
                                   .status = CL_COMPLETE,
                                   .counter = &clshim_flushes,
                                   .since = atomic_load(&clshim_flushes)};
            cl_event ev;
            assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &l.ev, &ev), CL_SUCCESS);
            ++launches;
            unsigned before = clshim_thread_flushes;
            pthread_t t =
                no_flush ? cw_test_spawn(set_later, &l) : cw_test_spawn(open_after_call, &a);
            cw_wait_options o = {.strategy = s, .flags = f | (no_flush ? CW_WAIT_NO_FLUSH : 0)};
            assert_int_equal(cw_wait(ev, &o, NULL), CW_OK);
            /* Counted on this thread only: the gate thread's flush is not cw's. */
            assert_int_equal(clshim_thread_flushes - before, no_flush ? 0 : 1);
            cw_test_join(t);
            clReleaseEvent(ev);
            clReleaseEvent(l.ev);
        }
    }
    size_t bad = 1;
    assert_int_equal(cwh_saxpy_check(&host, &sx, 1.0f, launches, &bad), CL_SUCCESS);
    assert_int_equal(bad, 0);
    cwh_saxpy_free(&sx);
}

static void bad_options_are_rejected(void **state) {
    (void)state;
    cl_event ev = user_event();
    /* Bad input leaves CL_SUCCESS in *cl_status, as documented. */
    cl_int st = 1;
    assert_int_equal(cw_wait(NULL, NULL, &st), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(st, CL_SUCCESS);
    cw_wait_options o = {.strategy = CW_STRATEGY_COUNT};
    st = 1;
    assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(st, CL_SUCCESS);
    o.strategy = (cw_strategy)-1;
    assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_INVALID_ARGUMENT);
    o = (cw_wait_options){.timeout_us = -1};
    assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_INVALID_ARGUMENT);
    o = (cw_wait_options){.flags = 1u << 7};
    assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_INVALID_ARGUMENT);
    o = (cw_wait_options){.check_interval_us = CW_CHECK_INTERVAL_US_MAX + 1};
    assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_INVALID_ARGUMENT);
    o = (cw_wait_options){.spin_us = CW_SPIN_US_MAX + 1};
    assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_INVALID_ARGUMENT);
    o = (cw_wait_options){.strategy = CW_STRATEGY_SPIN_PARK, .spin_us = CW_SPIN_US_MAX + 1};
    assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_INVALID_ARGUMENT);
    /* Every reserved field must be zero, in cw_wait and in the wait-many calls. */
    for (unsigned i = 0; i < sizeof o.reserved / sizeof o.reserved[0]; ++i) {
        o = (cw_wait_options){0};
        o.reserved[i] = 1;
        assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_INVALID_ARGUMENT);
        assert_int_equal(cw_wait_all(&ev, 1, &o, NULL), CW_ERR_INVALID_ARGUMENT);
    }
    /* Blocking with a timeout is honoured (as pthread), no longer unsupported. */
    o = (cw_wait_options){.strategy = CW_STRATEGY_BLOCKING, .timeout_us = 1000};
    assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_TIMEOUT);
    assert_int_equal(st, CL_SUBMITTED);
    /* None of these touched the event: it is still pending, and can complete. */
    assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait(ev, NULL, &st), CW_OK);
    clReleaseEvent(ev);
    assert_int_equal(wait_completions(), 0);
}

static void rejected_event_handle_returns_invalid_event(void **state) {
    (void)state;
    FOR_EACH_STRATEGY(s) {
        cw_wait_options o = {.strategy = s};
        cl_int st = 0;
        assert_int_equal(cw_wait(clshim_bad_event, &o, &st), CW_ERR_INVALID_EVENT);
        assert_int_equal(st, CL_INVALID_EVENT);
    }
    cw__completion *c;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    cl_int err = 0;
    assert_int_equal(cw__table_join(clshim_bad_event, c, CW__JOIN_SWEEP, &err),
                     CW_ERR_INVALID_EVENT);
    assert_int_equal(err, CL_INVALID_EVENT);
    assert_false(cw__completion_release(c, NULL));
    assert_int_equal(cw__table_records(), 0);
    assert_int_equal(wait_completions(), 0);
}

/* A real foreign handle (a buffer passed as an event). Only an
 * implementation that validates handles can reject it: rusticl returns
 * CL_INVALID_EVENT; PoCL 3.1 dereferences it and crashes, so there the case
 * is skipped and the shim test above covers the path. */
static void foreign_handle_rejected_where_validated(void **state) {
    (void)state;
    if (!strstr(host.platform_name, "rusticl")) {
        print_message("skipped: %s does not validate handles\n", host.platform_name);
        skip();
    }
    cl_int err;
    cl_mem buffer = clCreateBuffer(host.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    FOR_EACH_STRATEGY(s) {
        cw_wait_options o = {.strategy = s};
        cl_int st = 0;
        assert_int_equal(cw_wait((cl_event)buffer, &o, &st), CW_ERR_INVALID_EVENT);
        assert_int_equal(st, CL_INVALID_EVENT);
    }
    clReleaseMemObject(buffer);
    assert_int_equal(wait_completions(), 0);
}

static void strategy_names_round_trip(void **state) {
    (void)state;
    FOR_EACH_STRATEGY(s) {
        cw_strategy back = CW_STRATEGY_COUNT;
        assert_non_null(cw_strategy_name(s));
        assert_int_equal(cw_strategy_from_name(cw_strategy_name(s), &back), CW_OK);
        assert_int_equal(back, s);
    }
    cw_strategy out;
    assert_null(cw_strategy_name(CW_STRATEGY_COUNT));
    assert_int_equal(cw_strategy_from_name("no-such", &out), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_strategy_from_name(NULL, &out), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_strategy_from_name("blocking", NULL), CW_ERR_INVALID_ARGUMENT);
    for (int e = CW_OK; e >= CW_ERR_NO_RESOURCES; --e) {
        assert_string_not_equal(cw_strerror(e), "unknown error");
        for (int f = e - 1; f >= CW_ERR_NO_RESOURCES; --f)
            assert_string_not_equal(cw_strerror(e), cw_strerror(f));
    }
    assert_string_equal(cw_strerror(-100), "unknown error");
}

/* The library reports the version its headers were generated with. */
static void version_matches_headers(void **state) {
    (void)state;
    assert_int_equal(cw_version(), CW_VERSION_NUMBER);
    assert_string_equal(cw_version_string(), CW_VERSION_STRING);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", CW_VERSION_MAJOR, CW_VERSION_MINOR,
             CW_VERSION_PATCH);
    assert_string_equal(cw_version_string(), expect);
    assert_int_equal(cw_version() / 10000, CW_VERSION_MAJOR);
}

/* A parker of the caller's own, passed in the options, is the one that sleeps. */
struct counted {
    cw_futex_parker inner;
    cw_parker parker;
    atomic_int parks;
};

static int counted_park(cw_parker *p, uint64_t deadline) {
    struct counted *c = (struct counted *)((char *)p - offsetof(struct counted, parker));
    atomic_fetch_add(&c->parks, 1);
    return cw_park(&c->inner.parker, deadline);
}

static void counted_unpark(cw_parker *p) {
    struct counted *c = (struct counted *)((char *)p - offsetof(struct counted, parker));
    cw_unpark(&c->inner.parker);
}

static void wait_parks_on_callers_parker(void **state) {
    (void)state;
    static const cw_parker_ops ops = {counted_park, counted_unpark};
    struct counted c = {.parker = {&ops}};
    cw_futex_parker_init(&c.inner);
    struct later l = {.ev = user_event(), .delay_us = 20000, .status = CL_COMPLETE};
    pthread_t t = cw_test_spawn(set_later, &l);
    cw_wait_options o = {.strategy = CW_STRATEGY_COOPERATIVE, .parker = &c.parker};
    assert_int_equal(cw_wait(l.ev, &o, NULL), CW_OK);
    cw_test_join(t);
    assert_true(atomic_load(&c.parks) >= 1);
    clReleaseEvent(l.ev);
}

/* CW_WAIT_INTERRUPT_FD: the strategies that park on cw's parker end with
 * CW_ERR_INTERRUPTED once the descriptor is readable (written by another
 * thread while the wait is parked), with the status read; the wait counts
 * once and is no timeout, and the event can be waited on again. The other
 * strategies refuse the flag before they wait (and count nothing). */
static void interrupt_descriptor_ends_a_wait(void **state) {
    (void)state;
    FOR_EACH_STRATEGY(s) {
        bool parks = s != CW_STRATEGY_BLOCKING && s != CW_STRATEGY_PTHREAD &&
                     s != CW_STRATEGY_POLL && s != CW_STRATEGY_BACKOFF_POLL;
        int fds[2];
        assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
        cl_event ev = user_event();
        cw_wait_options o = {.strategy = s, .flags = CW_WAIT_INTERRUPT_FD, .interrupt_fd = fds[0]};
        cw_stats s0, s1;
        assert_int_equal(cw_stats_get(&s0), CW_OK);
        cl_int st = 0;
        if (!parks) {
            assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_UNSUPPORTED);
            assert_int_equal(cw_stats_get(&s1), CW_OK);
            assert_int_equal(s1.waits, s0.waits);
        } else {
            struct cw_test_writer w = {fds[1], 20000};
            pthread_t t = cw_test_spawn(cw_test_write_run, &w);
            assert_int_equal(cw_wait(ev, &o, &st), CW_ERR_INTERRUPTED);
            assert_int_equal(st, CL_SUBMITTED);
            assert_int_equal(cw_stats_get(&s1), CW_OK);
            assert_int_equal(s1.waits - s0.waits, 1);
            assert_int_equal(s1.timeouts, s0.timeouts);
            cw_test_join(t);
            /* Still readable: a wait that finds the command done does not park. */
            assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
            assert_int_equal(cw_wait(ev, &o, &st), CW_OK);
            assert_int_equal(st, CL_COMPLETE);
        }
        assert_int_equal(wait_completions(), 0);
        clReleaseEvent(ev);
        close(fds[0]);
        close(fds[1]);
    }
}

struct many {
    cl_event ev;
    cw_strategy strategy;
    unsigned flags;
    atomic_int ok;
};

static void *wait_thread(void *arg) {
    struct many *m = arg;
    cw_wait_options o = {.strategy = m->strategy, .flags = m->flags};
    if (cw_wait(m->ev, &o, NULL) == CW_OK)
        atomic_fetch_add(&m->ok, 1);
    return NULL;
}

/* Several threads wait on one event, each with its own completion (and,
 * with CW_WAIT_OWN_CALLBACK, those that found no record, their own callback). */
static void many_waiters_on_one_event(void **state) {
    (void)state;
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        struct many m = {.ev = user_event(), .strategy = s, .flags = f};
        pthread_t t[4];
        for (int i = 0; i < 4; ++i)
            t[i] = cw_test_spawn(wait_thread, &m);
        cw_test_sleep_us(10000);
        assert_int_equal(clSetUserEventStatus(m.ev, CL_COMPLETE), CL_SUCCESS);
        for (int i = 0; i < 4; ++i)
            cw_test_join(t[i]);
        assert_int_equal(atomic_load(&m.ok), 4);
        clReleaseEvent(m.ev);
    }
}

/* Every strategy keeps working while the waiting thread takes a signal every
 * 100 µs: its futex waits, sleeps and condition waits return EINTR (the
 * handler is installed without SA_RESTART) and must carry on. Completion,
 * failure and timeout each come through unchanged. */
static void waits_survive_signal_storm(void **state) {
    (void)state;
    struct cw_test_storm storm;
    cw_test_storm_start(&storm, 100);
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    unsigned launches = 0;
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        /* completes 20 ms later */
        struct later ok = {.ev = user_event(), .delay_us = 20000, .status = CL_COMPLETE};
        cl_event ev;
        assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &ok.ev, &ev), CL_SUCCESS);
        ++launches;
        pthread_t t = cw_test_spawn(set_later, &ok);
        cw_wait_options o = {.strategy = s, .flags = f, .check_interval_us = 2000};
        cl_int status = 0;
        assert_int_equal(cw_wait(ev, &o, &status), CW_OK);
        assert_int_equal(status, CL_COMPLETE);
        cw_test_join(t);
        clReleaseEvent(ev);
        clReleaseEvent(ok.ev);

        /* fails 20 ms later */
        struct later bad = {.ev = user_event(), .delay_us = 20000, .status = -7};
        t = cw_test_spawn(set_later, &bad);
        assert_int_equal(cw_wait(bad.ev, &o, &status), CW_ERR_COMMAND_FAILED);
        assert_int_equal(status, -7);
        cw_test_join(t);
        clReleaseEvent(bad.ev);

        /* times out after 20 ms, then completes */
        {
            cl_event slow = user_event();
            o.timeout_us = 20000;
            uint64_t t0 = cw_now_ns();
            assert_int_equal(cw_wait(slow, &o, &status), CW_ERR_TIMEOUT);
            assert_true(cw_now_ns() - t0 >= 20000000u);
            assert_int_equal(clSetUserEventStatus(slow, CL_COMPLETE), CL_SUCCESS);
            assert_int_equal(cw_wait(slow, &o, &status), CW_OK);
            clReleaseEvent(slow);
        }
    }
    unsigned long sent = cw_test_storm_stop(&storm);
    print_message("%lu signals sent to the waiting thread\n", sent);
    assert_true(sent >= 100);
    size_t wrong = 1;
    assert_int_equal(cwh_saxpy_check(&host, &sx, 1.0f, launches, &wrong), CL_SUCCESS);
    assert_int_equal(wrong, 0);
    cwh_saxpy_free(&sx);
}

/* Inflate the queue's wait estimate the way a first launch that compiles the
 * kernel does: one long wait on a kernel gated for a second, by each of the
 * strategies that feed the estimate. */
static void one_long_wait(cwh_saxpy *sx) {
    const cw_strategy feeders[] = {CW_STRATEGY_BACKOFF_POLL, CW_STRATEGY_AUTO};
    for (size_t i = 0; i < 2; ++i) {
        struct later l = {.ev = user_event(), .delay_us = 1000000, .status = CL_COMPLETE};
        cl_event ev;
        assert_int_equal(cwh_saxpy_enqueue(&host, sx, 1.0f, 1, &l.ev, &ev), CL_SUCCESS);
        pthread_t t = cw_test_spawn(set_later, &l);
        cw_wait_options o = {.strategy = feeders[i]};
        assert_int_equal(cw_wait(ev, &o, NULL), CW_OK);
        cw_test_join(t);
        clReleaseEvent(ev);
        clReleaseEvent(l.ev);
    }
}

/* Time from a gate opening (or failing) to the wait on the kernel behind it
 * returning, in ns; the gate is set `delay_us` after the wait starts. It
 * opened when clSetUserEventStatus returned, if that was later (on a loaded
 * machine the setting thread may wait for a CPU, or inside the driver for
 * the event's lock, which a polling waiter keeps taking): a wait is late
 * only after what it waits for happened. */
static uint64_t gated_wait_ns(cwh_saxpy *sx, cw_wait_options o, unsigned delay_us, cl_int gate,
                              int expect, uint64_t *total_ns) {
    struct later l = {.ev = user_event(), .delay_us = delay_us, .status = gate};
    cl_event ev;
    assert_int_equal(cwh_saxpy_enqueue(&host, sx, 1.0f, 1, &l.ev, &ev), CL_SUCCESS);
    uint64_t t0 = cw_now_ns();
    pthread_t t = cw_test_spawn(set_later, &l);
    assert_int_equal(cw_wait(ev, &o, NULL), expect);
    uint64_t t1 = cw_now_ns();
    cw_test_join(t);
    clReleaseEvent(ev);
    clReleaseEvent(l.ev);
    *total_ns = t1 - t0;
    uint64_t opened = t0 + (uint64_t)delay_us * 1000u;
    if (atomic_load(&l.set_ns) > opened)
        opened = atomic_load(&l.set_ns);
    return t1 > opened ? t1 - opened : 0;
}

/* A wait on a saxpy gated until the wait has entered clWaitForEvents (or
 * about 2 s, where it never does): a loaded machine cannot let the command
 * finish before the wait's first look, which would end it there. */
static void gated_driver_wait(cwh_saxpy *sx, cw_wait_options o, cl_int gate, int expect) {
    struct after_call a = {.gate = user_event(),
                           .status = gate,
                           .counter = &clshim_driver_waits,
                           .since = atomic_load(&clshim_driver_waits)};
    cl_event ev;
    assert_int_equal(cwh_saxpy_enqueue(&host, sx, 1.0f, 1, &a.gate, &ev), CL_SUCCESS);
    pthread_t t = cw_test_spawn(open_after_call, &a);
    assert_int_equal(cw_wait(ev, &o, NULL), expect);
    cw_test_join(t);
    clReleaseEvent(ev);
    clReleaseEvent(a.gate);
}

/*
 * Every strategy, whatever its estimates say, reports a failed command within
 * 2x the check interval, with room for a loaded machine (a waiter that is not
 * scheduled for a while): an estimate inflated by one long wait must not make
 * backoff-poll sleep through it (it would be about a second late), nor a long
 * spin-park budget hide it (likewise).
 */
static void failure_reported_within_two_check_intervals(void **state) {
    (void)state;
    enum { CHECK_US = 20000, SLACK_US = 200000 };
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    for (int inflated = 0; inflated < 2; ++inflated) {
        if (inflated)
            one_long_wait(&sx);
        FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
            cw_wait_options o = {.strategy = s, .flags = f, .check_interval_us = CHECK_US};
            if (s == CW_STRATEGY_SPIN_PARK)
                o.spin_us = CW_SPIN_US_MAX; /* a second of spinning */
            uint64_t total;
            uint64_t late = gated_wait_ns(&sx, o, 40000, -5, CW_ERR_COMMAND_FAILED, &total);
            printf("%s%s%s: failure reported %.1f ms after it happened\n", cw_strategy_name(s),
                   f ? " (own callback)" : "", inflated ? " (estimate inflated)" : "", late / 1e6);
            assert_true(late <= (2u * CHECK_US + SLACK_US) * 1000ull);
        }
    }
    cwh_saxpy_free(&sx);
}

/*
 * After one long wait, a short one is still reported no later than about
 * its own length after its gate opened (plus backoff-poll's 50 us floor and
 * room for a loaded machine), with every strategy; sleeping through the
 * inflated estimate would make it about a second late.
 */
static void short_wait_after_long_one_is_not_late(void **state) {
    (void)state;
    enum { GATE_US = 20000, SLACK_US = 200000 };
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    one_long_wait(&sx);
    FOR_EACH_STRATEGY(s) {
        cw_wait_options o = {.strategy = s};
        uint64_t total;
        uint64_t late = gated_wait_ns(&sx, o, GATE_US, CL_COMPLETE, CW_OK, &total);
        printf("%s after a 1 s wait: a %d ms wait took %.1f ms, %.1f ms after its gate opened\n",
               cw_strategy_name(s), GATE_US / 1000, total / 1e6, late / 1e6);
        assert_true(late <= (uint64_t)(GATE_US + SLACK_US) * 1000u);
    }
    cwh_saxpy_free(&sx);
}

/* The estimate comes down fast: within 2x of a steady short wait after at
 * most eight of them, following one wait thousands of times longer. */
static void estimate_recovers_after_one_long_wait(void **state) {
    (void)state;
    uintptr_t key = (uintptr_t)&key; /* any non-zero key names a queue here */
    cw__estimate_put(key, 1000000, true);
    for (int i = 0; i < 5; ++i)
        cw__estimate_put(key, 3000000000u, true); /* 3 s waits: up by 4x a wait */
    assert_true(cw__estimate_get(key) >= 750000000u);
    for (int i = 0; i < 8; ++i)
        cw__estimate_put(key, 1000000, true);
    assert_true(cw__estimate_get(key) <= 2000000);
    assert_true(cw__estimate_get(key) >= 500000);
}

/* A queue waited on all along keeps its estimate, and its end estimate,
 * while other queues come and go, two waits each (a program that makes a
 * queue per phase): a thousand keys are sure to share its set, and one
 * that took its slot would leave its next wait unplanned. */
static void estimate_kept_while_other_queues_come_and_go(void **state) {
    (void)state;
    uintptr_t key = (uintptr_t)&key;
    cw__estimate_put(key, 1000000, true);
    cw__estimate_end_put(key, 900000, 0, true);
    for (uintptr_t i = 1; i <= 1000; ++i) {
        uintptr_t other = key + i * 4096u;
        cw__estimate_put(other, 5000000, true);
        cw__estimate_put(other, 5000000, true);
        assert_int_equal(cw__estimate_get(other), 5000000);
        assert_int_equal(cw__estimate_get(key), 1000000);
        uint64_t dev;
        assert_int_equal(cw__estimate_end_get(key, &dev), 900000);
        cw__estimate_put(key, 1000000, true);
    }
}

/* The estimate goes up at once to a wait over twice it from 8 ms on (by
 * 4x at most), so a kernel 5x longer than the last makes no early check
 * wake-ups after its first launch; shorter waits move it by a quarter, so
 * one preempted short wait does not end auto's spins. */
static void estimate_rises_at_once_to_a_longer_kernel(void **state) {
    (void)state;
    static char queue; /* its own key: a test run in one process keeps the slots */
    uintptr_t key = (uintptr_t)&queue;
    const uint64_t ms = 1000000u;
    cw__estimate_put(key, 20 * ms, true);
    cw__estimate_put(key, 100 * ms, true);
    assert_int_equal(cw__estimate_get(key), 80 * ms);
    cw__estimate_put(key, 100 * ms, true);
    assert_int_equal(cw__estimate_get(key), 85 * ms);
    cw__estimate_put(key, 400 * ms, true);
    assert_int_equal(cw__estimate_get(key), 340 * ms);
    uintptr_t short_key = key + 1;
    cw__estimate_put(short_key, ms, true);
    cw__estimate_put(short_key, 4 * ms, true);
    assert_int_equal(cw__estimate_get(short_key), 1750000u);
}

/*
 * The end estimate (auto's late waits): a told end is followed; one known
 * only between two polls leaves an estimate inside that span alone, raises
 * one below it, and brings one above it down. The last is what frees a
 * queue whose estimate lies past its commands' end: each wait slept to the
 * estimate, doubling its sleeps (a poll at 15.4 ms that saw a 20 ms
 * command running, the next at the estimate), and learned nothing.
 */
/* The queue's end estimate (its spread left aside). */
static uint64_t end_of(uintptr_t key) {
    uint64_t dev;
    return cw__estimate_end_get(key, &dev);
}

static void end_estimate_comes_down_to_the_end(void **state) {
    (void)state;
    static char queue; /* its own key: a test run in one process keeps the slots */
    uintptr_t key = (uintptr_t)&queue;
    const uint64_t ms = 1000000u, end = 20 * ms, running = 15400000u;
    cw__estimate_put(key, 40 * ms, true); /* the slot the end estimate lives in */
    cw__estimate_end_put(key, 31 * ms, 0, true);
    assert_int_equal(end_of(key), 31 * ms);
    int waits = 0;
    while (end_of(key) > end + ms && waits < 100) {
        uint64_t seen = end_of(key); /* the wake at the estimate */
        cw__estimate_end_put(key, running + (seen - running) / 2u, (seen - running) / 2u, true);
        ++waits;
    }
    printf("a 31 ms end estimate came within 1 ms of a 20 ms end after %d waits\n", waits);
    assert_true(waits > 0 && waits <= 16);
    /* Inside the span: unchanged. */
    uint64_t e = end_of(key);
    cw__estimate_end_put(key, e + ms, 2 * ms, true);
    assert_int_equal(end_of(key), e);
    /* Below the span: raised toward its middle. */
    cw__estimate_end_put(key, e + 4 * ms, ms, true);
    assert_true(end_of(key) > e && end_of(key) < e + 4 * ms);
    /* Told: followed by a quarter; over twice the estimate, up by 4x at
     * most at once (a queue gone from 20 ms to 100 ms kernels). */
    e = end_of(key);
    cw__estimate_end_put(key, e + 4 * ms, 0, true);
    assert_int_equal(end_of(key), e + ms);
    cw__estimate_end_put(key, 20 * ms, 0, true);
    for (int i = 0; i < 8; ++i)
        cw__estimate_end_put(key, 20 * ms, 0, true);
    e = end_of(key);
    cw__estimate_end_put(key, 100 * ms, 0, true);
    assert_int_equal(end_of(key), 4 * e);
    cw__estimate_end_put(key, 100 * ms, 0, true);
    assert_true(end_of(key) > 4 * e && end_of(key) <= 100 * ms);
}

/* Make the fixture's queue's expected wait about `ns`, as a run of waits
 * that long would (the estimate follows each wait by a quarter). */
static void expect_on_queue(uint64_t ns) {
    for (int i = 0; i < 24; ++i)
        cw__estimate_put((uintptr_t)host.queue, ns, true);
}

/* Every strategy that keeps an estimate raises it at once after a wait
 * over twice it, auto and the fixed ones alike: a queue whose waits took
 * 20 ms, then one of 60 ms (followed by a quarter, the estimate would be
 * 30 ms unless that wait took over 120 ms). */
static void every_strategy_raises_its_estimate_at_once(void **state) {
    (void)state;
    const uint64_t ms = 1000000u;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    FOR_EACH_STRATEGY(s) {
        if (!cw__strategy_row_of(s)->estimates)
            continue;
        expect_on_queue(20 * ms);
        cw_wait_options o = {.strategy = s};
        uint64_t total;
        gated_wait_ns(&sx, o, 60000, CL_COMPLETE, CW_OK, &total);
        uint64_t e = cw__estimate_get((uintptr_t)host.queue);
        printf("%s: a 20 ms estimate after a %.1f ms wait: %.1f ms\n", cw_strategy_name(s),
               total / 1e6, e / 1e6);
        assert_true(e >= 45 * ms);
    }
    cwh_saxpy_free(&sx);
}

/*
 * With the default interval, a wait expected to be long makes its first
 * check only after twice its expected wait: a failure is then reported
 * within 2x the interval of it or by that first check, whichever is later
 * (plus room for a loaded machine), with every strategy. Where the
 * platform's failed commands fire their callbacks (the pocl7 model) no
 * check is scheduled at all, and the callback reports it.
 */
static void failure_reported_within_the_bound_of_a_long_expected_wait(void **state) {
    (void)state;
    enum { EXPECTED_US = 150000, FAIL_US = 20000, SLACK_US = 300000 };
    const uint64_t interval = (uint64_t)CW_CHECK_INTERVAL_US_DEFAULT * 1000u;
    const uint64_t first = CW__CHECK_EXPECTED_FACTOR * (uint64_t)EXPECTED_US * 1000u;
    uint64_t by = (uint64_t)FAIL_US * 1000u + CW_CHECK_INTERVAL_GROWTH * interval;
    if (by < first)
        by = first;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    FOR_EACH_STRATEGY_AND_CALLBACK(s, f) {
        expect_on_queue((uint64_t)EXPECTED_US * 1000u);
        cw_wait_options o = {.strategy = s, .flags = f};
        uint64_t total;
        uint64_t late = gated_wait_ns(&sx, o, FAIL_US, -5, CW_ERR_COMMAND_FAILED, &total);
        printf("%s%s: failure at %d ms reported after %.1f ms, %.1f ms after it happened "
               "(bound %.1f ms)\n",
               cw_strategy_name(s), f ? " (own callback)" : "", FAIL_US / 1000, total / 1e6,
               late / 1e6, by / 1e6);
        /* By the first check, or within twice the interval of the failure,
         * whichever is later (the failure counted from when it happened). */
        assert_true(total <= first + (uint64_t)SLACK_US * 1000u ||
                    late <= CW_CHECK_INTERVAL_GROWTH * interval + (uint64_t)SLACK_US * 1000u);
    }
    assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
    if (model_fires_failed())
        assert_true(a1.unchecked_waits > a0.unchecked_waits);
    else
        assert_true(a1.deferred_checks > a0.deferred_checks);
    cwh_saxpy_free(&sx);
}

/*
 * A wait on a command expected to take a second makes no status check: the
 * callback wakes it once. Auto is left out where callbacks are late (it
 * then polls, on purpose: late_callbacks_take_the_hybrid_path).
 */
static void no_check_wakeup_on_a_command_expected_long(void **state) {
    (void)state;
    const cw_strategy each[] = {CW_STRATEGY_COOPERATIVE, CW_STRATEGY_PTHREAD, CW_STRATEGY_SPIN_PARK,
                                CW_STRATEGY_AUTO};
    size_t n = model_callback_delay_us() >= CW__LATE_FLOOR_NS / 1000 ? 3 : 4;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    for (size_t i = 0; i < n; ++i) {
        expect_on_queue(1000000000u);
        cw_stats s0, s1;
        cw_stats_auto a0, a1;
        assert_int_equal(cw_stats_get(&s0), CW_OK);
        assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
        cw_wait_options o = {.strategy = each[i]};
        uint64_t total;
        gated_wait_ns(&sx, o, 30000, CL_COMPLETE, CW_OK, &total);
        assert_int_equal(cw_stats_get(&s1), CW_OK);
        assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
        printf("%s: %.1f ms, %llu parks, %llu checks\n", cw_strategy_name(each[i]), total / 1e6,
               (unsigned long long)(s1.parks - s0.parks),
               (unsigned long long)(a1.checks - a0.checks));
        assert_int_equal(a1.checks - a0.checks, 0);
        /* One park, or none where a loaded machine kept the waiter off its
         * CPU until the gate had opened: never a check's second one. */
        assert_true(s1.parks - s0.parks <= 1);
        /* A callback wait, with its first check put off (or none), or
         * auto's long wait in the driver's own clWaitForEvents (its trial,
         * or what the trials found cheaper). */
        uint64_t own = a1.driver_waits - a0.driver_waits;
        assert_true(own <= (each[i] == CW_STRATEGY_AUTO ? 1u : 0u));
        assert_int_equal(a1.deferred_checks - a0.deferred_checks + a1.unchecked_waits -
                             a0.unchecked_waits + own,
                         1);
    }
    cwh_saxpy_free(&sx);
}

/* The platform's record, told its callbacks come `lateness_ns` late (a
 * loaded machine may keep the probe from timing them as the model says). */
static cw__driver *driver_told_lateness(uint64_t lateness_ns) {
    cl_event ev = user_event();
    cw__driver *d = cw__driver_of(ev);
    clReleaseEvent(ev);
    assert_non_null(d);
    for (int i = 0; i < 64; ++i)
        cw__driver_lateness_sample(d, lateness_ns);
    return d;
}

/*
 * Auto's waits that it parks for at once on a timely platform try the
 * driver's own clWaitForEvents against the callback wait, then keep
 * whichever cost the waiting thread less (driver.h), each class of wait
 * length apart: every wait ends with its command, the driver's own wait
 * serves some of them, a failed command is reported whichever serves it,
 * and a timeout or a parker of the caller's keeps a wait off the driver's
 * own. Where callbacks are late (the nvidia model) such waits are the late
 * ones instead (late_callbacks_take_the_hybrid_path). Each wait is gated
 * `gate_us` and planned with that as its queue's estimate; `spin_us` is
 * auto's spin cap (a spin budget under the expected wait plans no spin).
 */
static void auto_waits_try_the_drivers_own_wait(unsigned gate_us, unsigned spin_us) {
    if (model_callback_delay_us() >= CW__LATE_FLOOR_NS / 1000)
        skip();
    enum { WAITS = 2 * CW__CLASS_TRIALS + 4 };
    const uint64_t expected_ns = (uint64_t)gate_us * 1000u;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    /* The trials start once the platform's lateness is known and under the
     * floor. A loaded machine may keep the probe from timing it, or make
     * its one sample look late: the platform is told it is timely, as the
     * model in force says. */
    cw__driver *d = driver_told_lateness(0);
    assert_false(drv_late(d, 0));
    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO, .spin_us = spin_us};
    uint64_t total;
    for (int i = 0; i < WAITS; ++i) {
        expect_on_queue(expected_ns);
        gated_wait_ns(&sx, o, gate_us, CL_COMPLETE, CW_OK, &total);
    }
    expect_on_queue(expected_ns);
    gated_wait_ns(&sx, o, gate_us, -5, CW_ERR_COMMAND_FAILED, &total);
    assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
    printf("%d auto waits of %u us: %llu by the driver's own wait; it serves this platform's "
           "long waits: %s\n",
           WAITS + 1, gate_us, (unsigned long long)(a1.driver_waits - a0.driver_waits),
           a1.platforms_driver_wait ? "yes" : "no");
    assert_true(a1.driver_waits > a0.driver_waits);

    static const cw_parker_ops ops = {counted_park, counted_unpark};
    struct counted c = {.parker = {&ops}};
    cw_futex_parker_init(&c.inner);
    cw_wait_options timed = {
        .strategy = CW_STRATEGY_AUTO, .timeout_us = 10000000, .spin_us = spin_us};
    cw_wait_options parked = {
        .strategy = CW_STRATEGY_AUTO, .parker = &c.parker, .spin_us = spin_us};
    for (int i = 0; i < 4; ++i) {
        expect_on_queue(expected_ns);
        gated_wait_ns(&sx, i % 2 ? timed : parked, gate_us, CL_COMPLETE, CW_OK, &total);
    }
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    assert_int_equal(a0.driver_waits, a1.driver_waits);
    cwh_saxpy_free(&sx);
}

/* Long waits (expected to last 200 µs to 4 ms), which auto parks for at
 * once wherever it runs. */
static void long_auto_waits_try_the_drivers_own_wait(void **state) {
    (void)state;
    auto_waits_try_the_drivers_own_wait(2000, 0);
}

/* Short ones (100 µs) where auto plans no spin: as on a device whose
 * workers take every CPU, here by a spin cap under the expected wait. */
static void short_parked_auto_waits_try_the_drivers_own_wait(void **state) {
    (void)state;
    auto_waits_try_the_drivers_own_wait(100, 1);
}

/* Decide the platform's long waits of `expected_ns`'s class for the
 * driver's own wait, as trials in which it cost half the callback wait's
 * would. */
static void decide_long_waits_own(cw__driver *d, uint64_t expected_ns) {
    int w;
    while ((w = class_way(d, expected_ns, cw_now_ns())) == WAY_TRIAL_DRIVER ||
           w == WAY_TRIAL_CALLBACK) {
        bool own = w == WAY_TRIAL_DRIVER;
        class_sample(d, expected_ns, own, own ? 10000u : 20000u, expected_ns);
    }
    assert_int_equal(w, WAY_DRIVER);
}

/*
 * Once the platform settled auto's wait on the driver's own (a timely
 * platform's long waits whose trials chose it; a late platform's waits
 * where its own wait sleeps, the pocl7 and nvidia models here, told so),
 * such a wait is that clWaitForEvents after the first look every wait
 * takes: it still ends with its command, reports a failed one, returns for
 * a finished one (at the look); a bad handle and a user event (no queue,
 * so no estimate) go the usual way, and on a timely platform so do a wait
 * that may spin and a short one.
 */
static void settled_own_waits_answer_as_every_wait_does(void **state) {
    (void)state;
    enum { LONG_US = 2000 };
    const uint64_t long_ns = (uint64_t)LONG_US * 1000u;
    const bool late = model_callback_delay_us() >= CW__LATE_FLOOR_NS / 1000;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    cw__driver *d = driver_told_lateness(late ? (uint64_t)model_callback_delay_us() * 1000u : 0u);
    assert_int_equal(drv_late(d, long_ns), late);
    assert_false(drv_settled(d, long_ns, true, cw_now_ns())); /* trials to make */
    if (late) {
        for (unsigned i = 0; i < CW__VOTE_TRIALS; ++i)
            cw__driver_vote_sample(d, CW__VOTE_FIXED_NS, long_ns);
        assert_true(vote_sleeps(d));
        assert_true(drv_settled(d, long_ns, false, cw_now_ns()));
    } else {
        decide_long_waits_own(d, long_ns);
        assert_false(drv_settled(d, long_ns, false, cw_now_ns()));
        assert_false(drv_settled(d, CW__VOTE_MIN_NS - 1u, true, cw_now_ns()));
    }
    assert_true(drv_settled(d, long_ns, true, cw_now_ns()));
    assert_false(drv_settled(NULL, long_ns, true, cw_now_ns()));

    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO};
    expect_on_queue(long_ns);
    gated_driver_wait(&sx, o, CL_COMPLETE, CW_OK);
    cl_event done;
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 0, NULL, &done), CL_SUCCESS);
    assert_int_equal(clFinish(host.queue), CL_SUCCESS);
    expect_on_queue(long_ns);
    cl_int st = 0;
    assert_int_equal(cw_wait(done, &o, &st), CW_OK);
    assert_int_equal(st, CL_COMPLETE);
    clReleaseEvent(done);
    expect_on_queue(long_ns);
    gated_driver_wait(&sx, o, -5, CW_ERR_COMMAND_FAILED);
    assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
    /* The two gated waits; the finished command's ended at its first look. */
    assert_int_equal(a1.driver_waits - a0.driver_waits, 2);

    assert_int_equal(cw_wait(clshim_bad_event, &o, &st), CW_ERR_INVALID_EVENT);
    assert_int_equal(st, CL_INVALID_EVENT);
    cl_event user = user_event();
    assert_int_equal(clSetUserEventStatus(user, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait(user, &o, &st), CW_OK);
    clReleaseEvent(user);
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    assert_int_equal(a0.driver_waits, a1.driver_waits);
    assert_int_equal(wait_completions(), 0);
    cwh_saxpy_free(&sx);
}

/*
 * A wait on a settled queue whose command was done before it (on one CPU
 * the driver's worker may run the whole command between the enqueue and
 * the wait) returns at its first look, which leaves the queue's estimate as
 * it was: cut to a quarter, it would put the next waits off the settled
 * path. A settled wait that waited feeds it.
 */
static void settled_wait_on_a_done_command_keeps_the_estimate(void **state) {
    (void)state;
    enum { GATE_US = 2000, DONE = 16, TRIES = 8 };
    const uint64_t long_ns = (uint64_t)GATE_US * 1000u;
    const bool late = model_callback_delay_us() >= CW__LATE_FLOOR_NS / 1000;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    cw__driver *d = driver_told_lateness(late ? (uint64_t)model_callback_delay_us() * 1000u : 0u);
    if (late) {
        for (unsigned i = 0; i < CW__VOTE_TRIALS; ++i)
            cw__driver_vote_sample(d, CW__VOTE_FIXED_NS, long_ns);
    } else {
        decide_long_waits_own(d, long_ns);
    }
    assert_true(drv_settled(d, long_ns, true, cw_now_ns()));
    const uintptr_t key = (uintptr_t)host.queue;
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO};
    cw_stats_auto a0, a1;
    /* Those that returned within the microdelay, timed from outside (a
     * sanitizer or a loaded machine may make one slower: that one may feed
     * the estimate, as a wait that long does). */
    int fast = 0;
    for (int i = 0; i < DONE; ++i) {
        expect_on_queue(long_ns);
        uint64_t before = cw__estimate_get(key);
        cl_event done;
        assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 0, NULL, &done), CL_SUCCESS);
        assert_int_equal(clFinish(host.queue), CL_SUCCESS);
        assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
        cl_int st = 0;
        uint64_t t0 = cw_now_ns();
        assert_int_equal(cw_wait(done, &o, &st), CW_OK);
        uint64_t took = cw_now_ns() - t0;
        assert_int_equal(st, CL_COMPLETE);
        assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
        clReleaseEvent(done);
        assert_int_equal(a1.driver_waits - a0.driver_waits, 0); /* ended at the look */
        if (took < CW__MICRODELAY_SPIN_NS) {
            ++fast;
            assert_int_equal(cw__estimate_get(key), before);
        }
    }
    printf("settled waits on done commands: %d of %d within %u ns\n", fast, DONE,
           CW__MICRODELAY_SPIN_NS);
    if (!fast) {
        cwh_saxpy_free(&sx);
        skip(); /* none fast enough to tell (a sanitizer's build) */
    }
    /* One that waited for its gate, unless a loaded machine kept the waiter
     * off its CPU until the command was done. */
    bool fed = false;
    for (int i = 0; i < TRIES && !fed; ++i) {
        expect_on_queue(long_ns);
        uint64_t before = cw__estimate_get(key), total;
        gated_wait_ns(&sx, o, GATE_US, CL_COMPLETE, CW_OK, &total);
        fed = cw__estimate_get(key) != before;
    }
    assert_true(fed);
    cwh_saxpy_free(&sx);
}

/*
 * On a platform whose callbacks are late, auto tries the driver's own
 * clWaitForEvents only on a wait expected to last at most
 * CW__VOTE_TRIAL_MAX_NS: waits expected longer (30 ms kernels) poll as
 * the late wait does, none of them handed to a driver wait that may spin
 * for its whole length, and the vote stays open; a short wait is a trial.
 * Every wait ends with its command.
 */
static void own_wait_trials_only_on_short_waits(void **state) {
    (void)state;
    enum { LONG_US = 30000, SHORT_US = 1500, WAITS = 4, TRIES = 16 };
    _Static_assert((uint64_t)LONG_US * 1000u > CW__VOTE_TRIAL_MAX_NS, "a long wait");
    _Static_assert((uint64_t)SHORT_US * 1000u <= CW__VOTE_TRIAL_MAX_NS, "a short wait");
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    cw__driver *d = driver_told_lateness(20000000u);
    assert_true(drv_late(d, (uint64_t)LONG_US * 1000u));
    assert_true(vote_open(d));
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO};
    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    uint64_t total;
    for (int i = 0; i < WAITS; ++i) {
        expect_on_queue((uint64_t)LONG_US * 1000u);
        gated_wait_ns(&sx, o, LONG_US, CL_COMPLETE, CW_OK, &total);
    }
    assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
    printf("%d auto waits expected to last %d us: %llu late waits, %llu driver waits\n", WAITS,
           LONG_US, (unsigned long long)(a1.hybrid_waits - a0.hybrid_waits),
           (unsigned long long)(a1.driver_waits - a0.driver_waits));
    assert_int_equal(a1.driver_waits, a0.driver_waits);
    assert_true(vote_open(d));
    /* A short one is a trial, unless a loaded machine kept the waiter off
     * its CPU until the command was done (its first look then ends it). */
    int tries = 0;
    while (tries < TRIES && a0.driver_waits == a1.driver_waits) {
        expect_on_queue((uint64_t)SHORT_US * 1000u);
        gated_wait_ns(&sx, o, SHORT_US, CL_COMPLETE, CW_OK, &total);
        assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
        ++tries;
    }
    printf("waits expected to last %d us until a driver wait: %d\n", SHORT_US, tries);
    assert_int_equal(a0.driver_waits - a1.driver_waits, 1);
    cwh_saxpy_free(&sx);
}

/*
 * Where callbacks come late (the nvidia model: 20 ms), auto learns it (a
 * status read finds commands complete before their callbacks) and waits as
 * a hybrid, polling, once learned; where they come with the command
 * (PoCL, rusticl unchanged), it does not, at least once what it learned
 * settled (the second half of the waits).
 */
static void late_callbacks_take_the_hybrid_path(void **state) {
    (void)state;
    enum { WAITS = 24, GATE_US = 2000 };
    long delay = model_callback_delay_us();
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    unsigned hybrid_late_half = 0, waited_late_half = 0;
    cw_stats_auto a0, a1;
    for (int i = 0; i < WAITS; ++i) {
        cw_stats s0, s1;
        assert_int_equal(cw_stats_get(&s0), CW_OK);
        assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
        uint64_t total;
        gated_wait_ns(&sx, (cw_wait_options){0}, GATE_US, CL_COMPLETE, CW_OK, &total);
        assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
        assert_int_equal(cw_stats_get(&s1), CW_OK);
        /* A wait whose first look found the command done (its thread kept
         * off a CPU past the gate on a loaded machine) did not wait at all:
         * it polled, spun, slept and parked not once. */
        bool waited =
            s1.polls + s1.spins + s1.sleeps + s1.parks > s0.polls + s0.spins + s0.sleeps + s0.parks;
        if (i >= WAITS / 2) {
            hybrid_late_half += (unsigned)(a1.hybrid_waits - a0.hybrid_waits);
            waited_late_half += waited;
        }
    }
    printf("callbacks %ld us late (model): lateness learned %.3f ms, %u of the last %d waits "
           "hybrid, %u of them waited, %llu late callbacks seen\n",
           delay, a1.lateness_ns / 1e6, hybrid_late_half, WAITS / 2, waited_late_half,
           (unsigned long long)a1.late_callbacks);
    if (delay >= 1000) {
        assert_int_equal(a1.platforms_late, 1);
        assert_true(a1.lateness_ns >= CW__LATE_FLOOR_NS);
        assert_true(a1.late_callbacks > 0);
        /* Every wait that waited took the late path; most of them waited. */
        assert_int_equal(hybrid_late_half, waited_late_half);
        assert_true(waited_late_half >= WAITS / 4);
    } else if (delay == 0) {
        assert_int_equal(hybrid_late_half, 0);
    }
    cwh_saxpy_free(&sx);
}

/*
 * Where callbacks are late, auto polls without a callback through the
 * longer of 16 times the lateness and twice the expected wait; a wait that
 * outlasts that (a long command planned with a short estimate) registers
 * the callback and ends by it, the wait's one wake-up. A command that fails
 * there is reported as any callback wait reports it. The short estimate is
 * twice the own-wait trials' cap: a wait planned at the cap or under it may
 * be a trial of the driver's own wait instead (where the queue's estimate
 * came in under the cap, on a loaded machine), which ends with the command
 * and never polls.
 */
static void late_wait_outgrowing_its_estimate_ends_by_its_callback(void **state) {
    (void)state;
    enum { LEARN = 12, SHORT_US = 2 * CW__VOTE_TRIAL_MAX_NS / 1000 };
    long delay = model_callback_delay_us();
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    for (int i = 0; i < LEARN; ++i) {
        uint64_t total;
        gated_wait_ns(&sx, (cw_wait_options){0}, SHORT_US, CL_COMPLETE, CW_OK, &total);
    }
    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    /* Past the polls: 16 lateness (known now) and twice the short estimate,
     * with room for a lateness learned higher than the model's. */
    uint64_t gate_us = (a0.lateness_ns << 4) / 1000u + 200000u;
    const cl_int ends[] = {CL_COMPLETE, -5};
    for (int k = 0; k < 2; ++k) {
        expect_on_queue((uint64_t)SHORT_US * 1000u);
        cw_stats s0, s1;
        assert_int_equal(cw_stats_get(&s0), CW_OK);
        assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
        uint64_t total;
        gated_wait_ns(&sx, (cw_wait_options){0}, (unsigned)gate_us, ends[k],
                      ends[k] == CL_COMPLETE ? CW_OK : CW_ERR_COMMAND_FAILED, &total);
        assert_int_equal(cw_stats_get(&s1), CW_OK);
        assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
        printf("callbacks %ld us late (model), lateness learned %.3f ms: a %.0f ms gate (%s) "
               "waited %.1f ms, %llu hybrid, %llu parks, %llu callback wake-ups\n",
               delay, a0.lateness_ns / 1e6, gate_us / 1e3, k ? "failed" : "complete", total / 1e6,
               (unsigned long long)(a1.hybrid_waits - a0.hybrid_waits),
               (unsigned long long)(s1.parks - s0.parks),
               (unsigned long long)(s1.latency_count - s0.latency_count));
        assert_true(total >= gate_us * 1000u);
        if (delay >= 1000 && a0.platforms_late) {
            assert_int_equal(a1.hybrid_waits - a0.hybrid_waits, 1);
            /* It parked on the callback past the polls: one park at least
             * (checks may add some on a platform whose failed commands
             * fire nothing), and the callback woke it, unless a check saw
             * the failure first. */
            assert_true(s1.parks - s0.parks >= 1);
            if (ends[k] == CL_COMPLETE)
                assert_int_equal(s1.latency_count - s0.latency_count, 1);
        }
    }
    cwh_saxpy_free(&sx);
}

/* One marker on `q`, gated on a user event another thread sets after
 * `gate_us`, waited for with `o`. */
static void gated_marker_wait(cl_command_queue q, cw_wait_options o, unsigned gate_us) {
    struct later l = {.ev = user_event(), .delay_us = gate_us, .status = CL_COMPLETE};
    cl_event m;
    assert_int_equal(clEnqueueMarkerWithWaitList(q, 1, &l.ev, &m), CL_SUCCESS);
    assert_int_equal(clFlush(q), CL_SUCCESS);
    pthread_t t = cw_test_spawn(set_later, &l);
    assert_int_equal(cw_wait(m, &o, NULL), CW_OK);
    cw_test_join(t);
    clReleaseEvent(m);
    clReleaseEvent(l.ev);
}

struct seen_first_run {
    cl_device_type type; /* what the queue's device is reported to be */
    cl_command_queue queue;
    bool shares; /* cw__estimate_shares_cpus of its queue */
    uint64_t late_seen, samples, callback_first;
};

/* On a queue whose device reports `type` (asked of it here first, and kept
 * with it): auto's hybrid waits (a parker of the caller's), each of which
 * finds its marker done before the callback. */
static void seen_first_waits(struct seen_first_run *r) {
    enum { WAITS = 6, GATE_US = 2000 };
    uintptr_t key = (uintptr_t)r->queue;
    atomic_store(&clshim_device_type, r->type);
    for (int i = 0; i < 24; ++i)
        cw__estimate_put(key, GATE_US * 1000u, true);
    r->shares = cw__estimate_shares_cpus(key);
    atomic_store(&clshim_device_type, 0);
    static const cw_parker_ops ops = {counted_park, counted_unpark};
    struct counted c = {.parker = {&ops}};
    cw_futex_parker_init(&c.inner);
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO, .parker = &c.parker};
    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    for (int i = 0; i < WAITS; ++i)
        gated_marker_wait(r->queue, o, GATE_US);
    /* Let the last callbacks land: a measurement ends with its callback. */
    cw_test_sleep_us(3u * (unsigned)model_callback_delay_us());
    assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
    r->late_seen = a1.late_callbacks - a0.late_callbacks;
    r->samples = a1.lateness_samples - a0.lateness_samples;
    r->callback_first = a1.hybrid_callback_first - a0.hybrid_callback_first;
}

/*
 * A status read that finds a command done before its callback measures how
 * late the callback came. Where the device takes every CPU the waiting
 * thread may run on, the wait first parks for up to CW__LATE_FLOOR_NS, so
 * that a callback kept off the CPU by the waiter lands as it would have;
 * a callback later than that, with the CPU free for it, is still measured.
 * Under a model whose callbacks come 20 ms late, on one CPU, commands seen
 * done first give lateness samples on a queue whose device is a CPU device
 * as on one reported a GPU.
 */
static void seen_first_measures_late_callbacks_on_any_device(void **state) {
    (void)state;
    if (model_callback_delay_us() < 1000)
        skip();
    /* Pinned, then asleep past auto's view of the allowed CPUs (re-read
     * every 50 ms), while the probe's own callbacks (group set-up) land. */
    cpu_set_t old = cw_test_pin_one_cpu();
    cw_test_sleep_us(3u * (unsigned)model_callback_delay_us());
    /* The probe measures the lateness only where it saw its marker finish
     * within its spin, which a loaded machine may keep it from: then the
     * lateness it would have measured, so that the waits below are judged
     * late, as this case needs. */
    cl_event probe_ev = user_event();
    cw__driver *d = cw__driver_of(probe_ev);
    if (!cw__driver_lateness_known(d))
        cw__driver_lateness_sample(d, (uint64_t)model_callback_delay_us() * 1000u);
    clReleaseEvent(probe_ev);
    struct seen_first_run runs[] = {{.type = CL_DEVICE_TYPE_CPU}, {.type = CL_DEVICE_TYPE_GPU}};
    /* Both queues live to the end: cw keys what it learns of a queue by its
     * handle, which a queue created after a release may reuse. */
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) {
        cl_int err;
        runs[i].queue = clCreateCommandQueue(host.context, host.device, 0, &err);
        assert_int_equal(err, CL_SUCCESS);
    }
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) {
        seen_first_waits(&runs[i]);
        printf("device %s: shares the CPU %s, %llu commands seen done first, %llu lateness "
               "samples, %llu callbacks first\n",
               runs[i].type == CL_DEVICE_TYPE_CPU ? "CPU" : "GPU", runs[i].shares ? "yes" : "no",
               (unsigned long long)runs[i].late_seen, (unsigned long long)runs[i].samples,
               (unsigned long long)runs[i].callback_first);
    }
    cw_test_unpin(old);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i)
        clReleaseCommandQueue(runs[i].queue);
    assert_true(runs[0].shares);
    assert_false(runs[1].shares);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) {
        assert_true(runs[i].late_seen >= 1);
        assert_true(runs[i].samples > runs[i].callback_first);
    }
}

/* Auto's spare-CPU rule counts a CPU device's compute units as busy host
 * CPUs while it works, and a GPU's as none (its work is on the device). */
static void gpu_device_counts_no_host_cpus(void **state) {
    (void)state;
    cl_device_type type = 0;
    cl_uint units = 0;
    assert_int_equal(clGetDeviceInfo(host.device, CL_DEVICE_TYPE, sizeof type, &type, NULL),
                     CL_SUCCESS);
    assert_int_equal(
        clGetDeviceInfo(host.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL),
        CL_SUCCESS);
    uintptr_t key = (uintptr_t)host.queue;
    cw__estimate_put(key, 1000, true);
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    bool takes_all = (type & CL_DEVICE_TYPE_CPU) && units >= (cl_uint)CPU_COUNT(&set);
    assert_int_equal(cw__estimate_shares_cpus(key), takes_all);

    cl_int err;
    cl_command_queue gpu = clCreateCommandQueue(host.context, host.device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    atomic_store(&clshim_device_type, CL_DEVICE_TYPE_GPU);
    cw__estimate_put((uintptr_t)gpu, 1000, true);
    bool shares = cw__estimate_shares_cpus((uintptr_t)gpu);
    atomic_store(&clshim_device_type, 0);
    assert_false(shares);
    clReleaseCommandQueue(gpu);
}

/* The read system calls the calling thread has made (the kernel's task I/O
 * accounting), or -1 where it does not count them. The read of the count
 * itself is counted in the next one. */
static long thread_reads(void) {
    char buf[512];
    int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0)
        return -1;
    buf[len] = '\0';
    const char *p = strstr(buf, "syscr:");
    return p ? strtol(p + 6, NULL, 10) : -1;
}

/* A queue counted as a device of `type` (0: as it reports itself), with an
 * expected wait short enough for auto to consider a spin. */
static cl_command_queue counted_queue(cl_device_type type) {
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(host.context, host.device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    cw__estimate_put((uintptr_t)q, 50000, true);
    atomic_store(&clshim_device_type, type);
    (void)cw__estimate_shares_cpus((uintptr_t)q);
    atomic_store(&clshim_device_type, 0);
    return q;
}

/* A marker on `q` gated on a user event another thread sets 1 ms later,
 * waited on by auto: its plan sees an expected wait to spin for (a wait
 * whose first look finds its command done asks the policy nothing).
 * Returns the read system calls the wait made. */
static long auto_wait_reads(cl_command_queue q) {
    struct later l = {.ev = user_event(), .delay_us = 1000, .status = CL_COMPLETE};
    cl_event m;
    assert_int_equal(clEnqueueMarkerWithWaitList(q, 1, &l.ev, &m), CL_SUCCESS);
    assert_int_equal(clFlush(q), CL_SUCCESS);
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO};
    pthread_t t = cw_test_spawn(set_later, &l);
    long before = thread_reads();
    assert_int_equal(cw_wait(m, &o, NULL), CW_OK);
    long after = thread_reads();
    cw_test_join(t);
    clReleaseEvent(m);
    clReleaseEvent(l.ev);
    return after - before - 1;
}

/*
 * Auto's spare-CPU rule reads the system's load (/proc/loadavg) only where
 * it can change the answer: a device that takes every CPU the thread may
 * run on leaves none spare whatever the load, and the read costs tens of µs
 * of thread CPU time after a sleep. On 2 CPUs, a CPU device with at least 2
 * compute units takes both; a GPU takes none, and there the load is read
 * where callbacks are timely.
 */
static void load_is_read_only_where_a_cpu_may_be_spare(void **state) {
    (void)state;
    cl_uint units = 0;
    assert_int_equal(
        clGetDeviceInfo(host.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL),
        CL_SUCCESS);
    cpu_set_t all;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    if (units < 2 || CPU_COUNT(&all) < 2 || thread_reads() < 0) {
        printf("needs 2 CPUs, a device of 2 compute units and /proc/thread-self/io\n");
        skip();
    }
    cpu_set_t old = cw_test_pin_cpus(2);
    /* A queue whose estimate another took (a set of the estimates' table
     * full of earlier tests' queues) is set up again, the old ones kept to
     * the end (cw keys what it learns of a queue by its handle, which a new
     * queue may reuse). */
    cl_command_queue spare[16];
    int nspare = 0;
    cl_command_queue cpu = counted_queue(CL_DEVICE_TYPE_CPU);
    cl_command_queue gpu = counted_queue(CL_DEVICE_TYPE_GPU);
    while (!cw__estimate_get((uintptr_t)cpu)) {
        assert_true(nspare < 15);
        spare[nspare++] = cpu;
        spare[nspare++] = gpu;
        cpu = counted_queue(CL_DEVICE_TYPE_CPU);
        gpu = counted_queue(CL_DEVICE_TYPE_GPU);
    }
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    assert_int_equal(cw__estimate_shares_cpus((uintptr_t)cpu), units >= (cl_uint)CPU_COUNT(&set));
    assert_false(cw__estimate_shares_cpus((uintptr_t)gpu));
    /* Past auto's view of the CPUs and the load (re-read every 50 ms). */
    cw_test_sleep_us(60000);
    /* Where callbacks are late for these waits (a model's), auto plans no
     * spin and reads nothing (late_waits_read_no_load). Whether they are is
     * read before and after the waits: a wait may teach it meanwhile (the
     * probe's measurement can miss on a loaded machine), and then either
     * answer is right for the GPU's wait. */
    cl_event m;
    assert_int_equal(clEnqueueMarkerWithWaitList(gpu, 0, NULL, &m), CL_SUCCESS);
    assert_int_equal(clFinish(gpu), CL_SUCCESS);
    cw__driver *d = cw__driver_of(m);
    clReleaseEvent(m);
    bool late_before = drv_late(d, 50000);
    long on_cpu = auto_wait_reads(cpu);
    long on_gpu = auto_wait_reads(gpu);
    bool late = drv_late(d, 50000);
    printf("read system calls of an auto wait: %ld on the CPU device, %ld on the GPU (callbacks "
           "%s)\n",
           on_cpu, on_gpu, late ? "late" : "timely");
    cw_test_unpin(old);
    clReleaseCommandQueue(cpu);
    clReleaseCommandQueue(gpu);
    for (int i = 0; i < nspare; ++i)
        clReleaseCommandQueue(spare[i]);
    assert_int_equal(on_cpu, 0);
    if (late_before)
        assert_int_equal(on_gpu, 0);
    else if (!late)
        assert_true(on_gpu >= 1);
}

/*
 * Where its platform's callbacks are late for a wait, auto does not spin on
 * the callback (it waits in the driver's own wait, or polls), so it plans
 * no spin and reads nothing of the machine for one: under a model whose
 * callbacks come late, on 2 CPUs, a wait on a GPU's queue, where a timely
 * platform's wait reads the load, makes no read system call.
 */
static void late_waits_read_no_load(void **state) {
    (void)state;
    long delay = model_callback_delay_us();
    cpu_set_t all;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    if (delay < 1000 || CPU_COUNT(&all) < 2 || thread_reads() < 0) {
        printf("needs callbacks 1 ms late or more (a model), 2 CPUs and /proc/thread-self/io\n");
        skip();
    }
    cpu_set_t old = cw_test_pin_cpus(2);
    cl_command_queue gpu = counted_queue(CL_DEVICE_TYPE_GPU);
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO};
    cl_event m;
    assert_int_equal(clEnqueueMarkerWithWaitList(gpu, 0, NULL, &m), CL_SUCCESS);
    assert_int_equal(clFinish(gpu), CL_SUCCESS);
    cw__driver *d = cw__driver_of(m);
    clReleaseEvent(m);
    /* The first callback wait probes the platform; its lateness is known
     * once the probe's callbacks, or a later wait's, have landed. */
    for (int i = 0; i < 20 && !drv_late(d, 50000); ++i) {
        gated_marker_wait(gpu, o, 2000);
        cw_test_sleep_us(3u * (unsigned)delay);
    }
    assert_true(drv_late(d, 50000));
    for (int i = 0; i < 24; ++i)
        cw__estimate_put((uintptr_t)gpu, 50000, true);
    /* Past auto's view of the CPUs and the load (re-read every 50 ms). */
    cw_test_sleep_us(60000);
    long reads = auto_wait_reads(gpu);
    printf("read system calls of an auto wait where callbacks are %.1f ms late: %ld\n",
           cw__driver_lateness_ns(d) / 1e6, reads);
    cw_test_unpin(old);
    clReleaseCommandQueue(gpu);
    assert_int_equal(reads, 0);
}

static const struct CMUnitTest wait_tests[] = {
    cmocka_unit_test(waits_survive_signal_storm),
    cmocka_unit_test(saxpy_result_after_each_strategy),
    cmocka_unit_test(busy_kernel_result_after_each_strategy),
    cmocka_unit_test(gated_kernel_completed_100ms_later),
    cmocka_unit_test(failed_user_event_returns_error),
    cmocka_unit_test(failure_while_waiting_returns_error),
    cmocka_unit_test(dependent_of_failed_event_returns_error),
    cmocka_unit_test(completed_event_returns_at_once),
    cmocka_unit_test(timeout_then_callback_fires_later),
    cmocka_unit_test(poll_flag_returns_at_once),
    cmocka_unit_test(wait_flushes_unflushed_work),
    cmocka_unit_test(bad_options_are_rejected),
    cmocka_unit_test(rejected_event_handle_returns_invalid_event),
    cmocka_unit_test(foreign_handle_rejected_where_validated),
    cmocka_unit_test(strategy_names_round_trip),
    cmocka_unit_test(version_matches_headers),
    cmocka_unit_test(failure_reported_within_two_check_intervals),
    cmocka_unit_test(short_wait_after_long_one_is_not_late),
    cmocka_unit_test(estimate_recovers_after_one_long_wait),
    cmocka_unit_test(estimate_kept_while_other_queues_come_and_go),
    cmocka_unit_test(estimate_rises_at_once_to_a_longer_kernel),
    cmocka_unit_test(every_strategy_raises_its_estimate_at_once),
    cmocka_unit_test(end_estimate_comes_down_to_the_end),
    cmocka_unit_test(failure_reported_within_the_bound_of_a_long_expected_wait),
    cmocka_unit_test(no_check_wakeup_on_a_command_expected_long),
    cmocka_unit_test(long_auto_waits_try_the_drivers_own_wait),
    cmocka_unit_test(short_parked_auto_waits_try_the_drivers_own_wait),
    cmocka_unit_test(settled_own_waits_answer_as_every_wait_does),
    cmocka_unit_test(own_wait_trials_only_on_short_waits),
    cmocka_unit_test(settled_wait_on_a_done_command_keeps_the_estimate),
    cmocka_unit_test(late_callbacks_take_the_hybrid_path),
    cmocka_unit_test(late_wait_outgrowing_its_estimate_ends_by_its_callback),
    cmocka_unit_test(gpu_device_counts_no_host_cpus),
    cmocka_unit_test(load_is_read_only_where_a_cpu_may_be_spare),
    cmocka_unit_test(late_waits_read_no_load),
    cmocka_unit_test(seen_first_measures_late_callbacks_on_any_device),
    cmocka_unit_test(wait_parks_on_callers_parker),
    cmocka_unit_test(interrupt_descriptor_ends_a_wait),
    cmocka_unit_test(many_waiters_on_one_event),
};

CW_TEST_MAIN(wait_tests, open_host, close_host)
