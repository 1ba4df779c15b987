/* SPDX-License-Identifier: MIT */
/* Layer 4: condition on the yielding spin lock. Both sides must finish. */
#include "harness.h"

#include <stdatomic.h>

#include "cond.h"

struct shared {
    cw__spinlock lock;
    cw__cond cond;
    int flag;           /* the predicate, under lock */
    int waiters;        /* queued waiters seen by the test, under lock */
    atomic_int woken;   /* waiters that returned */
    atomic_int errors;  /* waits that returned anything but 0 (asserted on the main thread) */
    unsigned hold_us;   /* how long a foreign holder keeps the lock */
    bool notify_locked; /* wake while holding instead of after release */
};

static void init_shared(struct shared *s) {
    memset(s, 0, sizeof *s);
    cw__spinlock_init(&s->lock);
    cw__cond_init(&s->cond);
}

static void *wait_for_flag(void *arg) {
    struct shared *s = arg;
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    cw__spinlock_lock(&s->lock);
    s->waiters++;
    while (!s->flag)
        if (cw__cond_wait(&s->cond, &s->lock, &fp.parker, CW_DEADLINE_NONE) != CW_OK)
            atomic_fetch_add(&s->errors, 1);
    cw__spinlock_unlock(&s->lock);
    atomic_fetch_add(&s->woken, 1);
    return NULL;
}

static void wait_until_queued(struct shared *s, int n) {
    for (;;) {
        cw__spinlock_lock(&s->lock);
        bool ready = s->waiters >= n;
        int queued = 0;
        for (cw__cond_waiter *w = s->cond.head; w; w = w->next)
            ++queued;
        cw__spinlock_unlock(&s->lock);
        if (ready && queued == n)
            return;
        cw_test_sleep_us(200);
    }
}

static void notify_before_wait_is_not_lost(void **state) {
    (void)state;
    struct shared s;
    init_shared(&s);
    /* The notifier runs to completion before the waiter exists. */
    cw__spinlock_lock(&s.lock);
    s.flag = 1;
    cw__cond_notify_all_unlock(&s.cond, &s.lock);
    pthread_t t = cw_test_spawn(wait_for_flag, &s);
    cw_test_join(t);
    assert_int_equal(atomic_load(&s.woken), 1);
}

static void notify_all_wakes_every_waiter(void **state) {
    (void)state;
    struct shared s;
    init_shared(&s);
    pthread_t t[4];
    for (int i = 0; i < 4; ++i)
        t[i] = cw_test_spawn(wait_for_flag, &s);
    wait_until_queued(&s, 4);
    cw__spinlock_lock(&s.lock);
    s.flag = 1;
    cw__cond_notify_all_unlock(&s.cond, &s.lock);
    for (int i = 0; i < 4; ++i)
        cw_test_join(t[i]);
    assert_int_equal(atomic_load(&s.woken), 4);
    assert_int_equal(atomic_load(&s.errors), 0);
    assert_null(s.cond.head);
}

static void timed_wait_times_out(void **state) {
    (void)state;
    struct shared s;
    init_shared(&s);
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    uint64_t deadline = cw_deadline_after_ns(20000000);
    cw__spinlock_lock(&s.lock);
    assert_int_equal(cw__cond_wait(&s.cond, &s.lock, &fp.parker, deadline), CW_ERR_TIMEOUT);
    assert_true(cw__spinlock_is_locked(&s.lock)); /* returns holding the lock */
    assert_null(s.cond.head);                     /* and dequeued itself */
    cw__spinlock_unlock(&s.lock);
    assert_true(cw_now_ns() >= deadline);
}

/* The seed's scenario: a foreign thread notifies while holding the lock and
 * keeps holding it, asleep. The woken waiter contends for that lock. On one
 * CPU the waiter preempts the holder: only the yield lets the holder run. */
static void *notify_then_hold(void *arg) {
    struct shared *s = arg;
    cw__spinlock_lock(&s->lock);
    s->flag = 1;
    cw__cond_wake(cw__cond_take_all(&s->cond)); /* woken under the lock */
    cw_test_sleep_us(s->hold_us);               /* holder sleeps with the lock held */
    for (int i = 0; i < 100; ++i)
        sched_yield(); /* and yields with it held */
    cw__spinlock_unlock(&s->lock);
    return NULL;
}

static void foreign_holder_sleeps_after_notify(void **state) {
    (void)state;
    cpu_set_t old = cw_test_pin_one_cpu();
    for (int round = 0; round < 20; ++round) {
        struct shared s;
        init_shared(&s);
        s.hold_us = 2000;
        pthread_t w = cw_test_spawn(wait_for_flag, &s);
        wait_until_queued(&s, 1);
        pthread_t n = cw_test_spawn(notify_then_hold, &s);
        cw_test_join(n);
        cw_test_join(w);
        assert_int_equal(atomic_load(&s.woken), 1);
    }
    cw_test_unpin(old);
}

static void *hold_while_yielding(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < 2000; ++i) {
        cw__spinlock_lock(&s->lock);
        sched_yield();
        cw__spinlock_unlock(&s->lock);
    }
    return NULL;
}

static void *notify_later(void *arg) {
    struct shared *s = arg;
    cw_test_sleep_us(5000);
    cw__spinlock_lock(&s->lock);
    s->flag = 1;
    cw__cond_notify_all_unlock(&s->cond, &s->lock);
    return NULL;
}

/* The waiter contends for the lock (to wait, and to leave) while another
 * thread keeps taking it and yielding inside: all three finish. */
