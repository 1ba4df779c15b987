/* SPDX-License-Identifier: MIT */
/*
 * Scheduler hooks: the example executor (examples/executor.c) runs
 * ucontext tasks on one thread, and tasks wait in cw_wait through their own
 * parker without blocking the thread. These cases check the parker contract
 * and that tasks resume, each with its own status, while other tasks run.
 */
#include "harness.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "clfixture.h"
#include "cw.h"
#include "executor.h"

/* A task, or the test fails. */
static task *spawn(executor *ex, void (*fn)(task *), void *arg) {
    task *t = executor_spawn(ex, fn, arg);
    assert_non_null(t);
    return t;
}

/* Tasks used by the tests; they record, the test asserts afterwards. */

struct waiting {
    cl_event event;
    int64_t timeout_us;
    uint32_t check_interval_us;
    int rc;
    cl_int status;
    atomic_bool done;
    pthread_t ran_on;
};

static void wait_task(task *t) {
    struct waiting *w = t->arg;
    w->ran_on = pthread_self();
    cw_wait_options o = {.strategy = CW_STRATEGY_COOPERATIVE,
                         .timeout_us = w->timeout_us,
                         .check_interval_us = w->check_interval_us,
                         .parker = &t->parker};
    w->rc = cw_wait(w->event, &o, &w->status);
    atomic_store(&w->done, true);
}

struct ticker {
    atomic_uint ticks;
    struct waiting **watch; /* tick until all of these are done */
    unsigned nwatch;
    pthread_t ran_on;
};

static bool all_done(struct ticker *k) {
    for (unsigned i = 0; i < k->nwatch; ++i)
        if (!atomic_load(&k->watch[i]->done))
            return false;
    return true;
}

/* Another task doing its own work: it counts, and sleeps a little between
 * counts, so the executor thread really goes idle on its futex. */
static void tick_task(task *t) {
    struct ticker *k = t->arg;
    k->ran_on = pthread_self();
    while (!all_done(k)) {
        atomic_fetch_add(&k->ticks, 1);
        if (atomic_load(&k->ticks) % 4 == 0)
            task_yield(t);
        else
            task_sleep_us(t, 300);
    }
}

/* Another thread: completes events once the ticker has made progress, so
 * the test shows progress during the wait without measuring any time. */
struct gate {
    struct ticker *ticker;
    unsigned after_ticks;
    cl_event *events;
    cl_int *status;
    unsigned count;
    struct waiting **must_be_pending; /* checked when the ticks are reached */
    unsigned npending;
    atomic_uint pending_at_gate;
    unsigned ticks_at_gate;
};

static void *open_gate(void *arg) {
    struct gate *g = arg;
    while (atomic_load(&g->ticker->ticks) < g->after_ticks)
        cw_test_sleep_us(100);
    g->ticks_at_gate = atomic_load(&g->ticker->ticks);
    for (unsigned i = 0; i < g->npending; ++i)
        if (!atomic_load(&g->must_be_pending[i]->done))
            atomic_fetch_add(&g->pending_at_gate, 1);
    for (unsigned i = 0; i < g->count; ++i) {
        clSetUserEventStatus(g->events[i], g->status[i]);
        cw_test_sleep_us(200);
    }
    return NULL;
}

/*
 * One task waits in cw_wait for a kernel gated on a user event; another task
 * on the same OS thread keeps counting meanwhile. A third thread opens the
 * gate only after 50 counts, and the kernel's CL_COMPLETE callback, on a
 * PoCL worker thread, unparks the waiting task, which resumes with CW_OK.
 */
