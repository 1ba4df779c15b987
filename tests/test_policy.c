/* SPDX-License-Identifier: MIT */
/*
 * Layer 6.0: auto's policy (src/policy.c), as a table of rules: each row is
 * the facts of a wait, the way auto takes and why. Pure: no OpenCL, no
 * clock, no sleep.
 */
#include "harness.h"

#include "policy.h"

/* The rows below start from BASE and set some of its fields again: that is
 * the point of them, not a slip. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#else
#pragma GCC diagnostic ignored "-Woverride-init"
#pragma GCC diagnostic ignored "-Woverride-init-side-effects"
#endif

#define US 1000ull
#define MS 1000000ull
#define LATE_NS (20 * MS) /* the nvidia model's callbacks */

/* A platform whose callbacks come `lateness_ns` late, probed long ago. */
static cw__driver_view platform(uint64_t lateness_ns) {
    cw__driver_view v = {
        .known = true, .lateness_known = true, .lateness_ns = lateness_ns, .probed_ns = 1};
    return v;
}

/* The vote decided: the driver's wait sleeps (or spins). */
static cw__driver_view voted(cw__driver_view v, bool sleeps) {
    v.vote_trials = CW__VOTE_TRIALS;
    v.vote_asleep = sleeps ? CW__VOTE_TRIALS : 0;
    return v;
}

/* Class `cls` decided, the driver wait costing `drv` a wait, the callback
 * wait `cb`. */
static cw__driver_view decided(cw__driver_view v, unsigned cls, uint64_t drv, uint64_t cb) {
    uint32_t n = cw__policy_class_trials(cls);
    v.cls[cls].n[true] = v.cls[cls].n[false] = n;
    v.cls[cls].sum_ns[true] = drv * n;
    v.cls[cls].sum_ns[false] = cb * n;
    return v;
}

typedef struct rule {
    const char *name;
    cw__facts facts;
    cw__way way;
    cw__trial trial;
    bool settled;
    uint64_t spin_ns;     /* checked where the way spins */
    uint64_t plan_ns;     /* checked for the polling ways */
    uint64_t poll_for_ns; /* checked for CW__WAY_SLEEP_POLL */
    uint64_t fine_ns;
    uint64_t peek_ns;
} rule;

/* The facts most rows share: the wait's own parker, no timeout, a known
 * 1 ms expected wait, a timely platform, no CPU spare, a turn that is no
 * sampling turn, and the default spin cap. */
#define BASE                                                                                       \
    .driver_wait_allowed = true, .expected_ns = 1 * MS, .spin_cap_ns = 200 * US,                   \
    .now_ns = 10000 * MS, .turn = 1, .driver = platform(0)

