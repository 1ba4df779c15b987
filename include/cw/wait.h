/* SPDX-License-Identifier: MIT */
/* cw: cw_wait, its options and its strategies. */
#ifndef CW_WAIT_H
#define CW_WAIT_H

#include <stdint.h>
#include "cw/common.h"
#include <CL/cl.h>
#include "cw/parker.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cw_strategy {
    /* The zero value: cw's recommended strategy, CW_STRATEGY_AUTO in this release.
     * A later release may map it to another strategy; cw_strategy_name reports
     * "default" for it. */
    CW_STRATEGY_DEFAULT = 0,
    /* clWaitForEvents: the driver's own sleep. clWaitForEvents cannot time out, so
     * with a timeout this strategy waits as CW_STRATEGY_PTHREAD does instead. */
    CW_STRATEGY_BLOCKING,
    /* CL_COMPLETE callback + yielding spin lock condition + parker, woken after release. */
    CW_STRATEGY_COOPERATIVE,
    /* Busy poll of clGetEventInfo with a pause between reads: burns a core. */
    CW_STRATEGY_POLL,
    /* As cooperative, but the callback wakes the waiter while holding the yielding lock. */
    CW_STRATEGY_COOPERATIVE_WAKE_LOCKED,
    /* As cooperative, on a never-yielding lock, woken under it: exposes lock-holder
     * preemption (a waiter may spin for a whole time slice). A comparison
     * baseline: do not use it for real work. */
    CW_STRATEGY_COOPERATIVE_NOYIELD,
    /* CL_COMPLETE callback + pthread mutex and condition variable: outside reference. */
    CW_STRATEGY_PTHREAD,
    /* As cooperative, but first spin on the completion's flag for up to spin_us
     * (pause backoff), then CW_SPIN_PARK_YIELDS sched_yield calls, then park. */
    CW_STRATEGY_SPIN_PARK,
    /* Poll the execution status with growing delays: sleep toward the expected
     * end of the wait (a moving estimate per queue) but never longer than the
     * time waited so far (or 50 us) nor the check interval, so a command is
     * seen done within about twice its run time whatever the estimate says;
     * spin delays up to 10 us; lower the thread's timer slack to 1 ns for the
     * wait (restored on every return path). No callback is registered. The
     * extra wake-ups cost most where the waiter shares its CPU with the device. */
    CW_STRATEGY_BACKOFF_POLL,
    /* Chooses per wait: where the platform's callbacks come late (as cw
     * learned, cw_wait(3)), the driver's own wait where that sleeps, else
     * backoff-poll's polls with no callback until the wait has outlasted
     * the lateness, then the callback; else spin-park with a budget of about the
     * expected wait when a spare CPU exists (allowed CPUs beyond the ones a
     * CPU device's workers take, none for a GPU, and beyond the runnable
     * threads) and recent waits on the event's queue were short, cooperative
     * otherwise, or for a wait expected to last 200 us or more the driver's
     * own wait where it was timed to cost the waiting thread no more CPU
     * (cw_wait(3)). See cw_wait_options.spin_us. */
    CW_STRATEGY_AUTO,
    /* How many strategies this version has; later versions may add more. */
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
    /*
     * cw_wait without a timeout, callback strategies: when no other cw wait or
     * watch is on the event, register a CL_COMPLETE callback that wakes this
     * wait alone, instead of the callback cw shares between every wait and
     * watch on an event (see cw_event_forget). It spares the shared one's
     * bookkeeping (a record, a reference on the event and a second wake-up
     * step), for waits that are the only ones on their event, such as a
     * wait on a command just enqueued. The cost: such a wait does not share
     * its callback with waits that come later, so the event may get one
     * callback more per such wait (the shared one is joined when it exists).
     * A wait without a timeout ends only once the command has finished, so
     * these registrations do not accumulate with retries. Ignored with a
     * timeout, by cw_wait_all and cw_wait_any, and by the strategies that
     * register no callback (blocking without a timeout, poll, backoff-poll).
     */
    CW_WAIT_OWN_CALLBACK = 1u << 1,
    /*
     * Do not wait: look at the event (or each event of cw_wait_all and
     * cw_wait_any) once, flushing its queue as a wait would (unless
     * CW_WAIT_NO_FLUSH), and return at once: 0 when it has completed,
     * CW_ERR_COMMAND_FAILED when it failed, else CW_ERR_TIMEOUT with the
     * status read. Nothing is registered on the event and nothing is kept
     * of it. Every strategy honours it; timeout_us, spin_us and the check
     * interval are then unused. This is the "just check" that timeout_us
     * cannot express, since there 0 means no timeout.
     */
    CW_WAIT_POLL = 1u << 2,
    /*
     * CW_STRATEGY_AUTO (and the default strategy): prefer a short time from
     * the command's end to the wait's return over a small CPU cost. Where
     * the thread may run on a second CPU and waits on its own parker, auto
     * then reads the status in a loop, as CW_STRATEGY_POLL does, spending
     * up to a CPU for the wait's length. Elsewhere it parks on the callback
     * where the driver delivers callbacks promptly, takes the driver's own
     * wait where callbacks come late and that wait spins (spending a CPU
     * for the wait's length too), and otherwise waits as without the flag.
     * The result and the error codes are the same as without it. Ignored
     * by the other strategies, by cw_wait_all and cw_wait_any.
     */
    CW_WAIT_LATENCY = 1u << 3,
    /*
     * End the wait with CW_ERR_INTERRUPTED once cw_wait_options.interrupt_fd
     * is readable (poll(2) reports it ready; cw never reads from it): how a
     * program whose signal handlers only write to a descriptor (a language
     * runtime's, an event loop's) gets a blocked wait back. The wait looks at
     * the descriptor before it parks, when a signal handler interrupts its
     * park, and at least every CW_INTERRUPT_LOOK_US while parked; a spin
     * (spin-park's, auto's) does not look. Honoured by the strategies that
     * park on cw's own parker: cooperative and its two variants, spin-park
     * and auto (which then waits only in the ways that park, as with a
     * parker of the caller's: never in the driver's wait), and by
     * cw_wait_all and cw_wait_any; the other strategies and a parker of the
     * caller's give CW_ERR_UNSUPPORTED. Ignored with CW_WAIT_POLL. After
     * CW_ERR_INTERRUPTED the event can be waited on again.
     */
    CW_WAIT_INTERRUPT_FD = 1u << 4,
    CW_WAIT_FLAGS_ALL_ = CW_WAIT_NO_FLUSH | CW_WAIT_OWN_CALLBACK | CW_WAIT_POLL | CW_WAIT_LATENCY |
                         CW_WAIT_INTERRUPT_FD
};

