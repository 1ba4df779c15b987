/* Layer 6: wait strategies and cw_wait. */
#include "cw/completion.h"
#include "cw/relax.h"
#include "cw/wait.h"
#include "internal.h"

#include <string.h>

static const char *const strategy_names[CW_STRATEGY_COUNT] = {
    [CW_STRATEGY_DEFAULT] = "default",
    [CW_STRATEGY_BLOCKING] = "blocking",
    [CW_STRATEGY_COOPERATIVE] = "cooperative",
    [CW_STRATEGY_POLL] = "poll",
    [CW_STRATEGY_COOPERATIVE_WAKE_LOCKED] = "cooperative-wake-locked",
    [CW_STRATEGY_COOPERATIVE_NOYIELD] = "cooperative-noyield",
    [CW_STRATEGY_PTHREAD] = "pthread",
};

const char *cw_strategy_name(cw_strategy strategy) {
    return (unsigned)strategy < CW_STRATEGY_COUNT ? strategy_names[strategy] : NULL;
}

int cw_strategy_from_name(const char *name, cw_strategy *out) {
    if (!name || !out)
        return CW_ERR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < CW_STRATEGY_COUNT; ++i)
        if (strcmp(name, strategy_names[i]) == 0) {
            *out = (cw_strategy)i;
            return CW_OK;
        }
    return CW_ERR_INVALID_ARGUMENT;
}

/* Map an OpenCL error of a call on the event to cw's codes; the error is
 * handed back in *cl_status. Shared with notify.c. */
int cw__cl_failure(cl_int err, cl_int *cl_status) {
    *cl_status = err;
    return err == CL_INVALID_EVENT ? CW_ERR_INVALID_EVENT : CW_ERR_OPENCL;
}

static int read_status(cl_event event, cl_int *status) {
    cl_int st = 0;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (err != CL_SUCCESS)
        return cw__cl_failure(err, status);
    *status = st;
    return CW_OK;
}

/* The verdict on a status that is final (CL_COMPLETE or negative). */
static int final_status(cl_int st) {
    return st == CL_COMPLETE ? CW_OK : CW_ERR_COMMAND_FAILED;
}

/* Only a CL_QUEUED command can still be waiting for a flush; from
 * CL_SUBMITTED on it is with the device already. User events have no queue.
 * Shared with notify.c. */
int cw__flush_if_queued(cl_event event, cl_int status, cl_int *cl_status) {
    if (status != CL_QUEUED)
        return CW_OK;
    cl_command_queue queue = NULL;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, NULL);
    if (err == CL_SUCCESS && queue)
        err = clFlush(queue);
    return err == CL_SUCCESS ? CW_OK : cw__cl_failure(err, cl_status);
}

static int wait_blocking(cl_event event, cl_int *cl_status) {
    cl_int err = clWaitForEvents(1, &event);
    if (err == CL_SUCCESS) {
        *cl_status = CL_COMPLETE;
        return CW_OK;
    }
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        int rc = read_status(event, cl_status);
        return rc != CW_OK ? rc : final_status(*cl_status);
    }
    return cw__cl_failure(err, cl_status);
}

static int wait_poll(cl_event event, uint64_t deadline, cl_int *cl_status) {
    for (unsigned i = 1;; ++i) {
        int rc = read_status(event, cl_status);
        if (rc != CW_OK)
            return rc;
        if (*cl_status <= CL_COMPLETE)
            return final_status(*cl_status);
        if (deadline != CW_DEADLINE_NONE && i % 64 == 0 && cw_now_ns() >= deadline)
            return CW_ERR_TIMEOUT;
        cw_relax();
    }
}

