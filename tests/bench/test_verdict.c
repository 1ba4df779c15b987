/* SPDX-License-Identifier: MIT */
/*
 * cw-bench's verdicts (bench/verdict.c) on made-up rounds, and the sweep's
 * draws (bench/sweep.c) against the driver model layer's own parser.
 * No OpenCL runs here.
 */
#include "harness.h"

#include <math.h>
#include <stdlib.h>

#include "bench.h"
#include "drivermodel/model.h"

enum { B = CW_STRATEGY_BLOCKING, A = CW_STRATEGY_AUTO, C = CW_STRATEGY_COOPERATIVE };
#define MAXR 4096

/* Rounds of made-up figures, every strategy marked as not run. */
typedef struct rounds {
    round_fig *figs[NFIG];
    double scratch[MAXR];
    uint64_t x;
} rounds;

static rounds *rounds_new(void) {
    rounds *r = calloc(1, sizeof *r);
    assert_non_null(r);
    for (int s = 0; s < NFIG; ++s) {
        r->figs[s] = calloc(MAXR, sizeof(round_fig));
        assert_non_null(r->figs[s]);
    }
    r->x = 12345;
    return r;
}

static void rounds_free(rounds *r) {
    for (int s = 0; s < NFIG; ++s)
        free(r->figs[s]);
    free(r);
}

/* Noise uniform in [-w, w], from a fixed sequence. */
static double noise(rounds *r, double w) {
    r->x = r->x * 6364136223846793005ull + 1442695040888963407ull;
    return w * (2.0 * (double)(r->x >> 11) / 9007199254740992.0 - 1.0);
}

static void set(rounds *r, int s, int round, double lat, double cpu) {
    round_fig *f = &r->figs[s][round];
    f->ran = true;
    f->v[VM_LAT] = lat;
    f->v[VM_CPU] = cpu;
    f->v[VM_CPS] = cpu / 1e6;
    f->v[VM_CMDB] = 100;
}

/* Goal a's latency check of auto on a pocl3 cell of a short command. */
static vcheck a_latency_check(void) {
    goal_cell gc = {.pocl3 = true, .command_us = 1000};
    gc.on[B] = gc.on[A] = true;
    vcheck ck[MAX_CHECKS];
    int n = goal_checks(&gc, ck, MAX_CHECKS);
    for (int i = 0; i < n; ++i)
        if (ck[i].goal == 'a' && ck[i].strat == A && strstr(ck[i].what, "latency"))
            return ck[i];
    fail_msg("no latency check of goal a");
    return ck[0];
}

/* Auto's latency is ratio x blocking's, each round with noise of width w. */
static void fill(rounds *r, int n, double ratio, double w) {
    for (int i = 0; i < n; ++i) {
        double base = 100 + noise(r, 10);
        set(r, B, i, base, 20);
        set(r, A, i, base * ratio + noise(r, w), 20);
    }
}

static const round_fig *const *figs(const rounds *r) {
    return (const round_fig *const *)r->figs;
}

/* The sign test's interval, worked by hand: of 10 values the 2nd smallest
 * to the 2nd largest (P(Binomial(10, 1/2) <= 1) = 11/1024 <= 2.5%, <= 2 is
 * 56/1024 > 2.5%); of 6, the smallest to the largest (2/64 = 3.1% <= 5%);
 * below 6 no interval reaches 95%. */
static void interval_by_hand(void **state) {
    (void)state;
    double d[] = {7, 1, 10, 3, 2, 9, 4, 8, 6, 5}, m, lo, hi;
    assert_int_equal(median_interval(d, 10, &m, &lo, &hi), 0);
    assert_true(m == 5.5 && lo == 2 && hi == 9);
    double e[] = {3, -1, 2, 8, 0, 5};
    assert_int_equal(median_interval(e, 6, &m, &lo, &hi), 0);
    assert_true(m == 2.5 && lo == -1 && hi == 8);
    double f[] = {1, 2, 3, 4, 5};
    assert_int_equal(median_interval(f, 5, &m, &lo, &hi), -1);
    assert_true(m == 3 && isnan(lo) && isnan(hi));
    assert_int_equal(sign_test_rank(5), 0);
    assert_int_equal(sign_test_rank(6), 1);
    assert_int_equal(sign_test_rank(10), 2);
    /* For many values, near the normal approximation n/2 - 1.96 sqrt(n)/2. */
    int k = sign_test_rank(1000);
    assert_true(k >= 468 && k <= 471);
}

