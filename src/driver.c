/* SPDX-License-Identifier: MIT */
/* Layer 6.0: what is learned of each platform: callback lateness, the trials' counts (the probe:
 * probe.c). */
#include "driver.h"
#include "base.h"
#include "driver_record.h"
#include "platform.h"
#include "stats_internal.h"

#include <stdatomic.h>
#include <string.h>

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
        v->cls[c].driver_spun = atomic_load_explicit(&d->cls[c].driver_spun, memory_order_relaxed);
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
 * wait. A wait shorter than its class's least (a near wait under the
 * vote's shortest; a short wait counts however short) is not one that
 * class decides for. */
void cw__driver_class_sample(cw__driver *d, unsigned cls, bool driver, uint64_t cpu_ns,
                             uint64_t wall_ns) {
    if (!d || wall_ns < cw__policy_class_least_ns(cls))
        return;
    if (driver && cw__policy_spun_through(cpu_ns, wall_ns))
        atomic_store_explicit(&d->cls[cls].driver_spun, true, memory_order_relaxed);
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
    uint64_t next = n == 0 ? ns : cw__moving(old, ns, CW__EST_WEIGHT_SHIFT);
    atomic_store_explicit(&d->lateness_ns, next, memory_order_relaxed);
    atomic_store_explicit(&d->measuring_ns, 0, memory_order_relaxed);
}

/* A sample that bounds the lateness instead of joining its moving
 * estimate: counted, and the lateness moved to `ns` where `ns` lies past
 * it, above it (`above`, a lower bound) or below it (an upper bound). */
static void bound_sample(cw__driver *d, uint64_t ns, bool above) {
    cw__stat_add(CW__STAT_LATENESS_SAMPLES, 1);
    atomic_fetch_add_explicit(&d->samples, 1, memory_order_relaxed);
    uint64_t old = atomic_load_explicit(&d->lateness_ns, memory_order_relaxed);
    if (above ? ns > old : ns < old)
        atomic_store_explicit(&d->lateness_ns, ns, memory_order_relaxed);
    atomic_store_explicit(&d->measuring_ns, 0, memory_order_relaxed);
}

void cw__driver_lateness_least(cw__driver *d, uint64_t ns) {
    if (d)
        bound_sample(d, ns, false);
}

void cw__driver_lateness_seen(cw__driver *d, uint64_t at_least_ns, uint64_t uncertain_ns) {
    if (!d)
        return;
    if (uncertain_ns <= at_least_ns / 4u ||
        !atomic_load_explicit(&d->samples, memory_order_relaxed)) {
        cw__driver_lateness_sample(d, at_least_ns + uncertain_ns / 2u);
        return;
    }
    bound_sample(d, at_least_ns, true);
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

/* The learned record for keeping (learned.c), from the view: each way's
 * sum as its cost (cw__policy_class_cost) times its count, so that a
 * seeded record (no largest known) decides as this one does; a class that
 * a spinning driver trial decided is kept with its tickets spent, which
 * decides it for the callback wait when seeded. */
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
        if (v.cls[c].driver_spun && l->tickets < cw__policy_class_tickets(c))
            l->tickets = cw__policy_class_tickets(c);
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
        /* The near class only: the count says whose waits of
         * CW__VOTE_MIN_NS and more the driver's wait serves (cw-run hands
         * its clFinish calls that long to the driver by it); short ones
         * decide apart, and only where no CPU is spare. */
        if (cw__policy_class_decided(&v.cls[CW__CLASS_NEAR], CW__CLASS_NEAR) &&
            cw__policy_class_driver_won(&v.cls[CW__CLASS_NEAR]))
            ++*long_own;
    }
}