static void other_task_runs_while_wait_pends(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1u << 14), CL_SUCCESS);
    cl_event gate_ev = user_event(), kernel;
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 3.0f, 1, &gate_ev, &kernel), CL_SUCCESS);

    executor ex;
    executor_init(&ex);
    /* No periodic status check during the test: the wake-up must be the callback's. */
    struct waiting w = {
        .event = kernel, .check_interval_us = CW_CHECK_INTERVAL_US_MAX, .status = 1};
    struct waiting *watch[] = {&w};
    struct ticker k = {.watch = watch, .nwatch = 1};
    task *wt = spawn(&ex, wait_task, &w);
    spawn(&ex, tick_task, &k);
    cl_int ok = CL_COMPLETE;
    struct gate g = {.ticker = &k,
                     .after_ticks = 50,
                     .events = &gate_ev,
                     .status = &ok,
                     .count = 1,
                     .must_be_pending = watch,
                     .npending = 1};
    pthread_t t = cw_test_spawn(open_gate, &g);
    executor_run(&ex);
    cw_test_join(t);

    assert_int_equal(w.rc, CW_OK);
    assert_int_equal(w.status, CL_COMPLETE);
    /* The other task made progress while the wait was pending ... */
    assert_true(g.ticks_at_gate >= 50);
    assert_int_equal(atomic_load(&g.pending_at_gate), 1);
    /* ... on the same OS thread, which slept when nothing could run ... */
    assert_true(pthread_equal(w.ran_on, k.ran_on));
    assert_true(pthread_equal(w.ran_on, pthread_self()));
    assert_true(ex.idle_sleeps > 0);
    /* ... and the waiting task was woken from another thread. */
    assert_true(atomic_load(&wt->foreign_unparks) >= 1);
    size_t bad = 1;
    assert_int_equal(cwh_saxpy_check(&host, &sx, 3.0f, 1, &bad), CL_SUCCESS);
    assert_int_equal(bad, 0);
    executor_free(&ex);
    clReleaseEvent(kernel);
    clReleaseEvent(gate_ev);
    cwh_saxpy_free(&sx);
}

/*
 * Three waiting tasks and a ticker on one thread: one event completes, one
 * fails (no callback on PoCL: cw_wait's status check, a timed park the
 * executor's deadline handling resumes, reports it), one never completes and
 * the wait times out. Each task resumes with its own status.
 */
