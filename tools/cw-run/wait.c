/* SPDX-License-Identifier: MIT */
/* clWaitForEvents and clFinish with cw's waits (wait.h). */
#include "wait.h"

#include <stdbool.h>
#include <stdint.h>

#include "cw.h"
#include "gate.h"
#include "hang.h"
#include "lastcmd.h"
#include "learned.h"
#include "preload.h"
#include "real.h"
#include "settle.h"
#include "trace.h"

/* How a wait with cw ended; the interposer turns it into its OpenCL code
 * (verdict). A type of its own, so that it cannot pass for a cw_error. */
typedef enum wait_end {
    WAIT_COMPLETE, /* every event completed */
    WAIT_FAILED,   /* a command ended with a negative status */
    /* The real call decides: the strategy is blocking, or cw could not
     * judge the events (their handles, an OpenCL error, no memory). The
     * real call then finds every event finished, or reports the error the
     * program would have seen natively. */
    WAIT_UNJUDGED,
} wait_end;

/*
 * A wait with a timeout (--hang-ms) and a wait on several events subscribe
 * to cw's shared record of each event, which holds a reference on it. cw
 * forgets a finished event's record at the end of the wait, but tears it
 * down (and drops that reference) only at its next call, so the event's
 * reference count, and on implementations whose events hold their queue
 * the queue's too, would stay one higher than natively after the wait
 * returns. The second cw_event_forget is that next call. An event still
 * unfinished (the list held a failed one) loses only its record: a later
 * wait makes a new one.
 */
static void drop_records(const cl_event *evs, cl_uint n) {
    for (cl_uint i = 0; i < n; ++i)
        cw_event_forget(evs[i]);
    cw_event_forget(evs[0]);
}

/*
 * The options of the preload's waits with cw: the configured strategy,
 * spin budget and latency preference, and with --hang-ms the threshold as
 * a timeout. The check interval is cw's default, which plans the first
 * failed-command check with cw's own estimate of the queue's waits
 * (cw_wait(3)). Most of these waits are the only one on their event (a
 * marker or a transfer's event the preload made, a queue's last command),
 * so a callback of their own is cheaper than cw's shared one; the flag
 * only acts without a timeout, i.e. not while --hang-ms is being watched.
 */
static cw_wait_options wait_options(void) {
    cw_wait_options o = cwp_cfg.opt;
    o.flags |= CW_WAIT_OWN_CALLBACK;
    if (cwp_cfg.hang_ns)
        o.timeout_us = (int64_t)(cwp_cfg.hang_ns / 1000u);
    return o;
}

/*
 * Wait for n events with cw. One event goes through cw_wait, which honours
 * the strategy; several through cw_wait_all (one parker for all, the
 * cooperative wait).
 */
static wait_end wait_events(enum cwp_call k, const cl_event *evs, cl_uint n) {
    if (cwp_native_blocking())
        return WAIT_UNJUDGED;
    cwp_learned_begin();
    cw_wait_options o = wait_options();
    if (cwp_cfg.trace)
        cwp_trace_wait_flags(o.flags);
    ++cwp_inside_cw;
    wait_end end;
    /* With --hang-ms: when the wait began, for the line that says when a
     * reported wait ended. */
    uint64_t began = cwp_cfg.hang_ns ? cwp_wall_ns() : 0;
    bool reported = false;
    for (;;) {
        cl_int st;
        int rc = n == 1 ? cw_wait(evs[0], &o, &st) : cw_wait_all(evs, n, &o, NULL);
        if (rc != CW_ERR_TIMEOUT || o.timeout_us == 0) {
            end = rc == CW_OK                   ? WAIT_COMPLETE
                  : rc == CW_ERR_COMMAND_FAILED ? WAIT_FAILED
                                                : WAIT_UNJUDGED;
            break;
        }
        /* Only the hang threshold sets a timeout: report once, then wait
         * on (natively for the blocking strategy), or abort. */
        cwp_hang_report(k, evs, n);
        reported = true;
        if (cwp_cfg.native) {
            /* The rest of the wait is the driver's, on these events (for
             * clFinish the marker: its queue was flushed already). */
            cl_int e = cwp_real.wait_for_events(n, evs);
            end = e == CL_SUCCESS                                     ? WAIT_COMPLETE
                  : e == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ? WAIT_FAILED
                                                                      : WAIT_UNJUDGED;
            break;
        }
        o.timeout_us = 0;
    }
    if (reported)
        cwp_hang_ended(k, cwp_wall_ns() - began,
                       end == WAIT_COMPLETE ? "complete"
                       : end == WAIT_FAILED ? "a command failed"
                                            : "the driver's own call decides");
    if (cwp_cfg.hang_ns)
        cwp_gate_sweep();
    if (n > 1 || cwp_cfg.hang_ns)
        drop_records(evs, n);
    --cwp_inside_cw;
    return end;
}

