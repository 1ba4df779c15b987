/* cw layer 6: wait strategies and cw_wait. */
#ifndef CW_WAIT_H
#define CW_WAIT_H

#include <stdint.h>
#include "cw/common.h"
#include "cw/opencl.h"
#include "cw/parker.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cw_strategy {
    /* The zero value: cw's recommended strategy, currently CW_STRATEGY_COOPERATIVE. */
    CW_STRATEGY_DEFAULT = 0,
    /* clWaitForEvents: the driver's own sleep. No timeout support. */
    CW_STRATEGY_BLOCKING,
    /* CL_COMPLETE callback + yielding spin lock condition + parker, woken after release. */
    CW_STRATEGY_COOPERATIVE,
    /* Busy poll of clGetEventInfo with a pause between reads: burns a core. */
    CW_STRATEGY_POLL,
    /* As cooperative, but the callback wakes the waiter while holding the yielding lock. */
    CW_STRATEGY_COOPERATIVE_WAKE_LOCKED,
    /* As cooperative, on a never-yielding lock, woken under it: exposes lock-holder
     * preemption. For the benchmark only. */
    CW_STRATEGY_COOPERATIVE_NOYIELD,
    /* CL_COMPLETE callback + pthread mutex and condition variable: outside reference. */
    CW_STRATEGY_PTHREAD,
    CW_STRATEGY_COUNT
} cw_strategy;

/* Flags for cw_wait_options.flags. */
enum {
    /*
     * Do not flush the event's command queue before waiting. By default every
     * strategy flushes it when the command may still need it, so a wait on a
     * command that was enqueued but not yet submitted cannot wait forever:
     * clWaitForEvents flushes implicitly; the other strategies call clFlush
     * when the command's status is CL_QUEUED (from CL_SUBMITTED on it is with
     * the device already).
     */
    CW_WAIT_NO_FLUSH = 1u << 0,
    CW_WAIT_FLAGS_ALL_ = CW_WAIT_NO_FLUSH
};

/* Default and bounds of cw_wait_options.check_interval_us. */
#define CW_CHECK_INTERVAL_US_DEFAULT 16000u
#define CW_CHECK_INTERVAL_US_MAX 1000000u
/* The check interval doubles up to this many times the first one. */
#define CW_CHECK_INTERVAL_GROWTH 16u

/*
 * Options for cw_wait. A zeroed struct (or passing NULL) means: default
 * strategy, flush the queue, no timeout, default check interval, the calling
 * thread parks on a futex of its own.
 */
typedef struct cw_wait_options {
    cw_strategy strategy;
    unsigned flags;
    /* Relative timeout in microseconds; 0 waits without one; negative is invalid.
     * CW_STRATEGY_BLOCKING cannot time out and returns CW_ERR_UNSUPPORTED for it. */
    int64_t timeout_us;
    /*
     * Callback strategies only. PoCL 3.1 to 6.0 (and Mesa's rusticl) never
     * run a CL_COMPLETE callback for a command that fails, so a waiter that
     * relied on the callback alone would hang. A parked waiter therefore
     * wakes to read the execution status after this interval, doubling it
     * each time up to CW_CHECK_INTERVAL_GROWTH times the first (16 ms, then
     * 32, 64, 128 and every 256 ms by default), and returns
     * CW_ERR_COMMAND_FAILED when it is negative. A kernel shorter than the
     * first interval never pays for a check. 0 means
     * CW_CHECK_INTERVAL_US_DEFAULT; 1..CW_CHECK_INTERVAL_US_MAX are valid.
     */
    uint32_t check_interval_us;
    /* Callback strategies except pthread: how to sleep. NULL: a futex parker. */
    cw_parker *parker;
} cw_wait_options;

/*
 * Wait until `event` completes. Returns
 *   0                        the command completed (status CL_COMPLETE),
 *   CW_ERR_COMMAND_FAILED    its execution status is negative,
 *   CW_ERR_TIMEOUT           options->timeout_us passed first,
 *   CW_ERR_INVALID_EVENT     the implementation rejected `event`,
 *   CW_ERR_INVALID_ARGUMENT  NULL event or an option out of range,
 *   CW_ERR_UNSUPPORTED       a timeout with CW_STRATEGY_BLOCKING,
 *   CW_ERR_OPENCL            another OpenCL call failed,
 *   CW_ERR_NO_MEMORY.
 * When `cl_status` is not NULL it receives the execution status
 * (CL_COMPLETE, or the command's negative status), or the OpenCL error code
 * with CW_ERR_INVALID_EVENT and CW_ERR_OPENCL, or the last status read with
 * CW_ERR_TIMEOUT.
 *
 * A wait that returns early (timeout, failure) leaves nothing behind: the
 * event can be waited on again or released.
 */
CW_API int cw_wait(cl_event event, const cw_wait_options *options, cl_int *cl_status);

/* Stable short names ("blocking", "cooperative", ...) for tools and bindings. */
CW_API const char *cw_strategy_name(cw_strategy strategy);
/* Name to strategy; CW_ERR_INVALID_ARGUMENT for an unknown name. */
CW_API int cw_strategy_from_name(const char *name, cw_strategy *out);

#ifdef __cplusplus
}
#endif
#endif