static int wait_callback(cl_event event, cw_completion_kind kind, const cw_wait_options *o,
                         uint64_t deadline, cl_int *cl_status) {
    cw_futex_parker own;
    cw_parker *parker = o->parker;
    if (!parker) {
        cw_futex_parker_init(&own);
        parker = &own.parker;
    }
    cw_completion *c;
    int rc = cw_completion_acquire(kind, &c);
    if (rc != CW_OK)
        return rc;
    cl_int err;
    rc = cw_completion_attach(c, event, &err);
    if (rc != CW_OK) {
        cw_completion_release(c, NULL);
        *cl_status = err;
        return rc;
    }

    /* Sleep until the callback, but wake now and then to read the status:
     * a failed command may never fire the callback (PoCL 3.1 to 6.0). The
     * first check comes late enough that typical kernels never see one, and
     * the interval doubles so a long wait costs a handful of wake-ups. */
    uint64_t first = (o->check_interval_us ? o->check_interval_us : CW_CHECK_INTERVAL_US_DEFAULT) *
                     (uint64_t)1000;
    uint64_t interval = first;
    for (;;) {
        uint64_t check = cw_deadline_after_ns(interval);
        rc = cw_completion_wait(c, parker, check < deadline ? check : deadline);
        if (rc == CW_OK)
            break;
        rc = read_status(event, cl_status);
        if (rc != CW_OK || *cl_status <= CL_COMPLETE)
            break; /* failed, or complete with the callback still to come */
        if (deadline != CW_DEADLINE_NONE && cw_now_ns() >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        if (interval < CW_CHECK_INTERVAL_GROWTH * first)
            interval *= 2;
    }
    /* Disarms the completion if the callback has not claimed it: a callback
     * that runs later, or never, finds a stale token and touches nothing. */
    bool signalled = cw_completion_release(c, NULL);
    if (rc == CW_ERR_TIMEOUT && signalled)
        rc = CW_OK; /* the callback landed as we gave up: report what happened */
    if (rc != CW_OK)
        return rc;
    /* The callback reports the trigger status, not the command's: an
     * implementation may call the CL_COMPLETE callback of a failed command
     * with CL_COMPLETE. Only the event's own status is authoritative. */
    rc = read_status(event, cl_status);
    return rc != CW_OK ? rc : final_status(*cl_status);
}

static int validate(const cw_wait_options *o) {
    if ((unsigned)o->strategy >= CW_STRATEGY_COUNT || (o->flags & ~(unsigned)CW_WAIT_FLAGS_ALL_) ||
        o->timeout_us < 0 || o->check_interval_us > CW_CHECK_INTERVAL_US_MAX)
        return CW_ERR_INVALID_ARGUMENT;
    if (o->strategy == CW_STRATEGY_BLOCKING && o->timeout_us > 0)
        return CW_ERR_UNSUPPORTED;
    return CW_OK;
}

int cw_wait(cl_event event, const cw_wait_options *options, cl_int *cl_status) {
    static const cw_wait_options defaults = {0};
    const cw_wait_options *o = options ? options : &defaults;
    cl_int status_sink;
    if (!cl_status)
        cl_status = &status_sink;
    *cl_status = CL_SUCCESS;
    if (!event)
        return CW_ERR_INVALID_ARGUMENT;
    int rc = validate(o);
    if (rc != CW_OK)
        return rc;

    cw_strategy s = o->strategy == CW_STRATEGY_DEFAULT ? CW_STRATEGY_COOPERATIVE : o->strategy;
    /* clWaitForEvents validates and flushes by itself; keep it the bare call
     * so that it stays the benchmark's reference. */
    if (s == CW_STRATEGY_BLOCKING)
        return wait_blocking(event, cl_status);

    /* One status read up front: it rejects a bad handle before any
     * registration, returns at once for work that already finished or
     * failed (a failed command fires no callback on PoCL 3.1), and tells
     * whether a flush is needed: only a CL_QUEUED command can still be
     * waiting for one; CL_SUBMITTED and later are with the device already. */
    rc = read_status(event, cl_status);
    if (rc != CW_OK || *cl_status <= CL_COMPLETE)
        return rc != CW_OK ? rc : final_status(*cl_status);
    if (!(o->flags & CW_WAIT_NO_FLUSH) &&
        (rc = cw__flush_if_queued(event, *cl_status, cl_status)) != CW_OK)
        return rc;

    uint64_t deadline = CW_DEADLINE_NONE;
    if (o->timeout_us > 0 && (uint64_t)o->timeout_us < CW_DEADLINE_NONE / 1000u)
        deadline = cw_deadline_after_ns((uint64_t)o->timeout_us * 1000u);
    switch (s) {
    case CW_STRATEGY_POLL:
        return wait_poll(event, deadline, cl_status);
    case CW_STRATEGY_COOPERATIVE_WAKE_LOCKED:
        return wait_callback(event, CW_COMPLETION_YIELD_WAKE_LOCKED, o, deadline, cl_status);
    case CW_STRATEGY_COOPERATIVE_NOYIELD:
        return wait_callback(event, CW_COMPLETION_NOYIELD_WAKE_LOCKED, o, deadline, cl_status);
    case CW_STRATEGY_PTHREAD:
        return wait_callback(event, CW_COMPLETION_PTHREAD, o, deadline, cl_status);
    case CW_STRATEGY_COOPERATIVE:
    default:
        return wait_callback(event, CW_COMPLETION_YIELD, o, deadline, cl_status);
    }
}
