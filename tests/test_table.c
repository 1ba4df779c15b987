/* SPDX-License-Identifier: MIT */
/* Layer 6.1, the event table: one callback per event, its subscribers, sweep and forget. */
#include "harness.h"

#include <stdlib.h>

#include "table.h"
#include "clfixture.h"
#include "policyfix.h"
#include "clshim.h"
#include "cw.h"
#include "driver.h"

static void callback_runs_inline_on_completed_event(void **state) {
    (void)state;
    cl_int err;
    cl_event ev = clCreateUserEvent(host.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    cw__completion *c;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__table_join(ev, c, CW__JOIN_SWEEP, &err), CW_OK);
    /* Signalled before the subscription returned, on this very thread. */
    assert_true(cw__completion_is_signalled(c));
    assert_int_equal(cw__completion_status(c), CL_COMPLETE);
    assert_true(cw__table_leave(ev, c, false));
    /* The record stays until a status read sees the event finished, so a
     * later wait joins it instead of registering again. */
    assert_int_equal(cw__table_records(), 1);
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__table_join(ev, c, CW__JOIN_SWEEP, &err), CW_OK);
    assert_true(cw__completion_is_signalled(c));
    assert_true(cw__table_leave(ev, c, false));
    cw__table_forget(ev);
    assert_int_equal(cw__table_records(), 0);
    clReleaseEvent(ev);
}

/* Abandon a subscription; the driver's callback then runs (in the thread
 * completing the user event) while the slot serves another owner. */
static void abandoned_subscription_then_callback_fires(void **state) {
    (void)state;
    cl_int err;
    cl_event ev = clCreateUserEvent(host.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    cw__completion *c;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__table_join(ev, c, CW__JOIN_SWEEP, &err), CW_OK);
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    assert_int_equal(cw__completion_wait(c, &fp.parker, cw_deadline_after_ns(2000000)),
                     CW_ERR_TIMEOUT);
    assert_false(cw__table_leave(ev, c, false));
    assert_int_equal(cw__table_records(), 1);
    /* Someone else takes the slot meanwhile: the late callback must not signal it. */
    cw__completion *d;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &d), CW_OK);
    struct later u = {.ev = ev, .delay_us = 5000, .status = CL_COMPLETE};
    pthread_t t = cw_test_spawn(set_later, &u);
    cw_test_join(t);
    assert_false(cw__completion_is_signalled(d));
    assert_false(cw__completion_release(d, NULL));
    /* Nobody waits any more: a sweep reads the status and drops the record. */
    assert_int_equal(cw__table_records(), 1);
    assert_int_equal(cw__table_sweep(), 0);
    clReleaseEvent(ev);
}

/* A subscription of its own (CW_WAIT_OWN_CALLBACK) keeps no record; once
 * abandoned, its late callback must not signal the slot's next owner. */
static void abandoned_own_subscription_then_callback_fires(void **state) {
    (void)state;
    cl_event ev = user_event();
    unsigned long before = atomic_load(&clshim_callbacks_registered);
    cw__completion *c;
    cl_int err;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__table_join(ev, c, CW__JOIN_OWN | CW__JOIN_SWEEP, &err), CW_OK);
    assert_int_equal(atomic_load(&clshim_callbacks_registered) - before, 1);
    assert_int_equal(cw__table_records(), 0);
    assert_false(cw__table_leave(ev, c, false));
    cw__completion *d;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &d), CW_OK);
    assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    assert_false(cw__completion_is_signalled(d));
    assert_false(cw__completion_release(d, NULL));
    /* On a finished event the callback runs inline, on this thread. */
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__table_join(ev, c, CW__JOIN_OWN | CW__JOIN_SWEEP, &err), CW_OK);
    assert_true(cw__completion_is_signalled(c));
    assert_true(cw__table_leave(ev, c, false));
    assert_int_equal(cw__table_records(), 0);
    clReleaseEvent(ev);
}

/*
 * OpenCL cannot unregister a callback: every registration stays in the
 * driver until the event completes. A wait that times out again and again
 * on one event, with any callback strategy, must register only once.
 */