static void rules_hold(void **state) {
    (void)state;
    const rule rules[] = {
        {"no expected wait yet: park on the callback",
         {BASE, .expected_ns = 0},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"a CPU spare and a short expected wait: spin 5/4 of it",
         {BASE, .expected_ns = 100 * US, .spare_cpu = true},
         CW__WAY_SPIN_PARK,
         CW__TRIAL_NONE,
         false,
         125 * US,
         0,
         0,
         0,
         0},
        {"a CPU spare but past the spin cap: a class trial",
         {BASE, .spare_cpu = true},
         CW__WAY_PARK,
         CW__TRIAL_CLASS,
         false,
         0,
         0,
         0,
         0,
         0},
        {"no CPU spare: the class's first trials",
         {BASE},
         CW__WAY_PARK,
         CW__TRIAL_CLASS,
         false,
         0,
         0,
         0,
         0,
         0},
        {"class decided for the driver wait: settled",
         {BASE, .driver = decided(platform(0), CW__CLASS_NEAR, 16 * US, 20 * US)},
         CW__WAY_DRIVER,
         CW__TRIAL_NONE,
         true,
         0,
         0,
         0,
         0,
         0},
        {"class decided for the callback: park",
         {BASE, .driver = decided(platform(0), CW__CLASS_NEAR, 30 * US, 20 * US)},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"expected from the near class's end: of no class, the callback without trials",
         {BASE, .expected_ns = CW__CLASS_NEAR_END_NS},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"expected from the near class's end, near decided for the driver: the callback",
         {BASE, .expected_ns = CW__CLASS_NEAR_END_NS,
          .driver = decided(platform(0), CW__CLASS_NEAR, 16 * US, 20 * US)},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"a second longer, near decided for the driver: the callback",
         {BASE, .expected_ns = 1000 * MS,
          .driver = decided(platform(0), CW__CLASS_NEAR, 16 * US, 20 * US)},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"just under the near class's end, near decided for the driver: settled",
         {BASE, .expected_ns = CW__CLASS_NEAR_END_NS - 1,
          .driver = decided(platform(0), CW__CLASS_NEAR, 16 * US, 20 * US)},
         CW__WAY_DRIVER,
         CW__TRIAL_NONE,
         true,
         0,
         0,
         0,
         0,
         0},
        {"a timeout: no driver wait, and on a peek turn half way",
         {BASE, .driver_wait_allowed = false, .turn = CW__PEEK_EVERY},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         500 * US},
        {"lateness not measured, probe just made: the callback for now, peeking",
         {BASE, .driver = {.known = true, .probed_ns = 10000 * MS - 1}},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         500 * US},
        {"lateness not measured, probe just made, a decision seeded: settled",
         {BASE, .driver = decided((cw__driver_view){.known = true, .probed_ns = 10000 * MS - 1},
                                  CW__CLASS_NEAR, 16 * US, 20 * US)},
         CW__WAY_DRIVER,
         CW__TRIAL_NONE,
         true,
         0,
         0,
         0,
         0,
         0},
        {"no record of the platform: the callback",
         {BASE, .driver = {.known = false}},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"late callbacks, vote open, a short wait: a vote's trial",
         {BASE, .driver = platform(LATE_NS)},
         CW__WAY_DRIVER,
         CW__TRIAL_VOTE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"late callbacks, the driver wait sleeps: settled",
         {BASE, .driver = voted(platform(LATE_NS), true)},
         CW__WAY_DRIVER,
         CW__TRIAL_NONE,
         true,
         0,
         0,
         0,
         0,
         0},
        {"late callbacks, the driver wait spins: sleep then poll, to the told end",
         {BASE, .end_ns = 900 * US, .driver = voted(platform(LATE_NS), false)},
         CW__WAY_SLEEP_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         900 * US,
         LATE_NS << CW__LATE_POLL_SHIFT,
         CW__LATE_FINE_LEAST_NS,
         0},
        {"late callbacks, an end estimate left by shorter commands: poll twice the wait estimate",
         {BASE, .expected_ns = 1000 * MS, .end_ns = 100 * MS,
          .driver = voted(platform(LATE_NS), false)},
         CW__WAY_SLEEP_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         100 * MS,
         2000 * MS,
         (100 * MS) >> CW__LATE_FINE_SHIFT,
         0},
        {"late callbacks, a wait they are not late for, the driver's wait sleeps: settled",
         {BASE, .expected_ns = (LATE_NS << CW__LATE_SHARE_SHIFT) + MS,
          .driver = voted(platform(LATE_NS), true)},
         CW__WAY_DRIVER,
         CW__TRIAL_NONE,
         true,
         0,
         0,
         0,
         0,
         0},
        {"late callbacks, a wait they are not late for, the driver's wait spins: the callback",
         {BASE, .expected_ns = (LATE_NS << CW__LATE_SHARE_SHIFT) + MS,
          .driver = voted(platform(LATE_NS), false)},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"late callbacks, a long wait, no end told: plan without the lateness, poll twice the wait",
         {BASE, .expected_ns = 20 * LATE_NS, .driver = platform(LATE_NS)},
         CW__WAY_SLEEP_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         19 * LATE_NS,
         40 * LATE_NS,
         (19 * LATE_NS) >> CW__LATE_FINE_SHIFT,
         0},
        {"late callbacks, no end told, a wait mostly lateness: plan the wait estimate",
         {BASE, .expected_ns = 2 * LATE_NS - 1, .driver = platform(LATE_NS)},
         CW__WAY_SLEEP_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         2 * LATE_NS - 1,
         LATE_NS << CW__LATE_POLL_SHIFT,
         (2 * LATE_NS - 1) >> CW__LATE_FINE_SHIFT,
         0},
        {"late callbacks, a caller's parker: polls with the callback",
         {BASE, .driver_wait_allowed = false, .callers_parker = true,
          .driver = voted(platform(LATE_NS), true)},
         CW__WAY_POLL_STEPS,
         CW__TRIAL_NONE,
         false,
         0,
         1 * MS,
         0,
         CW__LATE_FINE_LEAST_NS,
         0},
        {"late callbacks, a sampling turn: polls with the callback",
         {BASE, .turn = CW__LATE_SAMPLE_EVERY, .driver = voted(platform(LATE_NS), false)},
         CW__WAY_POLL_STEPS,
         CW__TRIAL_NONE,
         false,
         0,
         1 * MS,
         0,
         CW__LATE_FINE_LEAST_NS,
         0},
        {"lateness under the floor: not late",
         {BASE, .driver = decided(platform(CW__LATE_FLOOR_NS - 1), CW__CLASS_NEAR, 30, 20)},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"a wait 2^share times the lateness and more: not late for it",
         {BASE, .expected_ns = (LATE_NS << CW__LATE_SHARE_SHIFT) + (1u << CW__LATE_SHARE_SHIFT),
          .driver = voted(platform(LATE_NS), false)},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"latency: a second CPU: read the status in a loop",
         {BASE, .latency = true, .spare_cpu = true, .expected_ns = 100 * MS},
         CW__WAY_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"latency: a second CPU, no expected wait yet: read the status in a loop",
         {BASE, .latency = true, .spare_cpu = true, .expected_ns = 0},
         CW__WAY_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"latency: a second CPU but a caller's parker: as without it",
         {BASE, .latency = true, .spare_cpu = true, .callers_parker = true,
          .driver_wait_allowed = false},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"latency: no second CPU, timely callbacks: the callback, not the class's driver wait",
         {BASE, .latency = true, .driver = decided(platform(0), CW__CLASS_NEAR, 16, 20)},
         CW__WAY_PARK,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"latency, late, a second CPU: read the status in a loop, not the driver wait",
         {BASE, .latency = true, .spare_cpu = true, .expected_ns = 100 * MS,
          .driver = voted(platform(LATE_NS), true)},
         CW__WAY_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         0,
         0,
         0,
         0},
        {"latency, late, no second CPU, a sleeping driver wait: the driver wait",
         {BASE, .latency = true, .expected_ns = 100 * MS, .driver = voted(platform(LATE_NS), true)},
         CW__WAY_DRIVER,
         CW__TRIAL_NONE,
         true,
         0,
         0,
         0,
         0,
         0},
        {"latency, late, no second CPU, a spinning driver wait: the driver wait",
         {BASE, .latency = true, .expected_ns = 100 * MS,
          .driver = voted(platform(LATE_NS), false)},
         CW__WAY_DRIVER,
         CW__TRIAL_NONE,
         true,
         0,
         0,
         0,
         0,
         0},
        {"latency, late, no second CPU, the vote open: polls 1/256 of the plan apart near the end",
         {BASE, .latency = true, .expected_ns = 100 * MS, .driver = platform(LATE_NS)},
         CW__WAY_SLEEP_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         80 * MS,
         LATE_NS << CW__LATE_POLL_SHIFT,
         (80 * MS) >> CW__LATE_FINE_SHIFT,
         0},
        {"latency, late, a short wait, no driver wait: the fine spacing's least",
         {BASE, .latency = true, .driver_wait_allowed = false,
          .driver = voted(platform(LATE_NS), false)},
         CW__WAY_SLEEP_POLL,
         CW__TRIAL_NONE,
         false,
         0,
         1 * MS,
         LATE_NS << CW__LATE_POLL_SHIFT,
         CW__LATE_FINE_LEAST_NS,
         0},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; ++i) {
        const rule *r = &rules[i];
        cw__choice c;
        cw__policy_choose(&r->facts, &c);
        printf("%-80s -> %s\n", r->name, c.why);
        assert_non_null(c.why);
        assert_int_equal(c.way, r->way);
        assert_int_equal(c.trial, r->trial);
        assert_int_equal(c.settled, r->settled);
        if (r->way == CW__WAY_SPIN_PARK) {
            assert_int_equal(c.spin_ns, r->spin_ns);
            assert_true(c.peek_after_spin);
        } else {
            assert_int_equal(c.spin_ns, 0);
        }
        if (r->way == CW__WAY_SLEEP_POLL || r->way == CW__WAY_POLL_STEPS)
            assert_int_equal(c.plan_ns, r->plan_ns);
        if (r->way == CW__WAY_SLEEP_POLL)
            assert_int_equal(c.poll_for_ns, r->poll_for_ns);
        assert_int_equal(c.fine_ns, r->fine_ns);
        assert_int_equal(c.peek_ns, r->peek_ns);
    }
}