/* One outlier in twenty rounds moves no verdict: the interval is of the
 * median difference. */
static void an_outlier_changes_nothing(void **state) {
    (void)state;
    rounds *r = rounds_new();
    fill(r, 20, 1.0, 1);
    r->figs[A][4].v[VM_LAT] = 100000; /* one preempted round */
    vcheck ck = a_latency_check();
    check_eval(&ck, figs(r), 20, r->scratch);
    assert_int_equal(ck.v, V_PASS);
    rounds_free(r);
}

/* Auto as fast as blocking, by far within 1.05x + 2 us: PASS. */
static void pass_when_wholly_below(void **state) {
    (void)state;
    rounds *r = rounds_new();
    fill(r, 20, 1.0, 1);
    vcheck ck = a_latency_check();
    check_eval(&ck, figs(r), 20, r->scratch);
    assert_int_equal(ck.v, V_PASS);
    assert_int_equal(ck.pairs, 20);
    /* The bound is 1.05 x ~100 + 2: the difference is about -7. */
    assert_true(ck.hi[0] < 0 && ck.est[0] < -5 && ck.est[0] > -9);
    rounds_free(r);
}

/* Auto 30% slower: MISS. */
static void miss_when_wholly_above(void **state) {
    (void)state;
    rounds *r = rounds_new();
    fill(r, 20, 1.3, 1);
    vcheck ck = a_latency_check();
    check_eval(&ck, figs(r), 20, r->scratch);
    assert_int_equal(ck.v, V_MISS);
    assert_true(ck.lo[0] > 0);
    rounds_free(r);
}

/* Right at the bound, with noise: neither side. */
static void undecided_across_the_bound(void **state) {
    (void)state;
    rounds *r = rounds_new();
    for (int i = 0; i < 30; ++i) {
        set(r, B, i, 100, 20);
        set(r, A, i, 107 + noise(r, 20), 20); /* the bound: 1.05 x 100 + 2 = 107 */
    }
    vcheck ck = a_latency_check();
    check_eval(&ck, figs(r), 30, r->scratch);
    assert_int_equal(ck.v, V_UNDECIDED);
    assert_true(ck.lo[0] <= 0 && ck.hi[0] > 0);
    rounds_free(r);
}

/* 3% over blocking, with noise: undecided on 5 rounds, a PASS once the
 * interval has narrowed past the bound (1.05 x + 2 us). */
static void decided_as_rounds_are_added(void **state) {
    (void)state;
    rounds *r = rounds_new();
    fill(r, 2000, 1.03, 40);
    vcheck ck = a_latency_check();
    check_eval(&ck, figs(r), 5, r->scratch);
    assert_int_equal(ck.v, V_UNDECIDED);
    int decided_at = 0;
    for (int n = 6; n <= 2000 && !decided_at; ++n) {
        check_eval(&ck, figs(r), n, r->scratch);
        if (ck.v != V_UNDECIDED)
            decided_at = n;
    }
    assert_true(decided_at > 5);
    assert_int_equal(ck.v, V_PASS);
    rounds_free(r);
}

/* A check as cw-bench leaves it, without rounds: its conditions' medians
 * and intervals as given. */
static vcheck made_up(int ncond, int pairs, const double (*c)[4]) {
    vcheck ck = {.goal = 'c', .ncond = ncond, .pairs = pairs, .v = V_UNDECIDED};
    for (int k = 0; k < ncond; ++k) {
        ck.est[k] = c[k][0];
        ck.lo[k] = c[k][1];
        ck.hi[k] = c[k][2];
        ck.res[k] = c[k][3];
    }
    return ck;
}

/* The projection: the half of the interval facing the bound shrinks as
 * 1/sqrt(pairs) until it is shorter than the median's distance from it. */
