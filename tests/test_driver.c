/* SPDX-License-Identifier: MIT */
/* What the waits learn of the driver (layer 6.0, src/driver.c): the probe,
 * the lateness estimate and the rule that calls it late, the timed trials of
 * the driver's own wait, and the one-at-a-time lateness measurement. */
#include "harness.h"

#include "clfixture.h"
#include "policyfix.h"
#include "cw.h"

/* A moving estimate with 1/4 weight for the newest sample; late, for a wait
 * expected to last E, from CW__LATE_FLOOR_NS and E >> CW__LATE_SHARE_SHIFT
 * on; nothing known of no platform. */
static void lateness_is_a_moving_estimate_and_late_follows_the_rule(void **state) {
    (void)state;
    assert_int_equal(cw__driver_lateness_ns(NULL), 0);
    assert_false(cw__driver_lateness_known(NULL));
    assert_false(drv_late(NULL, 0));
    cw__driver_lateness_sample(NULL, 1000000); /* ignored, no crash */

    cw__driver *d = settled_driver();
    /* Converge on 400 us: each sample moves the estimate a quarter of the way. */
    for (int i = 0; i < 64; ++i)
        cw__driver_lateness_sample(d, 400000);
    uint64_t l = cw__driver_lateness_ns(d);
    assert_true(l >= 399000 && l <= 400000);
    cw__driver_lateness_sample(d, 0);
    assert_int_equal(cw__driver_lateness_ns(d), l - l / 4u);
    l = cw__driver_lateness_ns(d);

    assert_true(cw__driver_lateness_known(d));
    assert_true(drv_late(d, 0));
    uint64_t longest_late = l << CW__LATE_SHARE_SHIFT; /* E with E/32 == l */
    assert_true(drv_late(d, longest_late));
    assert_false(drv_late(d, longest_late + (1u << CW__LATE_SHARE_SHIFT)));

    /* Timely samples bring it under the floor: late for no wait. */
    for (int i = 0; i < 64 && cw__driver_lateness_ns(d) >= CW__LATE_FLOOR_NS; ++i)
        cw__driver_lateness_sample(d, 0);
    assert_true(cw__driver_lateness_ns(d) < CW__LATE_FLOOR_NS);
    assert_false(drv_late(d, 0));
    assert_true(cw__driver_lateness_known(d));
}

/* A callback seen late by a read long after the command ended (a check
 * 16 ms into a 100 us command) tells only that the lateness is at least
 * that: it raises the estimate, never lowers it; seen by a read close to
 * the command's end, it is a sample like any other. */
static void lateness_seen_long_after_the_end_is_a_lower_bound(void **state) {
    (void)state;
    cw__driver_lateness_seen(NULL, 1000, 0); /* ignored, no crash */
    cw__driver *d = settled_driver();
    for (int i = 0; i < 64; ++i)
        cw__driver_lateness_sample(d, 400000);
    uint64_t l = cw__driver_lateness_ns(d);
    cw__driver_lateness_seen(d, 100000, 10000000);
    assert_int_equal(cw__driver_lateness_ns(d), l);
    cw__driver_lateness_seen(d, 1000000, 10000000);
    assert_int_equal(cw__driver_lateness_ns(d), 1000000);
    /* Uncertain by at most a quarter: the middle, a quarter of the way. */
    cw__driver_lateness_seen(d, 200000, 40000);
    assert_int_equal(cw__driver_lateness_ns(d), 1000000 - 1000000 / 4 + 220000 / 4);
}

/* A probe's marker made again keeps the lesser lateness: a preempted
 * callback can only have added to the first. */
static void a_probe_made_again_keeps_the_least(void **state) {
    (void)state;
    cw__driver_lateness_least(NULL, 1000); /* ignored, no crash */
    cw__driver *d = settled_driver();
    for (int i = 0; i < 64; ++i)
        cw__driver_lateness_sample(d, 69000);
    assert_true(cw__driver_lateness_ns(d) > 30000);
    cw__driver_lateness_least(d, 10000);
    assert_int_equal(cw__driver_lateness_ns(d), 10000);
    cw__driver_lateness_least(d, 30000);
    assert_int_equal(cw__driver_lateness_ns(d), 10000);
    assert_true(cw__driver_lateness_known(d));
}

/* The driver's own wait is judged by CW__VOTE_TRIALS timed waits of at
 * least CW__VOTE_MIN_NS: a trial slept when its CPU time, less
 * CW__VOTE_FIXED_NS, is under 1/CW__VOTE_CPU_SHARE of its wall
 * time, and the wait sleeps when at least half the trials slept. */
