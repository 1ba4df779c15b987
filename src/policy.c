/* SPDX-License-Identifier: MIT */
/* Layer 6.2: the auto strategy's policy: facts in, a way of waiting out. */
#include "policy.h"

bool cw__policy_late(const cw__driver_view *d, uint64_t expected_ns) {
    uint64_t l = d->known && d->lateness_known ? d->lateness_ns : 0;
    return l >= CW__LATE_FLOOR_NS && l >= expected_ns >> CW__LATE_SHARE_SHIFT;
}

/* The vote of `trials` of which `asleep` slept: decided once every trial
 * counted, or once the rest cannot change it; it sleeps where half or more
 * slept, of the trials made or, before all are, of all there will be.
 * Read while a trial adds to them, asleep may be ahead of trials: that
 * counts as no spun trial. */
bool cw__policy_vote_decided(uint32_t trials, uint32_t asleep) {
    uint32_t spun = trials > asleep ? trials - asleep : 0;
    return trials >= CW__VOTE_TRIALS || 2u * asleep >= CW__VOTE_TRIALS ||
           2u * spun > CW__VOTE_TRIALS;
}

bool cw__policy_vote_sleeps(uint32_t trials, uint32_t asleep) {
    return 2u * asleep >= (trials > CW__VOTE_TRIALS ? trials : CW__VOTE_TRIALS);
}

/*
 * A vote a trial, not a sum: one costly wait (a third to a half of its wall
 * time in thread CPU, seen under the pocl7 model) would outweigh the other
 * trials' sleeps in a sum. A trial shorter than CW__VOTE_MIN_NS tells a
 * spin from a sleep only where it spun: a sleep's fixed cost is a large
 * share of it, and a spin preempted on a loaded machine costs no more. One
 * that spun throughout is a majority alone (a sleeping wait's costliest
 * trials took a half of their wall time, a spin not preempted nearly all).
 */
void cw__policy_vote_of(uint64_t cpu_ns, uint64_t wall_ns, uint32_t *trials, uint32_t *asleep) {
    *trials = *asleep = 0;
    if (wall_ns < CW__VOTE_SPUN_MIN_NS)
        return;
    if (wall_ns < CW__VOTE_MIN_NS) {
        if (cpu_ns * CW__VOTE_SPUN_SHARE >= wall_ns)
            *trials = 1;
        return;
    }
    if (cw__policy_spun_through(cpu_ns, wall_ns)) {
        *trials = CW__VOTE_TRIALS / 2u + 1u;
        return;
    }
    cpu_ns = cpu_ns > CW__VOTE_FIXED_NS ? cpu_ns - CW__VOTE_FIXED_NS : 0;
    *trials = 1;
    *asleep = cpu_ns * CW__VOTE_CPU_SHARE < wall_ns;
}

bool cw__policy_spun_through(uint64_t cpu_ns, uint64_t wall_ns) {
    return wall_ns >= CW__VOTE_MIN_NS && cpu_ns * CW__VOTE_THROUGH_OF >= wall_ns * CW__VOTE_THROUGH;
}

bool cw__policy_probe_again(bool lateness_known, uint64_t lateness_ns) {
    return !lateness_known ||
           (lateness_ns >= CW__LATE_FLOOR_NS && lateness_ns < CW__PROBE_AGAIN_BELOW_NS);
}

/* A short trial counts however short: the callback wait's trials last at
 * least its delivery, while a driver's wait that loops on the status
 * returns as a command of a few µs ends, so leaving out quick trials left
 * out the driver's wait alone (docs/design.md). */
static const struct {
    uint32_t trials, tickets;
    uint64_t least_ns;
} classes[CW__CLASSES] = {
    [CW__CLASS_NEAR] = {CW__CLASS_TRIALS, CW__CLASS_TICKETS, CW__VOTE_MIN_NS},
    [CW__CLASS_SHORT] = {CW__CLASS_TRIALS, CW__CLASS_TICKETS, 0},
};

