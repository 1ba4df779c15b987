/* SPDX-License-Identifier: MIT */
/* Layer 6.2, the strategy unit: the table of rows, the plan of one wait and
 * the steps of a polling wait. */
#include "harness.h"

#include "cw/stats.h"
#include "relax.h"
#include "strategy.h"

/* The failed-command check schedule grows to its cap and stays there. */
static void check_schedule_doubles_to_cap(void **state) {
    (void)state;
    cw__check_schedule s = cw__plan_checks(0);
    assert_int_equal(s.first_ns, (uint64_t)CW_CHECK_INTERVAL_US_DEFAULT * 1000u);
    uint64_t seen[8];
    for (int i = 0; i < 8; ++i) {
        seen[i] = s.interval_ns;
        cw__plan_checks_grow(&s, 0);
    }
    assert_int_equal(seen[1], CW_CHECK_INTERVAL_GROWTH * seen[0]);
    assert_int_equal(seen[4], CW_CHECK_INTERVAL_GROWTH * seen[0]);
    assert_int_equal(seen[7], CW_CHECK_INTERVAL_GROWTH * seen[0]);
    /* A failure right after a check is seen at the next: within 2x the interval. */
    assert_true(seen[7] <= 2 * seen[0]);
    assert_int_equal(cw__plan_checks(1000).first_ns, 1000000u);

    /* With the default interval a long wait spaces its checks by the time
     * waited so far (capped): a few checks for a 1 s wait, not 32. */
    cw__check_schedule d = cw__plan_checks(0);
    cw__plan_checks_grow(&d, 400000000u);
    assert_int_equal(d.interval_ns, 400000000u);
    cw__plan_checks_grow(&d, 10 * (uint64_t)CW__CHECK_EXPECTED_MAX_NS);
    assert_int_equal(d.interval_ns, CW__CHECK_EXPECTED_MAX_NS);
    /* An interval the caller chose is kept as it is. */
    cw__check_schedule m = cw__plan_checks(1000);
    cw__plan_checks_grow(&m, 400000000u);
    assert_int_equal(m.interval_ns, CW_CHECK_INTERVAL_GROWTH * 1000000u);
}

/* Every "zero means the default" is resolved by the plan. */
static void plan_resolves_defaults(void **state) {
    (void)state;
    cw__plan p;
    assert_int_equal(cw__plan_make(NULL, &p), CW_OK);
    assert_ptr_equal(p.row, cw__strategy_row_of(CW_STRATEGY_AUTO));
    assert_int_equal(p.deadline_ns, CW_DEADLINE_NONE);
    assert_int_equal(p.checks.first_ns, (uint64_t)CW_CHECK_INTERVAL_US_DEFAULT * 1000u);
    assert_int_equal(p.spin_ns, 0); /* auto: decided after the first look */
    assert_int_equal(p.spin_cap_ns, (uint64_t)CW_AUTO_SPIN_US_CAP * 1000u);
    assert_ptr_equal(p.parker, &p.sleeper.futex.parker);
    assert_true(cw__plan_plain_parker(&p));
    assert_false(p.bare_block);

    cw_wait_options o = {.strategy = CW_STRATEGY_SPIN_PARK, .check_interval_us = 1000};
    assert_int_equal(cw__plan_make(&o, &p), CW_OK);
    assert_int_equal(p.spin_ns, (uint64_t)CW_SPIN_US_DEFAULT * 1000u);
    assert_int_equal(p.checks.first_ns, 1000000u);
    o.spin_us = 7;
    assert_int_equal(cw__plan_make(&o, &p), CW_OK);
    assert_int_equal(p.spin_ns, 7000u);

    cw_futex_parker mine;
    cw_futex_parker_init(&mine);
    cw_wait_options b = {.strategy = CW_STRATEGY_BLOCKING, .parker = &mine.parker};
    assert_int_equal(cw__plan_make(&b, &p), CW_OK);
    assert_true(p.bare_block);
    assert_ptr_equal(p.parker, &mine.parker);
    b.timeout_us = 10;
    assert_int_equal(cw__plan_make(&b, &p), CW_OK);
    assert_false(p.bare_block);
    assert_true(p.deadline_ns != CW_DEADLINE_NONE);
}