/* The spare-CPU fact is asked for only where it can change the choice. */
static void spare_cpu_is_read_only_where_it_matters(void **state) {
    (void)state;
    cw__facts f = {BASE};
    assert_false(cw__policy_needs_spare(&f)); /* 1 ms: past the spin cap */
    f.expected_ns = 100 * US;
    assert_true(cw__policy_needs_spare(&f));
    f.expected_ns = 0;
    assert_false(cw__policy_needs_spare(&f));
    f.latency = true;
    assert_true(cw__policy_needs_spare(&f));
    f.driver = platform(LATE_NS);
    assert_true(cw__policy_needs_spare(&f));
    f.latency = false;
    f.expected_ns = 100 * US;
    assert_false(cw__policy_needs_spare(&f)); /* late: no spin either way */
}

/* The vote: what one timed driver wait adds (cw__policy_vote_of), and when
 * the votes decide. */
static void one_timed_driver_wait_votes_by_its_share(void **state) {
    (void)state;
    const uint64_t wall = 4 * CW__VOTE_MIN_NS;
    const uint64_t share = wall / CW__VOTE_CPU_SHARE + CW__VOTE_FIXED_NS;
    const struct {
        uint64_t cpu, wall;
        uint32_t trials, asleep;
    } votes[] = {
        {0, CW__VOTE_SPUN_MIN_NS - 1, 0, 0},                        /* too short for anything */
        {CW__VOTE_SPUN_MIN_NS / 2, CW__VOTE_SPUN_MIN_NS, 1, 0},     /* short, spun */
        {CW__VOTE_SPUN_MIN_NS / 2 - 1, CW__VOTE_SPUN_MIN_NS, 0, 0}, /* short, not spun */
        {share - 1, wall, 1, 1},                                    /* slept */
        {share, wall, 1, 0},                                        /* did not */
        {wall * CW__VOTE_THROUGH / CW__VOTE_THROUGH_OF, wall, CW__VOTE_TRIALS / 2 + 1, 0},
    };
    for (size_t i = 0; i < sizeof votes / sizeof votes[0]; ++i) {
        uint32_t t, a;
        cw__policy_vote_of(votes[i].cpu, votes[i].wall, &t, &a);
        assert_int_equal(t, votes[i].trials);
        assert_int_equal(a, votes[i].asleep);
    }
    assert_false(cw__policy_vote_decided(0, 0));
    assert_true(cw__policy_vote_decided(CW__VOTE_TRIALS / 2, CW__VOTE_TRIALS / 2)); /* half slept */
    assert_true(cw__policy_vote_sleeps(CW__VOTE_TRIALS / 2, CW__VOTE_TRIALS / 2));
    assert_true(cw__policy_vote_decided(CW__VOTE_TRIALS / 2 + 1, 0)); /* more than half spun */
    assert_false(cw__policy_vote_sleeps(CW__VOTE_TRIALS / 2 + 1, 0));
    assert_false(cw__policy_vote_decided(CW__VOTE_TRIALS / 2, 1)); /* still open */
}