static void waiter_contends_with_busy_holder(void **state) {
    (void)state;
    cpu_set_t old = cw_test_pin_one_cpu();
    struct shared s;
    init_shared(&s);
    pthread_t h = cw_test_spawn(hold_while_yielding, &s);
    pthread_t w = cw_test_spawn(wait_for_flag, &s);
    pthread_t n = cw_test_spawn(notify_later, &s);
    cw_test_join(n);
    cw_test_join(w);
    cw_test_join(h);
    assert_int_equal(atomic_load(&s.woken), 1);
    cw_test_unpin(old);
}

/* Notifications racing with timeouts: every notification that dequeued a
 * waiter must be seen by that waiter as a wake-up (0), never as a timeout. */
struct race {
    cw__spinlock lock;
    cw__cond cond;
    atomic_bool stop;
    unsigned long delivered; /* notifications that dequeued a waiter, under lock */
    unsigned long received;  /* waits that returned 0, by the waiter */
    unsigned long timeouts;
};

static void *race_notifier(void *arg) {
    struct race *r = arg;
    while (!atomic_load(&r->stop)) {
        cw__spinlock_lock(&r->lock);
        if (r->cond.head) {
            r->delivered++; /* one waiter thread: at most one dequeued */
            cw__cond_notify_all_unlock(&r->cond, &r->lock);
        } else {
            cw__spinlock_unlock(&r->lock);
        }
        for (int i = 0; i < 50; ++i)
            sched_yield();
    }
    return NULL;
}

static void notify_racing_timeout_is_never_lost(void **state) {
    (void)state;
    struct race r = {.lock = CW__SPINLOCK_INITIALIZER, .cond = CW__COND_INITIALIZER};
    pthread_t n = cw_test_spawn(race_notifier, &r);
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    for (int i = 0; i < 20000; ++i) {
        cw__spinlock_lock(&r.lock);
        int rc =
            cw__cond_wait(&r.cond, &r.lock, &fp.parker, cw_deadline_after_ns(1000 + i % 20000));
        cw__spinlock_unlock(&r.lock);
        if (rc == CW_OK)
            r.received++;
        else
            r.timeouts++;
    }
    atomic_store(&r.stop, true);
    cw_test_join(n);
    assert_int_equal(r.received, r.delivered);
    print_message("%lu notified, %lu timed out\n", r.received, r.timeouts);
    /* The parker holds no stale token afterwards. */
    assert_int_equal(cw_park(&fp.parker, cw_deadline_after_ns(1000000)), CW_ERR_TIMEOUT);
}

/* A parker whose first park times out exactly as the token lands: it waits
 * for both the deadline and the unpark, then reports the timeout without
 * taking the token. This is the race a real futex wait hits rarely; here it
 * happens every time. */
struct racy {
    cw_parker parker;
    cw_futex_parker inner;
    atomic_int unparks;
    atomic_int parks;
};

static int racy_park(cw_parker *p, uint64_t deadline) {
    struct racy *r = (struct racy *)p;
    if (atomic_fetch_add(&r->parks, 1) == 0) {
        while (atomic_load(&r->unparks) == 0 || cw_now_ns() < deadline)
            cw_test_sleep_us(100);
        return CW_ERR_TIMEOUT;
    }
    return cw_park(&r->inner.parker, deadline);
}

static void racy_unpark(cw_parker *p) {
    struct racy *r = (struct racy *)p;
    atomic_fetch_add(&r->unparks, 1);
    cw_unpark(&r->inner.parker);
}

struct racy_wait {
    struct shared *s;
    struct racy *parker;
    atomic_int rc;
};

static void *wait_racy(void *arg) {
    struct racy_wait *w = arg;
    cw__spinlock_lock(&w->s->lock);
    w->s->waiters++;
    atomic_store(&w->rc, cw__cond_wait(&w->s->cond, &w->s->lock, &w->parker->parker,
                                       cw_deadline_after_ns(2000000)));
    cw__spinlock_unlock(&w->s->lock);
    return NULL;
}

static void notification_wins_over_simultaneous_timeout(void **state) {
    (void)state;
    static const cw_parker_ops ops = {racy_park, racy_unpark};
    for (int variant = 0; variant < 2; ++variant) {
        struct shared s;
        init_shared(&s);
        struct racy r = {.parker = {&ops}};
        cw_futex_parker_init(&r.inner);
        struct racy_wait w = {.s = &s, .parker = &r, .rc = 99};
        pthread_t t = cw_test_spawn(wait_racy, &w);
        wait_until_queued(&s, 1);
        cw__spinlock_lock(&s.lock);
        if (variant == 0) {
            cw__cond_notify_all_unlock(&s.cond, &s.lock);
        } else {
            cw__cond_wake(cw__cond_take_all(&s.cond)); /* under the lock */
            cw__spinlock_unlock(&s.lock);
        }
        cw_test_join(t);
        assert_int_equal(atomic_load(&w.rc), CW_OK); /* notified, not timed out */
        assert_int_equal(atomic_load(&r.parks), 2);  /* and it took the token */
        assert_int_equal(cw_park(&r.inner.parker, cw_deadline_after_ns(1000000)), CW_ERR_TIMEOUT);
    }
}

static const struct CMUnitTest cond_tests[] = {
    cmocka_unit_test(notification_wins_over_simultaneous_timeout),
    cmocka_unit_test(notify_before_wait_is_not_lost),
    cmocka_unit_test(notify_all_wakes_every_waiter),
    cmocka_unit_test(timed_wait_times_out),
    cmocka_unit_test(foreign_holder_sleeps_after_notify),
    cmocka_unit_test(waiter_contends_with_busy_holder),
    cmocka_unit_test(notify_racing_timeout_is_never_lost),
};

CW_TEST_MAIN(cond_tests, NULL, NULL)
