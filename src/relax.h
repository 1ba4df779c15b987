/* SPDX-License-Identifier: MIT */
/* cw layer 1 (internal): relax and delay. */
#ifndef CW_RELAX_H
#define CW_RELAX_H

#include <stdbool.h>
#include <stdint.h>
#include "base.h"

/* One CPU pause hint (cw__pause in base.h). */
static inline void cw__relax(void) {
    cw__pause();
}

/*
 * Bounded exponential spin: round k spins 2^k pauses. After
 * CW__BACKOFF_ROUNDS rounds (1 + 2 + ... + 64 = 127 pauses, a few
 * microseconds) cw__backoff_spin stops spinning and returns false, telling the
 * caller that spinning has stopped paying and it should yield or sleep.
 */
#define CW__BACKOFF_ROUNDS 7u

typedef struct cw__backoff {
    uint32_t round;
} cw__backoff;

#define CW__BACKOFF_INITIALIZER                                                                    \
    { 0 }

/* Spin the next round; false (without spinning) once the budget is spent. */
bool cw__backoff_spin(cw__backoff *backoff);

/*
 * Delays at or below this many nanoseconds are spun (checking the monotonic
 * clock between pause batches); longer ones sleep. The bound is about the
 * cost of a context switch, so a sleep shorter than that cannot give any
 * useful time to another thread (CoreCLR's minipal_microdelay uses the same bound).
 */
#define CW__MICRODELAY_SPIN_NS 10000u

/*
 * Wait about `ns` nanoseconds. Sleeps use an absolute deadline, so a signal
 * (EINTR) restarts the sleep without adding to it: the only overshoot is the
 * kernel's own wake-up latency and the thread's timer slack.
 */
void cw__microdelay(uint64_t ns);

/*
 * Per-thread timer slack (prctl PR_SET_TIMERSLACK): Linux may defer a
 * sleeping thread's wake-up by up to this many nanoseconds (50 µs by default)
 * to batch wake-ups. cw__timerslack_set stores the previous value in *old_ns
 * when old_ns is not NULL. Setting 0 restores the thread's default slack.
 * Both return 0 or CW_ERR_UNSUPPORTED where the call fails.
 */
int cw__timerslack_get(uint64_t *ns);
int cw__timerslack_set(uint64_t ns, uint64_t *old_ns);

#endif
