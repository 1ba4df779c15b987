/* SPDX-License-Identifier: MIT */
/* Layer 5: completion. Exactly once, never lost, never touched after release. */
#include "harness.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "clfixture.h"
#include "completion.h"

static const cw__completion_kind kinds[] = {CW__COMPLETION_YIELD, CW__COMPLETION_YIELD_WAKE_LOCKED,
                                            CW__COMPLETION_NOYIELD_WAKE_LOCKED,
                                            CW__COMPLETION_PTHREAD};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static void signal_before_wait_is_not_lost(void **state) {
    (void)state;
    for (size_t k = 0; k < NKINDS; ++k) {
        cw__completion *c;
        assert_int_equal(cw__completion_acquire(kinds[k], &c), CW_OK);
        assert_false(cw__completion_is_signalled(c));
        assert_true(cw__completion_signal_token(cw__completion_token(c), 42));
        cw_futex_parker fp;
        cw_futex_parker_init(&fp);
        assert_int_equal(cw__completion_wait(c, &fp.parker, CW_DEADLINE_NONE), CW_OK);
        assert_int_equal(cw__completion_status(c), 42);
        int32_t status = 0;
        assert_true(cw__completion_release(c, &status));
        assert_int_equal(status, 42);
    }
}

struct token_later {
    uintptr_t token;
    unsigned delay_us;        /* after `after` is set (if any) */
    const atomic_bool *after; /* NULL: count the delay from the start */
    atomic_int result;        /* 1 signalled, 0 stale */
};

static void *signal_later(void *arg) {
    struct token_later *l = arg;
    /* An order, not a race against the clock: a loaded machine may keep the
     * waiter off its CPU for longer than any delay. */
    while (l->after && !atomic_load(l->after))
        cw_test_sleep_us(100);
    cw_test_sleep_us(l->delay_us);
    atomic_store(&l->result, cw__completion_signal_token(l->token, 7) ? 1 : 0);
    return NULL;
}

static void foreign_thread_signal_wakes_waiter(void **state) {
    (void)state;
    for (size_t k = 0; k < NKINDS; ++k) {
        cw__completion *c;
        assert_int_equal(cw__completion_acquire(kinds[k], &c), CW_OK);
        struct token_later l = {.token = cw__completion_token(c), .delay_us = 10000, .result = -1};
        pthread_t t = cw_test_spawn(signal_later, &l);
        cw_futex_parker fp;
        cw_futex_parker_init(&fp);
        assert_int_equal(cw__completion_wait(c, &fp.parker, CW_DEADLINE_NONE), CW_OK);
        assert_int_equal(cw__completion_status(c), 7);
        cw_test_join(t);
        assert_int_equal(atomic_load(&l.result), 1);
        assert_true(cw__completion_release(c, NULL));
    }
}

struct racer {
    uintptr_t token;
    atomic_int *go;
    atomic_int wins;
};

static void *race_signal(void *arg) {
    struct racer *r = arg;
    while (!atomic_load(r->go))
        ;
    if (cw__completion_signal_token(r->token, 1))
        atomic_fetch_add(&r->wins, 1);
    return NULL;
}

static void signalled_exactly_once_by_racing_threads(void **state) {
    (void)state;
    for (int round = 0; round < 500; ++round) {
        cw__completion *c;
        assert_int_equal(cw__completion_acquire(kinds[round % NKINDS], &c), CW_OK);
        atomic_int go = 0;
        struct racer r = {.token = cw__completion_token(c), .go = &go};
        pthread_t t[3];
        for (int i = 0; i < 3; ++i)
            t[i] = cw_test_spawn(race_signal, &r);
        atomic_store(&go, 1);
        for (int i = 0; i < 3; ++i)
            cw_test_join(t[i]);
        assert_int_equal(atomic_load(&r.wins), 1);
        assert_true(cw__completion_release(c, NULL));
    }
}

static void stale_token_is_ignored_after_release(void **state) {
    (void)state;
    cw__completion *c, *d;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
    uintptr_t old = cw__completion_token(c);
    assert_false(cw__completion_release(c, NULL)); /* never signalled: disarmed */
    assert_false(cw__completion_signal_token(old, 1));
    /* The slot is reused (LIFO pool) under a new generation; the old token
     * must not signal the new owner. */
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &d), CW_OK);
    assert_int_not_equal(cw__completion_token(d), old);
    assert_false(cw__completion_signal_token(old, 1));
    assert_false(cw__completion_is_signalled(d));
    assert_false(cw__completion_release(d, NULL));
    /* Tokens that were never handed out are refused too. */
    assert_false(cw__completion_signal_token(0xffffffffu, 1));
    assert_false(cw__completion_signal_token((uintptr_t)12345 << 32 | 3, 1));
}

