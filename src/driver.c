/* SPDX-License-Identifier: MIT */
/* Layer 6.0: what is learned of each platform: the probe, callback lateness, the trials' counts. */
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue, for 1.2 drivers too */
#endif
#include "driver.h"
#include "base.h"
#include "platform.h"
#include "stats_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

/* The probe's longest wait reading its second marker's status, waiting to
 * see it finished (a marker gated on a user event that was just set does no
 * work: on PoCL it finished within 0.2 ms when tried). */

enum { PROBE_NONE, PROBE_CLAIMED, PROBE_DONE };

struct cw__driver {
    _Atomic(cl_platform_id) platform; /* the key; NULL: free */
    _Atomic int probe;                /* PROBE_* */
    _Atomic bool fire;                /* a failed command's callback was seen */
    _Atomic bool failed_seen;         /* the probe saw its gated marker fail */
    _Atomic bool failed_called;       /* that marker's callback ran */
    _Atomic uint64_t lateness_ns;     /* moving estimate; valid once samples > 0 */
    _Atomic uint64_t samples;
    _Atomic uint64_t done_ns; /* the probe: when its second marker was seen finished; 0 not yet */
    _Atomic uint64_t cb_ns;   /* the probe: when that marker's callback ran; 0 not yet */
    _Atomic uint64_t measuring_ns; /* when the outstanding lateness measurement began; 0 none */
    _Atomic uint64_t probed_ns;    /* when the probe was claimed; 0 not yet */
    _Atomic uint32_t vote_trials;  /* the driver-wait vote (policy.h) */
    _Atomic uint32_t vote_asleep;  /* of them, those that slept */
    /* Parked waits on a platform whose callbacks are not late, per class
     * (policy.h): the tickets handed out, then per way, way[true] the
     * driver's wait and way[false] the callback wait: counted trials, the
     * sum of their thread CPU time and the largest of them (0 where none
     * is known: a seeded record). */
    struct {
        _Atomic uint32_t tickets;
        struct {
            _Atomic uint32_t n;
            _Atomic uint64_t cpu_ns, max_ns;
        } way[2];
    } cls[CW__CLASSES];
};

static cw__driver drivers[CW__DRIVER_SLOTS];

static cw__driver *slot_of(cl_platform_id p) {
    if (!p)
        return NULL;
    for (unsigned i = 0; i < CW__DRIVER_SLOTS; ++i) {
        cl_platform_id have = atomic_load_explicit(&drivers[i].platform, memory_order_acquire);
        if (have == p)
            return &drivers[i];
        if (!have) {
            cl_platform_id none = NULL;
            if (atomic_compare_exchange_strong_explicit(
                    &drivers[i].platform, &none, p, memory_order_acq_rel, memory_order_acquire) ||
                none == p)
                return &drivers[i];
        }
    }
    return NULL;
}

cw__driver *cw__driver_of_platform(cl_platform_id p) {
    return slot_of(p);
}

cl_platform_id cw__driver_slot(unsigned i, cw__driver **d) {
    cl_platform_id p = i < CW__DRIVER_SLOTS
                           ? atomic_load_explicit(&drivers[i].platform, memory_order_acquire)
                           : NULL;
    *d = p ? &drivers[i] : NULL;
    return p;
}

cw__driver *cw__driver_of(cl_event event) {
    return slot_of(cw__platform_of(event));
}

bool cw__driver_failed_fire(const cw__driver *d) {
    return d && atomic_load_explicit(&d->fire, memory_order_relaxed);
}

uint64_t cw__driver_lateness_ns(const cw__driver *d) {
    return d && atomic_load_explicit(&d->samples, memory_order_relaxed)
               ? atomic_load_explicit(&d->lateness_ns, memory_order_relaxed)
               : 0;
}

bool cw__driver_lateness_known(const cw__driver *d) {
    return d && atomic_load_explicit(&d->samples, memory_order_relaxed);
}

