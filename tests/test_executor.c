/* SPDX-License-Identifier: MIT */
/*
 * Scheduler hooks: a language runtime's tasks wait through cw_wait without
 * blocking their OS thread. A small executor runs ucontext tasks on one
 * thread; each task's parker (cw_wait_options.parker) switches back to the
 * executor instead of sleeping, and the completion callback, on a PoCL
 * thread, makes the task runnable again and wakes the executor thread, which
 * sleeps on a futex when no task can run.
 *
 * It is the smallest honest model of what Julia, Go or a Python runtime would
 * plug in: park = suspend the current task, unpark = schedule it from any
 * thread, deadlines kept by the scheduler's timer.
 */
#include "harness.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "clfixture.h"
#include "cw.h"

/* Stack switching confuses the sanitizers unless told about it: the fiber
 * annotations below keep ASan's and TSan's shadow stacks right. ASan still
 * prints one generic line per process ("ASan doesn't fully support
 * makecontext/swapcontext ... may produce false positives") as soon as
 * swapcontext is called; it is a notice, not a report, and the suite runs
 * clean under ASan+UBSan and TSan. */
#ifdef __has_feature
#if __has_feature(address_sanitizer)
#define EXEC_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define EXEC_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(EXEC_ASAN)
#define EXEC_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(EXEC_TSAN)
#define EXEC_TSAN 1
#endif
#ifdef EXEC_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef EXEC_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#define MAX_TASKS 32
#define STACK_SIZE (512u * 1024u)

enum task_state { TASK_RUNNABLE, TASK_PARKED, TASK_DONE };

typedef struct executor executor;

typedef struct task {
    cw_parker parker; /* first member: the ops cast back */
    executor *ex;
    ucontext_t ctx;
    void *stack;
    enum task_state state; /* executor thread only */
    uint64_t deadline;     /* while parked */
    atomic_int token;      /* the parker's one token; set by unpark on any thread */
    atomic_uint foreign_unparks;
    void (*fn)(struct task *);
    void *arg;
#ifdef EXEC_ASAN
    void *fake_stack;
#endif
#ifdef EXEC_TSAN
    void *fiber;
#endif
} task;

struct executor {
    ucontext_t main;
    task *tasks[MAX_TASKS];
    unsigned count;
    pthread_t thread;
    /* The executor's futex word. Every unpark bumps it before publishing its
     * token; the executor reads it before scanning the tokens and sleeps only
     * while it is unchanged, so no wake-up falls between scan and sleep. */
    atomic_uint wakes;
    unsigned idle_sleeps;
#ifdef EXEC_ASAN
    const void *main_bottom;
    size_t main_size;
#endif
#ifdef EXEC_TSAN
    void *main_fiber;
#endif
};

