/* SPDX-License-Identifier: MIT */
/* Layer 6.3: what a wait teaches (learn.h). */
#include "learn.h"
#include "driver.h"
#include "estimate.h"
#include "stats_internal.h"
#include "table.h"

/*
 * A status read found the command complete while the wait's completion was
 * not signalled: its callback is late. Leave the event's record (if any)
 * to measure by how much when the callback lands (one measurement at a
 * time per platform), or leave as after any finished wait. Where the
 * device takes every CPU this thread may run on, the thread that calls the
 * callback (on PoCL the worker that set the status) may simply be waiting
 * for the CPU this thread holds: left to land after the wait, the callback
 * would come once this thread sleeps again, after the program's own work,
 * and one such sample turns a platform late for every short wait. There
 * the wait first gives the CPU away: it parks on the completion for up to
 * CW__LATE_FLOOR_NS (not past its deadline), and a callback that lands
 * meanwhile is measured as it came; only one later than that, with the CPU
 * free for it, is left to measure after the wait, and is late.
 */
static void seen_first(cl_event event, const cw__plan *p, const cw__report *r) {
    cw__completion *c = r->seen_first;
    uint64_t now = cw_now_ns();
    if (!cw__driver_measure_claim(p->driver, now)) {
        cw__table_leave(event, c, true);
        return;
    }
    if (cw__estimate_shares_cpus(p->queue_key)) {
        uint64_t until = cw__after_ns(now, CW__LATE_FLOOR_NS);
        if (until > p->deadline_ns)
            until = p->deadline_ns;
        cw__stat_add(CW__STAT_PARKS, 1);
        if (cw__completion_wait(c, p->parker, until) == CW_OK || cw__completion_is_signalled(c)) {
            cw__driver_lateness_landed(p->driver, cw__completion_landed_ns(c), r->seen_ns,
                                       r->running_ns);
            cw__table_leave(event, c, true);
            return;
        }
    }
    if (!cw__table_leave_seen(event, c, r->seen_ns, r->running_ns, p->driver))
        cw__driver_measure_cancel(p->driver);
}

void cw__learn(cl_event event, const cw__plan *p, const cw__choice *ch, bool driver, int rc,
               const cw__report *r) {
    if (r->seen_first)
        seen_first(event, p, r);
    if (r->callback_in_time)
        cw__driver_lateness_sample(p->driver, 0);
    if (rc == CW_OK && r->cpu_ns) {
        if (ch->trial == CW__TRIAL_VOTE)
            cw__driver_vote_sample(p->driver, r->cpu_ns, r->wall_ns);
        else if (ch->trial == CW__TRIAL_CLASS)
            cw__driver_class_sample(p->driver, ch->cls, driver, r->cpu_ns, r->wall_ns);
    }
    if (rc != CW_OK || !p->queue_key)
        return;
    uint64_t took = cw_now_ns() - p->start_ns;
    cw__estimate_put(p->queue_key, took, ch->rise);
    if (r->ended_ns)
        cw__estimate_end_put(p->queue_key, r->ended_ns - p->start_ns, r->ended_span_ns, ch->rise);
}