/* The waiter gives up first; the signal arrives 10 ms after the slot went
 * back to the pool (ordered by a flag, so a loaded machine cannot reorder it). Run under
 * AddressSanitizer this proves the late signal touches no freed memory; the pool count proves
 * nothing leaked. */
static void waiter_times_out_then_late_signal(void **state) {
    (void)state;
    for (size_t k = 0; k < NKINDS; ++k) {
        cw__completion *c;
        assert_int_equal(cw__completion_acquire(kinds[k], &c), CW_OK);
        atomic_bool released = false;
        struct token_later l = {
            .token = cw__completion_token(c), .delay_us = 10000, .after = &released, .result = -1};
        pthread_t t = cw_test_spawn(signal_later, &l);
        cw_futex_parker fp;
        cw_futex_parker_init(&fp);
        assert_int_equal(cw__completion_wait(c, &fp.parker, cw_deadline_after_ns(1000000)),
                         CW_ERR_TIMEOUT);
        assert_false(cw__completion_release(c, NULL));
        atomic_store(&released, true);
        cw_test_join(t);
        assert_int_equal(atomic_load(&l.result), 0);
    }
}

static void acquire_rejects_bad_input(void **state) {
    (void)state;
    cw__completion *c;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_KIND_COUNT, &c),
                     CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, NULL), CW_ERR_INVALID_ARGUMENT);
}

/* Many slots at once: the pool grows past one chunk and gives all back. */
static void pool_grows_and_recycles(void **state) {
    (void)state;
    enum { N = 1000 };
    cw__completion **cs = calloc(N, sizeof *cs);
    assert_non_null(cs);
    unsigned before = cw__completion_outstanding();
    for (int i = 0; i < N; ++i)
        assert_int_equal(cw__completion_acquire(kinds[i % NKINDS], &cs[i]), CW_OK);
    assert_int_equal(cw__completion_outstanding(), before + N);
    for (int i = 0; i < N; i += 2)
        assert_true(cw__completion_signal_token(cw__completion_token(cs[i]), i));
    for (int i = 0; i < N; ++i) {
        if (i % 2 == 0)
            assert_int_equal(cw__completion_status(cs[i]), i);
        assert_int_equal(cw__completion_release(cs[i], NULL), i % 2 == 0);
    }
    assert_int_equal(cw__completion_outstanding(), before);
    free(cs);
}

/* A watcher whose wake holds its signaller until the test lets it go. */
struct holder {
    atomic_int entered, leave;
    cw__watcher watcher;
};

static void holder_wake(cw__watcher *w) {
    struct holder *h = cw__container_of(w, struct holder, watcher);
    atomic_store(&h->entered, 1);
    while (!atomic_load(&h->leave))
        sched_yield();
}

static void *signal_now(void *arg) {
    cw__completion_signal_token(*(uintptr_t *)arg, CL_COMPLETE);
    return NULL;
}

/* Settled only once the signaller's wake of the watcher returned: until
 * then the signal is visible but release would still have to wait. */
static void settled_after_the_watchers_wake_returns(void **state) {
    (void)state;
    for (size_t k = 0; k < NKINDS; ++k) {
        struct holder h = {.watcher = {holder_wake}};
        atomic_init(&h.entered, 0);
        atomic_init(&h.leave, 0);
        cw__completion *c;
        assert_int_equal(cw__completion_acquire(kinds[k], &c), CW_OK);
        cw__completion_watch(c, &h.watcher);
        uintptr_t token = cw__completion_token(c);
        pthread_t t = cw_test_spawn(signal_now, &token);
        while (!atomic_load(&h.entered))
            sched_yield();
        assert_true(cw__completion_is_signalled(c));
        assert_false(cw__completion_settled(c));
        atomic_store(&h.leave, 1);
        cw_test_join(t);
        assert_true(cw__completion_settled(c));
        assert_true(cw__completion_release(c, NULL));
    }
}

/* A linger list releases the nodes whose signaller is done (or all), and
 * keeps the others, in a list whose tail it names. */
static int released;
static void count_release(cw__linger *l) {
    (void)l;
    ++released;
}