unsigned cw__policy_class_of(uint64_t expected_ns) {
    if (expected_ns >= CW__CLASS_NEAR_END_NS)
        return CW__CLASS_NONE;
    return expected_ns >= CW__VOTE_MIN_NS ? CW__CLASS_NEAR : CW__CLASS_SHORT;
}

uint32_t cw__policy_class_trials(unsigned cls) {
    return classes[cls].trials;
}

uint32_t cw__policy_class_tickets(unsigned cls) {
    return classes[cls].tickets;
}

uint64_t cw__policy_class_least_ns(unsigned cls) {
    return classes[cls].least_ns;
}

/* A driver's wait that spun throughout a wait long enough to tell cost
 * that wait's whole length in CPU, where a park costs a wake-up: no more
 * trials are needed to find it dearer, and each would cost a whole wait. */
bool cw__policy_class_decided(const cw__class_view *v, unsigned cls) {
    return (v->n[true] >= classes[cls].trials && v->n[false] >= classes[cls].trials) ||
           v->tickets >= classes[cls].tickets || v->driver_spun;
}

/* One wait in a few is dearer by a multiple (a preemption, an interrupt, a
 * page fault on a cold line), and with 8 trials one such sample would
 * decide for either way; what the two ways differ by is in every wait. */
void cw__policy_class_cost(const cw__class_view *v, bool driver, uint64_t *sum, uint64_t *n) {
    *sum = v->sum_ns[driver];
    *n = v->n[driver];
    uint64_t max = v->max_ns[driver];
    if (*n >= 2 && max && max <= *sum) {
        *sum -= max;
        --*n;
    }
}

/* Cross products of sums and counts, which cannot overflow: a count is at
 * most its tickets plus racers, a sum of thread CPU time far under 2^52 ns;
 * a seeded one is under 2^16 and 2^40 ns (learned.c). */
bool cw__policy_class_driver_won(const cw__class_view *v) {
    if (v->driver_spun)
        return false;
    uint64_t drv, drv_n, cb, cb_n;
    cw__policy_class_cost(v, true, &drv, &drv_n);
    cw__policy_class_cost(v, false, &cb, &cb_n);
    if (!drv_n || !cb_n)
        return false;
    return drv * cb_n * 8u <= cb * drv_n * CW__CLASS_DRIVER_EDGE;
}

/*
 * The two ways interleave, so that drift on the machine (load, clock
 * speed) meets both alike, in Thue-Morse order (the driver wait where the
 * ticket has an even number of bits set: driver, callback, callback,
 * driver, ...), not in turns: a program's waits may themselves take turns
 * (clpeak finishes after a warm-up launch, then after the timed ones), and
 * trials in turns would give one way every long wait and the other every
 * short one. A way with its trials counted leaves the rest to the other.
 */
bool cw__policy_trial_driver(const cw__class_view *v, unsigned cls, uint32_t ticket, bool *trial) {
    *trial = ticket < classes[cls].tickets;
    if (!*trial)
        return cw__policy_class_driver_won(v);
    if (v->n[true] >= classes[cls].trials)
        return false;
    if (v->n[false] >= classes[cls].trials)
        return true;
    return !__builtin_parity(ticket);
}

/* The class's way where it needs no ticket: true with *driver set where
 * its parked waits are the callback wait for now, or decided. A wait of
 * no class (CW__CLASS_NONE) is the callback wait. A platform
 * whose callbacks are late at all (the floor) is judged by the late rules;
 * its long waits, for which the lateness is small, keep the callback
 * unless its driver's wait sleeps (choose takes that wait first). No
 * trial before the lateness is known, or before a grace after the probe:
 * until then a late platform would pass for a timely one. A decision
 * already made (seeded from a file kept by cw-run) needs no trial, and
 * stands from the first wait: were the callbacks found late later, the
 * late rules take over. */
static bool late_for(const cw__facts *f, uint64_t expected_ns);

