/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.2 (internal): the strategies as a table, and the plan of one
 * wait. A row says everything cw_wait needs to know about a strategy;
 * adding one is a row here (and a wait function in wait.c when it waits in
 * a new way). The plan is the options resolved once per call: every "zero
 * means the default" is decided here and nowhere else.
 */
#ifndef CW_STRATEGY_H
#define CW_STRATEGY_H

#include <stdbool.h>
#include <stdint.h>

#include "completion.h"
#include "parker_internal.h"
#include "cw/wait.h"
#include "tunables.h"

/* How the waiting thread learns that the command finished. */
typedef enum cw__method {
    CW__BLOCK,    /* clWaitForEvents; with a timeout, as CW__CALLBACK on `kind` */
    CW__POLL,     /* read the status in a busy loop */
    CW__BACKOFF,  /* read the status with growing sleeps, planned by the estimate */
    CW__CALLBACK, /* CL_COMPLETE callback signals a completion of `kind` */
} cw__method;

/* Whether a callback wait spins on the completion before it parks. */
typedef enum cw__spin {
    CW__SPIN_NONE,
    CW__SPIN_BUDGET, /* options.spin_us, default CW_SPIN_US_DEFAULT */
    CW__SPIN_AUTO,   /* about the expected wait, when a CPU is spare (estimate.c) */
} cw__spin;

typedef struct cw__strategy_row {
    const char *name;
    cw__method method;
    cw__completion_kind kind; /* lock and wake order of the completion (callback waits) */
    cw__spin spin;
    /* It reads and feeds the per-queue estimate of the wait: every callback
     * row, for its check schedule; backoff-poll and auto also plan with it. */
    bool estimates;
} cw__strategy_row;

/* The row of a valid strategy; CW_STRATEGY_DEFAULT has the row of the
 * strategy it stands for, under its own name. */
const cw__strategy_row *cw__strategy_row_of(cw_strategy s);

/*
 * When a callback wait reads the event's status, because a failed command
 * may fire no callback (docs/design.md, "Failed commands"): first after the
 * option's interval, then every CW_CHECK_INTERVAL_GROWTH times it. One
 * schedule for cw_wait, wait-all/any and the notifier, so a failure is
 * reported within 2 * the interval wherever it waits.
 */
typedef struct cw__check_schedule {
    uint64_t first_ns, interval_ns;
    bool by_expected; /* the default interval: the first check may wait for the expected wait */
} cw__check_schedule;

/* The schedule of a check_interval_us option (0: the default). */
cw__check_schedule cw__plan_checks(uint32_t check_interval_us);

/*
 * With the default interval, a wait expected to last E ns makes its first
 * check no sooner than this many times E (and no later than
 * CW__CHECK_EXPECTED_MAX_NS for it), so that a command as long as the
 * waits before it is done before any check: a failure is then reported
 * within 2 * the interval of it or by that first check, whichever is later.
 */
#define CW__CHECK_EXPECTED_FACTOR 2u
#define CW__CHECK_EXPECTED_MAX_NS 4000000000u

/*
 * The delay from now to a wait's first check: CW_DEADLINE_NONE when
 * `fire` (failed commands fire their callbacks on the wait's platform: no
 * check is needed); the interval, or with the default interval
 * CW__CHECK_EXPECTED_FACTOR * `expected_ns` when that is longer (capped).
 * Counts the wait as unchecked or deferred (cw_stats_auto).
 */
uint64_t cw__plan_first_check_ns(const cw__check_schedule *s, uint64_t expected_ns, bool fire);

/* After a check, `waited_ns` into the wait (0: not timed): the next
 * interval, doubled up to the cap; with the default interval at least the
 * time waited so far (at most CW__CHECK_EXPECTED_MAX_NS), so that a wait
 * far longer than its estimate (a first 1 s kernel) makes a few checks, not
 * one every 32 ms: a failure is then reported within 2 * the interval of it
 * or within the time waited before it, whichever is longer. */
static inline void cw__plan_checks_grow(cw__check_schedule *s, uint64_t waited_ns) {
    if (s->interval_ns < CW_CHECK_INTERVAL_GROWTH * s->first_ns)
        s->interval_ns *= 2;
    if (s->by_expected) {
        uint64_t w = waited_ns < CW__CHECK_EXPECTED_MAX_NS ? waited_ns : CW__CHECK_EXPECTED_MAX_NS;
        if (w > s->interval_ns)
            s->interval_ns = w;
    }
}