static void tasks_resume_with_their_own_status(void **state) {
    (void)state;
    executor ex;
    executor_init(&ex);
    struct waiting ok = {.event = user_event(), .status = 1};
    struct waiting failed = {.event = user_event(), .check_interval_us = 2000, .status = 1};
    struct waiting late = {.event = user_event(), .timeout_us = 30000, .status = 1};
    struct waiting *watch[] = {&ok, &failed, &late};
    struct ticker k = {.watch = watch, .nwatch = 3};
    spawn(&ex, wait_task, &ok);
    spawn(&ex, wait_task, &failed);
    spawn(&ex, wait_task, &late);
    spawn(&ex, tick_task, &k);
    cl_event events[] = {failed.event, ok.event};
    cl_int status[] = {-5, CL_COMPLETE};
    struct gate g = {.ticker = &k,
                     .after_ticks = 20,
                     .events = events,
                     .status = status,
                     .count = 2,
                     .must_be_pending = watch,
                     .npending = 2};
    pthread_t t = cw_test_spawn(open_gate, &g);
    executor_run(&ex);
    cw_test_join(t);

    assert_int_equal(atomic_load(&g.pending_at_gate), 2);
    assert_int_equal(ok.rc, CW_OK);
    assert_int_equal(ok.status, CL_COMPLETE);
    assert_int_equal(failed.rc, CW_ERR_COMMAND_FAILED);
    assert_int_equal(failed.status, -5);
    assert_int_equal(late.rc, CW_ERR_TIMEOUT);
    assert_int_equal(late.status, CL_SUBMITTED);
    executor_free(&ex);
    /* The timed-out wait left nothing behind: its callback now finds a stale token. */
    assert_int_equal(wait_completions(), 0);
    assert_int_equal(clSetUserEventStatus(late.event, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(ok.event);
    clReleaseEvent(failed.event);
    clReleaseEvent(late.event);
}

/* Many tasks, each waiting on its own event, completed in random order. */
static void many_tasks_resume_in_completion_order(void **state) {
    (void)state;
    enum { N = 24 };
    executor ex;
    executor_init(&ex);
    static struct waiting w[N];
    static struct waiting *watch[N];
    static cl_event events[N];
    static cl_int status[N];
    for (unsigned i = 0; i < N; ++i) {
        w[i] = (struct waiting){.event = user_event(), .check_interval_us = 5000, .status = 1};
        atomic_init(&w[i].done, false);
        watch[i] = &w[i];
        status[i] = i % 5 == 4 ? -7 : CL_COMPLETE;
        spawn(&ex, wait_task, &w[i]);
    }
    unsigned seed = (unsigned)cw_now_ns();
    printf("shuffle seed %u\n", seed);
    for (unsigned i = 0; i < N; ++i)
        events[i] = w[i].event;
    for (unsigned i = N; i > 1; --i) { /* shuffle events and statuses together */
        unsigned j = (unsigned)rand_r(&seed) % i;
        cl_event e = events[i - 1];
        cl_int s = status[i - 1];
        events[i - 1] = events[j];
        status[i - 1] = status[j];
        events[j] = e;
        status[j] = s;
    }
    struct ticker k = {.watch = watch, .nwatch = N};
    spawn(&ex, tick_task, &k);
    struct gate g = {.ticker = &k,
                     .after_ticks = 10,
                     .events = events,
                     .status = status,
                     .count = N,
                     .must_be_pending = watch,
                     .npending = N};
    pthread_t t = cw_test_spawn(open_gate, &g);
    executor_run(&ex);
    cw_test_join(t);
    assert_int_equal(atomic_load(&g.pending_at_gate), N);
    for (unsigned i = 0; i < N; ++i) {
        cl_int want = CL_COMPLETE;
        for (unsigned j = 0; j < N; ++j)
            if (events[j] == w[i].event)
                want = status[j];
        assert_int_equal(w[i].status, want);
        assert_int_equal(w[i].rc, want == CL_COMPLETE ? CW_OK : CW_ERR_COMMAND_FAILED);
        clReleaseEvent(w[i].event);
    }
    executor_free(&ex);
}

/* The task parker on its own keeps parker.h's contract. */
struct contract {
    int token_first, absorbed_second, timed_out;
    uint64_t deadline, returned_at;
    int woken_by_thread;
    atomic_bool last_park; /* the unparking thread waits for it: no race with the timed parks */
};

static void contract_task(task *t) {
    struct contract *c = t->arg;
    cw_unpark(&t->parker);
    c->token_first = cw_park(&t->parker, CW_DEADLINE_NONE);
    cw_unpark(&t->parker);
    cw_unpark(&t->parker);
    c->absorbed_second = cw_park(&t->parker, CW_DEADLINE_NONE) == CW_OK &&
                         cw_park(&t->parker, cw_deadline_after_ns(1000000)) == CW_ERR_TIMEOUT;
    c->deadline = cw_deadline_after_ns(10000000);
    c->timed_out = cw_park(&t->parker, c->deadline);
    c->returned_at = cw_now_ns();
    atomic_store(&c->last_park, true);
    c->woken_by_thread = cw_park(&t->parker, CW_DEADLINE_NONE);
}

struct delayed_unpark {
    task *t;
    struct contract *c;
};

static void *unpark_later(void *arg) {
    struct delayed_unpark *d = arg;
    while (!atomic_load(&d->c->last_park))
        cw_test_sleep_us(1000);
    cw_unpark(&d->t->parker);
    return NULL;
}

static void task_parker_keeps_the_contract(void **state) {
    (void)state;
    executor ex;
    executor_init(&ex);
    struct contract c = {0};
    atomic_init(&c.last_park, false);
    task *t = spawn(&ex, contract_task, &c);
    struct delayed_unpark d = {t, &c};
    pthread_t th = cw_test_spawn(unpark_later, &d);
    executor_run(&ex);
    cw_test_join(th);
    assert_int_equal(c.token_first, CW_OK);
    assert_true(c.absorbed_second);
    assert_int_equal(c.timed_out, CW_ERR_TIMEOUT);
    assert_true(c.returned_at >= c.deadline);
    assert_int_equal(c.woken_by_thread, CW_OK);
    assert_int_equal(atomic_load(&t->foreign_unparks), 1);
    assert_true(ex.idle_sleeps > 0);
    executor_free(&ex);
}

static const struct CMUnitTest executor_tests[] = {
    cmocka_unit_test(task_parker_keeps_the_contract),
    cmocka_unit_test(other_task_runs_while_wait_pends),
    cmocka_unit_test(tasks_resume_with_their_own_status),
    cmocka_unit_test(many_tasks_resume_in_completion_order),
};

CW_TEST_MAIN(executor_tests, open_host, close_host)