static void own_wait_is_judged_after_its_trials(void **state) {
    (void)state;
    assert_false(vote_open(NULL));
    assert_false(vote_sleeps(NULL));
    cw__driver_vote_sample(NULL, 0, CW__VOTE_MIN_NS); /* ignored */

    cw__driver *d = settled_driver();
    assert_true(vote_open(d));
    /* Too short to tell: not counted. */
    for (int i = 0; i < 10; ++i)
        cw__driver_vote_sample(d, 0, CW__VOTE_MIN_NS - 1);
    assert_true(vote_open(d));
    assert_false(vote_sleeps(d));
    /* Exactly the share past the allowance is not under it: that trial
     * did not sleep; one nanosecond less did. Two of each: half slept. */
    const uint64_t wall = CW__VOTE_MIN_NS * 4u;
    const uint64_t share = wall / CW__VOTE_CPU_SHARE + CW__VOTE_FIXED_NS;
    const uint64_t cpu[] = {share, share - 1, share, share - 1};
    for (unsigned i = 0; i < CW__VOTE_TRIALS; ++i) {
        assert_true(vote_open(d));
        assert_false(vote_sleeps(d));
        cw__driver_vote_sample(d, cpu[i % 4u], wall);
    }
    assert_false(vote_open(d));
    assert_true(vote_sleeps(d));
}

/* A sleeping wait's fixed cost (a wake-up, system calls) takes nearly the
 * allowance again on top of the share in the shortest counted waits, and
 * half the trials cost half their wall time in CPU: still asleep. */
static void sleeping_own_wait_outvotes_costly_trials(void **state) {
    (void)state;
    cw__driver *d = settled_driver();
    const uint64_t wall = CW__VOTE_MIN_NS;
    for (unsigned i = 0; i < CW__VOTE_TRIALS; ++i)
        cw__driver_vote_sample(
            d, i % 2u ? wall / 2u : CW__VOTE_FIXED_NS + wall / CW__VOTE_CPU_SHARE - 1, wall);
    assert_false(vote_open(d));
    assert_true(vote_sleeps(d));
}

/* The same trials, of a driver whose wait spins (about a CPU for its wall
 * time, a quarter of one when preempted), in the shortest counted waits:
 * never judged asleep, even with one trial spent off the CPU. */
static void spinning_own_wait_is_not_taken_for_a_sleep(void **state) {
    (void)state;
    cw__driver *d = settled_driver();
    const uint64_t wall = CW__VOTE_MIN_NS;
    for (unsigned i = 0; i < CW__VOTE_TRIALS; ++i)
        cw__driver_vote_sample(d, i == 0 ? 0 : i % 2u ? wall : wall / 4u, wall);
    assert_false(vote_open(d));
    assert_false(vote_sleeps(d));
}

/* Waits shorter than CW__VOTE_MIN_NS: one of at least
 * CW__VOTE_SPUN_MIN_NS that took 1/CW__VOTE_SPUN_SHARE of its wall
 * time in CPU spun, and counts; one a nanosecond cheaper, or shorter, or
 * cheap (a sleep's fixed cost, or a spin off the CPU) tells nothing. A
 * driver whose waits are all short is judged all the same. */
static void short_trials_count_only_when_they_spun(void **state) {
    (void)state;
    cw__driver *d = settled_driver();
    const uint64_t least = CW__VOTE_SPUN_MIN_NS, longest = CW__VOTE_MIN_NS - 1u;
    /* The least CPU that is the share of each, rounded up. */
    const uint64_t least_spun = (least + CW__VOTE_SPUN_SHARE - 1u) / CW__VOTE_SPUN_SHARE;
    const uint64_t longest_spun = (longest + CW__VOTE_SPUN_SHARE - 1u) / CW__VOTE_SPUN_SHARE;
    for (int i = 0; i < 10; ++i) {
        cw__driver_vote_sample(d, least_spun - 1u, least);
        cw__driver_vote_sample(d, least - 1u, least - 1u);
        cw__driver_vote_sample(d, CW__VOTE_FIXED_NS, longest);
        cw__driver_vote_sample(d, longest_spun - 1u, longest);
    }
    assert_true(vote_open(d));
    /* More than half of the trials spun decides (own_wait_vote_ends_past_half_spun). */
    for (unsigned i = 0; i < CW__VOTE_TRIALS / 2u + 1u; ++i) {
        assert_true(vote_open(d));
        if (i % 2u)
            cw__driver_vote_sample(d, least_spun, least);
        else
            cw__driver_vote_sample(d, longest_spun, longest);
    }
    assert_false(vote_open(d));
    assert_false(vote_sleeps(d));
}

/* The vote ends as soon as the trials left cannot change it: half of all
 * the trials asleep (it sleeps), or more than half spun (it does not);
 * until then it stays open, whatever the order (a record per process: one
 * case each). */
#define VOTE_WALL (CW__VOTE_MIN_NS * 4u)
#define VOTE_SLEPT CW__VOTE_FIXED_NS
#define VOTE_SPUN (VOTE_WALL / 2u) /* spun, not throughout */