/*
 * Default and bound of cw_wait_options.spin_us. 1 us (about six pause rounds)
 * catches a signal that lands at once and costs next to nothing when none
 * does; a longer spin pays only where the signalling thread has a CPU of its
 * own, which CW_STRATEGY_AUTO checks before it spins.
 */
#define CW_SPIN_US_DEFAULT 1u
#define CW_SPIN_US_MAX 1000000u
/* sched_yield calls of spin-park between the spin and the park. */
#define CW_SPIN_PARK_YIELDS 4u
/* The longest expected wait CW_STRATEGY_AUTO spins for when spin_us is 0. */
#define CW_AUTO_SPIN_US_CAP 200u

/* How often a parked wait with CW_WAIT_INTERRUPT_FD looks at its descriptor
 * when no signal handler interrupts it (a write from another thread, or a
 * signal handled just before the park began). */
#define CW_INTERRUPT_LOOK_US 100000u

/* Default and bound of cw_wait_options.check_interval_us, and how many times
 * the first interval the later ones are (the schedule is described there). */
#define CW_CHECK_INTERVAL_US_DEFAULT 16000u
#define CW_CHECK_INTERVAL_US_MAX 1000000u
#define CW_CHECK_INTERVAL_GROWTH 2u

/*
 * Options for cw_wait, cw_wait_all and cw_wait_any. Zero-initialise it
 * (`cw_wait_options o = {0};`, or pass NULL): every zero field means its
 * default, i.e. default strategy, flush the queue, no timeout, default
 * check interval, the calling thread parks on a futex of its own. The
 * functions only read it, during the call.
 */
typedef struct cw_wait_options {
    cw_strategy strategy;
    unsigned flags;
    /* Relative timeout in microseconds; 0 waits without one (it does not
     * mean "just check": that is CW_WAIT_POLL); negative is invalid.
     * Every strategy honours it (CW_STRATEGY_BLOCKING by waiting as
     * CW_STRATEGY_PTHREAD, since clWaitForEvents cannot time out). */
    int64_t timeout_us;
    /*
     * Some implementations never run a CL_COMPLETE callback for a command
     * that fails (cw_wait(3), "Failed commands"), so a waiter that relied on
     * the callback alone would hang. A parked or spinning waiter therefore
     * reads the execution status after this interval and then every
     * CW_CHECK_INTERVAL_GROWTH times it (16 ms, then every 32 ms by
     * default), and returns
     * CW_ERR_COMMAND_FAILED when it is negative: every strategy reports a
     * failure within twice the interval of it (backoff-poll never sleeps
     * longer than the interval). With 0 (the default interval) the first
     * read also waits for twice the expected wait on the event's queue
     * (at most 4 s): a failure is then reported within twice the interval
     * of it or by that first read, whichever is later; and the later
     * reads are spaced by at least the time waited so far (at most 4 s),
     * so a failure t into the wait is reported within the longer of twice
     * the interval and t of it. Where cw has seen
     * the platform's failed commands fire their callbacks, no read is
     * scheduled. cw_wait_all, cw_wait_any and the notifier check on the same
     * schedule. A kernel shorter than the first read never pays for one.
     * 0 means CW_CHECK_INTERVAL_US_DEFAULT; 1..CW_CHECK_INTERVAL_US_MAX are
     * valid.
     */
    uint32_t check_interval_us;
    /* Callback strategies except pthread: how to sleep. NULL: a futex parker. */
    cw_parker *parker;
    /*
     * CW_STRATEGY_SPIN_PARK: how long to spin before yielding and parking, in
     * microseconds; 0 means CW_SPIN_US_DEFAULT. CW_STRATEGY_AUTO: the longest
     * expected wait it spins for (for 1.25 times that); 0 means
     * CW_AUTO_SPIN_US_CAP. Other strategies ignore it. 1..CW_SPIN_US_MAX are
     * valid.
     */
    uint32_t spin_us;
    /* With CW_WAIT_INTERRUPT_FD: the descriptor that ends the wait once
     * readable (0 or more). Without the flag it must be 0. */
    int32_t interrupt_fd;
    /* Must be zero (CW_ERR_INVALID_ARGUMENT otherwise): room for options of
     * later 1.x releases, whose zero value will keep today's behaviour. */
    uint32_t reserved[7];
} cw_wait_options;