static void to_decide_by_hand(void **state) {
    (void)state;
    verdict lean;
    /* A requirement 1 below its bound, its upper half 2: 4x the pairs. */
    vcheck pass = made_up(1, 100, (const double[][4]){{-1, -3, 1, 0}});
    assert_true(fabs(check_to_decide(&pass, &lean) - 400) < 1e-9);
    assert_int_equal(lean, V_PASS);
    vcheck miss = made_up(1, 100, (const double[][4]){{1, -1, 3, 0}});
    assert_true(fabs(check_to_decide(&miss, &lean) - 400) < 1e-9);
    assert_int_equal(lean, V_MISS);
    /* Measured from the resolution, not from 0. */
    vcheck res = made_up(1, 100, (const double[][4]){{0.5, 0, 1, 1}});
    assert_true(fabs(check_to_decide(&res, &lean) - 100) < 1e-9);
    assert_int_equal(lean, V_PASS);
    vcheck on = made_up(1, 100, (const double[][4]){{0, -1, 1, 0}});
    assert_true(isinf(check_to_decide(&on, &lean)));
    assert_int_equal(lean, V_UNDECIDED);
    /* Not beaten: a condition leaning false passes it at its own pairs,
     * whatever the other; both leaning true miss it at the later. */
    vcheck c_pass = made_up(2, 100, (const double[][4]){{0.5, -0.5, 1.5, 0}, {-5, -6, -4, 1}});
    assert_true(fabs(check_to_decide(&c_pass, &lean) - 400) < 1e-9);
    assert_int_equal(lean, V_PASS);
    vcheck c_miss = made_up(2, 100, (const double[][4]){{-1, -3, 1, 0}, {-2, -3, -1, 0}});
    assert_true(fabs(check_to_decide(&c_miss, &lean) - 400) < 1e-9);
    assert_int_equal(lean, V_MISS);
    /* One on its bound, the other leaning true: nothing decides it. */
    vcheck c_on = made_up(2, 100, (const double[][4]){{0, -1, 1, 0}, {-2, -3, -1, 0}});
    assert_true(isinf(check_to_decide(&c_on, &lean)));
    assert_int_equal(lean, V_UNDECIDED);
}

/* A cell stops once no undecided check's projection fits twice the time it
 * has left, from OUT_OF_REACH_ROUNDS rounds and half its budget on;
 * decided checks do not keep it going, and a cell of decided checks is not
 * "out of reach". */
static void out_of_reach_by_hand(void **state) {
    (void)state;
    /* 300 more rounds at 0.1 s: 30 s; of a 60 s budget, 46 s spent leaves
     * 14 (28 < 30), 45 s spent leaves 15 (30, not over). */
    vcheck ck[2] = {made_up(1, 100, (const double[][4]){{-1, -3, 1, 0}}),
                    made_up(1, 100, (const double[][4]){{-5, -6, -4, 0}})};
    ck[1].v = V_PASS;
    assert_true(checks_out_of_reach(ck, 2, 100, 0.1, 46, 60));
    assert_false(checks_out_of_reach(ck, 2, 100, 0.1, 45, 60));
    assert_false(checks_out_of_reach(ck, 2, OUT_OF_REACH_ROUNDS - 1, 0.1, 59, 60));
    /* Out of reach, but under half the budget spent: on; no round left to
     * run: the budget's to end, not this rule's. */
    assert_true(checks_out_of_reach(ck, 2, 100, 0.1, 40, 50));
    assert_false(checks_out_of_reach(ck, 2, 100, 0.1, 24, 50));
    assert_false(checks_out_of_reach(ck, 2, 100, 0.1, 49.95, 50));
    /* A second undecided check within reach keeps the cell going. */
    vcheck near = made_up(1, 100, (const double[][4]){{-1, -1.5, 0.1, 0}});
    vcheck both[2] = {ck[0], near};
    assert_false(checks_out_of_reach(both, 2, 100, 0.1, 46, 60));
    ck[0].v = V_PASS;
    assert_false(checks_out_of_reach(ck, 2, 100, 0.1, 60, 60));
}

/* On made-up rounds 4% over blocking with noise (the bound 5% + 2 us), the
 * projection from the first 60 rounds is of the right verdict, and the
 * check is decided by twice the pairs it projected. */
