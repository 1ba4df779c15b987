/* SPDX-License-Identifier: MIT */
/* Layer 6.0: what the driver does, per platform: the probe, and callback lateness. */
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue, for 1.2 drivers too */
#endif
#include "driver.h"
#include "base.h"
#include "stats_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

/* The probe's longest wait reading its second marker's status, waiting to
 * see it finished (a marker gated on a user event that was just set does no
 * work: on PoCL it finished within 0.2 ms when tried). */
#define CW__PROBE_SPIN_NS 2000000u

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
    _Atomic uint32_t own_trials;   /* votes of timed clWaitForEvents calls (driver.h) */
    _Atomic uint32_t own_asleep;   /* of them, those that slept */
    /* Long waits on a platform whose callbacks are not late, per class
     * (cw__driver_long_class): the trials (tickets handed out, then per way,
     * way[true] the driver's own and way[false] the callback wait: counted
     * waits, the sum of their thread CPU time and the largest of them, 0
     * where none is known: a seeded record). */
    struct {
        _Atomic uint32_t tickets;
        struct {
            _Atomic uint32_t n;
            _Atomic uint64_t cpu_ns, max_ns;
        } way[2];
    } lng[CW__LONG_CLASSES];
};

static cw__driver drivers[CW__DRIVER_SLOTS];
/* clGetPlatformIDs' answer, asked once: the one platform, or NULL when
 * there are several (or none could be listed) and each event is asked. */
static _Atomic(cl_platform_id) only_platform;
static _Atomic int platforms_known; /* 0 not asked, 1 asked */

/*
 * With several platforms, asking an event for its platform takes three
 * OpenCL calls (event, context, device). Under the ICD loader every OpenCL
 * object begins with a pointer to its vendor's dispatch table (cl_khr_icd),
 * the same for a platform and its events, and the vendor library, so the
 * table, stays loaded for the life of the process. So a platform whose
 * first word no other platform shares is told by an event's first word, a
 * load and a compare. Each entry is believed only once the three calls
 * agreed with it for one event (a program linked to a vendor library with
 * no loader has objects of the vendor's own layout, whose first words need
 * not say anything); a disagreement turns the entry off for good.
 */
enum { DISPATCH_UNTRIED, DISPATCH_TRUSTED, DISPATCH_OFF };
static struct {
    const void *first_word;  /* the platform object's first word; NULL: no entry */
    cl_platform_id platform; /* set before the count is published */
    _Atomic int state;       /* DISPATCH_* */
} dispatch[CW__DRIVER_SLOTS];
static unsigned dispatch_n; /* written once, before platforms_known */

static const void *first_word(const void *object) {
    const void *w;
    memcpy(&w, object, sizeof w);
    return w;
}

/* Asked once (pthread_once), by whichever thread gets here first. */
static void platforms_learn(void) {
    cl_platform_id ps[CW__DRIVER_SLOTS];
    cl_uint n = 0;
    if (clGetPlatformIDs(CW__DRIVER_SLOTS, ps, &n) != CL_SUCCESS)
        n = 0;
    if (n == 1)
        atomic_store_explicit(&only_platform, ps[0], memory_order_relaxed);
    else if (n > 1 && n <= CW__DRIVER_SLOTS) {
        for (cl_uint i = 0; i < n; ++i) {
            dispatch[i].first_word = first_word(ps[i]);
            dispatch[i].platform = ps[i];
        }
        for (cl_uint i = 0; i < n; ++i)
            for (cl_uint j = 0; j < n; ++j)
                if (i != j && dispatch[i].first_word == dispatch[j].first_word)
                    atomic_store_explicit(&dispatch[i].state, DISPATCH_OFF, memory_order_relaxed);
        dispatch_n = n;
    }
    atomic_store_explicit(&platforms_known, 1, memory_order_release);
}

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

/* The platform of an event, asked of the event itself: its context's first
 * device's platform (a context's devices are all on one platform). */
