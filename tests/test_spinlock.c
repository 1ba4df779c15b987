/* SPDX-License-Identifier: MIT */
/* Layer 2: yielding spin lock. Counts torn critical sections, times nothing. */
#include "harness.h"

#include <stdatomic.h>

#include "spinlock.h"

struct counter {
    cw__spinlock lock;
    unsigned long value;
    unsigned long per_thread;
    int holder_mode; /* 0 plain, 1 sometimes yields or sleeps while holding */
};

static void *increment(void *arg) {
    struct counter *c = arg;
    for (unsigned long i = 0; i < c->per_thread; ++i) {
        cw__spinlock_lock(&c->lock);
        unsigned long v = c->value;
        if (c->holder_mode && i % 97 == 0) {
            /* Give the CPU away inside the critical section: a contender on
             * this CPU must yield back or the count would stall. */
            if (i % 2)
                sched_yield();
            else
                cw_test_sleep_us(20);
        }
        c->value = v + 1; /* a torn section would lose this update */
        cw__spinlock_unlock(&c->lock);
    }
    return NULL;
}

static void run_counter(struct counter *c, int threads) {
    pthread_t t[8];
    for (int i = 0; i < threads; ++i)
        t[i] = cw_test_spawn(increment, c);
    for (int i = 0; i < threads; ++i)
        cw_test_join(t[i]);
    assert_int_equal(c->value, c->per_thread * (unsigned long)threads);
}

static void trylock_fails_fast_when_held(void **state) {
    (void)state;
    cw__spinlock l = CW__SPINLOCK_INITIALIZER;
    assert_false(cw__spinlock_is_locked(&l));
    assert_true(cw__spinlock_trylock(&l));
    assert_true(cw__spinlock_is_locked(&l));
    assert_false(cw__spinlock_trylock(&l));
    cw__spinlock_unlock(&l);
    assert_true(cw__spinlock_trylock(&l));
    cw__spinlock_unlock(&l);
}

static void counter_exact_under_contention(void **state) {
    (void)state;
    struct counter c = {.lock = CW__SPINLOCK_INITIALIZER, .per_thread = 200000};
    run_counter(&c, 4);
}

static void counter_exact_when_holder_yields_or_sleeps(void **state) {
    (void)state;
    struct counter c = {.lock = CW__SPINLOCK_INITIALIZER, .per_thread = 20000, .holder_mode = 1};
    run_counter(&c, 4);
}

static void counter_exact_on_one_cpu_with_sleeping_holder(void **state) {
    (void)state;
    cpu_set_t old = cw_test_pin_one_cpu();
    struct counter c = {.lock = CW__SPINLOCK_INITIALIZER, .per_thread = 20000, .holder_mode = 1};
    run_counter(&c, 3);
    cw_test_unpin(old);
}

/* Past the spin budget a contender takes the lock's other step: lock_then's
 * `spent` runs while the holder keeps the lock, and the contender gets the
 * lock once it is released. */
static atomic_int spent_calls;

static void count_spent(void) {
    atomic_fetch_add(&spent_calls, 1);
    sched_yield();
}

static void *lock_counting(void *arg) {
    cw__spinlock *l = arg;
    cw__spinlock_lock_then(l, count_spent);
    cw__spinlock_unlock(l);
    return NULL;
}

static void lock_then_runs_its_step_once_the_budget_is_spent(void **state) {
    (void)state;
    cw__spinlock l = CW__SPINLOCK_INITIALIZER;
    cw__spinlock_lock(&l);
    atomic_store(&spent_calls, 0);
    pthread_t t = cw_test_spawn(lock_counting, &l);
    while (atomic_load(&spent_calls) < 3)
        cw_test_sleep_us(100);
    cw__spinlock_unlock(&l);
    cw_test_join(t);
    assert_false(cw__spinlock_is_locked(&l));
}

static const struct CMUnitTest spinlock_tests[] = {
    cmocka_unit_test(trylock_fails_fast_when_held),
    cmocka_unit_test(counter_exact_under_contention),
    cmocka_unit_test(counter_exact_when_holder_yields_or_sleeps),
    cmocka_unit_test(counter_exact_on_one_cpu_with_sleeping_holder),
    cmocka_unit_test(lock_then_runs_its_step_once_the_budget_is_spent),
};

CW_TEST_MAIN(spinlock_tests, NULL, NULL)