/* `n` trials that each took `cpu` of VOTE_WALL: open before each, then
 * decided, asleep or not. */
static void vote_decided_after(unsigned n, uint64_t cpu, bool asleep) {
    cw__driver *d = settled_driver();
    for (unsigned i = 0; i < n; ++i) {
        assert_true(vote_open(d));
        assert_false(vote_sleeps(d));
        cw__driver_vote_sample(d, cpu, VOTE_WALL);
    }
    assert_false(vote_open(d));
    assert_int_equal(vote_sleeps(d), asleep);
}

static void own_wait_vote_ends_at_half_asleep(void **state) {
    (void)state;
    vote_decided_after(CW__VOTE_TRIALS / 2u, VOTE_SLEPT, true);
}

static void own_wait_vote_ends_past_half_spun(void **state) {
    (void)state;
    vote_decided_after(CW__VOTE_TRIALS / 2u + 1u, VOTE_SPUN, false);
}

/* Taking turns, spun first: every trial is needed. */
static void own_wait_vote_in_turns_takes_every_trial(void **state) {
    (void)state;
    cw__driver *d = settled_driver();
    for (unsigned i = 0; i < CW__VOTE_TRIALS; ++i) {
        assert_true(vote_open(d));
        assert_false(vote_sleeps(d));
        cw__driver_vote_sample(d, i % 2u ? VOTE_SLEPT : VOTE_SPUN, VOTE_WALL);
    }
    assert_false(vote_open(d));
    assert_true(vote_sleeps(d));
}

/* A trial of at least CW__VOTE_MIN_NS that took
 * CW__VOTE_THROUGH/CW__VOTE_THROUGH_OF of its wall time in CPU
 * spun throughout and decides alone, after a sleep and a trial a
 * nanosecond cheaper (one vote each, which left the vote open). */
static void own_wait_spun_throughout_decides_alone(void **state) {
    (void)state;
    const uint64_t wall = CW__VOTE_MIN_NS;
    const uint64_t through = wall * CW__VOTE_THROUGH / CW__VOTE_THROUGH_OF;
    _Static_assert(CW__VOTE_MIN_NS * CW__VOTE_THROUGH % CW__VOTE_THROUGH_OF == 0,
                   "the share is exact");
    cw__driver *d = settled_driver();
    cw__driver_vote_sample(d, CW__VOTE_FIXED_NS, wall);
    cw__driver_vote_sample(d, through - 1u, wall);
    assert_true(vote_open(d));
    cw__driver_vote_sample(d, through, wall);
    assert_false(vote_open(d));
    assert_false(vote_sleeps(d));
}

/* A trial is made of a wait expected to last at most
 * CW__VOTE_TRIAL_MAX_NS by a known estimate, while the vote is open:
 * never of a longer one (on a spinning driver it would cost a CPU for as
 * long), nor of one whose length is not known. */
static void own_wait_trials_are_short_known_waits(void **state) {
    (void)state;
    assert_false(vote_trial(NULL, CW__VOTE_MIN_NS));
    cw__driver *d = settled_driver();
    assert_false(vote_trial(d, 0));
    assert_true(vote_trial(d, 1));
    assert_true(vote_trial(d, CW__VOTE_TRIAL_MAX_NS));
    assert_false(vote_trial(d, CW__VOTE_TRIAL_MAX_NS + 1u));
    for (unsigned i = 0; i < CW__VOTE_TRIALS; ++i)
        cw__driver_vote_sample(d, CW__VOTE_MIN_NS, CW__VOTE_MIN_NS);
    assert_false(vote_open(d));
    assert_false(vote_trial(d, CW__VOTE_MIN_NS));
}

/* A timely platform: lateness known, under the floor (fed where the probe
 * gave no sample: on a loaded machine it may not see its marker finish). */
static cw__driver *timely_driver(void) {
    cw__driver *d = settled_driver();
    for (int i = 0; i < 64 && (!cw__driver_lateness_known(d) ||
                               cw__driver_lateness_ns(d) >= CW__LATE_FLOOR_NS / 2u);
         ++i)
        cw__driver_lateness_sample(d, 0);
    assert_true(cw__driver_lateness_known(d));
    assert_false(drv_late(d, 0));
    return d;
}

/* A long-wait trial's thread CPU time: its way's cost for the program's
 * wait of that trial (`trial` counts the platform's trial tickets, the
 * uncounted first one 0). */
typedef uint64_t (*trial_cost)(bool own, unsigned trial);

static uint64_t flat_own_ns, flat_cb_ns;
static uint64_t flat_cost(bool own, unsigned trial) {
    (void)trial;
    return own ? flat_own_ns : flat_cb_ns;
}

