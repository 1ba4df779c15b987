/* SPDX-License-Identifier: MIT */
/* Layer 6.0: the probe of a platform's driver (driver.h, cw__driver_probe). */
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue, for 1.2 drivers too */
#endif
#include "base.h"
#include "driver_record.h"
#include "tunables.h"

#include <sched.h>

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
    if (done || atomic_load_explicit(&d->probe, memory_order_relaxed) != PROBE_DONE) {
        uint64_t late = done && now > done ? now - done : 0;
        /* A marker made again (cw__driver_reprobe) where a lateness is
         * known: the least of the probes' is kept. A preempted callback
         * reads a marker late and a preempted status read reads it early,
         * but the two errors do not cost alike: a lateness read too low
         * is raised within tens of waits (the parked waits' peeks see the
         * callback late), one read too high only by the one late wait in
         * CW__LATE_SAMPLE_EVERY that registers its callback. */
        if (atomic_load_explicit(&d->samples, memory_order_relaxed) &&
            atomic_load_explicit(&d->late_probes, memory_order_relaxed) > 1)
            cw__driver_lateness_least(d, late);
        else
            cw__driver_lateness_sample(d, late);
    }
    /* Release: a next probe that reads it (acquire) resets done_ns and
     * cb_ns only after this callback is done with them. */
    atomic_store_explicit(&d->cb_over, true, memory_order_release);
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
static void probe_markers(cw__driver *d, cl_event event, bool with_failing);

void cw__driver_probe(cw__driver *d, cl_event event) {
    int none = PROBE_NONE;
    if (!d || atomic_load_explicit(&d->probe, memory_order_relaxed) != PROBE_NONE ||
        !atomic_compare_exchange_strong_explicit(&d->probe, &none, PROBE_CLAIMED,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    uint64_t claimed = cw_now_ns();
    atomic_store_explicit(&d->probed_ns, claimed ? claimed : 1, memory_order_relaxed);
    probe_markers(d, event, true);
}

bool cw__driver_reprobe(cw__driver *d, cl_event event) {
    int done = PROBE_DONE;
    if (!d || atomic_load_explicit(&d->probe, memory_order_relaxed) != PROBE_DONE ||
        !cw__policy_probe_again(cw__driver_lateness_known(d), cw__driver_lateness_ns(d)) ||
        !atomic_load_explicit(&d->cb_over, memory_order_acquire) ||
        atomic_load_explicit(&d->late_probes, memory_order_relaxed) >= CW__PROBE_TRIES ||
        !atomic_compare_exchange_strong_explicit(&d->probe, &done, PROBE_CLAIMED,
                                                 memory_order_relaxed, memory_order_relaxed))
        return false;
    /* The last marker's callback has returned (cb_over): nothing else
     * touches these until this probe's marker is made. */
    atomic_store_explicit(&d->done_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&d->cb_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&d->cb_over, false, memory_order_relaxed);
    probe_markers(d, event, false);
    return true;
}

/* The probe's markers on queues of cw's own: the failing one (with_failing)
 * and the timely one; spins with yields until both are seen finished or
 * CW__PROBE_SPIN_NS passed, then marks the probe done. */
static void probe_markers(cw__driver *d, cl_event event, bool with_failing) {
    atomic_fetch_add_explicit(&d->late_probes, 1, memory_order_relaxed);
    cl_context ctx = NULL;
    cl_int err;
    if (clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS || !ctx)
        goto out;
    /* Two queues: in an in-order queue the failing marker would make every
     * command after it fail too, and PoCL 3.1 asserted on releasing a
     * command its failed successor still pointed at. */
    cl_command_queue q = with_failing ? probe_queue(ctx, event) : NULL;
    cl_command_queue q2 = q || !with_failing ? probe_queue(ctx, event) : NULL;
    if (!q2) {
        if (q)
            clReleaseCommandQueue(q);
        goto out;
    }
    cl_event gate_fail = NULL, gate_ok = NULL, failing = NULL, timely = NULL;
    err = CL_SUCCESS;
    if (with_failing)
        gate_fail = clCreateUserEvent(ctx, &err);
    if (err == CL_SUCCESS)
        gate_ok = clCreateUserEvent(ctx, &err);
    if (err == CL_SUCCESS && with_failing)
        err = clEnqueueMarkerWithWaitList(q, 1, &gate_fail, &failing);
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(q2, 1, &gate_ok, &timely);
    /* Only the callback (probe_failed_fired) sets `fire`: where it could
     * not be registered, failed commands are taken to fire none, the safe
     * answer (the checks stay on). */
    if (err == CL_SUCCESS && failing)
        (void)clSetEventCallback(failing, CL_COMPLETE, probe_failed_fired, d);
    bool timely_cb = err == CL_SUCCESS &&
                     clSetEventCallback(timely, CL_COMPLETE, probe_timely_fired, d) == CL_SUCCESS;
    if (gate_fail)
        clSetUserEventStatus(gate_fail, -1);
    if (gate_ok)
        clSetUserEventStatus(gate_ok, CL_COMPLETE);
    /* Releasing a queue flushes it (rusticl submits nothing before a
     * flush); the driver keeps it until its commands are done. */
    if (q)
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
