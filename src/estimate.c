/* SPDX-License-Identifier: MIT */
/* Layer 6.2: per-queue estimates of the wait, and what auto can see of the machine. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "estimate.h"
#include "tunables.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A moving estimate of how long waits on one command queue take, for the
 * strategies that plan ahead (backoff-poll, auto), keyed by the queue
 * pointer: 64 sets of 4 slots, a new queue taking the slot of its set fed
 * least recently, so that a queue waited on all along keeps its estimate
 * while others come and go: a program may wait on a few dozen queues (one
 * per stream, or a fresh one per phase), and with one slot a set any two
 * that hashed alike would take it in turns, each wait finding none and
 * planning nothing. Key and values are separate relaxed atomics: a reader
 * that pairs one queue's key with another's value, or two racing puts of
 * new queues that take the same slot, give a bad hint for a while, never a
 * bad wait, so no lock.
 */
#define EST_SETS 64u
#define EST_WAYS 4u
static struct {
    _Atomic uintptr_t key;
    _Atomic uint64_t ns;
    _Atomic uint64_t fed_ns;     /* when a wait last fed it (cw_now_ns): the set's eviction order */
    _Atomic uint32_t host_units; /* auto: host CPUs the device's work takes, + 1; 0 unknown */
    _Atomic uint64_t end_ns;     /* auto's late waits: when commands end; 0 none */
    _Atomic uint64_t end_dev_ns; /* how far a told end lies from end_ns, on average */
} estimates[EST_SETS * EST_WAYS];

/* The first slot of the set of `key`. */
static unsigned est_set(uintptr_t key) {
    return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15u) >> 58) * EST_WAYS;
}

/* The slot that holds `key` (not 0): its index, or -1 when none does. */
static int slot_of(uintptr_t key) {
    unsigned first = est_set(key);
    for (unsigned i = first; key && i < first + EST_WAYS; ++i)
        if (atomic_load_explicit(&estimates[i].key, memory_order_relaxed) == key)
            return (int)i;
    return -1;
}

/* The slot a new key takes: the one of its set fed least recently (a free
 * one was never fed). */
static unsigned slot_to_take(uintptr_t key) {
    unsigned first = est_set(key), oldest = first;
    uint64_t oldest_ns = UINT64_MAX;
    for (unsigned i = first; i < first + EST_WAYS; ++i) {
        uint64_t fed = atomic_load_explicit(&estimates[i].fed_ns, memory_order_relaxed);
        if (fed < oldest_ns) {
            oldest_ns = fed;
            oldest = i;
        }
    }
    return oldest;
}

/* One step of a moving estimate from `old` with the newest wait `ns`. A
 * wait under half the estimate means the estimate is stale (a first launch
 * that compiled the kernel, a preempted launch): come down by up to 4x a
 * wait, so it is within 2x of a steady wait after log4(ratio) short waits
 * (6 after one 3000 times longer). Otherwise follow the mean, 1/4 weight to
 * the newest wait: tracking the minimum instead would make most waits
 * outlast the estimate and poll. */
static uint64_t follow(uint64_t old, uint64_t ns) {
    if (ns < old / 2)
        return ns > old / CW__EST_DROP ? ns : old / CW__EST_DROP;
    return cw__moving(old, ns, CW__EST_WEIGHT_SHIFT);
}

/* Up by as much as 4x at once, to `ns` at most: a step over twice the
 * estimate that is taken as the queue's commands grown longer. */
static uint64_t rise_to(uint64_t old, uint64_t ns) {
    return ns / CW__EST_DROP > old ? CW__EST_DROP * old : ns;
}

/* From CW__EST_RISE_MIN_NS on (half the default check interval, where the
 * first failed-command check is put by the expected wait), one wait over
 * twice the estimate raises it at once (rise_to): following a kernel 5x
 * longer than the last by a quarter, each of its first few waits woke for
 * a check the estimate put too early. Shorter waits follow by a quarter:
 * there one preempted wait, 2-4x the rest, would turn auto's spin off for
 * the next wait. */
_Static_assert(CW__EST_RISE_MIN_NS ==
                   (uint64_t)CW_CHECK_INTERVAL_US_DEFAULT * 1000u / CW__CHECK_EXPECTED_FACTOR,
               "the rise begins at half the default check interval");