/* The classes: their bounds (none from CW__CLASS_NEAR_END_NS), the trials' Thue-Morse order with a
 * way that counted its trials leaving the rest to the other, the verdict past the tickets, a
 * dearest trial left out of the cost, and the edge. */
static void class_trials_order_and_verdict(void **state) {
    (void)state;
    assert_int_equal(cw__policy_class_of(1), CW__CLASS_SHORT);
    assert_int_equal(cw__policy_class_of(CW__VOTE_MIN_NS), CW__CLASS_NEAR);
    assert_int_equal(cw__policy_class_of(CW__CLASS_NEAR_END_NS - 1), CW__CLASS_NEAR);
    assert_int_equal(cw__policy_class_of(CW__CLASS_NEAR_END_NS), CW__CLASS_NONE);
    assert_int_equal(cw__policy_class_of(UINT64_MAX), CW__CLASS_NONE);
    /* No class: known, the callback, whatever the near class decided. */
    cw__facts none = {BASE, .driver = decided(platform(0), CW__CLASS_NEAR, 16 * US, 20 * US)};
    bool driver = true;
    assert_true(cw__policy_class_known(&none, CW__CLASS_NONE, &driver));
    assert_false(driver);
    assert_true(cw__policy_class_known(&none, CW__CLASS_NEAR, &driver));
    assert_true(driver);
    cw__class_view v = {0};
    const bool order[] = {true, false, false, true, false, true, true, false};
    for (uint32_t t = 0; t < 8; ++t) {
        bool trial;
        assert_int_equal(cw__policy_trial_driver(&v, CW__CLASS_NEAR, t, &trial), order[t]);
        assert_true(trial);
    }
    v.n[true] = CW__CLASS_TRIALS;
    bool trial;
    assert_false(cw__policy_trial_driver(&v, CW__CLASS_NEAR, 0, &trial));
    v.n[true] = 0;
    v.n[false] = CW__CLASS_TRIALS;
    assert_true(cw__policy_trial_driver(&v, CW__CLASS_NEAR, 1, &trial));
    assert_false(cw__policy_class_decided(&v, CW__CLASS_NEAR));
    /* Past the tickets: the verdict, no trial; decided. */
    v.tickets = CW__CLASS_TICKETS;
    assert_true(cw__policy_class_decided(&v, CW__CLASS_NEAR));
    assert_false(cw__policy_trial_driver(&v, CW__CLASS_NEAR, CW__CLASS_TICKETS, &trial));
    assert_false(trial); /* no driver trial counted: the callback */

    /* One dear trial of four is left out: 15 us against 20 us wins. */
    cw__class_view d = {
        .n = {4, 4}, .sum_ns = {80 * US, 45 * US + 200 * US}, .max_ns = {20 * US, 200 * US}};
    uint64_t sum, n;
    cw__policy_class_cost(&d, true, &sum, &n);
    assert_int_equal(sum, 45 * US);
    assert_int_equal(n, 3);
    assert_true(cw__policy_class_driver_won(&d));
    /* The edge: up to CW__CLASS_DRIVER_EDGE eighths of the callback's cost. */
    cw__class_view e = {.n = {1, 1}, .sum_ns = {8000, 8000u * CW__CLASS_DRIVER_EDGE / 8u}};
    assert_true(cw__policy_class_driver_won(&e));
    e.sum_ns[true] += 1;
    assert_false(cw__policy_class_driver_won(&e));

    /* A driver's wait that spun throughout decides for the callback at
     * once: no more trials, even where its counted cost would win. */
    cw__class_view s = {.n = {0, 1}, .sum_ns = {0, 1 * US}, .driver_spun = true};
    assert_true(cw__policy_class_decided(&s, CW__CLASS_NEAR));
    assert_false(cw__policy_class_driver_won(&s));
    cw__facts spun = {BASE};
    spun.driver.cls[CW__CLASS_NEAR] = s;
    driver = true;
    assert_true(cw__policy_class_known(&spun, CW__CLASS_NEAR, &driver));
    assert_false(driver);
    cw__choice c;
    cw__policy_choose(&spun, &c);
    assert_int_equal(c.way, CW__WAY_PARK);
    assert_int_equal(c.trial, CW__TRIAL_NONE);
}