/* What clWaitForEvents returns after a wait on evs that ended so. */
static cl_int verdict(wait_end end, const cl_event *evs, cl_uint n) {
    switch (end) {
    case WAIT_COMPLETE:
        return CL_SUCCESS;
    case WAIT_FAILED:
        return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    default:
        return cwp_real.wait_for_events(n, evs);
    }
}

cl_int cwp_wait_one(enum cwp_call k, cl_event event) {
    return verdict(wait_events(k, &event, 1), &event, 1);
}

/*
 * The events' statuses, one read each. Most clWaitForEvents calls find
 * their events complete already (in pyopencl's tests, for example); then
 * the call returns with no more than the driver's own wait would have done:
 * no wait options, no cw table, no clock. Events of several contexts still
 * go to the real call, which rejects them. CL_COMPLETE only: a failed or
 * unfinished event, or one whose status cannot be read, takes the way
 * below.
 */
static bool all_complete(const cl_event *evs, cl_uint n) {
    for (cl_uint i = 0; i < n; ++i) {
        cl_int st;
        if (!evs[i] ||
            clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
                CL_SUCCESS ||
            st != CL_COMPLETE)
            return false;
    }
    return true;
}

/* Whether the events are all valid and of one context, as the real call
 * requires (else it returns CL_INVALID_EVENT or CL_INVALID_CONTEXT). */
static bool one_context(const cl_event *evs, cl_uint n) {
    cl_context ctx0 = NULL;
    for (cl_uint i = 0; i < n; ++i) {
        cl_context ctx = NULL;
        if (!evs[i] ||
            clGetEventInfo(evs[i], CL_EVENT_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS)
            return false;
        if (i == 0)
            ctx0 = ctx;
        else if (ctx != ctx0)
            return false;
    }
    return true;
}

static cl_int wait_for_events(cl_uint n, const cl_event *evs) {
    /* Bad input is the real call's to judge, with the codes it gives:
     * CL_INVALID_VALUE, CL_INVALID_EVENT, CL_INVALID_CONTEXT. */
    if (n == 0 || !evs || n > CW_WAIT_MANY_MAX)
        return cwp_real.wait_for_events(n, evs);
    /* --strategy blocking: the program's own call, only measured. */
    if (cwp_native_blocking())
        return cwp_real.wait_for_events(n, evs);
    if (all_complete(evs, n) && (n == 1 || one_context(evs, n)))
        return CL_SUCCESS;
    /* One event: its status read above checked the handle. */
    if (n > 1 && !one_context(evs, n))
        return cwp_real.wait_for_events(n, evs);
    return verdict(wait_events(CWP_WAIT_FOR_EVENTS, evs, n), evs, n);
}

/* Every call is counted in the profile, those the real call judges too.
 * Without --stats or --trace there is nothing to count, and no span is
 * made: making, copying and ending the span record cost about a fifth of
 * the driver's own call on events already complete (valgrind's count of
 * instructions: 55, against PoCL's 257). */
CWP_EXPORT cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list) {
    if (cwp_passthrough())
        return cwp_real.wait_for_events(num_events, event_list);
    if (!cwp_profiled())
        return wait_for_events(num_events, event_list);
    cwp_span s = cwp_span_begin(CWP_WAIT_FOR_EVENTS);
    cwp_span_subject(&s, NULL, event_list, num_events);
    cl_int r = wait_for_events(num_events, event_list);
    cwp_span_end(CWP_WAIT_FOR_EVENTS, s, r);
    return r;
}

