/* SPDX-License-Identifier: MIT */
/* Layer 6, beside cw_wait: cw_wait_all and cw_wait_any on PoCL. */
#include "harness.h"

#include <fcntl.h>
#include <stdlib.h>

#include "clfixture.h"
#include "cw.h"
#include "estimate.h"

/*
 * The mix every case uses: [0] a fast kernel, [1] a kernel gated on a user
 * event opened 30 ms later, [2] a user event failed (-5) 20 ms later, [3] a
 * user event completed 10 ms later, [4] a user event already complete.
 */
struct mix {
    cwh_saxpy sx;
    cl_event ev[5];
    struct later gate, fail, user;
    pthread_t t[3];
};

static void mix_start(struct mix *m, bool with_failure) {
    assert_int_equal(cwh_saxpy_init(&host, &m->sx, 1024), CL_SUCCESS);
    assert_int_equal(cwh_saxpy_enqueue(&host, &m->sx, 1.0f, 0, NULL, &m->ev[0]), CL_SUCCESS);
    m->gate = (struct later){.ev = user_event(), .delay_us = 30000, .status = CL_COMPLETE};
    assert_int_equal(cwh_saxpy_enqueue(&host, &m->sx, 1.0f, 1, &m->gate.ev, &m->ev[1]), CL_SUCCESS);
    m->fail = (struct later){
        .ev = user_event(), .delay_us = 20000, .status = with_failure ? -5 : CL_COMPLETE};
    m->ev[2] = m->fail.ev;
    m->user = (struct later){.ev = user_event(), .delay_us = 10000, .status = CL_COMPLETE};
    m->ev[3] = m->user.ev;
    m->ev[4] = user_event();
    assert_int_equal(clSetUserEventStatus(m->ev[4], CL_COMPLETE), CL_SUCCESS);
    m->t[0] = cw_test_spawn(set_later, &m->gate);
    m->t[1] = cw_test_spawn(set_later, &m->fail);
    m->t[2] = cw_test_spawn(set_later, &m->user);
}

static void mix_finish(struct mix *m) {
    for (int i = 0; i < 3; ++i)
        cw_test_join(m->t[i]);
    assert_int_equal(clFinish(host.queue), CL_SUCCESS);
    size_t bad = 1;
    assert_int_equal(cwh_saxpy_check(&host, &m->sx, 1.0f, 2, &bad), CL_SUCCESS);
    assert_int_equal(bad, 0);
    clReleaseEvent(m->ev[0]);
    clReleaseEvent(m->ev[1]);
    clReleaseEvent(m->gate.ev);
    for (int i = 2; i < 5; ++i)
        clReleaseEvent(m->ev[i]);
    cwh_saxpy_free(&m->sx);
    assert_int_equal(wait_completions(), 0);
}

static void wait_all_completes_mixed_events(void **state) {
    (void)state;
    struct mix m;
    mix_start(&m, false);
    cl_int st[5] = {1, 1, 1, 1, 1};
    cw_wait_options o = {.check_interval_us = 2000};
    assert_int_equal(cw_wait_all(m.ev, 5, &o, st), CW_OK);
    for (int i = 0; i < 5; ++i)
        assert_int_equal(st[i], CL_COMPLETE);
    mix_finish(&m);
}

/* A failure does not end wait-all early: it waits for every event, then
 * reports CW_ERR_COMMAND_FAILED with each event's own status. */
static void wait_all_reports_failure_after_all_finish(void **state) {
    (void)state;
    struct mix m;
    mix_start(&m, true);
    cl_int st[5] = {1, 1, 1, 1, 1};
    cw_wait_options o = {.check_interval_us = 2000};
    assert_int_equal(cw_wait_all(m.ev, 5, &o, st), CW_ERR_COMMAND_FAILED);
    assert_int_equal(st[0], CL_COMPLETE);
    assert_int_equal(st[1], CL_COMPLETE);
    assert_int_equal(st[2], -5);
    assert_int_equal(st[3], CL_COMPLETE);
    assert_int_equal(st[4], CL_COMPLETE);
    mix_finish(&m);
}

