/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: the goals' checks of one cell and their verdicts.
 *
 * A check compares strategies on paired, interleaved samples: the pair unit
 * is a round, in which every strategy still running ran one block of
 * launches in a random order (child.c), so drift on a shared machine hits
 * both sides of a pair alike. Each goal's bound is linear in the means
 * (blocking's x 1.05 + 2 us, 0.10x blocking's, ...), so a condition is a
 * linear form of the strategies' figures that must be <= 0; per round the
 * form's value is one paired difference, and the check's interval is the
 * distribution-free 95% interval of the median of those differences (the
 * sign test's: two order statistics). bench/README.md says why neither a
 * t interval nor a bootstrap of the mean.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char *const verdict_names[3] = {"UNDECIDED", "PASS", "MISS"};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Ranks worked out so far, by n (0: not yet; else the rank plus one; one
 * thread evaluates a process's checks): every round evaluates every check
 * of its cell, each on as many pairs as rounds, so without them the ranks
 * cost more CPU than the cell's waits. */
#define RANK_MEMO 8192
static int rank_memo[RANK_MEMO];

int sign_test_rank(int n) {
    /* The largest k with P(X <= k - 1) <= 2.5%, X ~ Binomial(n, 1/2): then
     * the k-th smallest and the k-th largest of n values bound their median
     * with at least 95%. The terms P(X = i) follow one another by the
     * factor (n - i + 1) / i, summed in log space (2^-n underflows for n of
     * a thousand and more). */
    if (n < 0)
        return 0;
    if (n < RANK_MEMO && rank_memo[n])
        return rank_memo[n] - 1;
    int k = 0;
    double log_term = -n * M_LN2, cdf = 0;
    while (k < n / 2) {
        cdf += exp(log_term); /* P(X <= k) */
        if (cdf > 0.025)
            break;
        ++k;
        log_term += log((double)(n - k + 1) / k);
    }
    if (n < RANK_MEMO)
        rank_memo[n] = k + 1;
    return k;
}

int median_interval(double *d, int n, double *median, double *lo, double *hi) {
    *median = *lo = *hi = NAN;
    if (n < 1)
        return -1;
    qsort(d, (size_t)n, sizeof *d, cmp_double);
    *median = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
    int k = sign_test_rank(n);
    if (k < 1)
        return -1;
    *lo = d[k - 1];
    *hi = d[n - k];
    return 0;
}

static double cond_value(const vcond *c, const round_fig *const *figs, int r, bool *ran) {
    double v = c->c;
    *ran = true;
    for (int t = 0; t < c->nterm; ++t) {
        const round_fig *f = &figs[c->t[t].strat][r];
        if (!f->ran) {
            *ran = false;
            return NAN;
        }
        v += c->t[t].coef * f->v[c->t[t].metric];
    }
    return v;
}

static const double res_abs[VM_COUNT] = {RES_ABS_LAT_US, RES_ABS_CPU_US, RES_ABS_CPS, 0};

/* Goal e's CPU check: the strategy of ck->best_of with the lowest median
 * added latency over the rounds so far becomes the second term. */
static void pick_best(vcheck *ck, const round_fig *const *figs, int nrounds, double *scratch) {
    double best = INFINITY;
    int at = -1;
    for (int s = 0; s < NSTRAT; ++s) {
        if (!(ck->best_of & (1u << s)))
            continue;
        int n = 0;
        for (int r = 0; r < nrounds; ++r)
            if (figs[s][r].ran && isfinite(figs[s][r].v[VM_LAT]))
                scratch[n++] = figs[s][r].v[VM_LAT];
        double m = n ? median_of(scratch, (size_t)n) : INFINITY;
        if (m < best)
            best = m, at = s;
    }
    if (at < 0)
        return;
    ck->cond[0].t[1].strat = at;
    snprintf(ck->what + ck->best_at, sizeof ck->what - (size_t)ck->best_at, "%s's",
             strategy_name(at));
}

void check_eval(vcheck *ck, const round_fig *const *figs, int nrounds, double *scratch) {
    bool decided_true[2] = {false, false}, decided_false[2] = {false, false};
    ck->pairs = 0;
    /* The best fixed strategy is chosen over the rounds that every
     * strategy runs (MIN_ROUNDS_DROP), then kept: a choice that flipped
     * between two near-equal strategies would pair each round with
     * another one. */
    if (ck->best_of && ck->best_rounds < MIN_ROUNDS_DROP) {
        pick_best(ck, figs, nrounds, scratch);
        ck->best_rounds = nrounds;
    }
    for (int k = 0; k < ck->ncond; ++k) {
        const vcond *c = &ck->cond[k];
        /* The bound per round: the condition without its first term. */
        int n = 0;
        for (int r = 0; r < nrounds; ++r) {
            bool ran;
            double v = cond_value(c, figs, r, &ran);
            if (ran && isfinite(v)) {
                const round_fig *f = &figs[c->t[0].strat][r];
                scratch[n++] = fabs(v - c->t[0].coef * f->v[c->t[0].metric]);
            }
        }
        double bound = n ? median_of(scratch, (size_t)n) : 0;
        ck->res[k] = c->equal_ok ? res_abs[c->t[0].metric] + RES_REL * bound : 0;
        n = 0;
        for (int r = 0; r < nrounds; ++r) {
            bool ran;
            double v = cond_value(c, figs, r, &ran);
            if (ran && isfinite(v))
                scratch[n++] = v;
        }
        ck->pairs = n;
        median_interval(scratch, n, &ck->est[k], &ck->lo[k], &ck->hi[k]);
        /* Wholly on one side of the bound, give or take the resolution:
         * the condition (value <= 0) is decided true or false. */
        decided_true[k] = isfinite(ck->hi[k]) && ck->hi[k] <= ck->res[k];
        decided_false[k] = isfinite(ck->lo[k]) && ck->lo[k] > ck->res[k];
    }
    if (ck->ncond == 1) {
        /* A requirement: it holds when its condition does. */
        ck->v = decided_true[0] ? V_PASS : decided_false[0] ? V_MISS : V_UNDECIDED;
    } else {
        /* Not beaten: the other strategy beats the judged one when both
         * conditions hold; one of them decided false settles it. */
        ck->v = decided_false[0] || decided_false[1] ? V_PASS
                : decided_true[0] && decided_true[1] ? V_MISS
                                                     : V_UNDECIDED;
    }
}

/* Condition k's leaning (true: toward decided true) and the pairs at which
 * its interval would leave the bound: the half of it that faces the bound
 * shrinks as 1/sqrt(pairs) until it is shorter than the median's distance
 * from the bound. INFINITY on the bound. */
static double cond_to_decide(const vcheck *ck, int k, bool *leans_true) {
    double m = ck->est[k], lo = ck->lo[k], hi = ck->hi[k], r = ck->res[k], n = ck->pairs;
    *leans_true = m <= r;
    if (!isfinite(m) || !isfinite(lo) || !isfinite(hi) || m == r || n <= 0)
        return INFINITY;
    double half = m > r ? m - lo : hi - m, dist = fabs(m - r);
    double need = n * (half / dist) * (half / dist);
    return need > n ? need : n;
}

double check_to_decide(const vcheck *ck, verdict *lean) {
    bool t0, t1;
    double n0 = cond_to_decide(ck, 0, &t0);
    *lean = V_UNDECIDED;
    if (ck->ncond == 1) {
        if (isfinite(n0))
            *lean = t0 ? V_PASS : V_MISS;
        return n0;
    }
    /* Not beaten: either condition decided false passes it, both true miss
     * it (check_eval). */
    double n1 = cond_to_decide(ck, 1, &t1);
    double pass = INFINITY;
    if (!t0)
        pass = n0;
    if (!t1 && n1 < pass)
        pass = n1;
    if (isfinite(pass)) {
        *lean = V_PASS;
        return pass;
    }
    if (t0 && t1 && isfinite(n0) && isfinite(n1)) {
        *lean = V_MISS;
        return n0 > n1 ? n0 : n1;
    }
    return INFINITY;
}

bool checks_out_of_reach(const vcheck *ck, int n, int rounds, double round_s, double elapsed_s,
                         double budget_s) {
    double left_s = budget_s - elapsed_s;
    /* Where no round fits, the budget itself ends the cell. */
    if (rounds < OUT_OF_REACH_ROUNDS || !(round_s > 0) || left_s <= round_s ||
        elapsed_s < OUT_OF_REACH_SPENT * budget_s)
        return false;
    bool any = false;
    for (int q = 0; q < n; ++q) {
        if (ck[q].v != V_UNDECIDED)
            continue;
        any = true;
        verdict lean;
        double more = (check_to_decide(&ck[q], &lean) - ck[q].pairs) * round_s;
        if (!(more > OUT_OF_REACH_FACTOR * left_s))
            return false;
    }
    return any;
}

static vcond cond2(int s1, int m1, double c1, int s2, int m2, double c2, double k) {
    vcond c = {.nterm = 2, .c = k};
    c.t[0] = (vterm){s1, m1, c1};
    c.t[1] = (vterm){s2, m2, c2};
    return c;
}

static vcheck *add(vcheck *out, int *n, int max, char goal, int strat, const char *fmt,
                   const char *sname) {
    if (*n >= max)
        return NULL;
    vcheck *ck = &out[(*n)++];
    memset(ck, 0, sizeof *ck);
    ck->goal = goal;
    ck->strat = strat;
    snprintf(ck->what, sizeof ck->what, fmt, sname);
    return ck;
}

int goal_checks(const goal_cell *gc, vcheck *out, int max) {
    int n = 0;
    const int B = CW_STRATEGY_BLOCKING, A = CW_STRATEGY_AUTO, C = CW_STRATEGY_COOPERATIVE,
              L = S_AUTO_LATENCY;
    vcheck *ck;
    if (gc->pocl3 && gc->on[B]) {
        /* Goal a: the real driver, unchanged. */
        const int judged[] = {A, C};
        for (int i = 0; i < 2; ++i) {
            int s = judged[i];
            if (!gc->on[s])
                continue;
            const char *nm = strategy_name(s);
            if ((ck =
                     add(out, &n, max, 'a', s, "%s added latency <= blocking's x 1.05 + 2 us", nm)))
                ck->ncond = 1, ck->cond[0] = cond2(s, VM_LAT, 1, B, VM_LAT, -1.05, -2);
            if (gc->command_us < GOAL_LONG_US) {
                if ((ck = add(out, &n, max, 'a', s, "%s CPU per launch <= blocking's x 1.05", nm)))
                    ck->ncond = 1, ck->cond[0] = cond2(s, VM_CPU, 1, B, VM_CPU, -1.05, 0);
            } else if ((ck = add(out, &n, max, 'a', s,
                                 "%s CPU per second waited <= blocking's + 0.5 ms/s", nm))) {
                ck->ncond = 1, ck->cond[0] = cond2(s, VM_CPS, 1, B, VM_CPS, -1, -0.0005);
            }
        }
    }
    if (gc->nvidia && gc->on[B] && gc->on[A]) {
        /* Goal b: a spinning driver wait, late callbacks, a timer device. */
        if (gc->latency_kernel) {
            if ((ck = add(out, &n, max, 'b', A, "%s added latency <= blocking's x 1.05", "auto")))
                ck->ncond = 1, ck->cond[0] = cond2(A, VM_LAT, 1, B, VM_LAT, -1.05, 0);
            if ((ck = add(out, &n, max, 'b', A, "%s CPU per launch <= blocking's", "auto"))) {
                ck->ncond = 1, ck->cond[0] = cond2(A, VM_CPU, 1, B, VM_CPU, -1, 0);
                ck->cond[0].equal_ok = true;
            }
        } else if (gc->command_us >= GOAL_B_MIN_US) {
            if ((ck = add(out, &n, max, 'b', A, "%s CPU per launch <= blocking's x 0.10", "auto")))
                ck->ncond = 1, ck->cond[0] = cond2(A, VM_CPU, 1, B, VM_CPU, -0.10, 0);
            if ((ck = add(out, &n, max, 'b', A,
                          "%s added latency <= max(100 us, 0.5%% of the command)", "auto")))
                ck->ncond = 1, ck->cond[0] = cond2(A, VM_LAT, 1, A, VM_CMDB, -1, 0);
        }
    }
    if (gc->on[A]) {
        /* Goal c: no fixed strategy beats auto with a margin. */
        for (int s = 0; s < NSTRAT; ++s) {
            if (!strategy_fixed(s) || !gc->on[s])
                continue;
            const char *nm = strategy_name(s);
            if ((ck = add(out, &n, max, 'c', s,
                          "%s: not both latency <= auto's / 1.05 and CPU <= auto's", nm))) {
                ck->ncond = 2;
                ck->cond[0] = cond2(s, VM_LAT, 1, A, VM_LAT, -1 / 1.05, 0);
                ck->cond[1] = cond2(s, VM_CPU, 1, A, VM_CPU, -1, 0);
                ck->cond[1].equal_ok = true;
            }
            if ((ck = add(out, &n, max, 'c', s,
                          "%s: not both CPU <= auto's / 1.2 and latency <= auto's", nm))) {
                ck->ncond = 2;
                ck->cond[0] = cond2(s, VM_CPU, 1, A, VM_CPU, -1 / 1.2, 0);
                ck->cond[1] = cond2(s, VM_LAT, 1, A, VM_LAT, -1, 0);
                ck->cond[1].equal_ok = true;
            }
        }
    }
    if (gc->on[L]) {
        /* Goal e: auto with its latency preference near the best fixed
         * strategy's added latency, at a CPU near that strategy's. Below
         * every fixed strategy's bound is below the best's. */
        unsigned fixed = 0;
        for (int s = 0; s < NSTRAT; ++s)
            if (strategy_fixed(s) && gc->on[s])
                fixed |= 1u << s;
        int first = fixed ? __builtin_ctz(fixed) : 0;
        static const char *const what[2] = {
            "auto-latency added latency <= x 1.05 + 2 us of the best fixed strategy, ",
            "auto-latency CPU per launch <= 1.2x of the best fixed strategy, "};
        for (int i = 0; i < 2 && fixed; ++i) {
            if (!(ck = add(out, &n, max, 'e', L, "%s", what[i])))
                break;
            ck->best_of = fixed;
            ck->best_at = (int)strlen(ck->what);
            snprintf(ck->what + ck->best_at, sizeof ck->what - (size_t)ck->best_at, "%s's",
                     strategy_name(first));
            ck->ncond = 1;
            ck->cond[0] = i ? cond2(L, VM_CPU, 1, first, VM_CPU, -1.2, 0)
                            : cond2(L, VM_LAT, 1, first, VM_LAT, -1.05, -2);
        }
    }
    if (gc->nvidia && gc->on[A] && !gc->latency_kernel && gc->command_us >= GOAL_F_MIN_US) {
        /* Goal f: late callbacks near the limit, from the first launch on
         * a queue whose earlier command had the same length. */
        const int series[2] = {F_FIRST, F_FIRST_1S};
        const char *const len[2] = {"", " (1 s commands)"};
        for (int i = 0; i < 1 + gc->first_1s; ++i) {
            int f = series[i];
            if ((ck = add(out, &n, max, 'f', A,
                          "auto, first launch: added latency <= max(100 us, 0.5%% of the "
                          "command)%s",
                          len[i])))
                ck->ncond = 1, ck->cond[0] = cond2(f, VM_LAT, 1, f, VM_CMDB, -1, 0);
            if ((ck = add(out, &n, max, 'f', A,
                          "auto, first launch: CPU per second waited <= 0.005 s/s%s", len[i]))) {
                ck->ncond = 1;
                ck->cond[0] = (vcond){.nterm = 1, .c = -GOAL_F_CPS};
                ck->cond[0].t[0] = (vterm){f, VM_CPS, 1};
            }
        }
    }
    return n;
}

/* A block's mean without its largest value (blocks of 3 or more), for CPU
 * time: a thread's CPU clock does not run while it is preempted, so most
 * of its spread is the strategy's own and stays in; the one value dropped
 * takes out a rare interference (a page fault, a cold cache after another
 * process ran) that moves a block's mean by more than the goals' margin. */
static double trimmed_mean(const sample *s, unsigned n, size_t off) {
    double sum = 0, top = -INFINITY;
    unsigned k = 0;
    for (unsigned i = 0; i < n; ++i) {
        double v = *(const double *)((const char *)&s[i] + off);
        if (!isfinite(v))
            continue;
        sum += v;
        top = v > top ? v : top;
        ++k;
    }
    if (k == 0)
        return NAN;
    return k >= 3 ? (sum - top) / (k - 1) : sum / k;
}

/* A block's median, for added latency: a wall-clock figure, which any
 * wake-up that another process's load delays stretches by up to
 * milliseconds, whatever the strategy (on the shared machine of the kept
 * runs, a few percent of launches); the median of a block of 5 stays put
 * unless 3 of its 5 launches are hit. */
static double block_median(const sample *s, unsigned n) {
    double buf[64], *v = n <= 64 ? buf : malloc(sizeof(double) * n);
    if (!v)
        die("out of memory");
    unsigned k = 0;
    for (unsigned i = 0; i < n; ++i)
        if (isfinite(s[i].latency_us))
            v[k++] = s[i].latency_us;
    double m = k ? median_of(v, k) : NAN;
    if (v != buf)
        free(v);
    return m;
}

void round_figures(const sample *s, unsigned n, round_fig *f) {
    double wc = 0, ww = 0, cmd = 0;
    for (unsigned i = 0; i < n; ++i) {
        wc += s[i].wait_cpu_us;
        ww += s[i].wait_wall_us;
        cmd += s[i].kernel_us;
    }
    f->ran = n > 0;
    f->v[VM_LAT] = block_median(s, n);
    f->v[VM_CPU] = trimmed_mean(s, n, offsetof(sample, cpu_us));
    f->v[VM_CPS] = ww > 0 ? wc / ww : NAN;
    double c = n ? cmd / n : NAN;
    f->v[VM_CMDB] = 0.005 * c > 100 ? 0.005 * c : 100;
}
