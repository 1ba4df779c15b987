/* SPDX-License-Identifier: MIT */
/* Layer 6: wait strategies and cw_wait. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "clevent.h"
#include "completion.h"
#include "relax.h"
#include "stats_internal.h"
#include "strategy.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const strategy_names[CW_STRATEGY_COUNT] = {
    [CW_STRATEGY_DEFAULT] = "default",
    [CW_STRATEGY_BLOCKING] = "blocking",
    [CW_STRATEGY_COOPERATIVE] = "cooperative",
    [CW_STRATEGY_POLL] = "poll",
    [CW_STRATEGY_COOPERATIVE_WAKE_LOCKED] = "cooperative-wake-locked",
    [CW_STRATEGY_COOPERATIVE_NOYIELD] = "cooperative-noyield",
    [CW_STRATEGY_PTHREAD] = "pthread",
    [CW_STRATEGY_SPIN_PARK] = "spin-park",
    [CW_STRATEGY_BACKOFF_POLL] = "backoff-poll",
    [CW_STRATEGY_AUTO] = "auto",
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

static int wait_blocking(cl_event event, cl_int *cl_status) {
    cl_int err = clWaitForEvents(1, &event);
    if (err == CL_SUCCESS) {
        *cl_status = CL_COMPLETE;
        return CW_OK;
    }
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        int rc = cw__read_status(event, cl_status);
        return rc != CW_OK ? rc : cw__final_status(*cl_status);
    }
    return cw__cl_failure(err, cl_status);
}

static int wait_poll(cl_event event, uint64_t deadline, cl_int *cl_status) {
    int rc;
    unsigned i = 1;
    for (;; ++i) {
        rc = cw__read_status(event, cl_status);
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            rc = cw__final_status(*cl_status);
            break;
        }
        if (deadline != CW_DEADLINE_NONE && i % 64 == 0 && cw_now_ns() >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        cw_relax();
    }
    cw__stat_add(CW__STAT_POLLS, i); /* once per wait: the loop itself stays a bare poll */
    return rc;
}

/*
 * A moving estimate of how long waits on one command queue take, for the
 * strategies that plan ahead (backoff-poll, auto). 64 direct-mapped slots
 * keyed by the queue pointer; a collision just replaces the slot. Key and
 * value are separate relaxed atomics: a reader that pairs one queue's key
 * with another's value gets a bad hint, never a bad wait, so no lock.
 */
#define EST_SLOTS 64u
static struct {
    _Atomic uintptr_t key;
    _Atomic uint64_t ns;
    _Atomic uint32_t host_units; /* auto: host CPUs the device's work takes, + 1; 0 unknown */
} estimates[EST_SLOTS];

static unsigned est_slot(uintptr_t key) {
    return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15u) >> 58);
}

static uintptr_t queue_key(cl_event event) {
    cl_command_queue q = NULL;
    if (clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS)
        return 0;
    return (uintptr_t)q; /* 0 for user events: no estimate */
}

static uint64_t estimate_get(uintptr_t key) {
    if (!key)
        return 0;
    unsigned i = est_slot(key);
    if (atomic_load_explicit(&estimates[i].key, memory_order_relaxed) != key)
        return 0;
    return atomic_load_explicit(&estimates[i].ns, memory_order_relaxed);
}

/* Exponentially weighted, 1/4 weight to the newest wait: a few waits follow
 * a change of kernel, one outlier (a preempted launch) moves it by a quarter. */
static void estimate_put(uintptr_t key, uint64_t ns) {
    if (!key)
        return;
    unsigned i = est_slot(key);
    if (atomic_load_explicit(&estimates[i].key, memory_order_relaxed) != key) {
        atomic_store_explicit(&estimates[i].key, key, memory_order_relaxed);
        atomic_store_explicit(&estimates[i].ns, ns, memory_order_relaxed);
        atomic_store_explicit(&estimates[i].host_units, 0, memory_order_relaxed);
        return;
    }
    uint64_t old = atomic_load_explicit(&estimates[i].ns, memory_order_relaxed);
    atomic_store_explicit(&estimates[i].ns, old - old / 4 + ns / 4, memory_order_relaxed);
}

/*
 * Backoff polling: no callback, no lock, no wake-up; the waiter reads the
 * status and sleeps. The sleeps are what costs accuracy: with Linux's
 * default 50 µs timer slack a 10 µs sleep takes about 60 µs (README,
 * timer-slack table), so the slack is lowered to 1 ns for the wait and
 * restored on every return path.
 */