static void to_decide_comes_true(void **state) {
    (void)state;
    rounds *r = rounds_new();
    fill(r, MAXR, 1.04, 40);
    vcheck ck = a_latency_check();
    check_eval(&ck, figs(r), 60, r->scratch);
    assert_int_equal(ck.v, V_UNDECIDED);
    verdict lean;
    double need = check_to_decide(&ck, &lean);
    printf("undecided after 60 rounds, projected %s after %.0f\n", verdict_names[lean], need);
    assert_int_equal(lean, V_PASS);
    assert_true(need > 60 && 2 * need < MAXR);
    check_eval(&ck, figs(r), (int)(2 * need), r->scratch);
    assert_int_equal(ck.v, V_PASS);
    rounds_free(r);
}

/* Only rounds in which both strategies ran are pairs. */
static void pairs_need_both(void **state) {
    (void)state;
    rounds *r = rounds_new();
    fill(r, 10, 1.0, 1);
    r->figs[A][3].ran = false;
    r->figs[B][7].ran = false;
    vcheck ck = a_latency_check();
    check_eval(&ck, figs(r), 10, r->scratch);
    assert_int_equal(ck.pairs, 8);
    rounds_free(r);
}

static vcheck c_check(int s, int which) {
    goal_cell gc = {.command_us = 1000};
    for (int q = 0; q < NSTRAT; ++q)
        gc.on[q] = true;
    vcheck ck[MAX_CHECKS];
    int n = goal_checks(&gc, ck, MAX_CHECKS), seen = 0;
    for (int i = 0; i < n; ++i)
        if (ck[i].goal == 'c' && ck[i].strat == s && seen++ == which)
            return ck[i];
    fail_msg("no check of goal c");
    return ck[0];
}

/* Goal c: a strategy with both lower latency and lower CPU beats auto
 * (MISS); one that spins (lower latency, more CPU) does not (PASS). */
static void goal_c_beaten_or_not(void **state) {
    (void)state;
    rounds *r = rounds_new();
    for (int i = 0; i < 20; ++i) {
        set(r, A, i, 100 + noise(r, 2), 30 + noise(r, 1));
        set(r, C, i, 50 + noise(r, 2), 20 + noise(r, 1));                      /* beats auto */
        set(r, CW_STRATEGY_POLL, i, 10 + noise(r, 2), 300 + noise(r, 1));      /* a spin */
        set(r, CW_STRATEGY_PTHREAD, i, 100 + noise(r, 2), 29.5 + noise(r, 1)); /* within */
    }
    for (int which = 0; which < 2; ++which) {
        vcheck ck = c_check(C, which);
        check_eval(&ck, figs(r), 20, r->scratch);
        assert_int_equal(ck.v, V_MISS);
        ck = c_check(CW_STRATEGY_POLL, which);
        check_eval(&ck, figs(r), 20, r->scratch);
        assert_int_equal(ck.v, V_PASS);
        ck = c_check(CW_STRATEGY_PTHREAD, which);
        check_eval(&ck, figs(r), 20, r->scratch);
        assert_int_equal(ck.v, V_PASS);
    }
    rounds_free(r);
}