static void plan_rejects_bad_options(void **state) {
    (void)state;
    cw__plan p;
    cw_wait_options o = {.strategy = CW_STRATEGY_COUNT};
    assert_int_equal(cw__plan_make(&o, &p), CW_ERR_INVALID_ARGUMENT);
    cw_wait_options t = {.timeout_us = -1};
    assert_int_equal(cw__plan_make(&t, &p), CW_ERR_INVALID_ARGUMENT);
    cw_wait_options r = {.reserved = {1}};
    assert_int_equal(cw__plan_make(&r, &p), CW_ERR_INVALID_ARGUMENT);
    cw_wait_options s = {.spin_us = CW_SPIN_US_MAX + 1u};
    assert_int_equal(cw__plan_make(&s, &p), CW_ERR_INVALID_ARGUMENT);
}

/* The interrupt descriptor: only with its flag, 0 or more; the plan's own
 * parker then looks at it, so the ways that do not park are off for auto;
 * a parker of the caller's cannot look at it (unless the wait only looks). */
static void plan_takes_the_interrupt_descriptor(void **state) {
    (void)state;
    cw__plan p;
    cw_wait_options o = {.flags = CW_WAIT_INTERRUPT_FD, .interrupt_fd = 0};
    assert_int_equal(cw__plan_make(&o, &p), CW_OK);
    assert_int_equal(p.sleeper.fd, 0);
    assert_ptr_equal(p.parker, &p.sleeper.futex.parker);
    assert_false(cw__plan_plain_parker(&p));
    o.interrupt_fd = -1;
    assert_int_equal(cw__plan_make(&o, &p), CW_ERR_INVALID_ARGUMENT);
    cw_wait_options unflagged = {.interrupt_fd = 3};
    assert_int_equal(cw__plan_make(&unflagged, &p), CW_ERR_INVALID_ARGUMENT);
    cw_futex_parker mine;
    cw_futex_parker_init(&mine);
    cw_wait_options theirs = {
        .flags = CW_WAIT_INTERRUPT_FD, .interrupt_fd = 3, .parker = &mine.parker};
    assert_int_equal(cw__plan_make(&theirs, &p), CW_ERR_UNSUPPORTED);
    theirs.flags |= CW_WAIT_POLL;
    assert_int_equal(cw__plan_make(&theirs, &p), CW_OK);
    assert_int_equal(p.sleeper.fd, -1);
}

/*
 * The first check of a wait: with the default interval, no sooner than
 * twice the expected wait (capped), so a steady stream of long commands
 * makes no check; an interval the caller chose is kept; none at all where
 * failed commands fire their callbacks. Each decision is counted.
 */
static void first_check_waits_for_the_expected_wait(void **state) {
    (void)state;
    const uint64_t ms = 1000000u, interval = (uint64_t)CW_CHECK_INTERVAL_US_DEFAULT * 1000u;
    cw__check_schedule def = cw__plan_checks(0), mine = cw__plan_checks(5000);
    cw_stats_auto before, after;
    assert_int_equal(cw_stats_auto_get(&before, sizeof before), CW_OK);
    assert_int_equal(cw__plan_first_check_ns(&def, 0, false), interval);
    assert_int_equal(cw__plan_first_check_ns(&def, interval / 4u, false), interval);
    assert_int_equal(cw__plan_first_check_ns(&def, 100 * ms, false),
                     CW__CHECK_EXPECTED_FACTOR * 100 * ms);
    assert_int_equal(cw__plan_first_check_ns(&def, 1000 * ms, false),
                     CW__CHECK_EXPECTED_FACTOR * 1000 * ms);
    assert_int_equal(cw__plan_first_check_ns(&def, 60000 * ms, false), CW__CHECK_EXPECTED_MAX_NS);
    assert_int_equal(cw__plan_first_check_ns(&mine, 1000 * ms, false), 5 * ms);
    assert_int_equal(cw__plan_first_check_ns(&def, 1000 * ms, true), CW_DEADLINE_NONE);
    assert_int_equal(cw__plan_first_check_ns(&mine, 0, true), CW_DEADLINE_NONE);
    assert_int_equal(cw_stats_auto_get(&after, sizeof after), CW_OK);
    assert_int_equal(after.deferred_checks - before.deferred_checks, 3);
    assert_int_equal(after.unchecked_waits - before.unchecked_waits, 2);
    /* After the deferred first check the schedule goes on as ever. */
    cw__plan_checks_grow(&def, 0);
    assert_int_equal(def.interval_ns, CW_CHECK_INTERVAL_GROWTH * interval);
}

