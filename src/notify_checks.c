/* SPDX-License-Identifier: MIT */
/* Layer 6.3: the notifier's failed-command checks and their timer (notify_internal.h). */
#include "notify_internal.h"
#include "status.h"
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/timerfd.h>

/* Under the mutex: arm the timer to expire at `due` (CLOCK_MONOTONIC ns,
 * the clock of cw_now_ns and of the timerfd); 0 or UINT64_MAX disarms. */
void cw__notify_set_timer_at(cw_notifier *n, uint64_t due) {
    if (due == UINT64_MAX)
        due = 0;
    if (due == n->check_due_ns)
        return;
    n->check_due_ns = due;
    struct itimerspec its = {.it_value = cw__timespec(due)}; /* 0: disarm */
    if (timerfd_settime(n->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        cw__die("timerfd_settime", errno);
}

/* Under the mutex: the earliest check due among the live watches not
 * cancelled; UINT64_MAX for none. */
uint64_t cw__notify_earliest_due(const cw_notifier *n) {
    uint64_t due = UINT64_MAX;
    for (const cw__watch *w = n->live; w; w = w->next)
        if (!w->cancelled && w->due_ns < due)
            due = w->due_ns;
    return due;
}

/* Under the mutex: pin every pending watch whose check is due at `now`,
 * whose status the check reads, and set the next check of every watch
 * that was due (checked or not: one that could not be read now, being
 * registered or signalled already, must not keep the timer expired). */
cw__watch **cw__notify_pin_due(cw_notifier *n, uint64_t now, size_t *count) {
    *count = 0;
    cw__watch **pinned = malloc(n->pending * sizeof *pinned);
    if (!pinned)
        return NULL; /* no check this time; the next timer tick tries again */
    uint64_t next = cw_deadline_after_ns(CW_CHECK_INTERVAL_GROWTH * n->checks.first_ns);
    for (cw__watch *w = n->live; w; w = w->next) {
        if (w->cancelled || w->due_ns > now)
            continue;
        w->due_ns = next;
        if (w->registering || cw__completion_is_signalled(w->completion))
            continue;
        cw__pins_take(&w->pins);
        pinned[(*count)++] = w;
    }
    return pinned;
}

/* Outside the mutex: the failed-command check (docs/design.md, "Failed
 * commands"): read every pinned watch's status and signal the final ones
 * ourselves. A callback racing with us is harmless: the completion's claim
 * lets one of us win. A failed read leaves the OpenCL error (negative) in st:
 * the drain reads again and reports it. */
void cw__notify_check_pinned(cw__watch **pinned, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        cw__watch *w = pinned[i];
        cl_int st = 0;
        if (cw__status_read(w->event, &st) == CW_OK && st > CL_COMPLETE)
            continue;
        cw__completion_signal_token(cw__completion_token(w->completion), st);
        cw__table_forget(w->event);
    }
}