/* Spun throughout: from CW__VOTE_MIN_NS of wall, CPU at least
 * CW__VOTE_THROUGH / CW__VOTE_THROUGH_OF of it; the vote counts such a
 * trial as a majority. */
static void a_driver_wait_that_spun_throughout(void **state) {
    (void)state;
    const uint64_t wall = CW__VOTE_MIN_NS;
    const uint64_t through = wall * CW__VOTE_THROUGH / CW__VOTE_THROUGH_OF;
    assert_true(cw__policy_spun_through(through, wall));
    assert_true(cw__policy_spun_through(wall, wall));
    assert_false(cw__policy_spun_through(through - 1, wall));
    assert_false(cw__policy_spun_through(wall - 1, wall - 1)); /* too short to tell */
    uint32_t t, a;
    cw__policy_vote_of(through, wall, &t, &a);
    assert_int_equal(t, CW__VOTE_TRIALS / 2 + 1);
    assert_int_equal(a, 0);
}

/* The probe again: while no lateness is known, and for one from the late
 * floor up to CW__PROBE_AGAIN_BELOW_NS; not for a timely one nor a
 * clearly late one. */
static void the_probe_again_near_the_floor(void **state) {
    (void)state;
    assert_true(cw__policy_probe_again(false, 0));
    assert_false(cw__policy_probe_again(true, 0));
    assert_false(cw__policy_probe_again(true, CW__LATE_FLOOR_NS - 1));
    assert_true(cw__policy_probe_again(true, CW__LATE_FLOOR_NS));
    assert_true(cw__policy_probe_again(true, CW__PROBE_AGAIN_BELOW_NS - 1));
    assert_false(cw__policy_probe_again(true, CW__PROBE_AGAIN_BELOW_NS));
    assert_false(cw__policy_probe_again(true, LATE_NS));
}

