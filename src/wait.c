/* SPDX-License-Identifier: MIT */
/*
 * Layer 6.3: cw_wait. The front door of one wait: resolve the options
 * (strategy.c), take the first look, gather the facts and ask the policy
 * (policy.c) for auto's way, run that way (ways.h), then feed what it saw
 * to the learners (learn.c), in that order and in this file only.
 */
#include "driver.h"
#include "estimate.h"
#include "facts.h"
#include "learn.h"
#include "policy.h"
#include "stats_internal.h"
#include "status.h"
#include "strategy.h"
#include "table.h"
#include "ways.h"

/* A fixed strategy's choice: its row's, the plan's spin budget; its waits
 * raise the queue's estimates as auto's do (estimate.c). */
static cw__choice fixed_choice(const cw__plan *p) {
    cw__choice c = {.way = p->spin_ns ? CW__WAY_SPIN_PARK : CW__WAY_PARK,
                    .spin_ns = p->spin_ns,
                    .plan_ns = p->expected_ns,
                    .rise = true,
                    .why = "the strategy's own way"};
    return c;
}

/*
 * Run the way of choice `ch`. A class trial first takes its ticket, which
 * says which of the two ways it times; a trial is timed here (thread CPU
 * and wall), around the way alone. *driver: the way was the driver's wait.
 */
static int run_way(cl_event event, const cw__plan *p, const cw__choice *ch, cw__report *r,
                   bool *driver, cl_int *cl_status) {
    cw__way way = ch->way;
    bool timed = ch->trial == CW__TRIAL_VOTE;
    if (ch->trial == CW__TRIAL_CLASS) {
        uint32_t ticket = cw__driver_class_ticket(p->driver, ch->cls);
        cw__driver_view v;
        cw__driver_view_get(p->driver, &v);
        way = cw__policy_trial_driver(&v.cls[ch->cls], ch->cls, ticket, &timed) ? CW__WAY_DRIVER
                                                                                : CW__WAY_PARK;
    }
    *driver = way == CW__WAY_DRIVER;
    uint64_t cpu = timed ? cw__thread_cpu_ns() : 0, wall = timed ? cw_now_ns() : 0;
    int rc;
    switch (way) {
    case CW__WAY_DRIVER:
        cw__stat_add(CW__STAT_DRIVER_WAITS, 1);
        rc = cw__way_driver(event, cl_status);
        break;
    case CW__WAY_SLEEP_POLL:
        rc = cw__way_sleep_poll(event, p, ch, r, cl_status);
        break;
    case CW__WAY_POLL_STEPS:
        rc = cw__way_poll_steps(event, p, ch, r, cl_status);
        break;
    case CW__WAY_POLL:
        rc = cw__way_poll(event, p->deadline_ns, cl_status);
        break;
    case CW__WAY_PARK:
    case CW__WAY_SPIN_PARK:
    default:
        rc = cw__way_park(event, p, ch, r, cl_status);
        break;
    }
    if (timed && cpu) {
        uint64_t cpu_end = cw__thread_cpu_ns();
        r->cpu_ns = cpu_end >= cpu ? cpu_end - cpu : 0;
        r->wall_ns = cw_now_ns() - wall;
    }
    return rc;
}

static int wait_one(cl_event event, cw__plan *p, cl_int *cl_status) {
    /* clWaitForEvents validates and flushes by itself; keep it the bare call
     * so that it stays the benchmark's reference. It cannot time out: with a
     * timeout the wait takes the row's callback path (the pthread condition
     * variable: the same kind of sleep), plus the status checks. */
    if (p->bare_block)
        return cw__way_driver(event, cl_status);

    int rc;
    /* A poll is the first look alone: no registration, no estimate fed
     * (its length says nothing of the queue's waits). */
    if (p->flags & CW_WAIT_POLL) {
        rc = cw__table_look(event, !(p->flags & CW_WAIT_NO_FLUSH), cl_status);
        if (rc != CW_OK || *cl_status <= CL_COMPLETE)
            return rc != CW_OK ? rc : cw__status_verdict(*cl_status);
        return CW_ERR_TIMEOUT;
    }
    bool is_auto = p->row->spin == CW__SPIN_AUTO;
    /* One look up front: it rejects a bad handle before any registration,
     * returns at once for work that already finished or failed, and gives
     * a queued command its flush. */
    rc = cw__table_look(event, !(p->flags & CW_WAIT_NO_FLUSH), cl_status);
    if (rc != CW_OK || *cl_status <= CL_COMPLETE)
        return rc != CW_OK ? rc : cw__status_verdict(*cl_status);

    switch (p->row->method) {
    case CW__POLL:
        rc = cw__way_poll(event, p->deadline_ns, cl_status);
        break;
    case CW__BACKOFF:
        if (!p->queue_key)
            cw__estimate_plan(p, event);
        rc = cw__way_backoff(event, p, cl_status);
        break;
    case CW__BLOCK: /* with a timeout */
    case CW__CALLBACK:
    default: {
        if (p->row->estimates && !p->queue_key)
            cw__estimate_plan(p, event);
        /* What the platform does decides the checks (and auto's way); the
         * first callback wait on a platform probes it. */
        if (!p->driver)
            p->driver = cw__driver_of(event);
        cw__driver_probe(p->driver, event);
        cw__choice ch;
        if (is_auto) {
            cw__facts f;
            cw__facts_of(p, &f);
            cw__policy_choose(&f, &ch);
            cw__facts_turn();
        } else {
            ch = fixed_choice(p);
        }
        cw__report r = {0};
        bool driver = false;
        rc = run_way(event, p, &ch, &r, &driver, cl_status);
        cw__learn(event, p, &ch, driver, rc, &r);
        /* A probe that learned no lateness tries again now that the device
         * has just finished this command (cw__driver_reprobe). */
        if (rc == CW_OK)
            cw__driver_reprobe(p->driver, event);
        return rc;
    }
    }
    /* The polling rows: the estimate (backoff-poll plans with it). */
    cw__choice none = fixed_choice(p);
    cw__report r = {0};
    cw__learn(event, p, &none, false, rc, &r);
    return rc;
}

int cw_wait(cl_event event, const cw_wait_options *options, cl_int *cl_status) {
    cl_int status_sink;
    if (!cl_status)
        cl_status = &status_sink;
    *cl_status = CL_SUCCESS;
    if (!event)
        return CW_ERR_INVALID_ARGUMENT;
    cw__plan plan;
    int rc = cw__plan_make(options, &plan);
    if (rc != CW_OK)
        return rc;
    /* Only the interrupt parker looks at the descriptor: a row that waits in
     * the driver, on a condition variable or in polls cannot honour it. */
    if (plan.sleeper.fd >= 0 &&
        (plan.row->method != CW__CALLBACK || plan.row->kind == CW__COMPLETION_PTHREAD))
        return CW_ERR_UNSUPPORTED;
    cw__stat_add(CW__STAT_WAITS, 1);
    rc = wait_one(event, &plan, cl_status);
    if (rc == CW_ERR_TIMEOUT)
        cw__stat_add(CW__STAT_TIMEOUTS, 1);
    return rc;
}