/* The near wait the trials below are planned for (1 ms), the short one
 * (100 µs, where no spin is planned), and the shortest of no class. */
#define NEAR_NS (CW__VOTE_MIN_NS * 5u)
#define SHORT_NS (CW__VOTE_MIN_NS / 2u)
#define PAST_NEAR_NS CW__CLASS_NEAR_END_NS

/* A trial's wall time by its way; NULL: the expected wait. */
typedef uint64_t (*trial_wall)(bool own);

/* Run the long-wait trials of the class of waits expected to last
 * `expected_ns` to their end, each trial costing what `cost` says and
 * lasting what `wall` says; a near wait shorter than CW__VOTE_MIN_NS
 * counts for neither way. Each way has the class's trials counted, no
 * more. Returns the way decided. */
static int trials_of_class_lasting(cw__driver *d, uint64_t expected_ns, trial_cost cost,
                                   trial_wall wall) {
    unsigned c = cw__policy_class_of(expected_ns);
    assert_true(c < CW__CLASSES);
    const unsigned want = CW__CLASS_TRIALS;
    const unsigned tickets = CW__CLASS_TICKETS;
    assert_int_equal(class_way(d, expected_ns, cw_now_ns()), WAY_TRIAL_DRIVER);
    if (c == CW__CLASS_NEAR)
        class_sample(d, expected_ns, true, cost(true, 0), CW__VOTE_MIN_NS - 1u); /* too short */
    unsigned trials[2] = {0, 0}, trial = 0;
    int w;
    while ((w = class_way(d, expected_ns, cw_now_ns())) == WAY_TRIAL_DRIVER ||
           w == WAY_TRIAL_CALLBACK) {
        bool own = w == WAY_TRIAL_DRIVER;
        ++trials[own];
        assert_true(++trial < tickets);
        class_sample(d, expected_ns, own, cost(own, trial), wall ? wall(own) : expected_ns);
    }
    assert_int_equal(trials[0], want);
    assert_int_equal(trials[1], want);
    assert_true(w == WAY_DRIVER || w == WAY_CALLBACK);
    /* Decided for good: further samples are not asked for. */
    for (int i = 0; i < 4; ++i)
        assert_int_equal(class_way(d, expected_ns, cw_now_ns()), w);
    return w;
}

static int trials_of_class(cw__driver *d, uint64_t expected_ns, trial_cost cost) {
    return trials_of_class_lasting(d, expected_ns, cost, NULL);
}

/* A driver's wait that spun throughout its trial (a driver that spins
 * before it blocks, for longer than the wait) decides the class for the
 * callback wait at once: its other trials would each cost a whole wait. */
static void a_class_trial_that_spun_throughout_decides_at_once(void **state) {
    (void)state;
    cw__driver *d = timely_driver();
    assert_int_equal(class_way(d, NEAR_NS, cw_now_ns()), WAY_TRIAL_DRIVER);
    class_sample(d, NEAR_NS, true, NEAR_NS, NEAR_NS);
    for (int i = 0; i < 4; ++i)
        assert_int_equal(class_way(d, NEAR_NS, cw_now_ns()), WAY_CALLBACK);
}

/* The near class's trials on a timely platform; the way decided, which
 * cw_stats_auto's platform count shows too. */
static int run_long_trials_costing(trial_cost cost) {
    int w = trials_of_class(timely_driver(), NEAR_NS, cost);
    uint64_t probed, fire, silent, late, lateness, own;
    cw__driver_summary(&probed, &fire, &silent, &late, &lateness, &own);
    assert_int_equal(own, w == WAY_DRIVER);
    return w;
}

/* The same, the driver's own wait taking `own_ns` a wait and the callback
 * wait `cb_ns`. */
static int run_long_trials(uint64_t own_ns, uint64_t cb_ns) {
    flat_own_ns = own_ns;
    flat_cb_ns = cb_ns;
    return run_long_trials_costing(flat_cost);
}

/* A program whose waits alternate long and short (clpeak's: a warm-up
 * launch or two, then the timed ones), a long wait costing either way 4
 * times a short one, and the driver's own wait costing 3/2 of the callback
 * wait's for the same wait. Trials taken in strict turns would give one way
 * every long wait and the other every short one, and here take the dearer
 * own wait; in Thue-Morse order each way meets both alike. */
static uint64_t alternating_cost(bool own, unsigned trial) {
    uint64_t cb = trial % 2 ? 10000 : 40000;
    return own ? cb * 3u / 2u : cb;
}

static void long_wait_trials_meet_long_and_short_waits_alike(void **state) {
    (void)state;
    assert_int_equal(run_long_trials_costing(alternating_cost), WAY_CALLBACK);
}

/*
 * Auto's long waits on a timely platform take the driver's own wait where
 * the trials found its thread CPU time per wait at most CW__CLASS_DRIVER_EDGE
 * eighths of the callback wait's (exactly there: the driver's own).
 */