static uintptr_t queue_key(cl_event event) {
    cl_command_queue q = NULL;
    if (clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS)
        return 0;
    return (uintptr_t)q; /* 0 for user events: no estimate */
}

uint64_t cw__estimate_get(uintptr_t key) {
    int i = slot_of(key);
    return i < 0 ? 0 : atomic_load_explicit(&estimates[i].ns, memory_order_relaxed);
}

uint64_t cw__estimate_of(cl_event event) {
    return cw__estimate_get(queue_key(event));
}

/* A few waits follow a change to a longer kernel, one outlier moves it by
 * a quarter (follow); from EST_RISE_MIN_NS on, one wait (rise_to). */
void cw__estimate_put(uintptr_t key, uint64_t ns, bool rise) {
    if (!key)
        return;
    int i = slot_of(key);
    if (i < 0) {
        i = (int)slot_to_take(key);
        atomic_store_explicit(&estimates[i].key, key, memory_order_relaxed);
        atomic_store_explicit(&estimates[i].ns, ns, memory_order_relaxed);
        atomic_store_explicit(&estimates[i].host_units, 0, memory_order_relaxed);
        atomic_store_explicit(&estimates[i].end_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&estimates[i].end_dev_ns, 0, memory_order_relaxed);
    } else {
        uint64_t old = atomic_load_explicit(&estimates[i].ns, memory_order_relaxed);
        uint64_t next =
            rise && ns >= CW__EST_RISE_MIN_NS && ns / 2u > old ? rise_to(old, ns) : follow(old, ns);
        atomic_store_explicit(&estimates[i].ns, next, memory_order_relaxed);
    }
    atomic_store_explicit(&estimates[i].fed_ns, cw_now_ns(), memory_order_relaxed);
}

uint64_t cw__estimate_end_get(uintptr_t key, uint64_t *dev_ns) {
    int i = slot_of(key);
    *dev_ns = i < 0 ? 0 : atomic_load_explicit(&estimates[i].end_dev_ns, memory_order_relaxed);
    return i < 0 ? 0 : atomic_load_explicit(&estimates[i].end_ns, memory_order_relaxed);
}

/*
 * The same moving estimate as cw__estimate_put's, in the slot that put
 * made. An end known only within `span_ns` of `ns` (the polls either side
 * of it lay further apart than their share) moves an estimate from `ns` -
 * span to `ns` nowhere: the command may well have ended there. One below
 * that follows `ns` up; one above follows it down, a guess that the next
 * wait checks by waking earlier, since left there it would never be
 * corrected: every wait would wake past the end and learn no more (a
 * 20 ms command planned with 31 ms, polled at 15 ms and 31 ms, for good).
 * A told end over twice the estimate raises it by up to 4x at once, as a
 * short wait brings the wait estimate down: the queue's commands grew
 * longer, and following by a quarter would plan each of the next ten or
 * so waits short of the end, to poll coarsely past it (from 20 ms to
 * 100 ms commands: 1-5 ms late, a wait).
 */
void cw__estimate_end_put(uintptr_t key, uint64_t ns, uint64_t span_ns, bool rise) {
    int i = slot_of(key);
    if (i < 0)
        return;
    uint64_t old = atomic_load_explicit(&estimates[i].end_ns, memory_order_relaxed);
    if (span_ns && old && old + span_ns >= ns && old <= ns)
        return;
    /* A told end's distance from the estimate (the spread of the ends as
     * seen from the wait's start: the host's own delays between enqueue
     * and wait, the device's jitter), followed as the estimate is: late
     * waits poll finely over about twice it either side of the end. */
    if (old && !span_ns) {
        uint64_t dev = atomic_load_explicit(&estimates[i].end_dev_ns, memory_order_relaxed);
        uint64_t off = ns > old ? ns - old : old - ns;
        atomic_store_explicit(&estimates[i].end_dev_ns, cw__moving(dev, off, CW__EST_WEIGHT_SHIFT),
                              memory_order_relaxed);
    }
    uint64_t next;
    if (!old)
        next = ns;
    else if (rise && !span_ns && ns / 2u > old)
        next = rise_to(old, ns);
    else
        next = follow(old, ns);
    atomic_store_explicit(&estimates[i].end_ns, next ? next : 1, memory_order_relaxed);
}