/* Nothing opens the gate before the wait times out, so its kernel is
 * certainly unfinished; after the timeout the gate opens and a second wait
 * succeeds (the late callbacks find stale tokens). */
static void wait_all_times_out_then_succeeds(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    cl_event gate = user_event(), ev[3];
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &gate, &ev[0]), CL_SUCCESS);
    ev[1] = user_event();
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 0, NULL, &ev[2]), CL_SUCCESS);
    cl_int st[3];
    cw_wait_options o = {.timeout_us = 2000};
    assert_int_equal(cw_wait_all(ev, 3, &o, st), CW_ERR_TIMEOUT);
    assert_true(st[0] > CL_COMPLETE);
    assert_int_equal(st[1], CL_SUBMITTED);
    assert_int_equal(wait_completions(), 0);
    struct later l = {.ev = gate, .delay_us = 2000, .status = CL_COMPLETE};
    pthread_t t = cw_test_spawn(set_later, &l);
    assert_int_equal(clSetUserEventStatus(ev[1], CL_COMPLETE), CL_SUCCESS);
    o.timeout_us = 0;
    assert_int_equal(cw_wait_all(ev, 3, &o, st), CW_OK);
    cw_test_join(t);
    size_t bad = 1;
    assert_int_equal(cwh_saxpy_check(&host, &sx, 1.0f, 2, &bad), CL_SUCCESS);
    assert_int_equal(bad, 0);
    for (int i = 0; i < 3; ++i)
        clReleaseEvent(ev[i]);
    clReleaseEvent(gate);
    cwh_saxpy_free(&sx);
}

/* The already-complete event is found before anything sleeps. */
static void wait_any_returns_finished_event(void **state) {
    (void)state;
    struct mix m;
    mix_start(&m, false);
    size_t index = 99;
    cl_int st = 1;
    assert_int_equal(cw_wait_any(m.ev + 1, 4, NULL, &index, &st), CW_OK);
    assert_int_equal(st, CL_COMPLETE);
    /* m.ev[4]; or, where the machine held this thread past the 10 and 20 ms
     * at which m.ev[3] and m.ev[2] are set (a loaded machine, a sanitizer),
     * one of those, found complete first all the same. */
    if (index != 3) {
        cl_int now = 1;
        assert_true(index == 1 || index == 2);
        assert_int_equal(clGetEventInfo(m.ev[1 + index], CL_EVENT_COMMAND_EXECUTION_STATUS,
                                        sizeof now, &now, NULL),
                         CL_SUCCESS);
        assert_int_equal(now, CL_COMPLETE);
    }
    assert_int_equal(cw_wait_all(m.ev, 5, NULL, NULL), CW_OK);
    mix_finish(&m);
}

/* Among pending events (a gated kernel, a user event that will fail, a
 * user event) the one that finishes is reported, each in turn; the order is
 * set by which event another thread finishes next, not by timing. */
static void wait_any_reports_first_and_failures(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    cl_event gate = user_event(), pending[3];
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &gate, &pending[0]), CL_SUCCESS);
    pending[1] = user_event();
    pending[2] = user_event();
    cw_wait_options o = {.check_interval_us = 2000};
    size_t index = 99;
    cl_int st = 1;

    struct later l = {.ev = pending[2], .delay_us = 5000, .status = CL_COMPLETE};
    pthread_t t = cw_test_spawn(set_later, &l);
    assert_int_equal(cw_wait_any(pending, 3, &o, &index, &st), CW_OK);
    assert_int_equal(index, 2);
    assert_int_equal(st, CL_COMPLETE);
    cw_test_join(t);

    l = (struct later){.ev = pending[1],
                       .delay_us = 5000,
                       .status = -5}; /* no callback: found by the status check */
    t = cw_test_spawn(set_later, &l);
    assert_int_equal(cw_wait_any(pending, 2, &o, &index, &st), CW_ERR_COMMAND_FAILED);
    assert_int_equal(index, 1);
    assert_int_equal(st, -5);
    cw_test_join(t);

    l = (struct later){.ev = gate, .delay_us = 5000, .status = CL_COMPLETE};
    t = cw_test_spawn(set_later, &l);
    assert_int_equal(cw_wait_any(pending, 1, &o, &index, &st), CW_OK);
    assert_int_equal(index, 0);
    assert_int_equal(st, CL_COMPLETE);
    cw_test_join(t);
    for (int i = 0; i < 3; ++i)
        clReleaseEvent(pending[i]);
    clReleaseEvent(gate);
    cwh_saxpy_free(&sx);
    assert_int_equal(wait_completions(), 0);
}