static void long_waits_take_the_own_wait_where_it_costs_no_more(void **state) {
    (void)state;
    assert_int_equal(class_way(NULL, NEAR_NS, 0), WAY_CALLBACK);
    class_sample(NULL, NEAR_NS, true, 1, NEAR_NS); /* ignored, no crash */
    const uint64_t cb = 16000;
    assert_int_equal(run_long_trials(cb * CW__CLASS_DRIVER_EDGE / 8u, cb), WAY_DRIVER);
}

/* ... and the callback wait where the driver's own costs more than that (a
 * wait that spins before it sleeps, as ROCm's does). */
static void long_waits_keep_the_callback_where_the_own_wait_costs_more(void **state) {
    (void)state;
    const uint64_t cb = 16000;
    assert_int_equal(run_long_trials(cb * CW__CLASS_DRIVER_EDGE / 8u + 1u, cb), WAY_CALLBACK);
}

/* A platform whose callbacks come CW__LATE_FLOOR_NS late or more (NVIDIA's
 * 20 ms, late for waits up to 256 times that and no longer) runs no trials: its own
 * wait may spin, and its long waits keep the callback. */
static void long_waits_of_a_late_platform_keep_the_callback(void **state) {
    (void)state;
    cw__driver *d = settled_driver();
    for (int i = 0; i < 64; ++i)
        cw__driver_lateness_sample(d, 20000000);
    assert_false(
        drv_late(d, ((uint64_t)20000000 << CW__LATE_SHARE_SHIFT) + (1u << CW__LATE_SHARE_SHIFT)));
    for (unsigned i = 0; i < 2u * CW__CLASS_TICKETS; ++i) {
        assert_int_equal(class_way(d, NEAR_NS, cw_now_ns()), WAY_CALLBACK);
        assert_int_equal(class_way(d, PAST_NEAR_NS, cw_now_ns()), WAY_CALLBACK);
    }
}

/* A way's cost per near wait where the driver's own wait costs less (a
 * quarter less, as PoCL 3.1's did for 20 ms kernels). */
static uint64_t own_cheaper_cost(bool own, unsigned trial) {
    (void)trial;
    return own ? 15000u : 20000u;
}

static uint64_t near_dearer_cost(bool own, unsigned trial) {
    (void)trial;
    return own ? 30000u : 20000u;
}

/*
 * One dear wait in a way's trials does not decide: here the driver's own
 * wait costs 15 µs a near wait and the callback wait 20 µs, but the own
 * wait's first trial took 200 µs (a preemption). Its mean would lose by
 * far; with each way's largest trial left out the own wait wins, and what
 * the record exports (a sum for each way, read by a later process as a
 * mean) decides the same.
 */
static unsigned own_costs_asked; /* the first is the too short wait's */
static uint64_t one_dear_own_cost(bool own, unsigned trial) {
    (void)trial;
    if (own && ++own_costs_asked == 2u)
        return 200000u;
    return own ? 15000u : 20000u;
}

static void one_dear_trial_does_not_decide(void **state) {
    (void)state;
    cw__driver *d = timely_driver();
    own_costs_asked = 0;
    assert_int_equal(trials_of_class(d, NEAR_NS, one_dear_own_cost), WAY_DRIVER);
    assert_int_equal(own_costs_asked, 1u + CW__CLASS_TRIALS);
    cw__driver_learned l;
    cw__driver_learned_get(d, &l);
    assert_true(l.cls[CW__CLASS_NEAR].known);
    assert_false(l.cls[CW__CLASS_SHORT].known);
    assert_int_equal(l.cls[CW__CLASS_NEAR].driver_n, CW__CLASS_TRIALS);
    assert_int_equal(l.cls[CW__CLASS_NEAR].cb_n, CW__CLASS_TRIALS);
    assert_int_equal(l.cls[CW__CLASS_NEAR].driver_cpu_ns, 15000u * CW__CLASS_TRIALS);
    assert_int_equal(l.cls[CW__CLASS_NEAR].cb_cpu_ns, 20000u * CW__CLASS_TRIALS);
}

/* Whether auto's wait of `expected_ns` on `d` parks on the callback, with
 * no trial, where no CPU is spare. */
static bool parks_on_callback(const cw__driver *d, uint64_t expected_ns) {
    cw__facts f = {.driver_wait_allowed = true,
                   .expected_ns = expected_ns,
                   .spin_cap_ns = UINT64_MAX,
                   .now_ns = cw_now_ns(),
                   .turn = 1,
                   .driver = view_of(d)};
    cw__choice c;
    cw__policy_choose(&f, &c);
    return c.way == CW__WAY_PARK && c.trial == CW__TRIAL_NONE && !c.settled;
}