static cl_platform_id platform_of(cl_event event) {
    cl_context ctx = NULL;
    cl_device_id devs[16];
    size_t size = 0;
    cl_platform_id p = NULL;
    if (clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS || !ctx ||
        clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &size) != CL_SUCCESS ||
        size < sizeof devs[0] ||
        clGetDeviceInfo(devs[0], CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS)
        return NULL;
    return p;
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

/* The platform of a valid event, by its first word where that is trusted. */
static cl_platform_id platform_by_dispatch(cl_event event) {
    const void *w = first_word(event);
    for (unsigned i = 0; i < dispatch_n; ++i) {
        if (dispatch[i].first_word != w)
            continue;
        int state = atomic_load_explicit(&dispatch[i].state, memory_order_relaxed);
        if (state == DISPATCH_TRUSTED)
            return dispatch[i].platform;
        if (state == DISPATCH_OFF)
            break;
        cl_platform_id asked = platform_of(event);
        if (asked)
            atomic_store_explicit(&dispatch[i].state,
                                  asked == dispatch[i].platform ? DISPATCH_TRUSTED : DISPATCH_OFF,
                                  memory_order_relaxed);
        return asked;
    }
    return platform_of(event);
}

unsigned cw__driver_dispatch_trusted(void) {
    unsigned n = 0;
    if (atomic_load_explicit(&platforms_known, memory_order_acquire))
        for (unsigned i = 0; i < dispatch_n; ++i)
            n += atomic_load_explicit(&dispatch[i].state, memory_order_relaxed) == DISPATCH_TRUSTED;
    return n;
}

cw__driver *cw__driver_of(cl_event event) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!atomic_load_explicit(&platforms_known, memory_order_acquire))
        pthread_once(&once, platforms_learn);
    cl_platform_id p = atomic_load_explicit(&only_platform, memory_order_relaxed);
    return slot_of(p ? p : platform_by_dispatch(event));
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

bool cw__driver_late(const cw__driver *d, uint64_t expected_ns) {
    uint64_t l = cw__driver_lateness_ns(d);
    return l >= CW__LATE_FLOOR_NS && l >= expected_ns >> CW__LATE_SHARE_SHIFT;
}

/* The vote of `trials` of which `asleep` slept: decided once every trial
 * counted, or once the rest cannot change it; it sleeps where half or more
 * slept, of the trials made or, before all are, of all there will be.
 * Read while a trial adds to them, asleep may be ahead of trials: that
 * counts as no spun trial. */
static bool own_decided(uint32_t trials, uint32_t asleep) {
    uint32_t spun = trials > asleep ? trials - asleep : 0;
    return trials >= CW__OWN_WAIT_TRIALS || 2u * asleep >= CW__OWN_WAIT_TRIALS ||
           2u * spun > CW__OWN_WAIT_TRIALS;
}

static bool own_sleeps(uint32_t trials, uint32_t asleep) {
    return 2u * asleep >= (trials > CW__OWN_WAIT_TRIALS ? trials : CW__OWN_WAIT_TRIALS);
}

bool cw__driver_own_wait_open(const cw__driver *d) {
    return d && !own_decided(atomic_load_explicit(&d->own_trials, memory_order_relaxed),
                             atomic_load_explicit(&d->own_asleep, memory_order_relaxed));
}

bool cw__driver_own_wait_trial(const cw__driver *d, uint64_t expected_ns) {
    return expected_ns && expected_ns <= CW__OWN_WAIT_TRIAL_MAX_NS && cw__driver_own_wait_open(d);
}

bool cw__driver_own_wait_sleeps(const cw__driver *d) {
    if (!d)
        return false;
    uint32_t trials = atomic_load_explicit(&d->own_trials, memory_order_relaxed);
    uint32_t asleep = atomic_load_explicit(&d->own_asleep, memory_order_relaxed);
    return own_decided(trials, asleep) && own_sleeps(trials, asleep);
}

/* A vote a trial, not a sum: one costly wait (a third to a half of its wall
 * time in thread CPU, seen under the pocl7 model) would outweigh the other
 * trials' sleeps in a sum. A trial that spun throughout is a majority of
 * votes alone (driver.h).
 * Racing trials may count more than CW__OWN_WAIT_TRIALS samples, or be
 * read between a vote and the count: a hint off for a while, never a
 * wrong wait (either way of waiting is correct). */