static const unsigned class_off[CW__CLASSES] = {
    [CW__CLASS_NEAR] = CW__OFF_NEAR, [CW__CLASS_SHORT] = CW__OFF_SHORT};

bool cw__policy_class_known(const cw__facts *f, unsigned cls, bool *driver) {
    const cw__driver_view *d = &f->driver;
    *driver = false;
    if (cls >= CW__CLASSES || !d->known || (f->off & class_off[cls]) || late_for(f, 0))
        return true;
    if (cw__policy_class_decided(&d->cls[cls], cls)) {
        *driver = cw__policy_class_driver_won(&d->cls[cls]);
        return true;
    }
    return !d->lateness_known && (!d->probed_ns || f->now_ns < d->probed_ns ||
                                  f->now_ns - d->probed_ns < CW__LATE_PROBE_GRACE_NS);
}

/* Late, unless the ablation switched the late rules off. */
static bool late_for(const cw__facts *f, uint64_t expected_ns) {
    return !(f->off & CW__OFF_LATE) && cw__policy_late(&f->driver, expected_ns);
}

static uint64_t spin_for(uint64_t expected_ns) {
    return expected_ns + (expected_ns >> CW__SPIN_MARGIN_SHIFT);
}

bool cw__policy_needs_spare(const cw__facts *f) {
    if (f->latency)
        return true;
    if (late_for(f, f->expected_ns))
        return false;
    return !(f->off & CW__OFF_SPIN) && f->expected_ns && f->expected_ns <= f->spin_cap_ns;
}

/* A parked wait reads the status half way through its expected wait now
 * and then (every wait until the lateness is known): a command found done
 * there before its callback shows callbacks late, and measures by how
 * much. Longer waits see a lateness that matters to them through their
 * checks. */
static uint64_t peek_of(const cw__facts *f, uint64_t plan_ns) {
    if (!plan_ns || plan_ns > CW__PEEK_MAX_NS || !f->driver.known || (f->off & CW__OFF_PEEK))
        return 0;
    if (f->driver.lateness_known && f->turn % CW__PEEK_EVERY != 0)
        return 0;
    return plan_ns >> CW__PEEK_SHIFT;
}

/* A late wait's poll spacing around the expected end: a command that
 * ends about when expected (a queue's earlier commands tell its end to
 * within a fraction of a percent on a GPU) is seen within
 * E >> CW__LATE_FINE_SHIFT of it (at least CW__LATE_FINE_LEAST_NS, a
 * wake-up's cost), a few polls a wait. */
static uint64_t fine_of(uint64_t plan_ns) {
    if (!plan_ns)
        return 0;
    uint64_t fine = plan_ns >> CW__LATE_FINE_SHIFT;
    return fine > CW__LATE_FINE_LEAST_NS ? fine : CW__LATE_FINE_LEAST_NS;
}

/* How early the fine polls begin: twice the told ends' spread, and at
 * least two fine steps and a wake-up's latency (CW__LATE_FINE_LEAST_NS),
 * at most 1/16 of the plan (CW__LATE_EARLY_SHIFT). */
static uint64_t early_of(const cw__facts *f, uint64_t fine_ns, uint64_t plan_ns) {
    if (!fine_ns)
        return 0;
    uint64_t early = CW__LATE_EARLY_STEPS * fine_ns;
    if (early < CW__LATE_FINE_LEAST_NS)
        early = CW__LATE_FINE_LEAST_NS;
    if (early < CW__LATE_EARLY_SPREADS * f->end_dev_ns)
        early = CW__LATE_EARLY_SPREADS * f->end_dev_ns;
    uint64_t most = plan_ns >> CW__LATE_EARLY_SHIFT;
    return early < most ? early : most;
}

/* The command's length from a wait estimate where no poll told an end:
 * the queue's waits then ended on their late callbacks (or in the
 * driver's wait), so the estimate holds the lateness, and a plan of it
 * would start the fine polls that much after the end. Taken off where it
 * is at most half the estimate: a shorter estimate would be mostly
 * lateness, and polls planned with its small rest would poll finely
 * through the whole lateness. */