/* One wait's options, resolved. */
typedef struct cw__plan {
    const cw__strategy_row *row;
    unsigned flags;            /* CW_WAIT_* */
    bool bare_block;           /* blocking without a timeout: clWaitForEvents itself */
    uint64_t start_ns;         /* when the wait began, for the rows that time it; else 0 */
    uint64_t deadline_ns;      /* CW_DEADLINE_NONE for none */
    cw__check_schedule checks; /* the failed-command checks */
    uint64_t spin_ns;          /* the spin budget; auto: set by cw__estimate_plan */
    uint64_t spin_cap_ns;      /* auto: the longest expected wait worth a spin */
    uintptr_t queue_key;       /* the estimate's key (cw__estimate_plan); 0 for none */
    uint64_t expected_ns;      /* the expected wait (cw__estimate_plan); 0 for none */
    struct cw__driver *driver; /* what is known of the event's platform; NULL: nothing */
    cw_parker *parker;         /* the caller's, or `sleeper`'s */
    /* The parker cw gives a wait: a futex word, and with CW_WAIT_INTERRUPT_FD
     * the descriptor that interrupts its parks (else -1). */
    cw__interrupt_parker sleeper;
} cw__plan;

/* Whether the plan parks on its sleeper's futex word alone (no caller's
 * parker, no interrupt descriptor): what the driver's wait and the ways
 * that sleep without parking (polls, backoff) require. */
static inline bool cw__plan_plain_parker(const cw__plan *p) {
    return p->parker == &p->sleeper.futex.parker && p->sleeper.fd < 0;
}

/* Check `options` (NULL: every default) and resolve them into *p: CW_OK,
 * CW_ERR_INVALID_ARGUMENT, or CW_ERR_UNSUPPORTED for CW_WAIT_INTERRUPT_FD
 * with a parker of the caller's. The plan holds the sleeper, so it must
 * stay where it is while the wait lasts. */
int cw__plan_make(const cw_wait_options *options, cw__plan *p);

/*
 * The shortest sleep backoff-poll plans through an expected wait. With the
 * cap below (no sleep longer than the time waited so far), a command that
 * runs R ns is seen done by max(2 R, R + this) plus the wake-up latency,
 * whatever the estimate says.
 */
#define CW__BACKOFF_FLOOR_NS 50000u

/*
 * The delays of a polling wait, shared by backoff-poll and auto's hybrid
 * wait: sleep through the expected rest of the wait (waking `early` ns
 * before its end), never longer than the time waited so far (at least
 * `least`: CW__BACKOFF_FLOOR_NS, or auto's hybrid's share of the expected
 * wait, cw__poll_steps_hybrid), then poll at 1, 2, 4 ... µs, each delay
 * capped at the time waited so far >> `overshoot_shift` (at least
 * `shortest`, 1 µs unless the wait sets it), so
 * the overshoot after the command finishes stays within that share of the
 * wait. No delay outlasts `longest` (the check interval, so a failure is
 * seen as soon as by the callback waits) nor the deadline.
 */
typedef struct cw__poll_steps {
    uint64_t start, expected, longest, early;
    uint64_t least; /* the least cap on a sleep toward the expected end */
    unsigned overshoot_shift;
    uint64_t step;       /* the next short delay, ns: 1 µs, doubling */
    uint64_t shortest;   /* no delay past the expected end is shorter: 1 µs */
    bool past_expected;  /* the last delay was a poll past the expected end */
    uint64_t fine;       /* no delay near the expected end longer than this (0: none) ... */
    uint64_t fine_until; /* ... until this long has been waited */
    bool grow_longest;   /* auto's hybrid, default interval: `longest` grows with the wait */
} cw__poll_steps;

/* The steps of plan p's polling wait, from its start, expected wait and
 * check interval. */
cw__poll_steps cw__poll_steps_of(const cw__plan *p, uint64_t early, unsigned overshoot_shift);
/* The next delay at `now`, ns, never past `deadline`. */
uint64_t cw__poll_steps_next(cw__poll_steps *s, uint64_t now, uint64_t deadline);

/*
 * Auto's polling waits where callbacks are late: the first sleep toward
 * the expected end may last CW__LATE_LEAST_SHIFT of the expected wait, not
 * only the time waited so far: from 50 µs the sleeps would double eight
 * times before they reach a 100 ms wait's end, each a wake-up and a status
 * read. A command that ends far earlier than expected is answered up to
 * that share late, once: that wait brings the estimate down. With the
 * default check interval the polls are spaced past it as the callback
 * waits space their checks.
 */
void cw__poll_steps_hybrid(const cw__plan *p, cw__poll_steps *s);

/* No delay longer than `fine_ns` from `early_ns` before the expected end
 * until CW__LATE_FINE_WINDOW_SHIFT past it, the first of them that long
 * (0: nothing changes). */
void cw__poll_steps_fine(cw__poll_steps *s, uint64_t fine_ns, uint64_t early_ns);

#endif