/* CW_WAIT_POLL looks at each event once: wait-all and wait-any time out
 * at once while one (every one for wait-any) is unfinished, with no
 * registration, and answer as a wait would once they have finished. */
static void poll_flag_looks_once(void **state) {
    (void)state;
    cl_event ev[2] = {user_event(), user_event()};
    cw_wait_options o = {.flags = CW_WAIT_POLL};
    cl_int st[2] = {0, 0};
    size_t index = 9;
    assert_int_equal(cw_wait_all(ev, 2, &o, st), CW_ERR_TIMEOUT);
    assert_int_equal(st[0], CL_SUBMITTED);
    assert_int_equal(st[1], CL_SUBMITTED);
    assert_int_equal(cw_wait_any(ev, 2, &o, &index, &st[0]), CW_ERR_TIMEOUT);
    assert_int_equal(index, 2);
    assert_int_equal(wait_completions(), 0);
    assert_int_equal(clSetUserEventStatus(ev[1], CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait_all(ev, 2, &o, st), CW_ERR_TIMEOUT);
    assert_int_equal(st[1], CL_COMPLETE);
    assert_int_equal(cw_wait_any(ev, 2, &o, &index, &st[0]), CW_OK);
    assert_int_equal(index, 1);
    assert_int_equal(clSetUserEventStatus(ev[0], -3), CL_SUCCESS);
    assert_int_equal(cw_wait_all(ev, 2, &o, st), CW_ERR_COMMAND_FAILED);
    assert_int_equal(st[0], -3);
    assert_int_equal(st[1], CL_COMPLETE);
    assert_int_equal(wait_completions(), 0);
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
}

static void wait_any_times_out(void **state) {
    (void)state;
    cl_event ev[2] = {user_event(), user_event()};
    cw_wait_options o = {.timeout_us = 3000};
    size_t index = 0;
    cl_int st = 0;
    assert_int_equal(cw_wait_any(ev, 2, &o, &index, &st), CW_ERR_TIMEOUT);
    assert_int_equal(index, 2);
    assert_int_equal(st, CL_SUBMITTED);
    assert_int_equal(wait_completions(), 0);
    assert_int_equal(clSetUserEventStatus(ev[1], CL_COMPLETE), CL_SUCCESS);
    o.timeout_us = 0;
    assert_int_equal(cw_wait_any(ev, 2, &o, &index, &st), CW_OK);
    assert_int_equal(index, 1);
    assert_int_equal(clSetUserEventStatus(ev[0], -3), CL_SUCCESS);
    cl_int all[2];
    assert_int_equal(cw_wait_all(ev, 2, NULL, all), CW_ERR_COMMAND_FAILED);
    assert_int_equal(all[0], -3);
    assert_int_equal(all[1], CL_COMPLETE);
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
}

/* Many events, completed in random order by another thread, one parker:
 * wait-any returns each exactly once when the finished ones are removed. */
struct shuffle {
    cl_event ev[64];
    unsigned order[64];
};

static void *complete_shuffled(void *arg) {
    struct shuffle *s = arg;
    for (unsigned i = 0; i < 64; ++i) {
        if (i % 8 == 0)
            cw_test_sleep_us(500);
        clSetUserEventStatus(s->ev[s->order[i]], s->order[i] % 5 == 0 ? -1 : CL_COMPLETE);
    }
    return NULL;
}

static void wait_any_drains_many_events(void **state) {
    (void)state;
    struct shuffle s;
    for (unsigned i = 0; i < 64; ++i) {
        s.ev[i] = user_event();
        s.order[i] = i;
    }
    srand(7);
    for (unsigned i = 63; i > 0; --i) {
        unsigned j = (unsigned)rand() % (i + 1), t = s.order[i];
        s.order[i] = s.order[j];
        s.order[j] = t;
    }
    cl_event left[64];
    unsigned id[64];
    for (unsigned i = 0; i < 64; ++i) {
        left[i] = s.ev[i];
        id[i] = i;
    }
    pthread_t t = cw_test_spawn(complete_shuffled, &s);
    cw_wait_options o = {.check_interval_us = 1000};
    bool seen[64] = {false};
    for (size_t n = 64; n > 0; --n) {
        size_t k = n;
        cl_int st = 1;
        int rc = cw_wait_any(left, n, &o, &k, &st);
        assert_true(k < n);
        unsigned e = id[k];
        assert_false(seen[e]);
        seen[e] = true;
        assert_int_equal(rc, e % 5 == 0 ? CW_ERR_COMMAND_FAILED : CW_OK);
        assert_int_equal(st, e % 5 == 0 ? -1 : CL_COMPLETE);
        left[k] = left[n - 1];
        id[k] = id[n - 1];
    }
    cw_test_join(t);
    for (unsigned i = 0; i < 64; ++i)
        clReleaseEvent(s.ev[i]);
    assert_int_equal(wait_completions(), 0);
}

static void bad_input_is_rejected(void **state) {
    (void)state;
    cl_event ev[2] = {user_event(), NULL};
    cl_int st[2] = {7, 7};
    size_t index = 5;
    cl_int one = 7;
    assert_int_equal(cw_wait_all(NULL, 1, NULL, st), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_wait_all(ev, 0, NULL, st), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_wait_all(ev, 2, NULL, st), CW_ERR_INVALID_ARGUMENT); /* NULL entry */
    assert_int_equal(cw_wait_all(ev, CW_WAIT_MANY_MAX + 1u, NULL, st), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_wait_any(NULL, 1, NULL, &index, &one), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(index, 1);
    assert_int_equal(cw_wait_any(ev, 0, NULL, &index, &one), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_wait_any(ev, 2, NULL, &index, &one), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(index, 2);
    cw_wait_options o = {.timeout_us = -1};
    assert_int_equal(cw_wait_all(ev, 1, &o, st), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_wait_any(ev, 1, &o, &index, &one), CW_ERR_INVALID_ARGUMENT);
    o = (cw_wait_options){.strategy = CW_STRATEGY_COUNT};
    assert_int_equal(cw_wait_all(ev, 1, &o, st), CW_ERR_INVALID_ARGUMENT);
    o = (cw_wait_options){.spin_us = CW_SPIN_US_MAX + 1};
    assert_int_equal(cw_wait_any(ev, 1, &o, &index, &one), CW_ERR_INVALID_ARGUMENT);
    /* Nothing was touched: the statuses, the event, the pool. */
    assert_int_equal(st[0], 7);
    assert_int_equal(one, 7);
    assert_int_equal(wait_completions(), 0);
    assert_int_equal(clSetUserEventStatus(ev[0], CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait_all(ev, 1, NULL, NULL), CW_OK);
    clReleaseEvent(ev[0]);
}

/*
 * Wait-all on two kernels whose queue's waits take about a second: the
 * first check comes after twice that, so the gate opening 30 ms later ends
 * the wait with no status check (none is even scheduled where the
 * platform's failed commands fire their callbacks). Wait-any likewise. A
 * user event among them has no queue and no estimate: its wait checks on
 * the interval, deferred by nothing.
 */
static void waits_on_commands_expected_long_make_no_check(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    for (int all = 0; all < 2; ++all) {
        for (int i = 0; i < 24; ++i)
            cw__estimate_put((uintptr_t)host.queue, 1000000000u, true);
        struct later gate = {.ev = user_event(), .delay_us = 30000, .status = CL_COMPLETE};
        cl_event ev[2];
        assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &gate.ev, &ev[0]), CL_SUCCESS);
        assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &gate.ev, &ev[1]), CL_SUCCESS);
        cw_stats_auto a0, a1;
        assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
        pthread_t t = cw_test_spawn(set_later, &gate);
        size_t which = 2;
        if (all)
            assert_int_equal(cw_wait_all(ev, 2, NULL, NULL), CW_OK);
        else
            assert_int_equal(cw_wait_any(ev, 2, NULL, &which, NULL), CW_OK);
        cw_test_join(t);
        assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
        assert_int_equal(a1.checks - a0.checks, 0);
        assert_int_equal(
            a1.deferred_checks - a0.deferred_checks + a1.unchecked_waits - a0.unchecked_waits, 1);
        assert_int_equal(clWaitForEvents(2, ev), CL_SUCCESS);
        clReleaseEvent(ev[0]);
        clReleaseEvent(ev[1]);
        clReleaseEvent(gate.ev);
    }
    /* A user event has no estimate: its wait is not deferred. */
    cl_event never = user_event();
    cw_stats_auto a0, a1;
    assert_int_equal(cw_stats_auto_get(&a0, sizeof a0), CW_OK);
    cw_wait_options o = {.timeout_us = 1000};
    assert_int_equal(cw_wait_all(&never, 1, &o, NULL), CW_ERR_TIMEOUT);
    assert_int_equal(cw_stats_auto_get(&a1, sizeof a1), CW_OK);
    assert_int_equal(a1.deferred_checks - a0.deferred_checks, 0);
    assert_int_equal(clSetUserEventStatus(never, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(never);
    cwh_saxpy_free(&sx);
}

/* CW_WAIT_INTERRUPT_FD: both calls end with CW_ERR_INTERRUPTED once the
 * descriptor is readable, the outputs as on a timeout, and the events can
 * be waited on again; with a parker of the caller's they refuse it. */
static void interrupt_descriptor_ends_both_calls(void **state) {
    (void)state;
    int fds[2];
    assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    cl_event ev[2] = {user_event(), user_event()};
    cw_wait_options o = {.strategy = CW_STRATEGY_PTHREAD, /* unused by these calls */
                         .flags = CW_WAIT_INTERRUPT_FD,
                         .interrupt_fd = fds[0]};
    struct cw_test_writer w = {fds[1], 20000};
    pthread_t t = cw_test_spawn(cw_test_write_run, &w);
    cl_int st[2] = {0, 0};
    assert_int_equal(cw_wait_all(ev, 2, &o, st), CW_ERR_INTERRUPTED);
    assert_int_equal(st[0], CL_SUBMITTED);
    assert_int_equal(st[1], CL_SUBMITTED);
    cw_test_join(t);
    size_t index = 99;
    cl_int one = 0;
    assert_int_equal(cw_wait_any(ev, 2, &o, &index, &one), CW_ERR_INTERRUPTED);
    assert_int_equal(index, 2);
    assert_int_equal(one, CL_SUBMITTED);

    cw_futex_parker mine;
    cw_futex_parker_init(&mine);
    o.parker = &mine.parker;
    assert_int_equal(cw_wait_all(ev, 2, &o, st), CW_ERR_UNSUPPORTED);
    o.parker = NULL;

    assert_int_equal(clSetUserEventStatus(ev[1], CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait_any(ev, 2, &o, &index, &one), CW_OK);
    assert_int_equal(index, 1);
    assert_int_equal(clSetUserEventStatus(ev[0], CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(cw_wait_all(ev, 2, &o, st), CW_OK);
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
    close(fds[0]);
    close(fds[1]);
}

static const struct CMUnitTest waitmany_tests[] = {
    cmocka_unit_test(waits_on_commands_expected_long_make_no_check),
    cmocka_unit_test(wait_all_completes_mixed_events),
    cmocka_unit_test(wait_all_reports_failure_after_all_finish),
    cmocka_unit_test(wait_all_times_out_then_succeeds),
    cmocka_unit_test(wait_any_returns_finished_event),
    cmocka_unit_test(wait_any_reports_first_and_failures),
    cmocka_unit_test(wait_any_times_out),
    cmocka_unit_test(poll_flag_looks_once),
    cmocka_unit_test(wait_any_drains_many_events),
    cmocka_unit_test(bad_input_is_rejected),
    cmocka_unit_test(interrupt_descriptor_ends_both_calls),
};

CW_TEST_MAIN(waitmany_tests, open_host, close_host)