/*
 * Waits expected to last CW__CLASS_NEAR_END_NS or more are of no class on
 * a timely platform: they park on the callback without trials, before the
 * near class decides (taking none of its tickets) and after it decided for
 * the driver's own wait. The platform counts once among those whose long
 * waits the own wait serves (its near ones).
 */
static void waits_past_the_near_class_park_on_the_callback(void **state) {
    (void)state;
    assert_int_equal(cw__policy_class_of(CW__VOTE_MIN_NS), CW__CLASS_NEAR);
    assert_int_equal(cw__policy_class_of(CW__CLASS_NEAR_END_NS - 1u), CW__CLASS_NEAR);
    assert_int_equal(cw__policy_class_of(CW__CLASS_NEAR_END_NS), CW__CLASS_NONE);
    assert_int_equal(cw__policy_class_of(UINT64_MAX), CW__CLASS_NONE);
    cw__driver *d = timely_driver();
    for (unsigned i = 0; i < 2u * CW__CLASS_TICKETS; ++i) {
        assert_int_equal(class_way(d, PAST_NEAR_NS, cw_now_ns()), WAY_CALLBACK);
        assert_true(parks_on_callback(d, PAST_NEAR_NS));
    }
    /* trials_of_class asserts the near class's first ticket is a trial. */
    assert_int_equal(trials_of_class(d, NEAR_NS, own_cheaper_cost), WAY_DRIVER);
    assert_true(drv_settled(d, NEAR_NS, true, cw_now_ns()));
    assert_true(drv_settled(d, CW__CLASS_NEAR_END_NS - 1u, true, cw_now_ns()));
    assert_false(drv_settled(d, PAST_NEAR_NS, true, cw_now_ns()));
    assert_true(parks_on_callback(d, PAST_NEAR_NS));
    assert_true(parks_on_callback(d, 100u * PAST_NEAR_NS));
    assert_int_equal(class_way(d, 100u * PAST_NEAR_NS, cw_now_ns()), WAY_CALLBACK);
    uint64_t probed, fire, silent, late, lateness, own;
    cw__driver_summary(&probed, &fire, &silent, &late, &lateness, &own);
    assert_int_equal(own, 1);
}

/*
 * Short waits (expected under CW__VOTE_MIN_NS, which auto parks for at
 * once where no CPU is spare) decide apart from near ones, on
 * their own trials: here the driver's own wait costs a short wait less
 * (PoCL 3.1's, against a callback's registration and wake-up, on a device
 * that takes every CPU) and a near one more. The settled own wait follows
 * the class, only where the
 * wait would park (no spin) and its length is known; the learned record
 * has the short class alone.
 */
static uint64_t short_cheaper_cost(bool own, unsigned trial) {
    (void)trial;
    return own ? 24000u : 26000u;
}

static void short_waits_decide_apart(void **state) {
    (void)state;
    assert_int_equal(cw__policy_class_of(1), CW__CLASS_SHORT);
    assert_int_equal(cw__policy_class_of(CW__VOTE_MIN_NS - 1u), CW__CLASS_SHORT);
    cw__driver *d = timely_driver();
    assert_int_equal(trials_of_class(d, SHORT_NS, short_cheaper_cost), WAY_DRIVER);
    cw__driver_learned l;
    cw__driver_learned_get(d, &l);
    assert_true(l.cls[CW__CLASS_SHORT].known);
    assert_false(l.cls[CW__CLASS_NEAR].known);
    assert_int_equal(l.cls[CW__CLASS_SHORT].driver_n, CW__CLASS_TRIALS);
    /* Not among the platforms whose long waits the driver's own serves. */
    uint64_t probed, fire, silent, late, lateness, own;
    cw__driver_summary(&probed, &fire, &silent, &late, &lateness, &own);
    assert_int_equal(own, 0);
    assert_true(drv_settled(d, SHORT_NS, true, cw_now_ns()));
    assert_true(drv_settled(d, 1, true, cw_now_ns()));
    assert_false(drv_settled(d, SHORT_NS, false, cw_now_ns())); /* it would spin */
    assert_false(drv_settled(d, 0, true, cw_now_ns()));         /* length unknown */
    /* The near class has made no trial yet: its first is handed out. */
    assert_false(drv_settled(d, NEAR_NS, true, cw_now_ns()));
    assert_int_equal(trials_of_class(d, NEAR_NS, near_dearer_cost), WAY_CALLBACK);
    assert_int_equal(class_way(d, SHORT_NS, cw_now_ns()), WAY_DRIVER);
    assert_true(drv_settled(d, SHORT_NS, true, cw_now_ns()));
    assert_false(drv_settled(d, NEAR_NS, true, cw_now_ns()));
}