static uint64_t callback_free(uint64_t expected_ns, uint64_t lateness_ns) {
    return expected_ns >= 2u * lateness_ns ? expected_ns - lateness_ns : expected_ns;
}

/* The vote decided, and found that the driver's wait sleeps (or spins). */
static bool vote_found(const cw__facts *f, bool sleeps) {
    const cw__driver_view *d = &f->driver;
    return cw__policy_vote_decided(d->vote_trials, d->vote_asleep) &&
           cw__policy_vote_sleeps(d->vote_trials, d->vote_asleep) == sleeps;
}

/* Callbacks late for this wait: the driver's wait where it sleeps (no
 * poll costs less, and a late callback cannot end it late), a vote on
 * whether it sleeps while one is open, else polls planned with the end
 * the queue's polls told. A caller's parker, and one wait in
 * CW__LATE_SAMPLE_EVERY, poll with the callback registered: the one so
 * that the runtime gets its thread back through its parker, the other so
 * that the lateness stays measured. */
static void choose_late(const cw__facts *f, cw__choice *c) {
    const cw__driver_view *d = &f->driver;
    if (f->driver_wait_allowed && !(f->off & CW__OFF_VOTE)) {
        if (vote_found(f, true)) {
            c->way = CW__WAY_DRIVER;
            c->settled = true;
            c->why = "late callbacks; the driver's wait sleeps";
            return;
        }
        if (f->expected_ns && f->expected_ns <= CW__VOTE_TRIAL_MAX_NS &&
            !cw__policy_vote_decided(d->vote_trials, d->vote_asleep)) {
            c->way = CW__WAY_DRIVER;
            c->trial = CW__TRIAL_VOTE;
            c->why = "late callbacks; a vote: does the driver's wait sleep?";
            return;
        }
    }
    c->plan_ns = f->end_ns ? f->end_ns : callback_free(f->expected_ns, d->lateness_ns);
    c->fine_ns = fine_of(c->plan_ns);
    c->fine_early_ns = early_of(f, c->fine_ns, c->plan_ns);
    /* Where polls told the queue's ends and they lie close together (within
     * 1/16 of the plan, on average), one sleep reaches the fine polls: the
     * sleeps that double toward the end guard against an estimate far too
     * long, and cost a wake-up and a status read each. */
    c->sleep_to_end = c->fine_ns && f->end_ns && c->plan_ns == f->end_ns &&
                      f->end_dev_ns <= f->end_ns >> CW__LATE_EARLY_SHIFT;
    if (f->callers_parker || f->turn % CW__LATE_SAMPLE_EVERY == 0) {
        c->way = CW__WAY_POLL_STEPS;
        c->why = "late callbacks; polls with the callback registered";
        return;
    }
    /* Polls through the longer of 16 x the lateness and twice the longer
     * estimate: a wait that lasts longer (a long kernel's first launch,
     * planned with a short estimate) has outgrown the lateness, and parks
     * on the callback, which then ends it no later than a poll would. The
     * wait estimate counts too: every wait feeds it, while only polls tell
     * the end, so an end estimate left behind by shorter commands would
     * otherwise send every longer wait to the callback, and never learn. */
    uint64_t longer = c->plan_ns > f->expected_ns ? c->plan_ns : f->expected_ns;
    uint64_t poll_for = d->lateness_ns << CW__LATE_POLL_SHIFT;
    c->poll_for_ns =
        poll_for > CW__LATE_POLL_PLANS * longer ? poll_for : CW__LATE_POLL_PLANS * longer;
    c->way = CW__WAY_SLEEP_POLL;
    c->why = "late callbacks; sleep toward the end, then poll";
}