static int wait_backoff_poll(cl_event event, uint64_t start, uint64_t expected, uint64_t deadline,
                             cl_int *cl_status) {
    uint64_t old_slack = 0;
    bool slack_set = cw_timerslack_set(1, &old_slack) == CW_OK;
    uint64_t step = 1000; /* the next short delay, ns: 1 µs, doubling */
    uint64_t polls = 0, spins = 0, sleeps = 0;
    int rc;
    for (;;) {
        rc = cw__read_status(event, cl_status);
        ++polls;
        if (rc != CW_OK)
            break;
        if (*cl_status <= CL_COMPLETE) {
            rc = cw__final_status(*cl_status);
            break;
        }
        uint64_t now = cw_now_ns();
        if (now >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        uint64_t elapsed = now - start, d;
        if (expected > elapsed + 2u * CW_MICRODELAY_SPIN_NS) {
            /* Sleep through the expected rest, waking a spin's length early. */
            d = expected - elapsed - CW_MICRODELAY_SPIN_NS;
        } else {
            /* Past the estimate (or none): poll at growing intervals, capped
             * at an eighth of the time waited so far, so the overshoot after
             * the command finishes stays within about 12% of the wait. */
            uint64_t cap = elapsed / 8u < 1000u ? 1000u : elapsed / 8u;
            d = step < cap ? step : cap;
            step = d * 2u;
        }
        if (d > deadline - now)
            d = deadline - now;
        if (d > CW_MICRODELAY_SPIN_NS)
            ++sleeps;
        else
            ++spins;
        cw_microdelay(d);
    }
    if (slack_set)
        cw_timerslack_set(old_slack, NULL);
    cw__stat_add(CW__STAT_POLLS, polls);
    cw__stat_add(CW__STAT_SPINS, spins);
    cw__stat_add(CW__STAT_SLEEPS, sleeps);
    return rc;
}

/*
 * The spin phase of spin-park: spin on the completion's flag (one load per
 * round; rounds of 1, 2, 4 ... 64 pauses, then 64 each) until the budget or
 * the deadline runs out, then yield a few times. The yields matter when the
 * thread that will signal shares this CPU (1 CPU, 1 worker): spinning only
 * delays it, a yield lets it run. Returns whether the signal landed.
 */
static bool spin_on(cw_completion *c, uint64_t budget_ns, uint64_t deadline) {
    uint64_t end = cw_deadline_after_ns(budget_ns);
    if (end > deadline)
        end = deadline;
    cw_backoff b = CW_BACKOFF_INITIALIZER;
    uint64_t spins = 0, yields = 0;
    bool signalled;
    while (!(signalled = cw_completion_is_signalled(c))) {
        if (!cw_backoff_spin(&b)) {
            b.round = CW_BACKOFF_ROUNDS - 1u; /* keep spinning at the longest round */
            continue;
        }
        ++spins;
        if (cw_now_ns() >= end)
            break;
    }
    for (unsigned i = 0; !signalled && i < CW_SPIN_PARK_YIELDS; ++i) {
        sched_yield();
        ++yields;
        signalled = cw_completion_is_signalled(c);
    }
    cw__stat_add(CW__STAT_SPINS, spins);
    cw__stat_add(CW__STAT_YIELDS, yields);
    return signalled;
}

static int wait_callback(cl_event event, cw_completion_kind kind, const cw_wait_options *o,
                         uint64_t spin_ns, uint64_t deadline, cl_int *cl_status) {
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
    rc = cw__event_attach(c, event, &err);
    if (rc != CW_OK) {
        cw_completion_release(c, NULL);
        *cl_status = err;
        return rc;
    }
    if (spin_ns)
        spin_on(c, spin_ns, deadline);

    /* Sleep until the callback, but wake now and then to read the status:
     * a failed command may never fire the callback (PoCL 3.1 to 6.0). The
     * first check comes late enough that typical kernels never see one, and
     * the interval doubles so a long wait costs a handful of wake-ups. */
    cw__check_schedule checks = cw__check_schedule_start(o->check_interval_us);
    for (;;) {
        uint64_t check = cw_deadline_after_ns(checks.interval_ns);
        if (!cw_completion_is_signalled(c))
            cw__stat_add(CW__STAT_PARKS, 1);
        rc = cw_completion_wait(c, parker, check < deadline ? check : deadline);
        if (rc == CW_OK) {
            /* Seen now; the landing time is valid until the release below. */
            uint64_t landed = cw_completion_landed_ns(c), now = cw_now_ns();
            cw__stat_latency(now > landed ? now - landed : 0);
            break;
        }
        rc = cw__read_status(event, cl_status);
        if (rc != CW_OK || *cl_status <= CL_COMPLETE)
            break; /* failed, or complete with the callback still to come */
        if (deadline != CW_DEADLINE_NONE && cw_now_ns() >= deadline) {
            rc = CW_ERR_TIMEOUT;
            break;
        }
        cw__check_schedule_grow(&checks);
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
    rc = cw__read_status(event, cl_status);
    return rc != CW_OK ? rc : cw__final_status(*cl_status);
}

int cw__validate_options(const cw_wait_options *o) {
    if ((unsigned)o->strategy >= CW_STRATEGY_COUNT || (o->flags & ~(unsigned)CW_WAIT_FLAGS_ALL_) ||
        o->timeout_us < 0 || o->check_interval_us > CW_CHECK_INTERVAL_US_MAX ||
        o->spin_us > CW_SPIN_US_MAX)
        return CW_ERR_INVALID_ARGUMENT;
    /* Reserved fields must be zero, so that a later release can give them a
     * meaning whose zero value is today's behaviour. */
    for (unsigned i = 0; i < sizeof o->reserved / sizeof o->reserved[0]; ++i)
        if (o->reserved[i] != 0)
            return CW_ERR_INVALID_ARGUMENT;
    return CW_OK;
}

uint64_t cw__deadline_of(const cw_wait_options *o) {
    if (o->timeout_us > 0 && (uint64_t)o->timeout_us < CW_DEADLINE_NONE / 1000u)
        return cw_deadline_after_ns((uint64_t)o->timeout_us * 1000u);
    return CW_DEADLINE_NONE;
}

/*
 * What the auto policy can see cheaply, per thread: how many CPUs it may run
 * on (sched_getaffinity) and how many threads are runnable system-wide (the
 * fourth field of /proc/loadavg, "running/total", which counts this thread).
 * Both are re-read at most every 50 ms, and only for waits short enough to
 * spin for, so their cost (a few system calls) is amortised over many waits;
 * a stale view only picks a worse strategy for a while, never a wrong result.
 */
#define AUTO_SAMPLE_NS 50000000u
static _Thread_local struct {
    uint64_t sampled_ns;
    bool valid;
    long allowed, running;
} auto_view;

/* Threads runnable system-wide, this one included; LONG_MAX when unknown.
 * open/read/close rather than stdio: three system calls, no allocation. */
static long runnable_threads(void) {
    char buf[128]; /* "0.52 0.58 0.59 3/467 12345" */
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return LONG_MAX;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0)
        return LONG_MAX;
    buf[len] = '\0';
    const char *p = buf;
    for (int field = 0; field < 3 && p; ++field) {
        p = strchr(p, ' ');
        if (p)
            ++p;
    }
    long running = p ? strtol(p, NULL, 10) : 0;
    return running > 0 ? running : LONG_MAX;
}

/*
 * Whether a CPU is spare for spinning: one for this thread beyond the
 * `device_cpus` the device's workers take, and fewer runnable threads than
 * allowed CPUs.
 */
static bool spare_cpu(unsigned device_cpus) {
    uint64_t now = cw_now_ns();
    if (!auto_view.valid || now - auto_view.sampled_ns >= AUTO_SAMPLE_NS) {
        auto_view.sampled_ns = now;
        auto_view.valid = true;
        cpu_set_t set;
        auto_view.allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
        /* With one CPU there is nothing to learn from the load. */
        auto_view.running = auto_view.allowed >= 2 ? runnable_threads() : LONG_MAX;
    }
    return auto_view.allowed > (long)device_cpus && auto_view.running < auto_view.allowed;
}

/*
 * How many host CPUs the queue's device occupies while it runs a command:
 * its compute units for a CPU device (PoCL's pthread device has one per
 * worker thread), none for any other. Two or three OpenCL queries, cached in
 * the queue's estimate slot. Without this a CPU device's workers, which
 * sleep between kernels and have only just been woken when the wait starts,
 * would not show in /proc/loadavg and every CPU would look spare.
 */
static unsigned host_units(uintptr_t key) {
    unsigned i = est_slot(key);
    bool mine = atomic_load_explicit(&estimates[i].key, memory_order_relaxed) == key;
    uint32_t cached =
        mine ? atomic_load_explicit(&estimates[i].host_units, memory_order_relaxed) : 0;
    if (cached)
        return cached - 1u;
    cl_device_id dev = NULL;
    cl_device_type type = 0;
    cl_uint units = 0;
    if (clGetCommandQueueInfo((cl_command_queue)key, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) !=
            CL_SUCCESS ||
        clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
        return UINT_MAX; /* unknown: as if it took every CPU */
    if ((type & CL_DEVICE_TYPE_CPU) &&
        clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) != CL_SUCCESS)
        return UINT_MAX;
    if (units > 1000000u)
        units = 1000000u;
    if (mine)
        atomic_store_explicit(&estimates[i].host_units, units + 1u, memory_order_relaxed);
    return units;
}

/* Auto: the spin budget for this wait, or 0 to park at once (cooperative).
 * Spinning pays only when the thread that will signal has a CPU of its own,
 * and only for about as long as the wait is expected to last. */
static uint64_t auto_spin_ns(const cw_wait_options *o, uintptr_t key, uint64_t expected) {
    uint64_t cap = (uint64_t)(o->spin_us ? o->spin_us : CW_AUTO_SPIN_US_CAP) * 1000u;
    if (!expected || expected > cap || !spare_cpu(host_units(key)))
        return 0;
    /* A quarter more than expected, so a typical wait ends inside the spin. */
    return expected + expected / 4u;
}

static int wait_one(cl_event event, const cw_wait_options *o, cl_int *cl_status) {
    uint64_t start = cw_now_ns();
    cw_strategy s = o->strategy == CW_STRATEGY_DEFAULT ? CW_STRATEGY_AUTO : o->strategy;
    /* clWaitForEvents validates and flushes by itself; keep it the bare call
     * so that it stays the benchmark's reference. It cannot time out: with a
     * timeout the wait takes the pthread condition variable path, which is
     * the same kind of sleep behind a callback, plus the status checks. */
    if (s == CW_STRATEGY_BLOCKING && o->timeout_us == 0)
        return wait_blocking(event, cl_status);

    /* One status read up front: it rejects a bad handle before any
     * registration, returns at once for work that already finished or
     * failed (a failed command fires no callback on PoCL 3.1), and tells
     * whether a flush is needed: only a CL_QUEUED command can still be
     * waiting for one; CL_SUBMITTED and later are with the device already. */
    int rc = cw__read_status(event, cl_status);
    if (rc != CW_OK || *cl_status <= CL_COMPLETE)
        return rc != CW_OK ? rc : cw__final_status(*cl_status);
    if (!(o->flags & CW_WAIT_NO_FLUSH) &&
        (rc = cw__flush_if_queued(event, *cl_status, cl_status)) != CW_OK)
        return rc;

    uint64_t deadline = cw__deadline_of(o);
    switch (s) {
    case CW_STRATEGY_POLL:
        return wait_poll(event, deadline, cl_status);
    case CW_STRATEGY_COOPERATIVE_WAKE_LOCKED:
        return wait_callback(event, CW_COMPLETION_YIELD_WAKE_LOCKED, o, 0, deadline, cl_status);
    case CW_STRATEGY_COOPERATIVE_NOYIELD:
        return wait_callback(event, CW_COMPLETION_NOYIELD_WAKE_LOCKED, o, 0, deadline, cl_status);
    case CW_STRATEGY_BLOCKING: /* with a timeout */
    case CW_STRATEGY_PTHREAD:
        return wait_callback(event, CW_COMPLETION_PTHREAD, o, 0, deadline, cl_status);
    case CW_STRATEGY_SPIN_PARK:
        return wait_callback(event, CW_COMPLETION_YIELD, o,
                             (uint64_t)(o->spin_us ? o->spin_us : CW_SPIN_US_DEFAULT) * 1000u,
                             deadline, cl_status);
    case CW_STRATEGY_BACKOFF_POLL:
    case CW_STRATEGY_AUTO: {
        uintptr_t key = queue_key(event);
        uint64_t expected = estimate_get(key);
        rc = s == CW_STRATEGY_AUTO
                 ? wait_callback(event, CW_COMPLETION_YIELD, o, auto_spin_ns(o, key, expected),
                                 deadline, cl_status)
                 : wait_backoff_poll(event, start, expected, deadline, cl_status);
        if (rc == CW_OK)
            estimate_put(key, cw_now_ns() - start);
        return rc;
    }
    case CW_STRATEGY_COOPERATIVE:
    default:
        return wait_callback(event, CW_COMPLETION_YIELD, o, 0, deadline, cl_status);
    }
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
    int rc = cw__validate_options(o);
    if (rc != CW_OK)
        return rc;
    cw__stat_add(CW__STAT_WAITS, 1);
    rc = wait_one(event, o, cl_status);
    if (rc == CW_ERR_TIMEOUT)
        cw__stat_add(CW__STAT_TIMEOUTS, 1);
    return rc;
}
