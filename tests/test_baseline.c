/* SPDX-License-Identifier: MIT */
/* Layer 4.5: the comparison baselines. Still a lock, still a condition. */
#include "harness.h"

#include <stdatomic.h>

#include "baseline.h"

struct counter {
    cw__spinlock lock;
    unsigned long value;
    unsigned long per_thread;
};

static void *increment(void *arg) {
    struct counter *c = arg;
    for (unsigned long i = 0; i < c->per_thread; ++i) {
        cw__baseline_lock_noyield(&c->lock);
        unsigned long v = c->value;
        c->value = v + 1; /* a torn section would lose this update */
        cw__spinlock_unlock(&c->lock);
    }
    return NULL;
}

static void noyield_lock_is_still_a_lock(void **state) {
    (void)state;
    struct counter c = {.lock = CW__SPINLOCK_INITIALIZER, .per_thread = 100000};
    pthread_t t[2];
    for (int i = 0; i < 2; ++i)
        t[i] = cw_test_spawn(increment, &c);
    for (int i = 0; i < 2; ++i)
        cw_test_join(t[i]);
    assert_int_equal(c.value, 2 * c.per_thread);
}

struct shared {
    cw__spinlock lock;
    cw__cond cond;
    int flag;
    atomic_int woken;
};

struct waiter {
    struct shared *s;
    cw_futex_parker fp;
};

/* Takes the lock as the condition's own waiters retake it. */
static void *wait_noyield(void *arg) {
    struct waiter *w = arg;
    w->s->cond.relock(&w->s->lock);
    while (!w->s->flag)
        cw__cond_wait(&w->s->cond, &w->s->lock, &w->fp.parker, CW_DEADLINE_NONE);
    cw__spinlock_unlock(&w->s->lock);
    atomic_fetch_add(&w->s->woken, 1);
    return NULL;
}

/* Woken under the lock, the waiters of a never-yielding condition retake the
 * lock once the notifier lets go of it, and every one returns. */
static void notify_under_lock_wakes_every_noyield_waiter(void **state) {
    (void)state;
    struct shared s = {.lock = CW__SPINLOCK_INITIALIZER, .cond = CW__COND_INITIALIZER};
    cw__baseline_cond_noyield(&s.cond);
    assert_true(s.cond.relock == cw__baseline_lock_noyield);
    pthread_t t[3];
    struct waiter w[3];
    for (int i = 0; i < 3; ++i) {
        w[i].s = &s;
        cw_futex_parker_init(&w[i].fp);
        t[i] = cw_test_spawn(wait_noyield, &w[i]);
    }
    for (;;) {
        cw__baseline_lock_noyield(&s.lock);
        int queued = 0;
        for (cw__cond_waiter *q = s.cond.head; q; q = q->next)
            ++queued;
        if (queued == 3)
            break;
        cw__spinlock_unlock(&s.lock);
        cw_test_sleep_us(200);
    }
    s.flag = 1;
    cw__baseline_notify_all_locked(&s.cond);
    assert_true(cw__spinlock_is_locked(&s.lock)); /* returns holding the lock */
    assert_null(s.cond.head);
    cw__spinlock_unlock(&s.lock);
    for (int i = 0; i < 3; ++i)
        cw_test_join(t[i]);
    assert_int_equal(atomic_load(&s.woken), 3);
}

static const struct CMUnitTest baseline_tests[] = {
    cmocka_unit_test(noyield_lock_is_still_a_lock),
    cmocka_unit_test(notify_under_lock_wakes_every_noyield_waiter),
};

CW_TEST_MAIN(baseline_tests, NULL, NULL)