void cw__driver_own_wait_sample(cw__driver *d, uint64_t cpu_ns, uint64_t wall_ns) {
    if (!d || wall_ns < CW__OWN_WAIT_SPUN_MIN_NS)
        return;
    if (wall_ns < CW__OWN_WAIT_MIN_NS) {
        /* Short: only a spin is told apart from a sleep (driver.h). */
        if (cpu_ns * CW__OWN_WAIT_SPUN_SHARE >= wall_ns)
            atomic_fetch_add_explicit(&d->own_trials, 1, memory_order_relaxed);
        return;
    }
    if (cpu_ns * CW__OWN_WAIT_THROUGH_OF >= wall_ns * CW__OWN_WAIT_THROUGH) {
        atomic_fetch_add_explicit(&d->own_trials, CW__OWN_WAIT_TRIALS / 2u + 1u,
                                  memory_order_relaxed);
        return;
    }
    cpu_ns = cpu_ns > CW__OWN_WAIT_FIXED_NS ? cpu_ns - CW__OWN_WAIT_FIXED_NS : 0;
    if (cpu_ns * CW__OWN_WAIT_CPU_SHARE < wall_ns)
        atomic_fetch_add_explicit(&d->own_asleep, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->own_trials, 1, memory_order_relaxed);
}

/* Per class (by CW__LONG_NEAR, _FAR, _SHORT): the trials each way counts,
 * the tickets it hands out, and the shortest wait that counts as a trial
 * (driver.h). */
static const struct {
    uint32_t trials, tickets;
    uint64_t least_ns;
} long_classes[CW__LONG_CLASSES] = {
    [CW__LONG_NEAR] = {CW__LONG_TRIALS, CW__LONG_TICKETS, CW__OWN_WAIT_MIN_NS},
    [CW__LONG_FAR] = {CW__LONG_FAR_TRIALS, CW__LONG_FAR_TICKETS, CW__LONG_FAR_NS / 2u},
    [CW__LONG_SHORT] = {CW__LONG_TRIALS, CW__LONG_TICKETS, CW__LONG_SHORT_MIN_NS},
};

unsigned cw__driver_long_class(uint64_t expected_ns) {
    if (expected_ns >= CW__LONG_FAR_NS)
        return CW__LONG_FAR;
    return expected_ns >= CW__OWN_WAIT_MIN_NS ? CW__LONG_NEAR : CW__LONG_SHORT;
}

/* Decided: both ways have their trials counted, or the tickets ran out. */
static bool long_decided(const cw__driver *d, unsigned c) {
    return (atomic_load_explicit(&d->lng[c].way[true].n, memory_order_relaxed) >=
                long_classes[c].trials &&
            atomic_load_explicit(&d->lng[c].way[false].n, memory_order_relaxed) >=
                long_classes[c].trials) ||
           atomic_load_explicit(&d->lng[c].tickets, memory_order_relaxed) >=
               long_classes[c].tickets;
}

/*
 * A way's thread CPU time per wait, as the fraction *sum / *n: the mean of
 * its trials with the largest left out (where there are two or more and the
 * largest is known). One wait in a few is dearer by a multiple (a
 * preemption, an interrupt, a page fault on a cold line: 55-97 µs among
 * samples of 22-40 µs for 20 ms kernels on PoCL 3.1), and with 4 or 8
 * trials one such sample decided for either way; what the two ways differ
 * by is in every wait, so it stays.
 */
static void long_cost(const cw__driver *d, unsigned c, bool own, uint64_t *sum, uint64_t *n) {
    *sum = atomic_load_explicit(&d->lng[c].way[own].cpu_ns, memory_order_relaxed);
    *n = atomic_load_explicit(&d->lng[c].way[own].n, memory_order_relaxed);
    uint64_t max = atomic_load_explicit(&d->lng[c].way[own].max_ns, memory_order_relaxed);
    if (*n >= 2 && max && max <= *sum) {
        *sum -= max;
        --*n;
    }
}

/* The driver's own wait won: both ways were timed and its thread CPU time
 * per wait (long_cost) is at most CW__LONG_OWN_EDGE eighths of the
 * callback wait's (cross products of sums and counts, which cannot
 * overflow: a count is at most its tickets plus racers, a sum of thread
 * CPU time far under 2^52 ns; a seeded one is under 2^16 and 2^40 ns,
 * learned.c). */
