/* SPDX-License-Identifier: MIT */
/* Layer 3: the futex parker, and the interrupt parker built on it. */
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "cw/parker.h"
#include "parker_internal.h"

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

/* A pipe whose read end an interrupt parker looks at. */
static void open_pipe(int fds[2]) {
    assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
}

static void close_pipe(int fds[2]) {
    close(fds[0]);
    close(fds[1]);
}

static void drain(int fd) {
    char buf[16];
    while (read(fd, buf, sizeof buf) > 0)
        ;
}

/* A readable descriptor ends a park at once; a token wins over it; with
 * the descriptor drained the parker is the futex parker again. */
static void interrupt_parker_ends_at_a_readable_descriptor(void **state) {
    (void)state;
    int fds[2];
    open_pipe(fds);
    cw__interrupt_parker ip;
    cw__interrupt_parker_init(&ip, fds[0]);
    assert_int_equal(write(fds[1], "x", 1), 1);
    assert_int_equal(cw_park(&ip.futex.parker, CW_DEADLINE_NONE), CW_ERR_INTERRUPTED);
    assert_int_equal(cw_park(&ip.futex.parker, cw_deadline_after_ns(1000000)), CW_ERR_INTERRUPTED);
    cw_unpark(&ip.futex.parker);
    assert_int_equal(cw_park(&ip.futex.parker, CW_DEADLINE_NONE), CW_OK);
    drain(fds[0]);
    uint64_t deadline = cw_deadline_after_ns(20000000);
    assert_int_equal(cw_park(&ip.futex.parker, deadline), CW_ERR_TIMEOUT);
    assert_true(cw_now_ns() >= deadline);
    cw_unpark(&ip.futex.parker);
    assert_int_equal(cw_park(&ip.futex.parker, CW_DEADLINE_NONE), CW_OK);
    close_pipe(fds);
}

static void *unpark_interrupt_later(void *arg) {
    cw_test_sleep_us(20000);
    cw_unpark(&((cw__interrupt_parker *)arg)->futex.parker);
    return NULL;
}

/* A write from another thread interrupts no sleep: the park sees it at its
 * next look (CW__INTERRUPT_LOOK_NS), long before the far deadline. An
 * unpark still wakes the interrupt parker as the futex parker. */
static void interrupt_parker_sees_another_threads_write(void **state) {
    (void)state;
    int fds[2];
    open_pipe(fds);
    cw__interrupt_parker ip;
    cw__interrupt_parker_init(&ip, fds[0]);
    struct cw_test_writer w = {fds[1], 20000};
    pthread_t t = cw_test_spawn(cw_test_write_run, &w);
    uint64_t far = cw_deadline_after_ns(60ull * 1000000000u);
    assert_int_equal(cw_park(&ip.futex.parker, far), CW_ERR_INTERRUPTED);
    assert_true(cw_now_ns() < far);
    cw_test_join(t);
    drain(fds[0]);

    t = cw_test_spawn(unpark_interrupt_later, &ip);
    assert_int_equal(cw_park(&ip.futex.parker, CW_DEADLINE_NONE), CW_OK);
    cw_test_join(t);
    close_pipe(fds);
}

/* A signal handler that writes to the descriptor, as a language runtime's
 * does, ends the park; handlers that write nothing (a storm of them) leave
 * it parked until its deadline. */
static int handler_fd = -1;

static void write_on_signal(int sig) {
    (void)sig;
    ssize_t n = write(handler_fd, "s", 1);
    (void)n;
}

struct kill_later {
    pthread_t target;
    unsigned delay_us;
};

static void *signal_later(void *arg) {
    struct kill_later *k = arg;
    cw_test_sleep_us(k->delay_us);
    assert_int_equal(pthread_kill(k->target, SIGUSR2), 0);
    return NULL;
}

static void interrupt_parker_ends_on_its_signal_handler(void **state) {
    (void)state;
    int fds[2];
    open_pipe(fds);
    cw__interrupt_parker ip;
    cw__interrupt_parker_init(&ip, fds[0]);

    struct cw_test_storm storm;
    cw_test_storm_start(&storm, 300);
    uint64_t deadline = cw_deadline_after_ns(20000000);
    assert_int_equal(cw_park(&ip.futex.parker, deadline), CW_ERR_TIMEOUT);
    assert_true(cw_now_ns() >= deadline);
    assert_true(cw_test_storm_stop(&storm) > 0);

    handler_fd = fds[1];
    struct sigaction sa = {.sa_handler = write_on_signal}, old;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
    struct kill_later k = {pthread_self(), 20000};
    pthread_t t = cw_test_spawn(signal_later, &k);
    uint64_t far = cw_deadline_after_ns(60ull * 1000000000u);
    assert_int_equal(cw_park(&ip.futex.parker, far), CW_ERR_INTERRUPTED);
    cw_test_join(t);
    assert_int_equal(sigaction(SIGUSR2, &old, NULL), 0);
    close_pipe(fds);
}

static const struct CMUnitTest parker_tests[] = {
    cmocka_unit_test(token_before_park_is_not_lost),
    cmocka_unit_test(tokens_do_not_accumulate),
    cmocka_unit_test(park_times_out_at_deadline),
    cmocka_unit_test(unpark_from_another_thread_wakes_parked),
    cmocka_unit_test(park_absorbs_signals),
    cmocka_unit_test(custom_ops_are_called),
    cmocka_unit_test(interrupt_parker_ends_at_a_readable_descriptor),
    cmocka_unit_test(interrupt_parker_sees_another_threads_write),
    cmocka_unit_test(interrupt_parker_ends_on_its_signal_handler),
};

CW_TEST_MAIN(parker_tests, NULL, NULL)
