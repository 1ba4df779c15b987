/* SPDX-License-Identifier: MIT */
/* cw: the parker, how a waiter sleeps and is woken. */
#ifndef CW_PARKER_H
#define CW_PARKER_H

#include <stdint.h>
#include "cw/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A parker holds at most one wake-up token. unpark() deposits the token (a
 * second unpark before the next park is absorbed); park() consumes it,
 * sleeping until it arrives or the deadline passes.
 *
 * The ops table is the seam for embedding: the default implementation parks
 * an OS thread on a futex; a language runtime can supply ops that suspend a
 * task, and an event loop ops that signal a file descriptor, without any
 * change to the layers above.
 *
 * Contract for implementations:
 * - park(p, deadline) returns 0 only once it consumed a token, or
 *   CW_ERR_TIMEOUT when the deadline (CLOCK_MONOTONIC ns, CW_DEADLINE_NONE
 *   for none) passed first. Signals and spurious wake-ups are absorbed inside
 *   park: the condition layer counts on 0 meaning "the token was taken".
 * - unpark(p) may run on any thread, concurrently with park. Once the token
 *   is visible the owner may return from park and free the parker, so unpark
 *   must not touch the parker's memory after publishing the token (a futex
 *   wake on its address is fine: the kernel only hashes the address).
 * - Only one thread parks on a parker at a time.
 *
 * Scheduler hooks. A language runtime passes its own parker in
 * cw_wait_options.parker: park suspends the current task and switches to the
 * runtime's scheduler; unpark, called by the CL_COMPLETE callback on a driver
 * thread, makes the task runnable and wakes the scheduler's thread. The
 * scheduler must honour the deadline: cooperative waits park with one (the
 * failed-command check, the timeout) and rely on CW_ERR_TIMEOUT. A complete
 * example on ucontext tasks is examples/executor.c in cw's sources.
 *
 * There is no separate yield op, because nothing in cw would call it for a
 * task: park already is the yield to the runtime's scheduler, and cw never
 * holds a lock across park, so the holder of a lock a task spins on is always
 * another OS thread (a driver thread), never a sibling task; the spin lock's
 * sched_yield, which lets that thread run, is the right yield there. The one
 * remaining OS-level block is short: a wait that gives up while a callback
 * is landing its signal waits, on a futex of its own, for that callback to
 * finish (it is running, so the wait is bounded).
 */
typedef struct cw_parker cw_parker;

typedef struct cw_parker_ops {
    int (*park)(cw_parker *parker, uint64_t deadline_ns);
    void (*unpark)(cw_parker *parker);
} cw_parker_ops;

struct cw_parker {
    const cw_parker_ops *ops;
};

static inline int cw_park(cw_parker *parker, uint64_t deadline_ns) {
    return parker->ops->park(parker, deadline_ns);
}

static inline void cw_unpark(cw_parker *parker) {
    parker->ops->unpark(parker);
}

/*
 * The default parker: one futex word per waiter. Embed it (on the stack is
 * fine), initialise it, and pass &fp->parker. Its members are cw's: touch
 * them only through cw_futex_parker_init and the ops. `state` is accessed
 * atomically by cw (it is a plain int here so that C++ can include this
 * header); it is int-aligned, as the futex system call requires.
 */
typedef struct cw_futex_parker {
    cw_parker parker;
    int state; /* -1 parked, 0 empty, 1 token */
} cw_futex_parker;

CW_API void cw_futex_parker_init(cw_futex_parker *fp);

#ifdef __cplusplus
}
#endif
#endif