/* Past the expected end the delays grow from `step`, capped at the time
 * waited >> the overshoot shift, but never under `shortest`: a 100 µs
 * wait past its end polls backoff-poll's 1, 2, 4 µs and then the cap
 * (under 10 µs, spun) for as long as the cap is that short, and a late
 * wait, whose shortest is the first delay that is slept, never goes under
 * it. */
static void delays_past_the_end_keep_the_shortest(void **state) {
    (void)state;
    const uint64_t us = 1000u, shortest = CW__MICRODELAY_SPIN_NS + us;
    cw__plan p;
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO};
    assert_int_equal(cw__plan_make(&o, &p), CW_OK);
    p.start_ns = 1000000u;
    p.expected_ns = 100 * us;
    uint64_t past = p.start_ns + 120 * us; /* 120 µs in: a cap of 7.5 µs */

    cw__poll_steps b = cw__poll_steps_of(&p, 0, 4);
    uint64_t now = past, most = 0;
    for (int i = 0; i < 4; ++i) {
        uint64_t d = cw__poll_steps_next(&b, now, CW_DEADLINE_NONE);
        assert_true(b.past_expected);
        most = d > most ? d : most;
        now += d;
    }
    assert_true(most < CW__MICRODELAY_SPIN_NS); /* every one of them spun */

    cw__poll_steps l = cw__poll_steps_of(&p, 0, 4);
    l.step = l.shortest = shortest;
    now = past;
    for (int i = 0; i < 4; ++i) {
        uint64_t d = cw__poll_steps_next(&l, now, CW_DEADLINE_NONE);
        assert_true(l.past_expected);
        assert_int_equal(d, shortest); /* the cap would have been shorter */
        now += d;
    }
    /* Once the cap outgrows the shortest the delays double again. */
    uint64_t later = p.start_ns + 64 * shortest;
    assert_int_equal(cw__poll_steps_next(&l, later, CW_DEADLINE_NONE), 2 * shortest);
}

/* The auto counters: a short size fills only that much, bad input fails. */
static void stats_auto_fills_what_it_is_given(void **state) {
    (void)state;
    cw_stats_auto a;
    memset(&a, 0xab, sizeof a);
    assert_int_equal(cw_stats_auto_get(NULL, sizeof a), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_stats_auto_get(&a, 0), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_stats_auto_get(&a, sizeof(uint64_t)), CW_OK);
    assert_int_equal(a.platforms_probed, 0); /* no OpenCL here: nothing probed */
    assert_int_equal(a.platforms_failed_fire, 0xababababababababull);
    assert_int_equal(cw_stats_auto_get(&a, sizeof a), CW_OK);
    assert_int_equal(a.platforms_failed_fire, 0);
}

/* Follow a polling wait's steps from its start until they reach the
 * expected end (or `n` delays); returns the number of delays, their
 * lengths in d[]. */
static int steps_to_the_end(cw__poll_steps *s, uint64_t d[], int n) {
    uint64_t now = s->start;
    int i = 0;
    for (; i < n; ++i) {
        d[i] = cw__poll_steps_next(s, now, CW_DEADLINE_NONE);
        if (s->past_expected)
            break;
        now += d[i];
    }
    return i;
}