/*
 * What the auto policy can see of the machine, per thread: how many CPUs it
 * may run on (sched_getaffinity) and how many threads are runnable
 * system-wide (the fourth field of /proc/loadavg, "running/total", which
 * counts this thread). Each is re-read at most every 50 ms, and only for
 * waits short enough to spin for, so its cost is spread over many waits; a
 * stale view only picks a worse strategy for a while, never a wrong result.
 * The load is read only where it can change the answer, a device that
 * leaves this thread a CPU: its open/read/close costs ten times the
 * affinity's system call, more than the rest of auto's plan
 * (docs/design.md, "Spare").
 */
static _Thread_local struct {
    uint64_t allowed_ns, running_ns;
    bool allowed_valid, running_valid;
    long allowed, running;
} auto_view;

/* Whether a view sampled at `then` (valid or not) is due for a re-read. */
static bool view_due(bool valid, uint64_t then, uint64_t now) {
    return !valid || now - then >= CW__SPARE_SAMPLE_NS;
}

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

/* The CPUs this thread may run on, re-read once CW__SPARE_SAMPLE_NS old. */
static long allowed_cpus(void) {
    uint64_t now = cw_now_ns();
    if (view_due(auto_view.allowed_valid, auto_view.allowed_ns, now)) {
        auto_view.allowed_ns = now;
        auto_view.allowed_valid = true;
        cpu_set_t set;
        auto_view.allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    }
    return auto_view.allowed;
}

/* The runnable threads, re-read once CW__SPARE_SAMPLE_NS old. */
static long running_threads(void) {
    uint64_t now = cw_now_ns();
    if (view_due(auto_view.running_valid, auto_view.running_ns, now)) {
        auto_view.running_ns = now;
        auto_view.running_valid = true;
        auto_view.running = runnable_threads();
    }
    return auto_view.running;
}

/* Whether a device whose workers take `device_cpus` takes every CPU this
 * thread may run on. */
static bool takes_every_cpu(unsigned device_cpus) {
    return (long)device_cpus >= allowed_cpus();
}

/*
 * Whether a CPU is spare for spinning: one for this thread beyond the
 * `device_cpus` the device's workers take, and fewer runnable threads than
 * allowed CPUs. With one CPU, or a device that takes them all, the load has
 * nothing to say and is not read.
 */
static bool spare_cpu(unsigned device_cpus) {
    if (takes_every_cpu(device_cpus) || auto_view.allowed < 2)
        return false;
    return running_threads() < auto_view.allowed;
}

/*
 * How many host CPUs the queue's device occupies while it runs a command:
 * its compute units for a CPU device (PoCL's pthread device has one per
 * worker thread), none for any other: a GPU's or an accelerator's work runs
 * on the device, so a GPU device leaves every allowed CPU to the rule
 * below (its driver's threads, when they run, show in /proc/loadavg). Two or three OpenCL queries,
 * cached in the queue's estimate slot. Without this a CPU device's workers, which sleep between
 * kernels and have only just been woken when the wait starts, would not show in /proc/loadavg and
 * every CPU would look spare.
 */
static unsigned host_units(uintptr_t key) {
    int mine = slot_of(key);
    uint32_t cached =
        mine >= 0 ? atomic_load_explicit(&estimates[mine].host_units, memory_order_relaxed) : 0;
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
    if (mine >= 0)
        atomic_store_explicit(&estimates[mine].host_units, units + 1u, memory_order_relaxed);
    return units;
}

bool cw__estimate_shares_cpus(uintptr_t key) {
    return takes_every_cpu(host_units(key));
}

void cw__estimate_plan(cw__plan *p, cl_event event) {
    p->queue_key = queue_key(event);
    p->expected_ns = cw__estimate_get(p->queue_key);
}

bool cw__estimate_spare_cpu(uintptr_t key, bool any_other) {
    if (any_other)
        return allowed_cpus() >= 2;
    return spare_cpu(host_units(key));
}