static void timed_out_waits_register_one_callback(void **state) {
    (void)state;
    enum { WAITS = 20000 };
    static const cw_strategy callback_strategies[] = {
        CW_STRATEGY_DEFAULT, CW_STRATEGY_BLOCKING,           CW_STRATEGY_COOPERATIVE,
        CW_STRATEGY_PTHREAD, CW_STRATEGY_SPIN_PARK,          CW_STRATEGY_COOPERATIVE_WAKE_LOCKED,
        CW_STRATEGY_AUTO,    CW_STRATEGY_COOPERATIVE_NOYIELD};
    const size_t nstrategies = sizeof callback_strategies / sizeof callback_strategies[0];
    cl_event ev = user_event();
    unsigned long before = atomic_load(&clshim_callbacks_registered);
    for (unsigned i = 0; i < WAITS; ++i) {
        /* CW_WAIT_OWN_CALLBACK changes nothing for a wait with a timeout. */
        cw_wait_options o = {.strategy = callback_strategies[i % nstrategies],
                             .flags = i % 2 ? CW_WAIT_OWN_CALLBACK : 0,
                             .timeout_us = 1};
        assert_int_equal(cw_wait(ev, &o, NULL), CW_ERR_TIMEOUT);
    }
    unsigned long registered = atomic_load(&clshim_callbacks_registered) - before;
    printf("%u timed-out waits on one event: %lu callback registration(s), %zu record(s)\n", WAITS,
           registered, cw__table_records());
    assert_int_equal(registered, 1);
    assert_int_equal(cw__table_records(), 1);
    assert_int_equal(wait_completions(), 0);
    /* The event completes: its one callback runs, and the record goes. */
    assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait(ev, NULL, NULL), CW_OK);
    assert_int_equal(cw__table_records(), 0);
    assert_int_equal(atomic_load(&clshim_callbacks_registered) - before, 1);
    clReleaseEvent(ev);
}

struct own_wait {
    cl_event ev;
    cw_strategy strategy;
    int rc;
};

static void *own_wait(void *arg) {
    struct own_wait *w = arg;
    cw_wait_options o = {.strategy = w->strategy, .flags = CW_WAIT_OWN_CALLBACK};
    w->rc = cw_wait(w->ev, &o, NULL);
    return NULL;
}

/*
 * A wait with CW_WAIT_OWN_CALLBACK and no timeout registers a callback of its
 * own when the event has no record: cw keeps no record and no reference on
 * the event meanwhile. When the event has a record (a wait timed out on it
 * before), the wait joins it and registers nothing.
 */
static void own_callback_wait_keeps_nothing_or_joins(void **state) {
    (void)state;
    static const cw_strategy strategies[] = {CW_STRATEGY_COOPERATIVE, CW_STRATEGY_PTHREAD,
                                             CW_STRATEGY_SPIN_PARK, CW_STRATEGY_AUTO};
    for (unsigned k = 0; k < sizeof strategies / sizeof strategies[0]; ++k) {
        struct own_wait w = {.ev = user_event(), .strategy = strategies[k], .rc = -1};
        /* Auto waits with its callback only on a timely platform: where the
         * probe (the first callback wait's) found callbacks late, as a
         * loaded machine can make it, it polls and keeps no record. */
        if (strategies[k] == CW_STRATEGY_AUTO && drv_late(cw__driver_of(w.ev), 0)) {
            printf("auto: skipped, callbacks measured %.0f us late\n",
                   cw__driver_lateness_ns(cw__driver_of(w.ev)) / 1e3);
            clReleaseEvent(w.ev);
            continue;
        }
        unsigned long before = atomic_load(&clshim_callbacks_registered);
        pthread_t t = cw_test_spawn(own_wait, &w);
        for (int i = 0; i < 5000 && atomic_load(&clshim_callbacks_registered) - before == 0; ++i)
            cw_test_sleep_us(1000);
        assert_int_equal(atomic_load(&clshim_callbacks_registered) - before, 1);
        assert_int_equal(cw__table_records(), 0);
        cl_uint refs = 0;
        assert_int_equal(clGetEventInfo(w.ev, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL),
                         CL_SUCCESS);
        assert_int_equal(refs, 1);
        assert_int_equal(clSetUserEventStatus(w.ev, CL_COMPLETE), CL_SUCCESS);
        cw_test_join(t);
        assert_int_equal(w.rc, CW_OK);
        assert_int_equal(atomic_load(&clshim_callbacks_registered) - before, 1);
        assert_int_equal(cw__table_records(), 0);
        assert_int_equal(wait_completions(), 0);
        clReleaseEvent(w.ev);

        /* A record exists: joined, no second registration. */
        w = (struct own_wait){.ev = user_event(), .strategy = strategies[k], .rc = -1};
        before = atomic_load(&clshim_callbacks_registered);
        cw_wait_options timed = {.strategy = strategies[k], .timeout_us = 1};
        assert_int_equal(cw_wait(w.ev, &timed, NULL), CW_ERR_TIMEOUT);
        assert_int_equal(cw__table_records(), 1);
        cw_stats st;
        assert_int_equal(cw_stats_get(&st), CW_OK);
        uint64_t parks = st.parks;
        t = cw_test_spawn(own_wait, &w);
        /* Parked: past its subscription. */
        for (int i = 0; i < 5000 && st.parks == parks; ++i) {
            cw_test_sleep_us(1000);
            assert_int_equal(cw_stats_get(&st), CW_OK);
        }
        assert_true(st.parks > parks);
        assert_int_equal(clSetUserEventStatus(w.ev, CL_COMPLETE), CL_SUCCESS);
        cw_test_join(t);
        assert_int_equal(w.rc, CW_OK);
        assert_int_equal(atomic_load(&clshim_callbacks_registered) - before, 1);
        assert_int_equal(cw__table_records(), 0);
        clReleaseEvent(w.ev);
    }
}