void cw__driver_view_get(const cw__driver *d, cw__driver_view *v) {
    *v = (cw__driver_view){0};
    if (!d)
        return;
    v->known = true;
    v->fire = atomic_load_explicit(&d->fire, memory_order_relaxed);
    v->lateness_known = atomic_load_explicit(&d->samples, memory_order_relaxed) != 0;
    v->lateness_ns =
        v->lateness_known ? atomic_load_explicit(&d->lateness_ns, memory_order_relaxed) : 0;
    v->probed_ns = atomic_load_explicit(&d->probed_ns, memory_order_relaxed);
    v->vote_trials = atomic_load_explicit(&d->vote_trials, memory_order_relaxed);
    v->vote_asleep = atomic_load_explicit(&d->vote_asleep, memory_order_relaxed);
    for (unsigned c = 0; c < CW__CLASSES; ++c) {
        v->cls[c].tickets = atomic_load_explicit(&d->cls[c].tickets, memory_order_relaxed);
        for (unsigned w = 0; w < 2; ++w) {
            v->cls[c].n[w] = atomic_load_explicit(&d->cls[c].way[w].n, memory_order_relaxed);
            v->cls[c].sum_ns[w] =
                atomic_load_explicit(&d->cls[c].way[w].cpu_ns, memory_order_relaxed);
            v->cls[c].max_ns[w] =
                atomic_load_explicit(&d->cls[c].way[w].max_ns, memory_order_relaxed);
        }
    }
}

/* Racing trials may count more than the vote's trials, or be read between
 * a vote and the count: a hint off for a while, never a wrong wait (either
 * way of waiting is correct). */
void cw__driver_vote_sample(cw__driver *d, uint64_t cpu_ns, uint64_t wall_ns) {
    uint32_t trials, asleep;
    cw__policy_vote_of(cpu_ns, wall_ns, &trials, &asleep);
    if (!d || !trials)
        return;
    if (asleep)
        atomic_fetch_add_explicit(&d->vote_asleep, asleep, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->vote_trials, trials, memory_order_relaxed);
}

uint32_t cw__driver_class_ticket(cw__driver *d, unsigned cls) {
    return d ? atomic_fetch_add_explicit(&d->cls[cls].tickets, 1, memory_order_relaxed)
             : UINT32_MAX;
}

/* Racing trials may count a few more than their number, or be read
 * between a sum and its count: a decision off for a while, never a wrong
 * wait. A wait shorter than its class's least (a far wait that ended
 * early, a short one that found its command as good as done) is not one
 * that class decides for. */
void cw__driver_class_sample(cw__driver *d, unsigned cls, bool driver, uint64_t cpu_ns,
                             uint64_t wall_ns) {
    if (!d || wall_ns < cw__policy_class_least_ns(cls))
        return;
    _Atomic uint64_t *max = &d->cls[cls].way[driver].max_ns;
    uint64_t seen = atomic_load_explicit(max, memory_order_relaxed);
    while (cpu_ns > seen && !atomic_compare_exchange_weak_explicit(
                                max, &seen, cpu_ns, memory_order_relaxed, memory_order_relaxed))
        ;
    atomic_fetch_add_explicit(&d->cls[cls].way[driver].cpu_ns, cpu_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->cls[cls].way[driver].n, 1, memory_order_relaxed);
}

/* A moving estimate, 1/4 weight to the newest sample, as the wait estimate:
 * a few timely callbacks undo one late one. Racing updaters may lose a
 * sample; a lost sample is a hint lost, never a wrong wait. */
void cw__driver_lateness_sample(cw__driver *d, uint64_t ns) {
    if (!d)
        return;
    cw__stat_add(CW__STAT_LATENESS_SAMPLES, 1);
    uint64_t n = atomic_fetch_add_explicit(&d->samples, 1, memory_order_relaxed);
    uint64_t old = atomic_load_explicit(&d->lateness_ns, memory_order_relaxed);
    uint64_t next = n == 0 ? ns : old - old / 4u + ns / 4u;
    atomic_store_explicit(&d->lateness_ns, next, memory_order_relaxed);
    atomic_store_explicit(&d->measuring_ns, 0, memory_order_relaxed);
}

void cw__driver_lateness_seen(cw__driver *d, uint64_t at_least_ns, uint64_t uncertain_ns) {
    if (!d)
        return;
    if (uncertain_ns <= at_least_ns / 4u ||
        !atomic_load_explicit(&d->samples, memory_order_relaxed)) {
        cw__driver_lateness_sample(d, at_least_ns + uncertain_ns / 2u);
        return;
    }
    cw__stat_add(CW__STAT_LATENESS_SAMPLES, 1);
    atomic_fetch_add_explicit(&d->samples, 1, memory_order_relaxed);
    if (at_least_ns > atomic_load_explicit(&d->lateness_ns, memory_order_relaxed))
        atomic_store_explicit(&d->lateness_ns, at_least_ns, memory_order_relaxed);
    atomic_store_explicit(&d->measuring_ns, 0, memory_order_relaxed);
}

