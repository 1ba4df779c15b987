/* SPDX-License-Identifier: MIT */
/*
 * fork while other threads are inside cw: the child (one thread, a copy of
 * the parent's memory) must be able to use cw without hanging on a lock that
 * a parent thread held at the moment of the fork. What the child can do with
 * the driver is the driver's business: a PoCL 3.1 child's kernels never run,
 * its user events do; so the child here uses user events only. A child that
 * hangs is killed by an alarm and fails the test.
 */
#include "harness.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clfixture.h"
#include "completion.h"
#include "cw.h"

struct hammer {
    atomic_int stop;
    atomic_ulong waits;
    /* Made before the threads start: a fork while a parent thread is inside
     * the driver's own context-wide calls (clCreateUserEvent) could leave a
     * driver lock held in the child, which is the driver's business, not
     * cw's; the threads touch only their own event. */
    cl_event events[2];
    atomic_int next;
};

/* Take and give back completions and join an event's record in a tight
 * loop, so that the pool's and the table's locks are held most of the time,
 * with a notifier now and then. */
static void *hammer(void *arg) {
    struct hammer *h = arg;
    cl_event ev = h->events[atomic_fetch_add(&h->next, 1)];
    unsigned long i = 0;
    while (!atomic_load(&h->stop)) {
        cw_wait_options o = {.timeout_us = 1};
        cw_wait(ev, &o, NULL);
        if (++i % 256 == 0) {
            cw_notifier *n;
            if (cw_notifier_create(0, &n) == CW_OK) {
                cw_notifier_watch(n, ev, 1, NULL);
                cw_notifier_destroy(n);
            }
        }
    }
    atomic_fetch_add(&h->waits, i);
    return NULL;
}

/* The pool alone, as tight as it goes: its lock is held a good part of the time. */
static void *hammer_pool(void *arg) {
    struct hammer *h = arg;
    unsigned long i = 0;
    while (!atomic_load(&h->stop)) {
        cw__completion *c;
        if (cw__completion_acquire(CW__COMPLETION_YIELD, &c) == CW_OK)
            cw__completion_release(c, NULL);
        ++i;
    }
    atomic_fetch_add(&h->waits, i);
    return NULL;
}

/* The child's part: exit status 0 when all went as expected. */
static int child_uses_cw(void) {
    alarm(5); /* a hang ends in SIGALRM */
    cl_int err;
    cl_event ev = clCreateUserEvent(host.context, &err);
    if (err != CL_SUCCESS)
        return 10;
    cw_wait_options o = {.timeout_us = 2000};
    if (cw_wait(ev, &o, NULL) != CW_ERR_TIMEOUT)
        return 11;
    cw_notifier *n;
    if (cw_notifier_create(0, &n) != CW_OK)
        return 12;
    if (cw_notifier_watch(n, ev, 7, NULL) != CW_OK)
        return 13;
    if (clSetUserEventStatus(ev, CL_COMPLETE) != CL_SUCCESS)
        return 14;
    struct pollfd p = {.fd = cw_notifier_fd(n), .events = POLLIN};
    cw_notifier_result r;
    size_t got = 0;
    for (int i = 0; i < 100 && got == 0; ++i) {
        poll(&p, 1, 100);
        got = cw_notifier_drain(n, &r, 1);
    }
    if (got != 1 || r.tag != 7 || r.rc != CW_OK)
        return 15;
    cw_notifier_destroy(n);
    if (cw_wait(ev, NULL, NULL) != CW_OK)
        return 16;
    cl_event many[2] = {ev, ev};
    if (cw_wait_all(many, 2, NULL, NULL) != CW_OK)
        return 17;
    clReleaseEvent(ev);
    return 0;
}

static void child_of_forking_process_uses_cw(void **state) {
    (void)state;
    enum { FORKS = 64, THREADS = 3 };
    struct hammer h = {0};
    for (int i = 0; i < 2; ++i)
        h.events[i] = user_event();
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i)
        t[i] = cw_test_spawn(i == 0 ? hammer_pool : hammer, &h);
    int ok = 0;
    for (int i = 0; i < FORKS; ++i) {
        cw_test_sleep_us(1000 + 100u * (unsigned)i);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(child_uses_cw());
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
            printf("fork %d: child killed by signal %d (a hang ends in SIGALRM)\n", i,
                   WTERMSIG(status));
        else if (WEXITSTATUS(status) != 0)
            printf("fork %d: child exited %d\n", i, WEXITSTATUS(status));
        ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    atomic_store(&h.stop, 1);
    for (int i = 0; i < THREADS; ++i)
        cw_test_join(t[i]);
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(clSetUserEventStatus(h.events[i], CL_COMPLETE), CL_SUCCESS);
        assert_int_equal(cw_wait(h.events[i], NULL, NULL), CW_OK);
        clReleaseEvent(h.events[i]);
    }
    printf("%d of %d children used cw while the parent's threads made %lu waits and pool rounds\n",
           ok, FORKS, (unsigned long)atomic_load(&h.waits));
    assert_int_equal(ok, FORKS);
}

static const struct CMUnitTest fork_tests[] = {
    cmocka_unit_test(child_of_forking_process_uses_cw),
};

CW_TEST_MAIN(fork_tests, open_host, close_host)
