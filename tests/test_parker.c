/* SPDX-License-Identifier: MIT */
/* Layer 3: the futex parker. */
#include "harness.h"

#include <signal.h>
#include <stdatomic.h>

#include "cw/parker.h"

static void token_before_park_is_not_lost(void **state) {
    (void)state;
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    cw_unpark(&fp.parker);
    assert_int_equal(cw_park(&fp.parker, CW_DEADLINE_NONE), CW_OK);
}

static void tokens_do_not_accumulate(void **state) {
    (void)state;
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    cw_unpark(&fp.parker);
    cw_unpark(&fp.parker);
    assert_int_equal(cw_park(&fp.parker, cw_deadline_after_ns(1000000)), CW_OK);
    assert_int_equal(cw_park(&fp.parker, cw_deadline_after_ns(1000000)), CW_ERR_TIMEOUT);
}

static void park_times_out_at_deadline(void **state) {
    (void)state;
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    uint64_t deadline = cw_deadline_after_ns(20000000);
    assert_int_equal(cw_park(&fp.parker, deadline), CW_ERR_TIMEOUT);
    assert_true(cw_now_ns() >= deadline);
    /* The timed-out park left no stale state: a later token still works. */
    cw_unpark(&fp.parker);
    assert_int_equal(cw_park(&fp.parker, CW_DEADLINE_NONE), CW_OK);
}

struct wake {
    cw_futex_parker fp;
    unsigned delay_us;
};

static void *unpark_later(void *arg) {
    struct wake *w = arg;
    cw_test_sleep_us(w->delay_us);
    cw_unpark(&w->fp.parker);
    return NULL;
}

static void unpark_from_another_thread_wakes_parked(void **state) {
    (void)state;
    struct wake w = {.delay_us = 20000};
    cw_futex_parker_init(&w.fp);
    pthread_t t = cw_test_spawn(unpark_later, &w);
    assert_int_equal(cw_park(&w.fp.parker, CW_DEADLINE_NONE), CW_OK);
    cw_test_join(t);
}

/* Signals interrupt the futex wait with EINTR; park must neither return early
 * nor lose a token that arrives during the storm. */
static void park_absorbs_signals(void **state) {
    (void)state;
    struct cw_test_storm storm;
    cw_test_storm_start(&storm, 300);
    struct wake w = {.delay_us = 30000};
    cw_futex_parker_init(&w.fp);

    uint64_t deadline = cw_deadline_after_ns(20000000);
    assert_int_equal(cw_park(&w.fp.parker, deadline), CW_ERR_TIMEOUT);
    assert_true(cw_now_ns() >= deadline);

    pthread_t t = cw_test_spawn(unpark_later, &w);
    assert_int_equal(cw_park(&w.fp.parker, CW_DEADLINE_NONE), CW_OK);
    cw_test_join(t);
    assert_true(cw_test_storm_stop(&storm) > 0);
}

/* The ops table is the seam: a parker of the test's own drives cw_park. */
struct counting_parker {
    cw_parker parker;
    int parks, unparks;
};

static int counting_park(cw_parker *p, uint64_t deadline) {
    struct counting_parker *c = (struct counting_parker *)p;
    c->parks++;
    if (c->unparks >= c->parks)
        return CW_OK;
    (void)deadline;
    return CW_ERR_TIMEOUT;
}

static void counting_unpark(cw_parker *p) {
    ((struct counting_parker *)p)->unparks++;
}

static void custom_ops_are_called(void **state) {
    (void)state;
    static const cw_parker_ops ops = {counting_park, counting_unpark};
    struct counting_parker c = {.parker = {&ops}};
    assert_int_equal(cw_park(&c.parker, 0), CW_ERR_TIMEOUT);
    cw_unpark(&c.parker);
    cw_unpark(&c.parker);
    assert_int_equal(cw_park(&c.parker, 0), CW_OK);
    assert_int_equal(c.parks, 2);
    assert_int_equal(c.unparks, 2);
}

static const struct CMUnitTest parker_tests[] = {
    cmocka_unit_test(token_before_park_is_not_lost),
    cmocka_unit_test(tokens_do_not_accumulate),
    cmocka_unit_test(park_times_out_at_deadline),
    cmocka_unit_test(unpark_from_another_thread_wakes_parked),
    cmocka_unit_test(park_absorbs_signals),
    cmocka_unit_test(custom_ops_are_called),
};

CW_TEST_MAIN(parker_tests, NULL, NULL)