static void switch_to_task(executor *ex, task *t) {
#ifdef EXEC_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, t->stack, STACK_SIZE);
#endif
#ifdef EXEC_TSAN
    __tsan_switch_to_fiber(t->fiber, 0);
#endif
    assert_int_equal(swapcontext(&ex->main, &t->ctx), 0);
#ifdef EXEC_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

static void switch_to_executor(task *t, bool finished) {
    executor *ex = t->ex;
#ifdef EXEC_ASAN
    __sanitizer_start_switch_fiber(finished ? NULL : &t->fake_stack, ex->main_bottom,
                                   ex->main_size);
#else
    (void)finished;
#endif
#ifdef EXEC_TSAN
    __tsan_switch_to_fiber(ex->main_fiber, 0);
#endif
    swapcontext(&t->ctx, &ex->main);
#ifdef EXEC_ASAN
    __sanitizer_finish_switch_fiber(t->fake_stack, &ex->main_bottom, &ex->main_size);
#endif
}

static void task_entry(unsigned hi, unsigned lo) {
    task *t = (task *)(((uintptr_t)hi << 32) | lo);
#ifdef EXEC_ASAN
    __sanitizer_finish_switch_fiber(NULL, &t->ex->main_bottom, &t->ex->main_size);
#endif
    t->fn(t);
    t->state = TASK_DONE;
    switch_to_executor(t, true); /* never resumed */
}

/*
 * The hooks. park runs inside the task, on the executor thread: instead of
 * sleeping it switches to the executor, which resumes the task once the token
 * is there or the deadline passed. It returns 0 only after consuming the token
 * (parker.h's contract), so cw's condition can rely on it.
 */
static int task_park(cw_parker *p, uint64_t deadline_ns) {
    task *t = (task *)p;
    for (;;) {
        /* Acquire pairs with unpark's release: what the signaller wrote before
         * unparking (the completion's state) is visible to the task. */
        if (atomic_exchange_explicit(&t->token, 0, memory_order_acquire))
            return CW_OK;
        if (deadline_ns != CW_DEADLINE_NONE && cw_now_ns() >= deadline_ns)
            return CW_ERR_TIMEOUT;
        t->deadline = deadline_ns;
        t->state = TASK_PARKED;
        switch_to_executor(t, false);
    }
}

static long futex(atomic_uint *word, int op, unsigned val, const struct timespec *ts) {
    return syscall(SYS_futex, (unsigned *)word, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

/*
 * unpark runs on any thread: here the PoCL thread that runs the CL_COMPLETE
 * callback (or sets the user event). It bumps the executor's word first and
 * publishes the token second: once the token is visible the task may resume,
 * finish and be freed, so after that only the futex wake follows, which
 * passes the word's address to the kernel and reads nothing. The executor
 * outlives the bump: it cannot finish while this task is parked.
 */
static void task_unpark(cw_parker *p) {
    task *t = (task *)p;
    executor *ex = t->ex;
    if (!pthread_equal(pthread_self(), ex->thread))
        atomic_fetch_add_explicit(&t->foreign_unparks, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ex->wakes, 1, memory_order_seq_cst);
    atomic_store_explicit(&t->token, 1, memory_order_release);
    futex(&ex->wakes, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 1, NULL);
}

static const cw_parker_ops task_ops = {task_park, task_unpark};

/* Helpers a task uses to give way without waiting on anything. */
static void task_yield(task *t) {
    t->state = TASK_RUNNABLE;
    switch_to_executor(t, false);
}

static void task_sleep_us(task *t, unsigned us) {
    uint64_t deadline = cw_deadline_after_ns((uint64_t)us * 1000u);
    /* Nobody unparks this task while it sleeps; a token would end it early. */
    while (cw_park(&t->parker, deadline) != CW_ERR_TIMEOUT)
        ;
}

static void executor_init(executor *ex) {
    memset(ex, 0, sizeof *ex);
    ex->thread = pthread_self();
    atomic_init(&ex->wakes, 0);
#ifdef EXEC_TSAN
    ex->main_fiber = __tsan_get_current_fiber();
#endif
}

static task *spawn(executor *ex, void (*fn)(task *), void *arg) {
    assert_true(ex->count < MAX_TASKS);
    task *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->parker.ops = &task_ops;
    t->ex = ex;
    t->fn = fn;
    t->arg = arg;
    t->state = TASK_RUNNABLE;
    atomic_init(&t->token, 0);
    atomic_init(&t->foreign_unparks, 0);
    t->stack = malloc(STACK_SIZE);
    assert_non_null(t->stack);
    assert_int_equal(getcontext(&t->ctx), 0);
    t->ctx.uc_stack.ss_sp = t->stack;
    t->ctx.uc_stack.ss_size = STACK_SIZE;
    t->ctx.uc_link = NULL;
    uintptr_t bits = (uintptr_t)t;
    makecontext(&t->ctx, (void (*)(void))task_entry, 2, (unsigned)(bits >> 32), (unsigned)bits);
#ifdef EXEC_TSAN
    t->fiber = __tsan_create_fiber(0);
#endif
    ex->tasks[ex->count++] = t;
    return t;
}

/* Run until every task finished. */
static void executor_run(executor *ex) {
    for (;;) {
        unsigned seen = atomic_load_explicit(&ex->wakes, memory_order_seq_cst);
        uint64_t now = cw_now_ns(), next = CW_DEADLINE_NONE;
        unsigned live = 0;
        bool ran = false;
        for (unsigned i = 0; i < ex->count; ++i) {
            task *t = ex->tasks[i];
            if (t->state == TASK_DONE)
                continue;
            live++;
            if (t->state == TASK_PARKED && !atomic_load_explicit(&t->token, memory_order_acquire) &&
                (t->deadline == CW_DEADLINE_NONE || now < t->deadline)) {
                if (t->deadline < next)
                    next = t->deadline;
                continue;
            }
            t->state = TASK_RUNNABLE;
            switch_to_task(ex, t);
            ran = true;
        }
        if (live == 0)
            break;
        if (ran)
            continue;
        /* Nothing can run: sleep until an unpark or the nearest deadline.
         * FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time. Any return
         * (woken, changed word, signal, timeout) just leads to a rescan. */
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        ex->idle_sleeps++;
        futex(&ex->wakes, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seen,
              next == CW_DEADLINE_NONE ? NULL : &ts);
    }
}

static void executor_free(executor *ex) {
    for (unsigned i = 0; i < ex->count; ++i) {
#ifdef EXEC_TSAN
        __tsan_destroy_fiber(ex->tasks[i]->fiber);
#endif
        free(ex->tasks[i]->stack);
        free(ex->tasks[i]);
    }
    ex->count = 0;
}

/* ---- tasks used by the tests; they record, the test asserts afterwards ---- */

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