/* Which goals a cell gets: a on plain pocl3, b on plain nvidia, c always. */
static void goals_per_cell(void **state) {
    (void)state;
    vcheck ck[MAX_CHECKS];
    goal_cell gc = {.pocl3 = true, .command_us = 100000};
    for (int q = 0; q < NSTRAT; ++q)
        gc.on[q] = true;
    int n = goal_checks(&gc, ck, MAX_CHECKS), na = 0, nb = 0, nc = 0, cps = 0;
    for (int i = 0; i < n; ++i) {
        na += ck[i].goal == 'a';
        nb += ck[i].goal == 'b';
        nc += ck[i].goal == 'c';
        cps += ck[i].goal == 'a' && ck[i].cond[0].t[0].metric == VM_CPS;
    }
    /* auto and cooperative, latency and (from 20 ms) CPU per second. */
    assert_int_equal(na, 4);
    assert_int_equal(cps, 2);
    assert_int_equal(nb, 0);
    /* Every fixed strategy (not auto, auto-latency or the library's
     * default), two checks each. */
    int nfixed = 0;
    for (int q = 0; q < NSTRAT; ++q)
        nfixed += strategy_fixed(q);
    assert_int_equal(nfixed, NSTRAT - 3);
    assert_int_equal(nc, 2 * nfixed);
    for (int i = 0; i < n; ++i)
        assert_true(ck[i].goal != 'c' || strategy_fixed(ck[i].strat));
    gc.pocl3 = false;
    gc.nvidia = true;
    gc.latency_kernel = true;
    n = goal_checks(&gc, ck, MAX_CHECKS);
    na = nb = 0;
    for (int i = 0; i < n; ++i) {
        na += ck[i].goal == 'a';
        nb += ck[i].goal == 'b';
    }
    assert_int_equal(na, 0);
    assert_int_equal(nb, 2);
    /* Goal f: nvidia, from 100 ms, not the latency kernel. */
    int nf = 0;
    for (int i = 0; i < n; ++i)
        nf += ck[i].goal == 'f';
    assert_int_equal(nf, 0);
    gc.latency_kernel = false;
    n = goal_checks(&gc, ck, MAX_CHECKS);
    for (int i = 0; i < n; ++i)
        nf += ck[i].goal == 'f';
    assert_int_equal(nf, 2);
    gc.command_us = 20000;
    n = goal_checks(&gc, ck, MAX_CHECKS);
    nf = 0;
    for (int i = 0; i < n; ++i)
        nf += ck[i].goal == 'f';
    assert_int_equal(nf, 0);
    /* Without auto and auto-latency, goals c and e have nothing to judge. */
    gc.nvidia = false;
    gc.on[A] = false;
    gc.on[S_AUTO_LATENCY] = false;
    assert_int_equal(goal_checks(&gc, ck, MAX_CHECKS), 0);
}

/* Two strategies on the same path: the same CPU, give or take noise, and
 * one 10% quicker. Without a resolution "CPU <= auto's" sits on its bound
 * for ever (undecided); equal within the resolution meets "at most", so
 * the quicker one beats auto: MISS, decided. A strategy as quick as auto
 * at the same CPU does not beat it: its latency is not auto's / 1.05. */
static void equal_within_the_resolution(void **state) {
    (void)state;
    rounds *r = rounds_new();
    for (int i = 0; i < 200; ++i) {
        double cpu = 60 + noise(r, 5);
        set(r, A, i, 110 + noise(r, 2), cpu + noise(r, 3));
        set(r, C, i, 100 + noise(r, 2), cpu + noise(r, 3));
    }
    vcheck ck = c_check(C, 0);
    check_eval(&ck, figs(r), 200, r->scratch);
    /* CPU: the interval straddles 0 but lies within the resolution, 0.5 us
     * + 2% of auto's 60 us. */
    assert_true(ck.lo[1] < 0 && ck.hi[1] > 0 && ck.hi[1] <= ck.res[1]);
    assert_true(fabs(ck.res[1] - (RES_ABS_CPU_US + RES_REL * 60)) < 0.2);
    /* The latency condition has a margin of its own (auto's / 1.05): no
     * resolution on top of it. */
    assert_true(ck.res[0] == 0);
    assert_int_equal(ck.v, V_MISS);
    /* Above the bound by more than the resolution: decided false. */
    for (int i = 0; i < 200; ++i)
        r->figs[C][i].v[VM_CPU] += 5;
    check_eval(&ck, figs(r), 200, r->scratch);
    assert_true(ck.lo[1] > ck.res[1]);
    assert_int_equal(ck.v, V_PASS);
    for (int i = 0; i < 200; ++i) {
        r->figs[C][i].v[VM_CPU] = r->figs[A][i].v[VM_CPU] + noise(r, 1);
        r->figs[C][i].v[VM_LAT] = r->figs[A][i].v[VM_LAT] + noise(r, 1);
    }
    check_eval(&ck, figs(r), 200, r->scratch);
    assert_true(ck.lo[0] > 0);
    assert_int_equal(ck.v, V_PASS);
    rounds_free(r);
}