/*
 * A short trial counts however quick it was: a driver's wait that loops on
 * the status returns a µs after a command of a few µs, while the callback
 * wait's trials last its lateness. Were the quick trials left out, the
 * driver's wait would never have its trials counted, and the class would
 * keep the callback wait for good.
 */
/* The driver's wait: 1 µs of wall and CPU; the callback wait: its
 * registration and wake-up, 30 µs after the command's end. */
static uint64_t quick_cost(bool own, unsigned trial) {
    (void)trial;
    return own ? 1000u : 9000u;
}

static uint64_t quick_wall(bool own) {
    return own ? 1000u : 30000u;
}

static void quick_short_trials_count(void **state) {
    (void)state;
    cw__driver *d = timely_driver();
    /* A command of a few µs. */
    assert_int_equal(trials_of_class_lasting(d, 2000u, quick_cost, quick_wall), WAY_DRIVER);
    cw__driver_learned l;
    cw__driver_learned_get(d, &l);
    assert_int_equal(l.cls[CW__CLASS_SHORT].driver_n, CW__CLASS_TRIALS);
}

/* One lateness measurement at a time per platform: a second claim fails
 * while one is out, a cancel or a sample ends it, and one whose callback
 * never came stops blocking after CW__LATE_MEASURE_STALE_NS. */
static void one_lateness_measurement_at_a_time(void **state) {
    (void)state;
    assert_false(cw__driver_measure_claim(NULL, 1));
    cw__driver_measure_cancel(NULL); /* no crash */

    cw__driver *d = settled_driver();
    const uint64_t t = 5000000000u;
    assert_true(cw__driver_measure_claim(d, t));
    assert_false(cw__driver_measure_claim(d, t + 1));
    cw__driver_measure_cancel(d);
    assert_true(cw__driver_measure_claim(d, t + 2));
    cw__driver_lateness_sample(d, 0);
    assert_true(cw__driver_measure_claim(d, t + 3));
    assert_false(cw__driver_measure_claim(d, t + 3 + CW__LATE_MEASURE_STALE_NS - 1));
    assert_true(cw__driver_measure_claim(d, t + 3 + CW__LATE_MEASURE_STALE_NS));
    cw__driver_measure_cancel(d);
}

/*
 * The fixture probed the platform as the first wait would (driver.h). On
 * PoCL 3.1 and rusticl a failed command fires no callback, so the answer is
 * "does not fire", and it stays so; the pocl7 driver model fires them, and
 * its callback (from the model's thread, late) brings the answer "fires"
 * (waited for under a generous hang guard). cw_stats_reset leaves what was
 * learned alone.
 */
/*
 * Every platform's events are told their platform, by the three queries
 * or, with several platforms, by the event's first word (the ICD dispatch
 * table) once one event confirmed it: each event with a device's context
 * gets its platform's record, first and later alike.
 */
static void events_are_told_their_platform(void **state) {
    (void)state;
    cl_platform_id ps[CW__DRIVER_SLOTS];
    cl_uint n = 0;
    assert_int_equal(clGetPlatformIDs(CW__DRIVER_SLOTS, ps, &n), CL_SUCCESS);
    if (n > CW__DRIVER_SLOTS)
        n = CW__DRIVER_SLOTS;
    unsigned made = 0;
    for (cl_uint i = 0; i < n; ++i) {
        cl_device_id dev;
        if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
            continue;
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        if (err != CL_SUCCESS)
            continue;
        for (int k = 0; k < 3; ++k) {
            cl_event ev = clCreateUserEvent(ctx, &err);
            assert_int_equal(err, CL_SUCCESS);
            assert_ptr_equal(cw__driver_of(ev), cw__driver_of_platform(ps[i]));
            clReleaseEvent(ev);
        }
        clReleaseContext(ctx);
        ++made;
    }
    printf("%u platforms, events made on %u\n", (unsigned)n, made);
    assert_true(made >= 1);
}

static void the_probe_answers_what_the_driver_does(void **state) {
    (void)state;
    cw_stats_auto a;
    cw_stats_reset();
    assert_int_equal(cw_stats_auto_get(&a, sizeof a), CW_OK);
    assert_int_equal(a.platforms_probed, 1);
    if (model_fires_failed()) {
        for (int i = 0; i < 5000 && !a.platforms_failed_fire; ++i) {
            cw_test_sleep_us(1000);
            assert_int_equal(cw_stats_auto_get(&a, sizeof a), CW_OK);
        }
        assert_int_equal(a.platforms_failed_fire, 1);
    } else {
        /* Give a callback that would come late the time to come. */
        cw_test_sleep_us(200000);
        assert_int_equal(cw_stats_auto_get(&a, sizeof a), CW_OK);
        assert_int_equal(a.platforms_failed_fire, 0);
        /* PoCL fails the marker inside clSetUserEventStatus, so the probe
         * saw it fail; rusticl's queue thread may take longer. */
        if (!getenv("CW_PLATFORM"))
            assert_int_equal(a.platforms_failed_silent, 1);
    }
    cl_event ev = user_event();
    assert_true(cw__driver_failed_fire(cw__driver_of(ev)) == model_fires_failed());
    clReleaseEvent(ev);
}

