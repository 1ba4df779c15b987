/* SPDX-License-Identifier: MIT */
/*
 * A cooperative executor for cw's scheduler hooks: ucontext tasks on one OS
 * thread, each waiting in cw_wait through a parker of its own
 * (cw_wait_options.parker) that switches back to the executor instead of
 * sleeping. The completion callback, on a driver thread, makes the task
 * runnable again and wakes the executor thread, which sleeps on a futex when
 * no task can run.
 *
 * It is the smallest honest model of what a language runtime (Julia, Go, a
 * Python event loop) plugs in: park = suspend the current task, unpark =
 * schedule it from any thread, deadlines kept by the scheduler's timer.
 * Copy it and replace the scheduling policy; keep the parker contract
 * (cw/parker.h, cw_parker(3)).
 *
 * Threads: executor_init, executor_spawn, executor_run and executor_free are
 * called on the executor's thread; task_yield and task_sleep_us inside a
 * task. Only the parker's unpark runs on other threads.
 */
#ifndef CW_EXAMPLE_EXECUTOR_H
#define CW_EXAMPLE_EXECUTOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

#include "cw.h"

/* Stack switching confuses the sanitizers unless told about it: the tasks
 * carry what their fiber annotations need (executor.c). */
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

#define EXECUTOR_MAX_TASKS 32
#define EXECUTOR_STACK_SIZE (512u * 1024u)

enum task_state { TASK_RUNNABLE, TASK_PARKED, TASK_DONE };

typedef struct executor executor;

typedef struct task {
    cw_parker parker; /* handed to cw_wait; the hooks find the task with offsetof */
    executor *ex;
    ucontext_t ctx;
    void *stack;
    enum task_state state;       /* executor thread only */
    uint64_t deadline;           /* while parked */
    atomic_int token;            /* the parker's one token; set by unpark on any thread */
    atomic_uint foreign_unparks; /* unparks from other threads, for tests and curiosity */
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
    task *tasks[EXECUTOR_MAX_TASKS];
    unsigned count;
    pthread_t thread;
    /* The executor's futex word. Every unpark bumps it before publishing its
     * token; the executor reads it before scanning the tokens and sleeps only
     * while it is unchanged, so no wake-up falls between scan and sleep. */
    atomic_uint wakes;
    unsigned idle_sleeps; /* times it slept with nothing to run */
#ifdef EXEC_ASAN
    const void *main_bottom;
    size_t main_size;
#endif
#ifdef EXEC_TSAN
    void *main_fiber;
#endif
};

/* The calling thread becomes the executor's thread. */
void executor_init(executor *ex);
/* A task that runs fn(task) with task->arg == arg once executor_run starts;
 * NULL when EXECUTOR_MAX_TASKS are spawned or memory ran out. */
task *executor_spawn(executor *ex, void (*fn)(task *), void *arg);
/* Runs tasks until every one has returned. */
void executor_run(executor *ex);
/* Frees the tasks (after executor_run). */
void executor_free(executor *ex);

/* Inside a task: give way to the other tasks, or sleep without blocking the
 * thread. */
void task_yield(task *t);
void task_sleep_us(task *t, unsigned us);

#endif