/*
 * clSetUserEventStatus. A wait with cw ends at the event's CL_COMPLETE
 * callback, which the driver runs inside this call, and PoCL 3.1 still
 * uses the event after the callback returned (it locks it again for the
 * next callback). When the thread that sets the status holds no reference
 * of its own and the waiting thread releases the event as soon as its wait
 * returns, that release would free the event under the driver: natively
 * PoCL's own wait wakes only at the end of this call. The preload's
 * reference for the length of the call keeps the event alive until then,
 * whichever wait ends first. A bad handle gets no reference and the real
 * call's error.
 *
 * A negative status also fails, inside this call, the commands that wait
 * on the event, and the preload's own references to those are let go only
 * after it (settle.h). Under --strategy blocking without --hang-ms the
 * preload waits natively and holds no reference of its own to put off;
 * the call is counted all the same (one atomic add), so the rule has no
 * exception to keep in step with the strategies.
 */
CWP_EXPORT cl_int clSetUserEventStatus(cl_event event, cl_int execution_status) {
    if (cwp_passthrough())
        return cwp_real.set_user_event_status(event, execution_status);
    bool failing = execution_status < 0;
    if (failing)
        cwp_settle_failing_begin();
    bool held = !cwp_native_blocking() && event && clRetainEvent(event) == CL_SUCCESS;
    cl_int r = cwp_real.set_user_event_status(event, execution_status);
    if (held)
        clReleaseEvent(event);
    if (failing)
        cwp_settle_failing_end();
    return r;
}

/*
 * clFinish. Under the cw strategies it waits with cw on the queue's last
 * command, when the preload saw it enqueued on an in-order queue
 * (lastcmd.h), and otherwise on a marker. The last command costs no extra
 * command: a marker is one more command for the driver to create, schedule,
 * run and retire, which costs the waiting thread time and delays the next
 * launch (docs/cw-run-internals.md, "clFinish: the last command, or a marker"). With
 * the last command, the real clFinish still has the final word: it returns
 * at once when that command was the queue's last, and otherwise finishes,
 * natively, what the preload did not see (a command enqueued through an
 * entry point it does not interpose, or by another thread in between). A
 * failed command is the real call's to report too, as on the marker path.
 *
 * How long the wait is expected to last, when it checks for a failed
 * command and whether the driver's own clFinish serves it are cw's
 * answers, not the preload's: the waits pass cw's default check interval,
 * which cw plans from its own estimate of the queue's waits, and
 * finish_by_driver asks cw how it would wait on the queue now.
 */

/*
 * The driver's own clFinish, with no marker and no cw wait, where cw says
 * (cw_advice_get) that its wait on a command of this queue, with the
 * preload's options, would be the driver's own wait and nothing else:
 * auto, once it has settled on the driver's wait for waits of the queue's
 * expected length on its platform (by its timed trials, or by what an
 * earlier run taught, learned.h). The marker a cw wait would need is one
 * more command for the driver to make, run and retire (in clpeak's
 * bandwidth test such waits cost 1.1 to 1.4 times the real clFinish), and
 * the driver's clFinish needs no failed-command checks: a failure ends it
 * as it ends the program's own. cw answers no under every strategy but
 * auto (blocking makes the program's own calls before this is asked), and
 * with --hang-ms, whose timeout the driver's wait cannot honour. While it
 * answers no, clFinish waits with cw, and those waits teach cw the queue's
 * waits and probe its platform.
 */
static bool finish_by_driver(cl_command_queue queue) {
    cw_wait_options o = wait_options();
    cw_advice a;
    ++cwp_inside_cw; /* the queue's device and platform are cw's own queries */
    bool driver = cw_advice_get(queue, &o, &a, sizeof a) == CW_OK && a.driver_wait;
    --cwp_inside_cw;
    return driver;
}