/*
 * A probe made while the device is busy may give up before its marker
 * finished and learn no lateness: on PoCL a kernel of many work-groups
 * holds every worker, and the marker runs after it. The marker made again
 * at the end of a wait (cw__driver_reprobe, on an idle device) learns it;
 * a probe that learned it makes no other. On a record of a platform
 * handle of the test's own (a record more in this process: the last
 * test), probed with the busy kernel's event as a wait on it would.
 */
static void a_probe_that_learned_no_lateness_tries_again(void **state) {
    (void)state;
    static char platform_of_our_own;
    cw__driver *d = cw__driver_of_platform((cl_platform_id)&platform_of_our_own);
    assert_non_null(d);
    assert_false(cw__driver_reprobe(d, NULL)); /* not probed yet: nothing to try again */
    cwh_busy b;
    assert_int_equal(cwh_busy_init(&host, &b, 1024), CL_SUCCESS);
    cl_event ev;
    assert_int_equal(cwh_busy_enqueue(&host, &b, 40000, 0, NULL, &ev), CL_SUCCESS);
    assert_int_equal(clFlush(host.queue), CL_SUCCESS);
    cw__driver_probe(d, ev);
    bool first = cw__driver_lateness_known(d);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    /* The first marker's callback comes after the kernel: until it has
     * returned, no other marker is made. A lateness near the late floor
     * (a loaded machine's) is probed again too. */
    unsigned again = 0;
    for (int i = 0; i < 5000 &&
                    cw__policy_probe_again(cw__driver_lateness_known(d), cw__driver_lateness_ns(d));
         ++i) {
        if (cw__driver_reprobe(d, ev))
            ++again;
        else
            cw_test_sleep_us(1000);
    }
    printf("first probe %s the lateness; made again: %u times\n", first ? "learned" : "missed",
           again);
    if (!first)
        assert_true(again >= 1);
    assert_true(again <= CW__PROBE_TRIES - 1);
    /* Settled, or (a loaded machine kept every marker from running within
     * the probe's spin, or its callbacks near the floor) the markers
     * spent: no marker more either way. */
    if (cw__policy_probe_again(cw__driver_lateness_known(d), cw__driver_lateness_ns(d)))
        assert_int_equal(again, CW__PROBE_TRIES - 1);
    assert_false(cw__driver_reprobe(d, ev));
    clReleaseEvent(ev);
    cwh_busy_free(&b);
}

static const struct CMUnitTest driver_tests[] = {
    cmocka_unit_test(lateness_is_a_moving_estimate_and_late_follows_the_rule),
    cmocka_unit_test(lateness_seen_long_after_the_end_is_a_lower_bound),
    cmocka_unit_test(own_wait_is_judged_after_its_trials),
    cmocka_unit_test(sleeping_own_wait_outvotes_costly_trials),
    cmocka_unit_test(spinning_own_wait_is_not_taken_for_a_sleep),
    cmocka_unit_test(short_trials_count_only_when_they_spun),
    cmocka_unit_test(own_wait_vote_ends_at_half_asleep),
    cmocka_unit_test(own_wait_vote_ends_past_half_spun),
    cmocka_unit_test(own_wait_vote_in_turns_takes_every_trial),
    cmocka_unit_test(own_wait_spun_throughout_decides_alone),
    cmocka_unit_test(own_wait_trials_are_short_known_waits),
    cmocka_unit_test(long_waits_take_the_own_wait_where_it_costs_no_more),
    cmocka_unit_test(long_waits_keep_the_callback_where_the_own_wait_costs_more),
    cmocka_unit_test(long_waits_of_a_late_platform_keep_the_callback),
    cmocka_unit_test(long_wait_trials_meet_long_and_short_waits_alike),
    cmocka_unit_test(a_class_trial_that_spun_throughout_decides_at_once),
    cmocka_unit_test(a_probe_made_again_keeps_the_least),
    cmocka_unit_test(waits_past_the_near_class_park_on_the_callback),
    cmocka_unit_test(short_waits_decide_apart),
    cmocka_unit_test(quick_short_trials_count),
    cmocka_unit_test(one_dear_trial_does_not_decide),
    cmocka_unit_test(one_lateness_measurement_at_a_time),
    cmocka_unit_test(events_are_told_their_platform),
    cmocka_unit_test(the_probe_answers_what_the_driver_does),
    cmocka_unit_test(a_probe_that_learned_no_lateness_tries_again),
};

CW_TEST_MAIN(driver_tests, open_host, close_host)