void cw__driver_lateness_landed(cw__driver *d, uint64_t landed_ns, uint64_t seen_ns,
                                uint64_t running_ns) {
    cw__driver_lateness_seen(d, landed_ns > seen_ns ? landed_ns - seen_ns : 0,
                             seen_ns > running_ns ? seen_ns - running_ns : 0);
}

bool cw__driver_measure_claim(cw__driver *d, uint64_t now_ns) {
    if (!d)
        return false;
    uint64_t since = atomic_load_explicit(&d->measuring_ns, memory_order_relaxed);
    if (since && now_ns - since < CW__LATE_MEASURE_STALE_NS)
        return false;
    return atomic_compare_exchange_strong_explicit(&d->measuring_ns, &since, now_ns ? now_ns : 1,
                                                   memory_order_relaxed, memory_order_relaxed);
}

void cw__driver_measure_cancel(cw__driver *d) {
    if (d)
        atomic_store_explicit(&d->measuring_ns, 0, memory_order_relaxed);
}

/*
 * The probe's callbacks. They make no OpenCL call: rusticl runs an event's
 * callbacks holding that event's lock, so even reading the status here could
 * deadlock; the status argument says what is needed. `data` is a record of
 * the static array, valid for good.
 */
static void CL_CALLBACK probe_failed_fired(cl_event event, cl_int status, void *data) {
    (void)event;
    cw__driver *d = data;
    /* A negative status proves the point by itself. PoCL 7 calls a failed
     * command's callback with CL_COMPLETE as the status, which a driver
     * that ran the marker in spite of its failed gate would pass too: then
     * only the marker's status, seen negative by the prober, proves it.
     * Sequentially consistent: of this store and the prober's, the later
     * side sees the other's (fire_if_both). */
    atomic_store(&d->failed_called, true);
    if (status < 0 || atomic_load(&d->failed_seen))
        atomic_store_explicit(&d->fire, true, memory_order_relaxed);
}

static void CL_CALLBACK probe_timely_fired(cl_event event, cl_int status, void *data) {
    (void)event;
    (void)status;
    cw__driver *d = data;
    uint64_t now = cw_now_ns();
    atomic_store_explicit(&d->cb_ns, now, memory_order_relaxed);
    /* The prober saw the marker finished at done_ns; or has not yet, and
     * then the callback came first and is not late, unless the prober gave
     * up seeing it finished (then nothing is known). */
    uint64_t done = atomic_load_explicit(&d->done_ns, memory_order_relaxed);
    if (done || atomic_load_explicit(&d->probe, memory_order_relaxed) != PROBE_DONE)
        cw__driver_lateness_sample(d, done && now > done ? now - done : 0);
}

static cl_command_queue probe_queue(cl_context ctx, cl_event event) {
    cl_command_queue q = NULL;
    cl_device_id dev = NULL;
    cl_device_id devs[16];
    size_t size = 0;
    if (clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS || !q ||
        clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS) {
        dev = NULL;
        if (clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &size) == CL_SUCCESS &&
            size >= sizeof devs[0])
            dev = devs[0];
    }
    if (!dev)
        return NULL;
    cl_int err;
    /* clCreateCommandQueue is 1.x's name; CL_TARGET_OPENCL_VERSION=120 has
     * it undeprecated, and every 2.x and 3.0 driver still exports it. */
    q = clCreateCommandQueue(ctx, dev, 0, &err);
    return err == CL_SUCCESS ? q : NULL;
}

/*
 * What the probe tests, and why that is enough. The question is whether a
 * *command* that fails fires its CL_COMPLETE callback. A user event set to
 * a negative status is not the question: PoCL 3.1 and rusticl (tried) fire
 * neither a user event's callback nor a command's, but a driver may treat
 * user events apart. So the probe fails a command: a marker whose wait list
 * holds a user event set to a negative status fails with it (OpenCL 1.2
 * 5.10: a command whose wait list has a failed event does not run and gets
 * a negative status). That is the one failure the host can cause on any
 * driver, and the one it meets most (a failed command makes its dependents
 * fail this way); PoCL delivers every failed event's callbacks through one
 * path (pocl_update_event_failed, which PoCL 7 made fire CL_COMPLETE), so
 * a driver that fires here fires for any failed command. The callback
 * counts when it reports a negative status, or when the prober saw the
 * marker's status negative (PoCL 7 passes CL_COMPLETE to it); a probe that
 * did not see the marker fail within its spin learns nothing from a
 * callback with CL_COMPLETE, and the checks stay on. The marker goes
 * on a queue of cw's own, never the program's: on PoCL a failed command in
 * an in-order queue makes every later command in it fail too (tried).
 *
 * The second marker, gated on a user event set complete, does no work; the
 * time from seeing it finished to its callback is how late the driver
 * delivers callbacks.
 */