CWP_EXPORT cl_int clFinish(cl_command_queue queue) {
    if (cwp_passthrough())
        return cwp_real.finish(queue);
    bool native = cwp_native_blocking();
    cwp_last last = {NULL, false, 0};
    if (!native)
        last = cwp_last_take(queue);
    if (last.idle) {
        /*
         * Idle: nothing the preload saw is unfinished. A marker would be
         * one more command for nothing; the real clFinish returns at once,
         * and finishes natively what the preload did not see (another
         * thread's enqueue whose recording raced this take, a command
         * through an entry point it does not interpose). Not a wait: cw's
         * estimate of the queue's waits is not fed, and without --stats
         * or --trace no clock is read.
         */
        if (!cwp_profiled())
            return cwp_real.finish(queue);
        cwp_span s = cwp_span_begin(CWP_FINISH);
        cwp_span_subject(&s, queue, NULL, 0);
        cl_int r = cwp_real.finish(queue);
        cwp_count_finish_path(CWP_FINISH_IDLE);
        cwp_span_end(CWP_FINISH, s, r);
        return r;
    }
    if (!native && finish_by_driver(queue)) {
        /* Timed with or without --stats: cw's estimate of the queue's
         * waits follows them through cw_advice_waited, as it would follow
         * its own waits. A failed call (a failed command, a bad queue)
         * tells nothing of them. */
        cwp_span s = cwp_span_begin(CWP_FINISH);
        cwp_span_subject(&s, queue, NULL, 0);
        uint64_t begin = cwp_profiled() ? s.wall : cwp_wall_ns();
        cl_int r = cwp_real.finish(queue);
        uint64_t end = cwp_wall_ns();
        if (r == CL_SUCCESS)
            cw_advice_waited(queue, end - begin);
        cwp_last_waited(queue, &last, r == CL_SUCCESS);
        cwp_count_finish_path(CWP_FINISH_BY_DRIVER);
        cwp_span_end_at(CWP_FINISH, s, r, end);
        cwp_settle_release(last.event);
        return r;
    }
    cl_int last_status = CL_QUEUED;
    cl_event queued_last = NULL; /* kept for a hang report on the marker */
    if (last.event && (clGetEventInfo(last.event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                      sizeof last_status, &last_status, NULL) != CL_SUCCESS ||
                       last_status == CL_QUEUED)) {
        /*
         * Still queued: waiting on it would take a flush (cw's), and after a
         * flush Mesa 22.3's rusticl returns from clFinish without waiting
         * for what that flush sent, so the real clFinish would no longer
         * cover the commands the preload did not see (preload_codes'
         * finish.unseen_command caught it there). The marker, enqueued
         * after every such command, covers them.
         */
        queued_last = last.event;
        last.event = NULL;
    }
    if (last.event) {
        cwp_span s = cwp_span_begin(CWP_FINISH);
        cwp_span_subject(&s, queue, &last.event, 1);
        wait_events(CWP_FINISH, &last.event, 1);
        cl_int r = cwp_real.finish(queue);
        cwp_last_waited(queue, &last, r == CL_SUCCESS);
        cwp_count_finish_path(CWP_FINISH_ON_LAST);
        cwp_span_end(CWP_FINISH, s, r);
        cwp_settle_release(last.event);
        return r;
    }
    /*
     * The flush comes first, as in the real clFinish, and before the clocks
     * are read: a driver may hold queued commands until a flush (PoCL does,
     * and clpeak's launch latency counts that time), so neither the marker
     * nor the measurement may delay them. With the blocking strategy the
     * real clFinish is the only call, as natively: an explicit clFlush
     * before it is not harmless everywhere: with Mesa 22.3's rusticl, a
     * non-blocking read followed by clFlush and clFinish left the host
     * memory unwritten when clFinish returned. Its error, on a bad queue,
     * is left to the real call below.
     */
    cl_int flushed = native ? CL_SUCCESS : clFlush(queue);
    cwp_span s = cwp_span_begin(CWP_FINISH);
    cwp_span_subject(&s, queue, NULL, 0);
    cl_int r;
    cl_event marker = NULL;
    wait_end waited = WAIT_UNJUDGED;
    if (native) {
        r = cwp_real.finish(queue);
    } else if (flushed != CL_SUCCESS || cwp_real.marker(queue, 0, NULL, &marker) != CL_SUCCESS) {
        /* A bad queue (or no room for a marker): the real call's verdict. */
        r = cwp_real.finish(queue);
        cwp_count_finish_path(CWP_FINISH_BY_DRIVER);
    } else {
        /* The marker completes once every command enqueued before it did,
         * on in-order and out-of-order queues alike. Anything but success
         * (a failed command before it) is the real call's to report; it
         * returns at once, since everything finished. */
        cwp_hang_finish_marker(marker, queued_last);
        waited = wait_events(CWP_FINISH, &marker, 1);
        cwp_hang_finish_marker(NULL, NULL);
        r = waited == WAIT_COMPLETE ? CL_SUCCESS : cwp_real.finish(queue);
        cwp_settle_release(marker);
        cwp_count_finish_path(CWP_FINISH_ON_MARKER);
    }
    if (!native)
        cwp_last_waited(queue, &last, r == CL_SUCCESS);
    cwp_span_end(CWP_FINISH, s, r);
    cwp_settle_release(queued_last);
    return r;
}
