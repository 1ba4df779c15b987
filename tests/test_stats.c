/* SPDX-License-Identifier: MIT */
/* Statistics: counts of a scripted sequence of waits (cross-cutting, layer 6). */
#include "harness.h"

#include "clfixture.h"
#include "cw.h"
#include "relax.h"

/* A parker whose first park completes the awaited user event itself: the
 * CL_COMPLETE callback then runs inline, in clSetUserEventStatus on this
 * thread, and deposits the token before the real park. One park and one
 * wake-up, by construction rather than by timing. */
struct self_completing {
    cw_parker parker;
    cw_futex_parker inner;
    cl_event ev;
    int parks;
};

static int sc_park(cw_parker *p, uint64_t deadline) {
    struct self_completing *s = (struct self_completing *)p;
    if (s->parks++ == 0)
        clSetUserEventStatus(s->ev, CL_COMPLETE);
    return cw_park(&s->inner.parker, deadline);
}

static void sc_unpark(cw_parker *p) {
    cw_unpark(&((struct self_completing *)p)->inner.parker);
}

static void scripted_waits_are_counted(void **state) {
    (void)state;
    cw_stats s;
    assert_int_equal(cw_stats_get(NULL), CW_ERR_INVALID_ARGUMENT);
    cw_stats_reset();
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits + s.spins + s.yields + s.parks + s.sleeps + s.polls + s.timeouts +
                         s.latency_count,
                     0);

    /* 1. An event that already completed: one wait, nothing else. */
    cl_event done = user_event();
    assert_int_equal(clSetUserEventStatus(done, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait(done, NULL, NULL), CW_OK);
    /* 2. Blocking (clWaitForEvents) on it: one more wait. */
    cw_wait_options o = {.strategy = CW_STRATEGY_BLOCKING};
    assert_int_equal(cw_wait(done, &o, NULL), CW_OK);
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits, 2);
    assert_int_equal(s.parks + s.timeouts + s.latency_count, 0);

    /* 3. Cooperative timeout, check interval longer than it: one park. The
     * timeouts here are tens of ms: a loaded machine (TSan, two CPU hogs)
     * kept a waiter from its park past a 3 ms deadline, and a wait whose
     * deadline has passed returns without parking. */
    cl_event never = user_event();
    o = (cw_wait_options){
        .strategy = CW_STRATEGY_COOPERATIVE, .timeout_us = 50000, .check_interval_us = 1000000};
    assert_int_equal(cw_wait(never, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits, 3);
    assert_int_equal(s.timeouts, 1);
    assert_int_equal(s.parks, 1);

    /* 4. Spin-park timeout: a spin of 10 µs, exactly CW_SPIN_PARK_YIELDS
     * yields (nothing signals), then one park. */
    o.strategy = CW_STRATEGY_SPIN_PARK;
    o.spin_us = 10;
    o.timeout_us = 50000;
    assert_int_equal(cw_wait(never, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits, 4);
    assert_int_equal(s.timeouts, 2);
    assert_true(s.spins >= 1);
    assert_int_equal(s.yields, CW_SPIN_PARK_YIELDS);
    assert_int_equal(s.parks, 2);
    assert_int_equal(s.latency_count, 0);

    /* 5. Backoff-poll timeout: polls the status, restores the timer slack. */
    uint64_t slack_before = 0, slack_after = 1;
    assert_int_equal(cw__timerslack_get(&slack_before), CW_OK);
    o = (cw_wait_options){.strategy = CW_STRATEGY_BACKOFF_POLL, .timeout_us = 20000};
    assert_int_equal(cw_wait(never, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw__timerslack_get(&slack_after), CW_OK);
    assert_int_equal(slack_after, slack_before);
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits, 5);
    assert_int_equal(s.timeouts, 3);
    assert_true(s.polls >= 2);
    assert_int_equal(s.parks, 2);

    /* 6. A wake-up: one park, woken by the callback, one latency sample. */
    struct self_completing sc = {.ev = user_event()};
    static const cw_parker_ops ops = {sc_park, sc_unpark};
    sc.parker.ops = &ops;
    cw_futex_parker_init(&sc.inner);
    o = (cw_wait_options){.strategy = CW_STRATEGY_COOPERATIVE, .parker = &sc.parker};
    assert_int_equal(cw_wait(sc.ev, &o, NULL), CW_OK);
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits, 6);
    assert_int_equal(s.parks, 3);
    assert_int_equal(s.latency_count, 1);
    uint64_t in_buckets = 0;
    for (unsigned b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
        in_buckets += s.latency_us[b];
    assert_int_equal(in_buckets, 1);

    /* 7. Wait-all that times out: one wait, one timeout. */
    cl_event two[2] = {never, done};
    o = (cw_wait_options){.timeout_us = 50000};
    assert_int_equal(cw_wait_all(two, 2, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits, 7);
    assert_int_equal(s.timeouts, 4);
    assert_true(s.parks >= 4);

    /* Bad input is not a wait. */
    assert_int_equal(cw_wait(NULL, NULL, NULL), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_wait_all(two, 0, NULL, NULL), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits, 7);

    cw_stats_reset();
    assert_int_equal(cw_stats_get(&s), CW_OK);
    assert_int_equal(s.waits + s.parks + s.timeouts + s.latency_count + s.latency_us[0], 0);
    assert_int_equal(clSetUserEventStatus(never, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(never);
    clReleaseEvent(done);
    clReleaseEvent(sc.ev);
}

static const struct CMUnitTest stats_tests[] = {
    cmocka_unit_test(scripted_waits_are_counted),
};

CW_TEST_MAIN(stats_tests, open_host, close_host)