void cw__driver_probe(cw__driver *d, cl_event event) {
    int none = PROBE_NONE;
    if (!d || atomic_load_explicit(&d->probe, memory_order_relaxed) != PROBE_NONE ||
        !atomic_compare_exchange_strong_explicit(&d->probe, &none, PROBE_CLAIMED,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    uint64_t claimed = cw_now_ns();
    atomic_store_explicit(&d->probed_ns, claimed ? claimed : 1, memory_order_relaxed);
    cl_context ctx = NULL;
    cl_int err;
    if (clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS || !ctx)
        goto out;
    /* Two queues: in an in-order queue the failing marker would make every
     * command after it fail too, and PoCL 3.1 asserted on releasing a
     * command its failed successor still pointed at. */
    cl_command_queue q = probe_queue(ctx, event);
    cl_command_queue q2 = q ? probe_queue(ctx, event) : NULL;
    if (!q2) {
        if (q)
            clReleaseCommandQueue(q);
        goto out;
    }
    cl_event gate_fail = clCreateUserEvent(ctx, &err);
    cl_event gate_ok = err == CL_SUCCESS ? clCreateUserEvent(ctx, &err) : NULL;
    cl_event failing = NULL, timely = NULL;
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(q, 1, &gate_fail, &failing);
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(q2, 1, &gate_ok, &timely);
    /* Only the callback (probe_failed_fired) sets `fire`: where it could
     * not be registered, failed commands are taken to fire none, the safe
     * answer (the checks stay on). */
    if (err == CL_SUCCESS)
        (void)clSetEventCallback(failing, CL_COMPLETE, probe_failed_fired, d);
    bool timely_cb = err == CL_SUCCESS &&
                     clSetEventCallback(timely, CL_COMPLETE, probe_timely_fired, d) == CL_SUCCESS;
    if (gate_fail)
        clSetUserEventStatus(gate_fail, -1);
    if (gate_ok)
        clSetUserEventStatus(gate_ok, CL_COMPLETE);
    /* Releasing a queue flushes it (rusticl submits nothing before a
     * flush); the driver keeps it until its commands are done. */
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(q2);
    uint64_t start = cw_now_ns(), now = start;
    bool timely_done = !timely_cb, failing_done = !failing;
    while (!(timely_done && failing_done) && now - start < CW__PROBE_SPIN_NS) {
        cl_int st;
        if (!timely_done &&
            clGetEventInfo(timely, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                CL_SUCCESS &&
            st <= CL_COMPLETE) {
            timely_done = true;
            uint64_t zero = 0;
            atomic_compare_exchange_strong_explicit(&d->done_ns, &zero, cw_now_ns(),
                                                    memory_order_relaxed, memory_order_relaxed);
        }
        if (!failing_done &&
            clGetEventInfo(failing, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                CL_SUCCESS &&
            st <= CL_COMPLETE) {
            failing_done = true;
            if (st < 0) {
                atomic_store(&d->failed_seen, true);
                if (atomic_load(&d->failed_called))
                    atomic_store_explicit(&d->fire, true, memory_order_relaxed);
            }
        }
        /* A yield, not a pause: on one CPU the driver's worker that runs
         * the markers needs this CPU, and a spin would keep it off for the
         * whole budget (the probe then learns no lateness, and auto peeks
         * at every wait for one). */
        sched_yield();
        now = cw_now_ns();
    }
    if (failing)
        clReleaseEvent(failing);
    if (timely)
        clReleaseEvent(timely);
    if (gate_fail)
        clReleaseEvent(gate_fail);
    if (gate_ok)
        clReleaseEvent(gate_ok);
out:
    atomic_store_explicit(&d->probe, PROBE_DONE, memory_order_relaxed);
}

/* The learned record for keeping (learned.c), from the view: each way's
 * sum as its cost (cw__policy_class_cost) times its count, so that a
 * seeded record (no largest known) decides as this one does. */
void cw__driver_learned_get(const cw__driver *d, cw__driver_learned *out) {
    *out = (cw__driver_learned){0};
    if (!d)
        return;
    cw__driver_view v;
    cw__driver_view_get(d, &v);
    out->lateness_known = v.lateness_known;
    out->lateness_ns = v.lateness_ns;
    out->vote_trials = v.vote_trials;
    out->vote_asleep = v.vote_asleep;
    out->vote_known = cw__policy_vote_decided(v.vote_trials, v.vote_asleep);
    for (unsigned c = 0; c < CW__CLASSES; ++c) {
        cw__class_learned *l = &out->cls[c];
        l->known = cw__policy_class_decided(&v.cls[c], c);
        l->tickets = v.cls[c].tickets;
        l->driver_n = v.cls[c].n[true];
        l->cb_n = v.cls[c].n[false];
        uint64_t sum, n;
        cw__policy_class_cost(&v.cls[c], true, &sum, &n);
        l->driver_cpu_ns = n < l->driver_n ? sum + sum / n : sum;
        cw__policy_class_cost(&v.cls[c], false, &sum, &n);
        l->cb_cpu_ns = n < l->cb_n ? sum + sum / n : sum;
    }
}

/* The sums go in before the counts that make a part known, so a wait that
 * sees the count sees its sum (each a relaxed load, so only nearly: a
 * hint, as with racing trials). */
bool cw__driver_seed(cw__driver *d, const cw__driver_learned *in) {
    if (!d || !in)
        return false;
    bool seeded = false;
    if (in->lateness_known && !atomic_load_explicit(&d->samples, memory_order_relaxed)) {
        atomic_store_explicit(&d->lateness_ns, in->lateness_ns, memory_order_relaxed);
        atomic_store_explicit(&d->samples, 1, memory_order_relaxed);
        seeded = true;
    }
    if (in->vote_known && in->vote_asleep <= in->vote_trials &&
        cw__policy_vote_decided(in->vote_trials, in->vote_asleep) &&
        !atomic_load_explicit(&d->vote_trials, memory_order_relaxed)) {
        atomic_store_explicit(&d->vote_asleep, in->vote_asleep, memory_order_relaxed);
        atomic_store_explicit(&d->vote_trials, in->vote_trials, memory_order_relaxed);
        seeded = true;
    }
    for (unsigned c = 0; c < CW__CLASSES; ++c) {
        const cw__class_learned *l = &in->cls[c];
        if (!l->known || atomic_load_explicit(&d->cls[c].tickets, memory_order_relaxed) ||
            atomic_load_explicit(&d->cls[c].way[true].n, memory_order_relaxed) ||
            atomic_load_explicit(&d->cls[c].way[false].n, memory_order_relaxed))
            continue;
        atomic_store_explicit(&d->cls[c].way[true].cpu_ns, l->driver_cpu_ns, memory_order_relaxed);
        atomic_store_explicit(&d->cls[c].way[false].cpu_ns, l->cb_cpu_ns, memory_order_relaxed);
        atomic_store_explicit(&d->cls[c].way[true].n, l->driver_n, memory_order_relaxed);
        atomic_store_explicit(&d->cls[c].way[false].n, l->cb_n, memory_order_relaxed);
        atomic_store_explicit(&d->cls[c].tickets, l->tickets, memory_order_relaxed);
        seeded = true;
    }
    return seeded;
}

void cw__driver_summary(uint64_t *probed, uint64_t *fire, uint64_t *silent, uint64_t *late,
                        uint64_t *lateness_ns, uint64_t *long_own) {
    *probed = *fire = *silent = *late = *lateness_ns = *long_own = 0;
    for (unsigned i = 0; i < CW__DRIVER_SLOTS; ++i) {
        cw__driver *d = &drivers[i];
        if (!atomic_load_explicit(&d->platform, memory_order_acquire) ||
            atomic_load_explicit(&d->probe, memory_order_relaxed) != PROBE_DONE)
            continue;
        cw__driver_view v;
        cw__driver_view_get(d, &v);
        ++*probed;
        if (v.fire)
            ++*fire;
        else if (atomic_load_explicit(&d->failed_seen, memory_order_relaxed))
            ++*silent;
        if (cw__policy_late(&v, 0))
            ++*late;
        if (v.lateness_ns > *lateness_ns)
            *lateness_ns = v.lateness_ns;
        /* Waits of CW__VOTE_MIN_NS and more only (near and far classes):
         * the count says whose such waits the driver's wait serves (cw-run
         * hands its clFinish calls that long to the driver by it); short
         * ones decide apart, and only where no CPU is spare. */
        for (unsigned c = 0; c < CW__CLASSES; ++c)
            if (c != CW__CLASS_SHORT && cw__policy_class_decided(&v.cls[c], c) &&
                cw__policy_class_driver_won(&v.cls[c])) {
                ++*long_own;
                break;
            }
    }
}
