/* SPDX-License-Identifier: MIT */
/*
 * The executor of executor.h: task switching, the parker hooks, the
 * scheduling loop.
 */
#include "executor.h"

#include <linux/futex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ASan still prints one generic line per process ("ASan doesn't fully
 * support makecontext/swapcontext ... may produce false positives") as soon
 * as swapcontext is called; it is a notice, not a report, and the tests run
 * clean under ASan+UBSan and TSan with these annotations. */
#ifdef EXEC_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef EXEC_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* getcontext and swapcontext fail only on a broken process. */
static void die(const char *what) {
    perror(what);
    abort();
}

/* The parker is a member of its task: cw hands back the parker, the hooks
 * need the task. */
static task *task_of(cw_parker *p) {
    return (task *)(void *)((char *)p - offsetof(task, parker));
}

static void switch_to_task(executor *ex, task *t) {
#ifdef EXEC_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, t->stack, EXECUTOR_STACK_SIZE);
#endif
#ifdef EXEC_TSAN
    __tsan_switch_to_fiber(t->fiber, 0);
#endif
    if (swapcontext(&ex->main, &t->ctx) != 0)
        die("swapcontext");
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
    task *t = task_of(p);
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
    task *t = task_of(p);
    executor *ex = t->ex;
    if (!pthread_equal(pthread_self(), ex->thread))
        atomic_fetch_add_explicit(&t->foreign_unparks, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ex->wakes, 1, memory_order_seq_cst);
    atomic_store_explicit(&t->token, 1, memory_order_release);
    futex(&ex->wakes, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 1, NULL);
}

static const cw_parker_ops task_ops = {task_park, task_unpark};

/* Helpers a task uses to give way without waiting on anything. */
void task_yield(task *t) {
    t->state = TASK_RUNNABLE;
    switch_to_executor(t, false);
}

void task_sleep_us(task *t, unsigned us) {
    uint64_t deadline = cw_deadline_after_ns((uint64_t)us * 1000u);
    /* Nobody unparks this task while it sleeps; a token would end it early. */
    while (cw_park(&t->parker, deadline) != CW_ERR_TIMEOUT)
        ;
}

void executor_init(executor *ex) {
    memset(ex, 0, sizeof *ex);
    ex->thread = pthread_self();
    atomic_init(&ex->wakes, 0);
#ifdef EXEC_TSAN
    ex->main_fiber = __tsan_get_current_fiber();
#endif
}

/* getcontext returns twice in principle: kept in a function of its own, no
 * local of the caller is live across it (gcc's -Wclobbered). */
static void make_context(task *t) {
    if (getcontext(&t->ctx) != 0)
        die("getcontext");
    t->ctx.uc_stack.ss_sp = t->stack;
    t->ctx.uc_stack.ss_size = EXECUTOR_STACK_SIZE;
    t->ctx.uc_link = NULL;
    uintptr_t bits = (uintptr_t)t;
    makecontext(&t->ctx, (void (*)(void))task_entry, 2, (unsigned)(bits >> 32), (unsigned)bits);
}

task *executor_spawn(executor *ex, void (*fn)(task *), void *arg) {
    if (ex->count >= EXECUTOR_MAX_TASKS)
        return NULL;
    task *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->parker.ops = &task_ops;
    t->ex = ex;
    t->fn = fn;
    t->arg = arg;
    t->state = TASK_RUNNABLE;
    atomic_init(&t->token, 0);
    atomic_init(&t->foreign_unparks, 0);
    t->stack = malloc(EXECUTOR_STACK_SIZE);
    if (!t->stack) {
        free(t);
        return NULL;
    }
    make_context(t);
#ifdef EXEC_TSAN
    t->fiber = __tsan_create_fiber(0);
#endif
    ex->tasks[ex->count++] = t;
    return t;
}

void executor_run(executor *ex) {
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

void executor_free(executor *ex) {
    for (unsigned i = 0; i < ex->count; ++i) {
#ifdef EXEC_TSAN
        __tsan_destroy_fiber(ex->tasks[i]->fiber);
#endif
        free(ex->tasks[i]->stack);
        free(ex->tasks[i]);
    }
    ex->count = 0;
}
