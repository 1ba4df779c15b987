/* SPDX-License-Identifier: MIT */
/* Layer 1: relax and delay. */
#include "relax.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

bool cw__backoff_spin(cw__backoff *backoff) {
    if (backoff->round >= CW__BACKOFF_ROUNDS)
        return false;
    for (uint32_t i = 0, n = 1u << backoff->round; i < n; ++i)
        cw__relax();
    backoff->round++;
    return true;
}

void cw__microdelay(uint64_t ns) {
    uint64_t deadline = cw_deadline_after_ns(ns);
    if (ns <= CW__MICRODELAY_SPIN_NS) {
        /* Too short for a sleep to free the CPU for anyone: spin, reading the
         * clock once per batch of pauses to keep the clock's cost small. */
        while (cw_now_ns() < deadline)
            for (int i = 0; i < 16; ++i)
                cw__relax();
        return;
    }
    /* An absolute deadline makes a restart after EINTR sleep only the rest. */
    struct timespec ts = cw__timespec(deadline);
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
        ;
    /* EINVAL and EFAULT need a bad clock or timespec: both are constants or
     * built by cw__timespec. */
    if (rc != 0)
        cw__die("clock_nanosleep", rc);
}

int cw__timerslack_get(uint64_t *ns) {
    if (!ns)
        return CW_ERR_INVALID_ARGUMENT;
    int r = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (r < 0)
        return CW_ERR_UNSUPPORTED;
    *ns = (uint64_t)(unsigned)r;
    return CW_OK;
}

int cw__timerslack_set(uint64_t ns, uint64_t *old_ns) {
    uint64_t old = 0;
    if (cw__timerslack_get(&old) != CW_OK)
        return CW_ERR_UNSUPPORTED;
    if (prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0) != 0)
        return errno == EINVAL ? CW_ERR_INVALID_ARGUMENT : CW_ERR_UNSUPPORTED;
    if (old_ns)
        *old_ns = old;
    return CW_OK;
}