/* The benchmark's ablation switches: each decides as if its mechanism
 * were not there. */
static void switched_off_mechanisms_are_not_used(void **state) {
    (void)state;
    cw__choice c;
    cw__facts spin = {BASE, .expected_ns = 100 * US, .spare_cpu = true, .off = CW__OFF_SPIN};
    cw__policy_choose(&spin, &c);
    assert_int_equal(c.way, CW__WAY_PARK);
    assert_int_equal(c.trial, CW__TRIAL_CLASS);
    cw__facts near = {BASE, .off = CW__OFF_NEAR};
    cw__policy_choose(&near, &c);
    assert_int_equal(c.way, CW__WAY_PARK);
    assert_int_equal(c.trial, CW__TRIAL_NONE);
    cw__facts late = {BASE, .driver = voted(platform(LATE_NS), true), .off = CW__OFF_LATE};
    cw__policy_choose(&late, &c);
    assert_int_equal(c.way, CW__WAY_PARK);
    cw__facts vote = {BASE, .driver = voted(platform(LATE_NS), true), .off = CW__OFF_VOTE};
    cw__policy_choose(&vote, &c);
    assert_int_equal(c.way, CW__WAY_SLEEP_POLL);
    cw__facts peek = {BASE, .driver_wait_allowed = false, .turn = 0, .off = CW__OFF_PEEK};
    cw__policy_choose(&peek, &c);
    assert_int_equal(c.peek_ns, 0);
    assert_true(c.rise);
    cw__facts rise = {BASE, .off = CW__OFF_RISE};
    cw__policy_choose(&rise, &c);
    assert_false(c.rise);
}

/* A late wait sleeps to its fine polls at once only where polls told the
 * queue's ends and they lie close together. */
static void late_waits_sleep_to_the_end_only_where_it_is_told(void **state) {
    (void)state;
    cw__choice c;
    cw__facts told = {BASE, .expected_ns = 100 * MS, .end_ns = 100 * MS, .end_dev_ns = 1 * MS,
                      .driver = voted(platform(LATE_NS), false)};
    cw__policy_choose(&told, &c);
    assert_int_equal(c.way, CW__WAY_SLEEP_POLL);
    assert_true(c.sleep_to_end);
    assert_int_equal(c.fine_early_ns, 2 * MS);
    told.end_dev_ns = (100 * MS >> CW__LATE_EARLY_SHIFT) + 1;
    cw__policy_choose(&told, &c);
    assert_false(c.sleep_to_end);
    assert_int_equal(c.fine_early_ns, 100 * MS >> CW__LATE_EARLY_SHIFT); /* at most 1/16 */
    told.end_ns = 0;
    cw__policy_choose(&told, &c);
    assert_false(c.sleep_to_end);
}

static const struct CMUnitTest policy_tests[] = {
    cmocka_unit_test(late_waits_sleep_to_the_end_only_where_it_is_told),
    cmocka_unit_test(switched_off_mechanisms_are_not_used),
    cmocka_unit_test(rules_hold),
    cmocka_unit_test(spare_cpu_is_read_only_where_it_matters),
    cmocka_unit_test(one_timed_driver_wait_votes_by_its_share),
    cmocka_unit_test(class_trials_order_and_verdict),
    cmocka_unit_test(a_driver_wait_that_spun_throughout),
    cmocka_unit_test(the_probe_again_near_the_floor),
};

CW_TEST_MAIN(policy_tests, NULL, NULL)