/* Goal e's check of the given kind ("latency" or "CPU"). */
static vcheck e_check(const char *kind) {
    goal_cell gc = {.command_us = 1000};
    for (int q = 0; q < NSTRAT; ++q)
        gc.on[q] = true;
    vcheck ck[MAX_CHECKS];
    int n = goal_checks(&gc, ck, MAX_CHECKS), ne = 0;
    for (int i = 0; i < n; ++i)
        ne += ck[i].goal == 'e';
    assert_int_equal(ne, 2);
    for (int i = 0; i < n; ++i)
        if (ck[i].goal == 'e' && ck[i].best_of && strstr(ck[i].what, kind))
            return ck[i];
    fail_msg("no %s check of goal e", kind);
    return ck[0];
}

/* Goal e: auto-latency against the fixed strategy of the lowest added
 * latency over the first rounds, kept from then on. */
static void goal_e_best_fixed(void **state) {
    (void)state;
    rounds *r = rounds_new();
    const int L = S_AUTO_LATENCY, P = CW_STRATEGY_POLL;
    for (int i = 0; i < 30; ++i) {
        set(r, B, i, 100 + noise(r, 2), 20 + noise(r, 1));
        set(r, P, i, 10 + noise(r, 1), 40 + noise(r, 1));   /* the quickest */
        set(r, L, i, 10.5 + noise(r, 1), 45 + noise(r, 1)); /* near it, 1.125x its CPU */
    }
    vcheck cpu = e_check("CPU"), lat = e_check("latency");
    check_eval(&cpu, figs(r), 30, r->scratch);
    check_eval(&lat, figs(r), 30, r->scratch);
    assert_int_equal(cpu.cond[0].t[1].strat, P);
    assert_int_equal(lat.cond[0].t[1].strat, P);
    assert_non_null(strstr(cpu.what, "poll's"));
    assert_int_equal(cpu.v, V_PASS);
    assert_int_equal(lat.v, V_PASS);
    /* Poll's CPU falls to 30: 45 is over 1.2x the best's: MISS. */
    for (int i = 0; i < 30; ++i)
        r->figs[P][i].v[VM_CPU] = 30 + noise(r, 1);
    check_eval(&cpu, figs(r), 30, r->scratch);
    assert_int_equal(cpu.v, V_MISS);
    /* Chosen, the best stays: blocking turning quicker changes nothing. */
    for (int i = 0; i < 30; ++i)
        r->figs[B][i].v[VM_LAT] = 5;
    check_eval(&lat, figs(r), 30, r->scratch);
    assert_int_equal(lat.cond[0].t[1].strat, P);
    /* A new check, before its sixth round, chooses again: blocking. */
    vcheck fresh = e_check("latency");
    check_eval(&fresh, figs(r), 4, r->scratch);
    assert_int_equal(fresh.cond[0].t[1].strat, B);
    assert_non_null(strstr(fresh.what, "blocking's"));
    rounds_free(r);
}

/* A block's figures: the median latency, the CPU mean without its largest. */
static void block_figures(void **state) {
    (void)state;
    sample s[5] = {{.cpu_us = 10, .latency_us = 12, .wait_cpu_us = 1, .wait_wall_us = 10},
                   {.cpu_us = 12, .latency_us = 5000, .wait_cpu_us = 1, .wait_wall_us = 10},
                   {.cpu_us = 11, .latency_us = 11, .wait_cpu_us = 1, .wait_wall_us = 10},
                   {.cpu_us = 900, .latency_us = 13, .wait_cpu_us = 1, .wait_wall_us = 10},
                   {.cpu_us = 13, .latency_us = 4000, .wait_cpu_us = 1, .wait_wall_us = 10}};
    for (int i = 0; i < 5; ++i)
        s[i].kernel_us = 40000;
    round_fig f;
    round_figures(s, 5, &f);
    assert_true(f.ran);
    assert_true(fabs(f.v[VM_LAT] - 13) < 1e-9);
    assert_true(fabs(f.v[VM_CPU] - 11.5) < 1e-9);
    assert_true(fabs(f.v[VM_CPS] - 0.1) < 1e-9);
    assert_true(fabs(f.v[VM_CMDB] - 200) < 1e-9); /* 0.5% of 40 ms */
}