/*
 * Toward a 100 ms expected end, backoff-poll's sleeps start at 50 µs and
 * never outlast the time waited so far, so a command that ends at once is
 * seen within twice its length or 50 µs; auto's late and hybrid waits
 * (cw__poll_steps_hybrid) may sleep an eighth of the expected wait at
 * first, and reach the end in a few sleeps where backoff-poll takes a
 * dozen. With the default interval the hybrid's sleeps may outlast the
 * check interval as the wait grows; with an explicit one they do not.
 */
static void hybrid_sleeps_reach_the_expected_end_in_few_steps(void **state) {
    (void)state;
    const uint64_t ms = 1000000u, expected = 100 * ms;
    cw__plan p;
    cw_wait_options o = {.strategy = CW_STRATEGY_AUTO};
    assert_int_equal(cw__plan_make(&o, &p), CW_OK);
    assert_true(p.checks.by_expected);
    p.start_ns = 1000 * ms;
    p.expected_ns = expected;
    uint64_t d[64];

    cw__poll_steps b = cw__poll_steps_of(&p, 0, 3);
    int nb = steps_to_the_end(&b, d, 64);
    assert_int_equal(d[0], CW__BACKOFF_FLOOR_NS);
    assert_int_equal(d[1], CW__BACKOFF_FLOOR_NS); /* the time waited so far */
    assert_int_equal(d[2], 2 * CW__BACKOFF_FLOOR_NS);

    cw__poll_steps h = cw__poll_steps_of(&p, 0, 4);
    cw__poll_steps_hybrid(&p, &h);
    int nh = steps_to_the_end(&h, d, 64);
    assert_int_equal(d[0], expected >> CW__LATE_LEAST_SHIFT);
    for (int i = 1; i < nh; ++i)
        assert_true(d[i] <= expected); /* never past the end */
    printf("sleeps toward a 100 ms end: backoff-poll %d, auto's late waits %d\n", nb, nh);
    assert_true(nh <= 5);
    assert_true(nb >= 10);

    /* The least cap only ever raises backoff-poll's floor. */
    p.expected_ns = 100000u;
    cw__poll_steps small = cw__poll_steps_of(&p, 0, 4);
    cw__poll_steps_hybrid(&p, &small);
    assert_int_equal(cw__poll_steps_next(&small, p.start_ns, CW_DEADLINE_NONE),
                     CW__BACKOFF_FLOOR_NS);

    /* Spaced by the time waited past the check interval with the default
     * interval only. */
    p.expected_ns = 2000 * ms;
    cw__poll_steps g = cw__poll_steps_of(&p, 0, 4);
    cw__poll_steps_hybrid(&p, &g);
    assert_int_equal(cw__poll_steps_next(&g, p.start_ns + 400 * ms, CW_DEADLINE_NONE), 400 * ms);
    cw_wait_options explicit_interval = {.strategy = CW_STRATEGY_AUTO, .check_interval_us = 16000};
    assert_int_equal(cw__plan_make(&explicit_interval, &p), CW_OK);
    p.start_ns = 1000 * ms;
    p.expected_ns = 2000 * ms;
    cw__poll_steps e = cw__poll_steps_of(&p, 0, 4);
    cw__poll_steps_hybrid(&p, &e);
    assert_int_equal(cw__poll_steps_next(&e, p.start_ns + 400 * ms, CW_DEADLINE_NONE), 16 * ms);
}

static const struct CMUnitTest strategy_tests[] = {
    cmocka_unit_test(first_check_waits_for_the_expected_wait),
    cmocka_unit_test(stats_auto_fills_what_it_is_given),
    cmocka_unit_test(check_schedule_doubles_to_cap),
    cmocka_unit_test(plan_resolves_defaults),
    cmocka_unit_test(plan_rejects_bad_options),
    cmocka_unit_test(plan_takes_the_interrupt_descriptor),
    cmocka_unit_test(hybrid_sleeps_reach_the_expected_end_in_few_steps),
    cmocka_unit_test(delays_past_the_end_keep_the_shortest),
};

CW_TEST_MAIN(strategy_tests, NULL, NULL)