static bool long_own_won(const cw__driver *d, unsigned c) {
    uint64_t own, own_n, cb, cb_n;
    long_cost(d, c, true, &own, &own_n);
    long_cost(d, c, false, &cb, &cb_n);
    if (!own_n || !cb_n)
        return false;
    return own * cb_n * 8u <= cb * own_n * CW__LONG_OWN_EDGE;
}

/* The long way of class c where it needs no ticket: true, with *way set,
 * where the platform's long waits are the callback wait for now, or
 * decided. */
static bool long_way_known(const cw__driver *d, unsigned c, uint64_t now_ns, cw__long_way *way) {
    *way = CW__LONG_CALLBACK;
    /* A platform whose callbacks come CW__LATE_FLOOR_NS late or more is
     * late for shorter waits; where they come within a long wait's 1/32
     * (NVIDIA's 20 ms in a 1 s wait) the callback wait serves it, and its
     * own wait, which may spin, is not tried. */
    if (!d || cw__driver_late(d, 0))
        return true;
    /* Trials only once the platform's lateness was measured, or a second
     * after its probe (whose callback a late platform has delivered by
     * then, and a loaded machine may have kept the probe from timing):
     * until then a late platform would pass for a timely one. */
    uint64_t probed = atomic_load_explicit(&d->probed_ns, memory_order_relaxed);
    if (!cw__driver_lateness_known(d) &&
        (!probed || now_ns < probed || now_ns - probed < CW__MEASURE_STALE_NS))
        return true;
    if (!long_decided(d, c))
        return false;
    *way = long_own_won(d, c) ? CW__LONG_OWN : CW__LONG_CALLBACK;
    return true;
}

bool cw__driver_own_settled(const cw__driver *d, uint64_t expected_ns, bool parks,
                            uint64_t now_ns) {
    if (cw__driver_late(d, expected_ns))
        return cw__driver_own_wait_sleeps(d);
    cw__long_way way;
    return parks && expected_ns &&
           long_way_known(d, cw__driver_long_class(expected_ns), now_ns, &way) &&
           way == CW__LONG_OWN;
}

cw__long_way cw__driver_long_way(cw__driver *d, uint64_t expected_ns, uint64_t now_ns) {
    unsigned c = cw__driver_long_class(expected_ns);
    cw__long_way way;
    if (long_way_known(d, c, now_ns, &way))
        return way;
    uint64_t ticket = atomic_fetch_add_explicit(&d->lng[c].tickets, 1, memory_order_relaxed);
    if (ticket >= long_classes[c].tickets)
        return long_own_won(d, c) ? CW__LONG_OWN : CW__LONG_CALLBACK;
    /* A way with its trials counted leaves the rest to the other. */
    if (atomic_load_explicit(&d->lng[c].way[true].n, memory_order_relaxed) >=
        long_classes[c].trials)
        return CW__LONG_TRIAL_CALLBACK;
    if (atomic_load_explicit(&d->lng[c].way[false].n, memory_order_relaxed) >=
        long_classes[c].trials)
        return CW__LONG_TRIAL_OWN;
    /*
     * The two ways interleave, so that drift on the machine (load, clock
     * speed) meets both alike, in Thue-Morse order (own where the ticket
     * has an even number of bits set: own, callback, callback, own,
     * callback, own, own, callback, ...), not in turns. A program's waits
     * may themselves take turns: clpeak finishes after a warm-up launch,
     * then after the timed ones, and its long and short waits alternate.
     * Trials in turns would give one way every long wait and the other
     * every short one. In this order every aligned block of 2^(k+1) tickets
     * gives each way one of the two at each place of a pattern of period
     * 2^k, so each way meets the long waits and the short ones alike.
     */
    return __builtin_parityll(ticket) ? CW__LONG_TRIAL_CALLBACK : CW__LONG_TRIAL_OWN;
}

/* Racing trials may count a few more than their number, or be read
 * between a sum and its count: a decision off for a while, never a wrong
 * wait (either way of waiting is correct). A wait shorter than its class's
 * least (long_classes: a far wait that ended early, a short one that
 * found its command as good as done) is not one that class decides for. */