struct drain_order {
    cl_event *events;
    unsigned *order;
    unsigned n;
};

static void *complete_in_order(void *arg) {
    struct drain_order *d = arg;
    for (unsigned i = 0; i < d->n; ++i) {
        cw_test_sleep_us(100);
        clSetUserEventStatus(d->events[d->order[i]], i % 10 == 9 ? -5 : CL_COMPLETE);
    }
    return NULL;
}

/* A wait-any loop over a shrinking set of slowly finishing events registers
 * at most one callback per event, not one per event per round. */
static void wait_any_drain_registers_once_per_event(void **state) {
    (void)state;
    enum { N = 1000 };
    static cl_event events[N], left[N];
    static unsigned order[N];
    for (unsigned i = 0; i < N; ++i)
        left[i] = events[i] = user_event();
    unsigned seed = 7;
    for (unsigned i = 0; i < N; ++i)
        order[i] = i;
    for (unsigned i = N; i > 1; --i) {
        unsigned j = (unsigned)rand_r(&seed) % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    unsigned long before = atomic_load(&clshim_callbacks_registered);
    struct drain_order d = {events, order, N};
    pthread_t t = cw_test_spawn(complete_in_order, &d);
    size_t n = N, rounds = 0, failed = 0;
    cw_wait_options o = {.timeout_us = 2000};
    while (n > 0) {
        size_t i = n;
        cl_int st = 1;
        int rc = cw_wait_any(left, n, &o, &i, &st);
        ++rounds;
        if (rc == CW_ERR_TIMEOUT)
            continue;
        assert_true(rc == CW_OK || rc == CW_ERR_COMMAND_FAILED);
        assert_true(i < n);
        failed += rc == CW_ERR_COMMAND_FAILED;
        left[i] = left[--n];
    }
    cw_test_join(t);
    unsigned long registered = atomic_load(&clshim_callbacks_registered) - before;
    printf("wait-any drain of %d events in %zu rounds: %lu callback registrations\n", N, rounds,
           registered);
    assert_true(registered <= N);
    assert_int_equal(failed, N / 10);
    assert_int_equal(cw__table_sweep(), 0);
    for (unsigned i = 0; i < N; ++i)
        clReleaseEvent(events[i]);
}

/*
 * What cw keeps for an event (one record: a callback registration, a pool
 * slot, a reference) goes when the event completes (its callback), when it
 * fails (no callback on PoCL 3.1 or rusticl: the next status read, or a sweep
 * of records nobody waits on), or when the user forgets it. LeakSanitizer
 * checks the rest in the sanitizer suites.
 */
static void records_go_on_complete_fail_and_forget(void **state) {
    (void)state;
    cw_wait_options o = {.timeout_us = 1};
    cl_event done = user_event(), failed = user_event(), never = user_event();
    assert_int_equal(cw_wait(done, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw_wait(failed, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw_wait(never, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw__table_records(), 3);
    assert_int_equal(clSetUserEventStatus(done, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait(done, NULL, NULL), CW_OK);
    assert_int_equal(cw__table_records(), 2); /* the wait saw it complete */
    assert_int_equal(clSetUserEventStatus(failed, -5), CL_SUCCESS);
    assert_int_equal(cw__table_records(), 2); /* no callback for a failure */
    cl_int st = 0;
    assert_int_equal(cw_wait(failed, NULL, &st), CW_ERR_COMMAND_FAILED);
    assert_int_equal(st, -5);
    assert_int_equal(cw__table_records(), 1); /* the wait saw the failure */
    cw_event_forget(never);
    cw_event_forget(NULL);
    assert_int_equal(cw__table_records(), 0);
    clReleaseEvent(done);
    clReleaseEvent(failed);
    clReleaseEvent(never); /* never completes; cw holds nothing of it */

    /* Failures nobody waits for any more are found by the sweeps that
     * new subscriptions trigger as the table grows. */
    enum { N = 300 };
    static cl_event evs[N];
    for (unsigned i = 0; i < N; ++i) {
        evs[i] = user_event();
        assert_int_equal(cw_wait(evs[i], &o, NULL), CW_ERR_TIMEOUT);
    }
    for (unsigned i = 0; i < N; ++i)
        assert_int_equal(clSetUserEventStatus(evs[i], -5), CL_SUCCESS);
    size_t most = 0;
    cl_event extra[N];
    for (unsigned i = 0; i < N; ++i) {
        extra[i] = user_event();
        assert_int_equal(cw_wait(extra[i], &o, NULL), CW_ERR_TIMEOUT);
        size_t now = cw__table_records();
        most = now > most ? now : most;
    }
    size_t left = cw__table_records();
    printf("%d failed records, then %d more waits: at most %zu records, %zu left\n", N, N, most,
           left);
    assert_true(left <= N); /* the failed ones were swept */
    assert_true(most < 2 * N);
    for (unsigned i = 0; i < N; ++i) {
        assert_int_equal(clSetUserEventStatus(extra[i], CL_COMPLETE), CL_SUCCESS);
        clReleaseEvent(evs[i]);
        clReleaseEvent(extra[i]);
    }
    assert_int_equal(cw__table_sweep(), 0);
}

/* The first look forgets the record of a finished event; the look after a
 * signal swaps the completion for a fresh one while the event runs. */
static void looks_forget_finished_and_rejoin_unfinished(void **state) {
    (void)state;
    cl_event ev = user_event();
    cw__completion *c;
    cl_int st = 0, err = 0;
    assert_int_equal(cw__table_look(ev, true, &st), CW_OK);
    assert_int_equal(st, CL_SUBMITTED);
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__table_join(ev, c, CW__JOIN_SWEEP, &err), CW_OK);
    assert_int_equal(cw__table_records(), 1);
    /* A signal without a verdict (as when the record is forgotten while
     * the command runs): the recheck leaves and joins anew. */
    cw__table_forget(ev);
    assert_true(cw__completion_is_signalled(c));
    assert_int_equal(cw__table_recheck(ev, &c, &st), CW_OK);
    assert_int_equal(st, CL_SUBMITTED);
    assert_non_null(c);
    assert_false(cw__completion_is_signalled(c));
    assert_int_equal(cw__table_records(), 1);
    assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    assert_true(cw__completion_is_signalled(c));
    assert_int_equal(cw__table_recheck(ev, &c, &st), CW_OK);
    assert_int_equal(st, CL_COMPLETE);
    assert_true(cw__table_leave(ev, c, false));
    assert_int_equal(cw__table_records(), 1); /* nobody forgot it yet */
    assert_int_equal(cw__table_look(ev, true, &st), CW_OK);
    assert_int_equal(st, CL_COMPLETE);
    assert_int_equal(cw__table_records(), 0);
    assert_int_equal(wait_completions(), 0);
    clReleaseEvent(ev);
}

static const struct CMUnitTest table_tests[] = {
    cmocka_unit_test(looks_forget_finished_and_rejoin_unfinished),
    cmocka_unit_test(callback_runs_inline_on_completed_event),
    cmocka_unit_test(abandoned_subscription_then_callback_fires),
    cmocka_unit_test(abandoned_own_subscription_then_callback_fires),
    cmocka_unit_test(timed_out_waits_register_one_callback),
    cmocka_unit_test(own_callback_wait_keeps_nothing_or_joins),
    cmocka_unit_test(wait_any_drain_registers_once_per_event),
    cmocka_unit_test(records_go_on_complete_fail_and_forget),
};

CW_TEST_MAIN(table_tests, open_host, close_host)
