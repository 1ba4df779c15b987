/* SPDX-License-Identifier: MIT */
/* Layer 4.5: the comparison baselines (never-yielding lock, wake under the lock). */
#include "baseline.h"
#include "relax.h"

static void keep_spinning(void) {
    cw__relax();
}

void cw__baseline_lock_noyield(cw__spinlock *lock) {
    cw__spinlock_lock_then(lock, keep_spinning);
}

void cw__baseline_cond_noyield(cw__cond *cond) {
    cond->relock = cw__baseline_lock_noyield;
}

void cw__baseline_notify_all_locked(cw__cond *cond) {
    cw__cond_wake(cw__cond_take_all(cond));
    CW__INJECT();
}