void cw__driver_long_sample(cw__driver *d, uint64_t expected_ns, bool own, uint64_t cpu_ns,
                            uint64_t wall_ns) {
    unsigned c = cw__driver_long_class(expected_ns);
    if (!d || wall_ns < long_classes[c].least_ns)
        return;
    _Atomic uint64_t *max = &d->lng[c].way[own].max_ns;
    uint64_t seen = atomic_load_explicit(max, memory_order_relaxed);
    while (cpu_ns > seen && !atomic_compare_exchange_weak_explicit(
                                max, &seen, cpu_ns, memory_order_relaxed, memory_order_relaxed))
        ;
    atomic_fetch_add_explicit(&d->lng[c].way[own].cpu_ns, cpu_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->lng[c].way[own].n, 1, memory_order_relaxed);
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
    if (since && now_ns - since < CW__MEASURE_STALE_NS)
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

void cw__driver_learned_get(const cw__driver *d, cw__driver_learned *out) {
    *out = (cw__driver_learned){0};
    if (!d)
        return;
    out->lateness_known = cw__driver_lateness_known(d);
    out->lateness_ns = cw__driver_lateness_ns(d);
    out->own_trials = atomic_load_explicit(&d->own_trials, memory_order_relaxed);
    out->own_asleep = atomic_load_explicit(&d->own_asleep, memory_order_relaxed);
    out->own_known = !cw__driver_own_wait_open(d);
    for (unsigned c = 0; c < CW__LONG_CLASSES; ++c) {
        cw__long_learned *l = &out->lng[c];
        l->known = long_decided(d, c);
        l->tickets = atomic_load_explicit(&d->lng[c].tickets, memory_order_relaxed);
        l->own_n = atomic_load_explicit(&d->lng[c].way[true].n, memory_order_relaxed);
        l->cb_n = atomic_load_explicit(&d->lng[c].way[false].n, memory_order_relaxed);
        /* Each way's sum as its long_cost times its count: a seeded record
         * (no largest known) decides as this one does. */
        uint64_t sum, n;
        long_cost(d, c, true, &sum, &n);
        l->own_cpu_ns = n < l->own_n ? sum + sum / n : sum;
        long_cost(d, c, false, &sum, &n);
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
    if (in->own_known && in->own_asleep <= in->own_trials &&
        own_decided(in->own_trials, in->own_asleep) &&
        !atomic_load_explicit(&d->own_trials, memory_order_relaxed)) {
        atomic_store_explicit(&d->own_asleep, in->own_asleep, memory_order_relaxed);
        atomic_store_explicit(&d->own_trials, in->own_trials, memory_order_relaxed);
        seeded = true;
    }
    for (unsigned c = 0; c < CW__LONG_CLASSES; ++c) {
        const cw__long_learned *l = &in->lng[c];
        if (!l->known || atomic_load_explicit(&d->lng[c].tickets, memory_order_relaxed) ||
            atomic_load_explicit(&d->lng[c].way[true].n, memory_order_relaxed) ||
            atomic_load_explicit(&d->lng[c].way[false].n, memory_order_relaxed))
            continue;
        atomic_store_explicit(&d->lng[c].way[true].cpu_ns, l->own_cpu_ns, memory_order_relaxed);
        atomic_store_explicit(&d->lng[c].way[false].cpu_ns, l->cb_cpu_ns, memory_order_relaxed);
        atomic_store_explicit(&d->lng[c].way[true].n, l->own_n, memory_order_relaxed);
        atomic_store_explicit(&d->lng[c].way[false].n, l->cb_n, memory_order_relaxed);
        atomic_store_explicit(&d->lng[c].tickets, l->tickets, memory_order_relaxed);
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
        ++*probed;
        if (cw__driver_failed_fire(d))
            ++*fire;
        else if (atomic_load_explicit(&d->failed_seen, memory_order_relaxed))
            ++*silent;
        if (cw__driver_late(d, 0))
            ++*late;
        uint64_t l = cw__driver_lateness_ns(d);
        if (l > *lateness_ns)
            *lateness_ns = l;
        /* Long waits only (near and far): the count says whose waits of
         * CW__OWN_WAIT_MIN_NS and more the driver's own wait serves (cw-run
         * hands its clFinish calls that long to the driver by it); short
         * ones decide apart, and only where no CPU is spare. */
        for (unsigned c = 0; c < CW__LONG_CLASSES; ++c)
            if (c != CW__LONG_SHORT && long_decided(d, c) && long_own_won(d, c)) {
                ++*long_own;
                break;
            }
    }
}