/*
 * Wait until `event` completes. Returns
 *   0                        the command completed (status CL_COMPLETE),
 *   CW_ERR_COMMAND_FAILED    its execution status is negative,
 *   CW_ERR_TIMEOUT           options->timeout_us passed first,
 *   CW_ERR_INTERRUPTED       options->interrupt_fd became readable first
 *                            (CW_WAIT_INTERRUPT_FD),
 *   CW_ERR_UNSUPPORTED       CW_WAIT_INTERRUPT_FD with a strategy or parker
 *                            that cannot honour it,
 *   CW_ERR_INVALID_EVENT     the implementation rejected `event`,
 *   CW_ERR_INVALID_ARGUMENT  NULL event or an option out of range,
 *   CW_ERR_OPENCL            another OpenCL call failed,
 *   CW_ERR_NO_MEMORY         no completion could be had,
 *   CW_ERR_NO_RESOURCES      pthread (and blocking with a timeout): its
 *                            mutex or condition variable could not be made.
 * When `cl_status` is not NULL it receives the execution status
 * (CL_COMPLETE, or the command's negative status), or the OpenCL error code
 * with CW_ERR_INVALID_EVENT and CW_ERR_OPENCL, or the last status read with
 * CW_ERR_TIMEOUT and CW_ERR_INTERRUPTED, or CL_SUCCESS with CW_ERR_INVALID_ARGUMENT; with
 * CW_ERR_NO_MEMORY and CW_ERR_NO_RESOURCES its value is unspecified.
 *
 * Threads: any thread may call it, for any event, concurrently with other
 * waits on the same event. The CL_COMPLETE callback of the callback
 * strategies runs on a driver thread (or inline, when the event already
 * completed) and only wakes the waiter; the waiter reads the status itself.
 *
 * The event must stay valid for the call. After an early return (timeout,
 * failure) it can be waited on again or released. The callback strategies
 * share one CL_COMPLETE callback per event with every other wait and watch on
 * it, and cw may keep a reference on the event after the call returns: see
 * cw_event_forget for how long.
 */
CW_API int cw_wait(cl_event event, const cw_wait_options *options, cl_int *cl_status);

/*
 * Drop what cw keeps for `event`. cw registers at most one CL_COMPLETE
 * callback per event, however many waits, timeouts, wait-any rounds and
 * notifier watches there are on it (OpenCL cannot unregister one), and keeps
 * a small record of it and a reference on the event, from the first wait or
 * watch that registers the callback until
 * - a wait or watch on the event sees it finished (when the callback runs it
 *   wakes every wait and watch on the event to read the status),
 * - a callback wait (cw_wait, cw_wait_all, cw_wait_any) that registers a
 *   callback on some event finds this one finished while looking over the
 *   records nobody waits on, which it does whenever their number has
 *   doubled since the last look: this is how the record goes of an event
 *   whose waits all left before it finished, and of a failed command whose
 *   callback never came,
 * - or this call.
 * The exception: a wait with CW_WAIT_OWN_CALLBACK that found no record
 * registers a callback of its own, one more on the event, and keeps nothing.
 * Call this for an event that may never finish (a user event that will
 * never be set) once you stop waiting on it, so that cw holds nothing of it.
 * Waits still pending on the event are woken to read its status and go on
 * waiting. Any thread, but not inside a callback of that same event (cw
 * releases its reference there); NULL is ignored.
 */
CW_API void cw_event_forget(cl_event event);

/* Stable short names ("default", "blocking", "cooperative", ...) for tools and
 * bindings; NULL for a value outside the enum. */
CW_API const char *cw_strategy_name(cw_strategy strategy);
/* Name to strategy; CW_ERR_INVALID_ARGUMENT for an unknown name. */
CW_API int cw_strategy_from_name(const char *name, cw_strategy *out);

#ifdef __cplusplus
}
#endif
#endif