/* The same seed draws the same models; another seed others. */
static void sweep_same_seed_same_models(void **state) {
    (void)state;
    int differ = 0;
    for (int i = 0; i < 40; ++i) {
        sweep_draw a, b, c;
        sweep_draw_model(20261204, i, &a);
        sweep_draw_model(20261204, i, &b);
        sweep_draw_model(20261205, i, &c);
        assert_string_equal(a.spec, b.spec);
        assert_string_equal(a.kernel, b.kernel);
        assert_int_equal(a.cpus, b.cpus);
        differ += strcmp(a.spec, c.spec) != 0;
    }
    assert_true(differ >= 38);
}

/* Every draw is a model the layer accepts, each parameter within its
 * documented range, with a kernel and a configuration of the sweep's. */
static void sweep_draws_are_valid_models(void **state) {
    (void)state;
    int timer = 0, late = 0, waits[4] = {0}, fails[4] = {0}, kernels[SWEEP_NKERNELS] = {0};
    for (unsigned long seed = 1; seed <= 25; ++seed)
        for (int i = 0; i < 40; ++i) {
            sweep_draw d;
            sweep_draw_model(seed * 2654435761u, i, &d);
            dm_config cfg;
            char msg[256] = "";
            if (dm_config_parse(d.spec, &cfg, msg, sizeof msg) != 0)
                fail_msg("%s: %s", d.spec, msg);
            assert_true(cfg.callback_delay_us >= 0 && cfg.callback_delay_us <= SWEEP_MAX_DELAY_US);
            assert_true(cfg.jitter_us >= 0 && cfg.jitter_us <= SWEEP_MAX_DELAY_US);
            assert_true(cfg.stall_us >= 0 && cfg.stall_us <= 100000000L);
            assert_true(cfg.kernel_us >= 0 && cfg.kernel_us <= 100000000L);
            if (cfg.wait == DM_WAIT_SPINBLOCK)
                assert_true(cfg.spin_us >= 1 && cfg.spin_us <= 100000000L);
            int k = -1;
            for (int q = 0; q < SWEEP_NKERNELS; ++q)
                if (!strcmp(d.kernel, sweep_kernels[q]))
                    k = q;
            assert_true(k >= 0);
            assert_true(d.cpus == 0 || d.cpus == 1);
            kernels[k]++;
            timer += cfg.device == DM_DEVICE_TIMER;
            late += cfg.callback_delay_us > 0;
            waits[cfg.wait]++;
            fails[cfg.failed]++;
        }
    /* 1000 draws reach every value of every choice. */
    assert_true(timer > 0 && timer < 1000 && late > 0 && late < 1000);
    for (int q = 0; q < 4; ++q)
        assert_true(waits[q] > 0 && fails[q] > 0);
    for (int q = 0; q < SWEEP_NKERNELS; ++q)
        assert_true(kernels[q] > 0);
}

static const struct CMUnitTest bench_verdict[] = {
    cmocka_unit_test(interval_by_hand),
    cmocka_unit_test(an_outlier_changes_nothing),
    cmocka_unit_test(pass_when_wholly_below),
    cmocka_unit_test(miss_when_wholly_above),
    cmocka_unit_test(undecided_across_the_bound),
    cmocka_unit_test(decided_as_rounds_are_added),
    cmocka_unit_test(to_decide_by_hand),
    cmocka_unit_test(out_of_reach_by_hand),
    cmocka_unit_test(to_decide_comes_true),
    cmocka_unit_test(pairs_need_both),
    cmocka_unit_test(goal_c_beaten_or_not),
    cmocka_unit_test(goals_per_cell),
    cmocka_unit_test(equal_within_the_resolution),
    cmocka_unit_test(goal_e_best_fixed),
    cmocka_unit_test(block_figures),
    cmocka_unit_test(sweep_same_seed_same_models),
    cmocka_unit_test(sweep_draws_are_valid_models),
};

CW_TEST_MAIN(bench_verdict, NULL, NULL)
