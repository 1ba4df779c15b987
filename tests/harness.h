/* SPDX-License-Identifier: MIT */
/*
 * cw's cmocka harness. Every test binary lists its cases with --list and runs
 * one case when given its name, so CMake registers each case as its own ctest
 * test: one process per case, each with a timeout, so one hang cannot take
 * the suite down (libuv's habit).
 */
#ifndef CW_TEST_HARNESS_H
#define CW_TEST_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

static inline int cw_test_main(const char *group, const struct CMUnitTest *tests, size_t n,
                               CMFixtureFunction setup, CMFixtureFunction teardown, int argc,
                               char **argv) {
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; ++i)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return _cmocka_run_group_tests(group, tests, n, setup, teardown);
}

#define CW_TEST_MAIN(group, setup, teardown)                                                       \
    int main(int argc, char **argv) {                                                              \
        return cw_test_main(#group, group, sizeof(group) / sizeof((group)[0]), setup, teardown,    \
                            argc, argv);                                                           \
    }

static inline pthread_t cw_test_spawn(void *(*fn)(void *), void *arg) {
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    return t;
}

static inline void cw_test_join(pthread_t t) {
    assert_int_equal(pthread_join(t, NULL), 0);
}

static inline void cw_test_sleep_us(unsigned us) {
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Pin the calling thread (and the threads it creates later) to its first
 * `n` allowed CPUs (all of them where it has fewer). Returns the old mask. */
static inline cpu_set_t cw_test_pin_cpus(int n) {
    cpu_set_t old, some;
    assert_int_equal(sched_getaffinity(0, sizeof old, &old), 0);
    CPU_ZERO(&some);
    for (int c = 0, kept = 0; c < CPU_SETSIZE && kept < n; ++c)
        if (CPU_ISSET(c, &old)) {
            CPU_SET(c, &some);
            ++kept;
        }
    assert_int_equal(sched_setaffinity(0, sizeof some, &some), 0);
    return old;
}

/* Pin the calling thread (and the threads it creates later) to one CPU, so
 * that holder and waiter must preempt each other. Returns the old mask. */
static inline cpu_set_t cw_test_pin_one_cpu(void) {
    return cw_test_pin_cpus(1);
}

static inline void cw_test_unpin(cpu_set_t old) {
    assert_int_equal(sched_setaffinity(0, sizeof old, &old), 0);
}

static inline uint64_t cw_test_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cw_test_on_signal(int sig) {
    (void)sig;
}

/* A byte written to `fd` after `delay_us`, on a thread of its own (an
 * interrupt descriptor's pipe, written as a signal handler elsewhere would). */
struct cw_test_writer {
    int fd;
    unsigned delay_us;
};

static inline void *cw_test_write_run(void *arg) {
    struct cw_test_writer *w = arg;
    cw_test_sleep_us(w->delay_us);
    assert_int_equal(write(w->fd, "x", 1), 1);
    return NULL;
}

/* A signal storm: a thread sends SIGUSR1 to the thread that started it every
 * period_us. The handler is installed without SA_RESTART, so each of the
 * target's interruptible sleeps returns EINTR and must carry on by itself. */
struct cw_test_storm {
    pthread_t target, thread;
    unsigned period_us;
    atomic_bool stop;
    atomic_ulong sent;
};

static inline void *cw_test_storm_run(void *arg) {
    struct cw_test_storm *s = arg;
    while (!atomic_load(&s->stop)) {
        if (pthread_kill(s->target, SIGUSR1) == 0)
            atomic_fetch_add(&s->sent, 1);
        cw_test_sleep_us(s->period_us);
    }
    return NULL;
}

static inline void cw_test_storm_start(struct cw_test_storm *s, unsigned period_us) {
    struct sigaction sa = {.sa_handler = cw_test_on_signal}; /* no SA_RESTART: EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
    s->target = pthread_self();
    s->period_us = period_us;
    atomic_init(&s->stop, false);
    atomic_init(&s->sent, 0);
    s->thread = cw_test_spawn(cw_test_storm_run, s);
}

/* Stops the storm and returns how many signals were sent. */
static inline unsigned long cw_test_storm_stop(struct cw_test_storm *s) {
    atomic_store(&s->stop, true);
    cw_test_join(s->thread);
    signal(SIGUSR1, SIG_IGN); /* one still in flight must not end the process */
    return atomic_load(&s->sent);
}

#endif