static void choose(const cw__facts *f, cw__choice *c) {
    /* The latency preference, where the thread has a second CPU: the
     * status read in a loop, as the poll strategy reads it. Of every way,
     * the one the benchmark found soonest after the command's end on the
     * drivers it knows (goal e), at a CPU for the wait's length, which is
     * what the caller chose to spend. Not on a parker of the caller's: a
     * runtime that gave one must get its thread back while the command
     * runs. */
    if (f->latency && f->spare_cpu && !f->callers_parker) {
        c->way = CW__WAY_POLL;
        c->why = "latency preferred; a second CPU: read the status in a loop";
        return;
    }
    if (late_for(f, f->expected_ns)) {
        /* The latency preference, late callbacks, and a driver's wait that
         * spins (the vote): that wait reads the status in a loop of the
         * driver's own, back as soon as the command ends, at the CPU of
         * the wait's length, which the caller chose to spend. */
        if (f->latency && f->driver_wait_allowed && !(f->off & CW__OFF_VOTE) &&
            vote_found(f, false)) {
            c->way = CW__WAY_DRIVER;
            c->settled = true;
            c->why = "latency preferred; late callbacks; the driver's wait spins";
            return;
        }
        choose_late(f, c);
        return;
    }
    /* Spinning pays only where the thread that signals has a CPU of its
     * own, and only for about as long as the wait is expected to last. */
    if (f->spare_cpu && f->expected_ns && f->expected_ns <= f->spin_cap_ns &&
        !(f->off & CW__OFF_SPIN)) {
        c->way = CW__WAY_SPIN_PARK;
        c->spin_ns = spin_for(f->expected_ns);
        c->peek_after_spin = true;
        c->why = "a CPU is spare; spin about the expected wait";
        return;
    }
    c->peek_ns = peek_of(f, f->expected_ns);
    if (!f->expected_ns || !f->driver_wait_allowed) {
        c->why = f->expected_ns ? "park on the callback (the driver's wait is not allowed)"
                                : "park on the callback (no expected wait yet)";
        return;
    }
    /* A platform whose callbacks are late, where this wait is long enough
     * for the lateness to be a small share of it, and whose driver's wait
     * sleeps (the vote): that wait costs the waiting thread no more than
     * a park, and ends when the command does, where a park on the
     * callback ends the lateness after it. */
    if (late_for(f, 0) && !(f->off & CW__OFF_VOTE) && vote_found(f, true)) {
        c->way = CW__WAY_DRIVER;
        c->settled = true;
        c->peek_ns = 0;
        c->why = "late callbacks, a long wait; the driver's wait sleeps";
        return;
    }
    /* The latency preference where callbacks are not known late (or
     * late by a small share of this wait): the callback ends the wait
     * when it comes, while the driver's wait's wake-up is not measured
     * (the classes' trials weigh the waiting thread's CPU only; on PoCL
     * that wait returned some 8 us later than a park). */
    if (f->latency) {
        c->why = "latency preferred; timely callbacks: park on the callback";
        return;
    }
    /* Parks at once: the callback wait or the driver's, whichever the
     * class's trials found cheaper for the waiting thread. A wait expected
     * to last CW__CLASS_NEAR_END_NS or more is the callback wait, without
     * trials: the benchmark's ablation found no verdict that trials of
     * such waits changed, and the callback wait's CPU as low or lower. */
    c->cls = cw__policy_class_of(f->expected_ns);
    bool driver;
    if (!cw__policy_class_known(f, c->cls, &driver)) {
        c->trial = CW__TRIAL_CLASS;
        c->why = "parks at once; a trial of its class";
        return;
    }
    if (driver) {
        c->way = CW__WAY_DRIVER;
        c->settled = true;
        c->peek_ns = 0;
        c->why = "parks at once; its class found the driver's wait cheaper";
        return;
    }
    c->why = "parks at once; the callback wait";
}

void cw__policy_choose(const cw__facts *f, cw__choice *c) {
    *c = (cw__choice){.way = CW__WAY_PARK, .plan_ns = f->expected_ns};
    choose(f, c);
    c->rise = !(f->off & CW__OFF_RISE);
}
