/* SPDX-License-Identifier: MIT */
/* Layer 1: relax and delay. */
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>

#include "relax.h"

static void backoff_budget_is_bounded(void **state) {
    (void)state;
    cw__backoff b = CW__BACKOFF_INITIALIZER;
    unsigned rounds = 0;
    while (cw__backoff_spin(&b))
        ++rounds;
    assert_int_equal(rounds, CW__BACKOFF_ROUNDS);
    /* Once spent it stays spent: the caller must yield or sleep. */
    assert_false(cw__backoff_spin(&b));
}

static void microdelay_short_spins_at_least_the_delay(void **state) {
    (void)state;
    for (uint64_t ns = 100; ns <= CW__MICRODELAY_SPIN_NS; ns *= 10) {
        uint64_t t0 = cw_now_ns();
        cw__microdelay(ns);
        assert_true(cw_now_ns() - t0 >= ns);
    }
}

/* A sleep interrupted by signals every 0.5 ms must still end at its deadline:
 * restarting with the full relative time would never finish under the storm,
 * and returning at the first EINTR would end early. */
static void microdelay_long_sleeps_through_eintr(void **state) {
    (void)state;
    struct cw_test_storm storm;
    cw_test_storm_start(&storm, 500);
    const uint64_t delay = 50 * 1000000u;
    uint64_t cpu0 = cw_test_thread_cpu_ns(), t0 = cw_now_ns();
    cw__microdelay(delay);
    uint64_t wall = cw_now_ns() - t0, cpu = cw_test_thread_cpu_ns() - cpu0;
    assert_true(cw_test_storm_stop(&storm) >= 5);
    assert_true(wall >= delay);
    assert_true(wall < 4 * delay); /* generous: only an unbounded restart fails it */
    assert_true(cpu < wall / 2);   /* it slept rather than spun */
}

static void timerslack_set_and_restore(void **state) {
    (void)state;
    uint64_t before, old, now;
    assert_int_equal(cw__timerslack_get(&before), CW_OK);
    assert_int_equal(cw__timerslack_set(1, &old), CW_OK);
    assert_int_equal(old, before);
    assert_int_equal(cw__timerslack_get(&now), CW_OK);
    assert_int_equal(now, 1);
    assert_int_equal(cw__timerslack_set(before, NULL), CW_OK);
    assert_int_equal(cw__timerslack_get(&now), CW_OK);
    assert_int_equal(now, before);
    assert_int_equal(cw__timerslack_get(NULL), CW_ERR_INVALID_ARGUMENT);
}

static const struct CMUnitTest relax_tests[] = {
    cmocka_unit_test(backoff_budget_is_bounded),
    cmocka_unit_test(microdelay_short_spins_at_least_the_delay),
    cmocka_unit_test(microdelay_long_sleeps_through_eintr),
    cmocka_unit_test(timerslack_set_and_restore),
};

CW_TEST_MAIN(relax_tests, NULL, NULL)