static void linger_releases_the_settled_and_keeps_the_rest(void **state) {
    (void)state;
    struct holder h = {.watcher = {holder_wake}};
    atomic_init(&h.entered, 0);
    atomic_init(&h.leave, 0);
    cw__completion *busy, *done;
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &busy), CW_OK);
    assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &done), CW_OK);
    struct holder quick = {.watcher = {holder_wake}};
    atomic_init(&quick.entered, 0);
    atomic_init(&quick.leave, 1); /* its wake returns at once */
    cw__completion_watch(busy, &h.watcher);
    cw__completion_watch(done, &quick.watcher);
    cw__completion_signal_token(cw__completion_token(done), CL_COMPLETE);
    assert_true(cw__completion_settled(done));
    uintptr_t token = cw__completion_token(busy);
    pthread_t t = cw_test_spawn(signal_now, &token);
    while (!atomic_load(&h.entered))
        sched_yield();
    cw__linger nodes[3] = {{&nodes[1], done}, {&nodes[2], busy}, {NULL, done}};
    cw__linger *tail;
    released = 0;
    cw__linger *keep = cw__linger_release(&nodes[0], false, count_release, &tail);
    assert_int_equal(released, 2);
    assert_ptr_equal(keep, &nodes[1]);
    assert_ptr_equal(tail, &nodes[1]);
    assert_null(keep->next);
    atomic_store(&h.leave, 1);
    cw_test_join(t);
    released = 0;
    keep = cw__linger_release(keep, true, count_release, &tail);
    assert_int_equal(released, 1);
    assert_null(keep);
    assert_null(tail);
    assert_true(cw__completion_release(busy, NULL));
    assert_true(cw__completion_release(done, NULL));
}

/* Release of a completion must wait for its watcher's wake: the wake here
 * dawdles and then writes into memory the owner frees right after release.
 * AddressSanitizer reports it if release returns too early. The watcher is
 * not the first member, as in the library's own watchers. */
struct dawdler {
    int *memory;
    atomic_int unparks;
    cw__watcher watcher;
};

static void dawdler_wake(cw__watcher *w) {
    struct dawdler *d = cw__container_of(w, struct dawdler, watcher);
    cw_test_sleep_us(200);
    *d->memory += 1;
    atomic_fetch_add(&d->unparks, 1);
}

struct signaller {
    uintptr_t token;
    atomic_bool go;
};

static void *signal_token(void *arg) {
    struct signaller *s = arg;
    while (!atomic_load(&s->go))
        sched_yield();
    cw__completion_signal_token(s->token, CL_COMPLETE);
    return NULL;
}

static void completion_release_waits_for_watcher(void **state) {
    (void)state;
    unsigned landed = 0;
    for (int i = 0; i < 200; ++i) {
        struct dawdler *d = malloc(sizeof *d);
        assert_non_null(d);
        d->watcher.wake = dawdler_wake;
        d->memory = calloc(1, sizeof *d->memory);
        atomic_init(&d->unparks, 0);
        cw__completion *c;
        assert_int_equal(cw__completion_acquire(CW__COMPLETION_YIELD, &c), CW_OK);
        cw__completion_watch(c, &d->watcher);
        struct signaller s = {.token = cw__completion_token(c)};
        pthread_t t = cw_test_spawn(signal_token, &s);
        atomic_store(&s.go, true);
        if (i % 2)
            sched_yield(); /* sometimes let the signal land first */
        bool signalled = cw__completion_release(c, NULL);
        /* Unparked exactly once if signalled, never otherwise, and done. */
        assert_int_equal(atomic_load(&d->unparks), signalled ? 1 : 0);
        landed += signalled;
        free(d->memory);
        free(d);
        cw_test_join(t);
    }
    printf("%u of 200 signals landed before release\n", landed);
    assert_int_equal(wait_completions(), 0);
}

static const struct CMUnitTest completion_tests[] = {
    cmocka_unit_test(signal_before_wait_is_not_lost),
    cmocka_unit_test(foreign_thread_signal_wakes_waiter),
    cmocka_unit_test(signalled_exactly_once_by_racing_threads),
    cmocka_unit_test(stale_token_is_ignored_after_release),
    cmocka_unit_test(waiter_times_out_then_late_signal),
    cmocka_unit_test(acquire_rejects_bad_input),
    cmocka_unit_test(pool_grows_and_recycles),
    cmocka_unit_test(settled_after_the_watchers_wake_returns),
    cmocka_unit_test(linger_releases_the_settled_and_keeps_the_rest),
    cmocka_unit_test(completion_release_waits_for_watcher),
};

CW_TEST_MAIN(completion_tests, open_host, close_host)
