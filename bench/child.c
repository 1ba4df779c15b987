/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: the child's launch loop. A child runs pinned to one CPU
 * configuration (the parent set its affinity and the runtime's worker count
 * before exec), measures the floor, then runs every kernel with every
 * selected strategy, interleaved block by block, and sends a summary record
 * per (kernel, strategy) to the parent.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

void child_error(child *c, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s: %s\n", prog, c->label, msg);
    proto_error(c->out, msg);
}

static cl_int enqueue(child *c, const kernel_spec *k, cl_event *ev) {
    if (k->kind == K_BUSY)
        return cwh_busy_enqueue(&c->h, &c->busy, k->iters, 0, NULL, ev);
    if (k->kind == K_LATENCY) {
        cl_int err = cwh_latency_enqueue(&c->h, &c->latency, 0, NULL, ev);
        c->latency_launches += err == CL_SUCCESS;
        return err;
    }
    float a = (c->saxpy_launches & 1u) ? -0.5f : 0.5f;
    cl_int err = cwh_saxpy_enqueue(&c->h, &c->saxpy, a, 0, NULL, ev);
    c->saxpy_launches += err == CL_SUCCESS;
    return err;
}

/* The host clock that event profiling's timestamps are in: PoCL takes
 * them from CLOCK_MONOTONIC_RAW, other drivers may use CLOCK_MONOTONIC.
 * Found on the first launch: the clock in which the command was queued
 * between the reads before and after its enqueue (the two clocks differ by
 * the NTP's slew since boot, seconds on a long-running host). */
static int profiling_clock(const child *c, cl_event ev, const struct timespec before[2],
                           const struct timespec after[2]) {
    (void)c;
    cl_ulong queued = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL) !=
        CL_SUCCESS)
        return -1;
    static const clockid_t ids[2] = {CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC};
    for (int i = 0; i < 2; ++i)
        if ((int64_t)queued >= ts_ns(&before[i]) && (int64_t)queued <= ts_ns(&after[i]))
            return (int)ids[i];
    return -1;
}

static long nvcsw(void) {
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : 0;
}

int launch(child *c, const kernel_spec *k, cw_strategy s, sample *out) {
    /* auto-latency is auto asked, by its flag, to prefer a short added
     * latency. */
    cw_wait_options wo = {.strategy = s == S_AUTO_LATENCY ? CW_STRATEGY_AUTO : s,
                          .flags = s == S_AUTO_LATENCY ? CW_WAIT_LATENCY : 0u,
                          .spin_us = (uint32_t)c->o->spin_us};
    struct timespec c0, w0, w1, c1, wc0, ww0, before[2], ret[2];
    cl_event ev = NULL;
    /* On the strategy's own queue (child_open); the kernel helpers enqueue
     * on the host's. */
    cl_command_queue shared = c->h.queue;
    c->h.queue = c->queues[s];
    /* Wake-ups: the thread's voluntary context switches from before the
     * enqueue to after the wait, read outside the timed span (a getrusage
     * call costs about as much CPU as a short wait). */
    long sw0 = nvcsw();
    clock_gettime(CLOCK_MONOTONIC_RAW, &before[0]);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &w0);
    before[1] = w0;
    cl_int err = enqueue(c, k, &ev);
    c->h.queue = shared;
    int rc = CW_OK;
    cl_int st = CL_SUCCESS;
    /* The wait alone, too: its CPU over its wall is what waiting costs per
     * second, the figure a spinning driver's wait puts at 1. */
    clock_gettime(CLOCK_MONOTONIC, &ww0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &wc0);
    if (err == CL_SUCCESS)
        rc = cw_wait(ev, &wo, &st);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    clock_gettime(CLOCK_MONOTONIC_RAW, &ret[0]);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    long sw1 = nvcsw();
    ret[1] = w1;
    if (err != CL_SUCCESS) {
        child_error(c, "%s: enqueue failed: OpenCL error %d", k->name, err);
        return -1;
    }
    if (rc != CW_OK) {
        child_error(c, "%s: cw_wait(%s) failed: %s (OpenCL status %d)", k->name, strategy_name(s),
                    cw_strerror(rc), st);
        clFinish(c->queues[s]);
        clReleaseEvent(ev);
        return -1;
    }
    cl_ulong kns = 0;
    /* A timer-driven device's event is a marker's: the run time is the
     * model's, which the bench set. */
    err = k->timer_us > 0 ? (kns = (cl_ulong)(k->timer_us * 1e3), CL_SUCCESS)
                          : cwh_event_runtime_ns(ev, &kns);
    /* The command's end as the driver recorded it (under a timer-driven
     * device, the marker's, which ends when the model's timer completes
     * the command), in the host clock found on the first launch. */
    if (c->prof_clock == 0)
        c->prof_clock = profiling_clock(c, ev, before, ret);
    cl_ulong end_ns = 0;
    double latency = NAN;
    if (c->prof_clock > 0 &&
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end_ns, &end_ns, NULL) ==
            CL_SUCCESS &&
        end_ns > 0)
        latency = (double)(ts_ns(&ret[c->prof_clock == (int)CLOCK_MONOTONIC_RAW ? 0 : 1]) -
                           (int64_t)end_ns) /
                  1e3;
    clReleaseEvent(ev);
    if (err != CL_SUCCESS) {
        child_error(c, "%s: event profiling failed: OpenCL error %d", k->name, err);
        return -1;
    }
    if (out) {
        out->cpu_us = (double)(ts_ns(&c1) - ts_ns(&c0)) / 1e3;
        out->wall_us = (double)(ts_ns(&w1) - ts_ns(&w0)) / 1e3;
        out->kernel_us = (double)kns / 1e3;
        out->wait_cpu_us = (double)(ts_ns(&c1) - ts_ns(&wc0)) / 1e3;
        out->wait_wall_us = (double)(ts_ns(&w1) - ts_ns(&ww0)) / 1e3;
        out->latency_us = latency;
        out->wakeups = (double)(sw1 - sw0);
    }
    return 0;
}

static void stats_vector(const cw_stats *s, const cw_stats_auto *a, uint64_t v[NSTATS]) {
    uint64_t head[8] = {s->waits,  s->spins, s->yields,   s->parks,
                        s->sleeps, s->polls, s->timeouts, s->latency_count};
    memcpy(v, head, sizeof head);
    for (int b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
        v[8 + b] = s->latency_us[b];
    uint64_t dec[NSTATS_AUTO] = {a->unchecked_waits, a->deferred_checks,       a->checks,
                                 a->hybrid_waits,    a->hybrid_callback_first, a->late_callbacks,
                                 a->driver_waits};
    memcpy(v + AUTO_BASE, dec, sizeof dec);
}

/* --stats, at the end of a config: what cw learned of its platform. */
static void send_learned(child *c) {
    cw_stats_auto a;
    memset(&a, 0, sizeof a);
    cw_stats_auto_get(&a, sizeof a);
    uint64_t v[NLEARNED] = {
        a.platforms_probed, a.platforms_failed_fire, a.platforms_failed_silent, a.platforms_late,
        a.lateness_ns,      a.lateness_samples,      a.platforms_driver_wait};
    proto_learned(c->out, v);
}

/* The timed samples of one cell, per strategy, grown a round at a time. */
typedef struct cell_samples {
    sample *s[NSTRAT];
    unsigned n[NSTRAT], cap[NSTRAT]; /* per strategy (index into the selected ones) */
    uint64_t counts[NSTRAT][NSTATS];
    round_fig *figs[NFIG]; /* per series (cw_strategy, F_*), per round: the block's figures */
    double *scratch;
    int rounds, round_cap;
} cell_samples;

static void *grow(void *p, size_t size) {
    void *q = realloc(p, size);
    if (!q)
        die("out of memory");
    return q;
}

static void reserve(cell_samples *cs, int j, unsigned need) {
    if (need <= cs->cap[j])
        return;
    unsigned cap = cs->cap[j] ? cs->cap[j] : 256;
    while (cap < need)
        cap *= 2;
    cs->s[j] = grow(cs->s[j], sizeof(sample) * cap);
    cs->cap[j] = cap;
}

/* Makes room for round cs->rounds, every strategy marked as not run in it. */
static void new_round(cell_samples *cs) {
    if (cs->rounds == cs->round_cap) {
        int cap = cs->round_cap ? cs->round_cap * 2 : 64;
        for (int s = 0; s < NFIG; ++s)
            cs->figs[s] = grow(cs->figs[s], sizeof(round_fig) * (size_t)cap);
        cs->scratch = grow(cs->scratch, sizeof(double) * (size_t)cap);
        cs->round_cap = cap;
    }
    for (int s = 0; s < NFIG; ++s)
        cs->figs[s][cs->rounds].ran = false;
}

/* Sends one R record (and S with --stats) per strategy. */
static void send_results(child *c, const kernel_spec *k, const cw_strategy *strat, int ns,
                         const cell_samples *cs, bool ok, size_t bad) {
    for (int j = 0; j < ns; ++j) {
        unsigned n = cs->n[j];
        double *v = malloc(sizeof(double) * (n ? n : 1));
        if (!v)
            die("out of memory");
        double st[M_COUNT][S_COUNT];
        for (int m = 0; m < M_COUNT; ++m) {
            size_t nv = 0;
            for (unsigned i = 0; i < n; ++i) {
                const sample *p = &cs->s[j][i];
                double x = m == M_CPU         ? p->cpu_us
                           : m == M_WALL      ? p->wall_us
                           : m == M_KERNEL    ? p->kernel_us
                           : m == M_WAIT_CPU  ? p->wait_cpu_us
                           : m == M_WAIT_WALL ? p->wait_wall_us
                           : m == M_LATENCY   ? p->latency_us
                           : m == M_WAKEUPS   ? p->wakeups
                                              : p->wall_us - p->kernel_us;
                if (isfinite(x))
                    v[nv++] = x;
            }
            summarize(v, nv, st[m]);
        }
        proto_result(c->out, k->name, strategy_name(strat[j]), n, ok, bad, st);
        if (c->o->stats)
            proto_stats(c->out, k->name, strategy_name(strat[j]), cs->counts[j]);
        free(v);
    }
}

/* The goals that apply to this cell: the model comes from the parent
 * (CW_BENCH_MODEL); goal a is the real driver's alone (plain pocl3), goal b
 * the nvidia preset's as it is. */
static void cell_goals(const child *c, const kernel_spec *k, goal_cell *gc) {
    memset(gc, 0, sizeof *gc);
    const char *model = getenv("CW_BENCH_MODEL");
    if (!model)
        model = "pocl3";
    gc->pocl3 = !strcmp(model, "pocl3");
    gc->nvidia = !strcmp(model, "nvidia");
    gc->latency_kernel = k->kind == K_LATENCY;
    gc->command_us = k->timer_us > 0 ? k->timer_us : k->nominal_us;
    for (int s = 0; s < NSTRAT; ++s)
        gc->on[s] = c->o->strategy_on[s];
    /* Goal f's 1 s commands ride in the cell of the longest command under
     * 1 s, from 100 ms, where the run has no 1 s command of its own and
     * the device is the model's timer (whose run time the bench sets). */
    bool has_1s = false;
    double longest = 0;
    for (int b = 0; b < c->o->nbusy; ++b) {
        double us = c->o->busy_us[b];
        has_1s |= us >= GOAL_F_LONG_US;
        if (us < GOAL_F_LONG_US && us > longest)
            longest = us;
    }
    gc->first_1s = gc->nvidia && k->kind == K_BUSY && k->timer_us > 0 && !has_1s &&
                   k->target_us >= GOAL_F_MIN_US && k->target_us == longest;
}

/* Goal f's figure of one round: a new queue for auto, one untimed launch
 * of the command on it (the queue's earlier command), then the timed one,
 * the first launch on a queue whose earlier command had its length. The
 * queue is held until the cell ends (release_first_queues), so that the
 * driver cannot hand its handle back for a later round's queue: cw keys
 * what it learns of a queue by the handle, and a handle of the other
 * series (1 s and 100 ms commands alternate) would bring that series'
 * estimate to a queue whose earlier command had another length. */
static int first_launch(child *c, const kernel_spec *k, sample *out) {
    if (c->nfirst == c->first_cap) {
        size_t cap = c->first_cap ? 2 * c->first_cap : 16;
        cl_command_queue *more = realloc(c->first_queues, cap * sizeof *more);
        if (!more) {
            child_error(c, "out of memory");
            return -1;
        }
        c->first_queues = more;
        c->first_cap = cap;
    }
    cl_int err;
    cl_command_queue q =
        clCreateCommandQueue(c->h.context, c->h.device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
        child_error(c, "clCreateCommandQueue: OpenCL error %d", err);
        return -1;
    }
    c->first_queues[c->nfirst++] = q;
    cl_command_queue own = c->queues[CW_STRATEGY_AUTO];
    c->queues[CW_STRATEGY_AUTO] = q;
    int rc = launch(c, k, CW_STRATEGY_AUTO, NULL);
    if (rc == 0)
        rc = launch(c, k, CW_STRATEGY_AUTO, out);
    c->queues[CW_STRATEGY_AUTO] = own;
    return rc;
}

static void release_first_queues(child *c) {
    for (size_t i = 0; i < c->nfirst; ++i)
        clReleaseCommandQueue(c->first_queues[i]);
    c->nfirst = 0;
}

/* Runs one cell: one kernel with every selected strategy, within the cell's
 * time budget. Returns 0 or -1 (reported). */
static int run_cell(child *c, const kernel_spec *k, double max_time) {
    const options *o = c->o;
    double t0 = now_s();
    cw_strategy strat[NSTRAT];
    int ns = selected_strategies(o, strat);
    char param[64];
    if (k->kind == K_BUSY)
        snprintf(param, sizeof param, "iters=%u global=%lu", k->iters, o->busy_global);
    else if (k->kind == K_LATENCY)
        snprintf(param, sizeof param, "global=1");
    else
        snprintf(param, sizeof param, "n=%lu", o->saxpy_n);
    proto_kernel(c->out, k->name, param);

    /* Warm-up: kernel compilation (cache), first launches, every strategy's
     * first use (completion pool, callback thread paths). */
    if (launch(c, k, CW_STRATEGY_BLOCKING, NULL) != 0)
        return -1;
    for (unsigned w = 0; w < k->warmup; ++w)
        for (int j = 0; j < ns; ++j)
            if (launch(c, k, strat[j], NULL) != 0)
                return -1;

    /* The goals' checks decide how long the cell runs: it launches until
     * each is decided (PASS or MISS) or its budget ends, and only the
     * strategies of undecided checks keep launching. A cell without checks
     * runs its launches. */
    goal_cell gc;
    cell_goals(c, k, &gc);
    vcheck checks[MAX_CHECKS];
    int nck = goal_checks(&gc, checks, MAX_CHECKS);
    unsigned cap = nck ? o->launches : k->launches;
    int min_rounds = k->block > 1 ? MIN_ROUNDS_SHORT : MIN_ROUNDS_LONG;

    cell_samples cs;
    memset(&cs, 0, sizeof cs);
    int rc = 0;
    const char *stopped_by = "launches";
    /* Each round runs a block of every strategy, in a new random order each
     * round (a fixed seed, so runs are repeatable): drift and ordering effects
     * hit every strategy alike, and no strategy always follows the same one
     * (after blocking, the same code measured up to 2 us CPU lower). The
     * budget is checked between rounds only. */
    int order[NSTRAT];
    for (int j = 0; j < ns; ++j)
        order[j] = j;
    uint32_t seed = 0x9e3779b9u;
    /* A long cell keeps its first launches whatever --max-time says: one
     * launch of a 1 s kernel per strategy is no mean. */
    unsigned least = k->is_long ? LONG_MIN_LAUNCHES : 1;
    if (least > cap)
        least = cap;
    bool active[NSTRAT];
    for (int j = 0; j < ns; ++j)
        active[j] = true;
    /* Goal f's series of first launches (F_FIRST, F_FIRST_1S), where the
     * cell has checks of them; the 1 s one on a copy of the kernel ten
     * times as long on the model's timer. */
    bool first_on[2] = {false, false};
    for (int q = 0; q < nck; ++q)
        for (int t = 0; t < checks[q].cond[0].nterm; ++t) {
            int f = checks[q].cond[0].t[t].strat;
            if (f == F_FIRST || f == F_FIRST_1S)
                first_on[f - F_FIRST] = true;
        }
    /* Each strategy's block in the last round, and each series of first
     * launches, in seconds: a next round costs those still running. */
    double block_s[NSTRAT] = {0}, first_s[2] = {0, 0}, round_s = 0;
    kernel_spec k1s = *k;
    if (first_on[1]) {
        /* cell_goals: a busy kernel of 100 ms or more on the model's timer. */
        double times = GOAL_F_LONG_US / k->target_us;
        k1s.iters = (unsigned)(k->iters * times + 0.5);
        k1s.timer_us = k->timer_us * times;
        k1s.nominal_us = GOAL_F_LONG_US;
    }
    while (rc == 0) {
        double elapsed = now_s() - t0;
        unsigned done = ~0u; /* the fewest launches among the active strategies */
        int nactive = 0;
        for (int j = 0; j < ns; ++j)
            if (active[j]) {
                done = cs.n[j] < done ? cs.n[j] : done;
                ++nactive;
            }
        if (nactive == 0 && !first_on[0] && !first_on[1]) {
            stopped_by = "decided";
            break;
        }
        if (nactive == 0)
            done = (unsigned)cs.rounds; /* only first launches: a round each */
        bool n_done = done >= cap;
        /* The run's budget cuts a cell only after the rounds its checks
         * need for an interval at all: a cell before it that overran its
         * share would otherwise leave the next one a round or none. */
        bool by_run = max_time < o->max_time;
        if (done >= least && elapsed >= max_time && (!by_run || cs.rounds >= min_rounds)) {
            stopped_by = by_run ? "run-time" : "max-time";
            break;
        }
        if (n_done && elapsed >= o->min_time) {
            stopped_by = done > cap ? "min-time" : "launches";
            break;
        }
        unsigned count = n_done || cap - done >= k->block ? k->block : cap - done;
        for (int j = ns - 1; j > 0; --j) {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            int pick = (int)(seed % (uint32_t)(j + 1)), tmp = order[j];
            order[j] = order[pick];
            order[pick] = tmp;
        }
        new_round(&cs);
        for (int jj = 0; jj < ns && rc == 0; ++jj) {
            int idx = order[jj];
            if (!active[idx])
                continue;
            reserve(&cs, idx, cs.n[idx] + count);
            cw_stats before, after;
            cw_stats_auto abefore, aafter;
            if (o->stats) {
                cw_stats_get(&before);
                cw_stats_auto_get(&abefore, sizeof abefore);
            }
            sample *blk = &cs.s[idx][cs.n[idx]];
            double b0 = now_s();
            for (unsigned m = 0; m < count && rc == 0; ++m)
                rc = launch(c, k, strat[idx], &blk[m]);
            block_s[idx] = now_s() - b0;
            if (o->stats) {
                uint64_t a[NSTATS], b[NSTATS];
                cw_stats_get(&after);
                cw_stats_auto_get(&aafter, sizeof aafter);
                stats_vector(&before, &abefore, b);
                stats_vector(&after, &aafter, a);
                for (int q = 0; q < NSTATS; ++q)
                    cs.counts[idx][q] += a[q] - b[q];
            }
            if (rc == 0) {
                round_figures(blk, count, &cs.figs[strat[idx]][cs.rounds]);
                cs.n[idx] += count;
            }
        }
        for (int f = 0; f < 2 && rc == 0; ++f)
            if (first_on[f]) {
                sample one;
                double f0 = now_s();
                rc = first_launch(c, f ? &k1s : k, &one);
                first_s[f] = now_s() - f0;
                if (rc == 0)
                    round_figures(&one, 1, &cs.figs[F_FIRST + f][cs.rounds]);
            }
        if (rc != 0)
            break;
        cs.rounds++;
        if (nck == 0)
            continue;
        /* Every check on every round so far; the strategies of the checks
         * still undecided run the next round. */
        bool need[NFIG] = {false};
        for (int q = 0; q < nck; ++q) {
            check_eval(&checks[q], (const round_fig *const *)cs.figs, cs.rounds, cs.scratch);
            if (checks[q].v != V_UNDECIDED)
                continue;
            for (int d = 0; d < checks[q].ncond; ++d)
                for (int t = 0; t < checks[q].cond[d].nterm; ++t)
                    need[checks[q].cond[d].t[t].strat] = true;
        }
        if (cs.rounds >= MIN_ROUNDS_DROP) {
            for (int j = 0; j < ns; ++j)
                active[j] = need[strat[j]];
            for (int f = 0; f < 2; ++f)
                first_on[f] &= need[F_FIRST + f];
        }
        /* All decided, but too few rounds to stop: the rest run on. */
        bool any = first_on[0] || first_on[1];
        for (int j = 0; j < ns; ++j)
            any |= active[j];
        if (!any && cs.rounds < min_rounds)
            for (int j = 0; j < ns; ++j)
                active[j] = true;
        round_s = 0;
        for (int j = 0; j < ns; ++j)
            round_s += active[j] ? block_s[j] : 0;
        for (int f = 0; f < 2; ++f)
            round_s += first_on[f] ? first_s[f] : 0;
        /* Checks at their bound take rounds no budget holds: once half
         * its time is spent, stop the cell where none left could be
         * decided within twice the time it has left, so that the run's
         * budget goes to cells where more rounds decide. */
        if (checks_out_of_reach(checks, nck, cs.rounds, round_s, now_s() - t0, max_time)) {
            stopped_by = "out of reach";
            break;
        }
    }
    for (int q = 0; q < nck; ++q) {
        checks[q].to_decide_pairs = 0;
        checks[q].to_decide_s = 0;
        checks[q].lean = checks[q].v;
        if (checks[q].v == V_UNDECIDED) {
            checks[q].to_decide_pairs = check_to_decide(&checks[q], &checks[q].lean);
            checks[q].to_decide_s = (checks[q].to_decide_pairs - checks[q].pairs) * round_s;
        }
    }

    release_first_queues(c);
    /* Verify what the device computed, after every launch of this kernel. */
    size_t bad = 0;
    cl_int err = clFinish(c->h.queue);
    if (err == CL_SUCCESS)
        err = k->kind == K_BUSY ? cwh_busy_check(&c->h, &c->busy, &bad)
              : k->kind == K_LATENCY
                  ? cwh_latency_check(&c->h, &c->latency, c->latency_launches, &bad)
                  : cwh_saxpy_check(&c->h, &c->saxpy, 0.5f, c->saxpy_launches & 1u, &bad);
    bool ok = rc == 0 && err == CL_SUCCESS && bad == 0;
    if (err != CL_SUCCESS)
        child_error(c, "%s: reading the result back failed: OpenCL error %d", k->name, err);
    else if (bad)
        child_error(c, "%s: WRONG RESULT: %zu elements differ", k->name, bad);

    bool profiling_ok = !c->profiling_unusable;
    unsigned most = 0;
    for (int j = 0; j < ns; ++j)
        most = cs.n[j] > most ? cs.n[j] : most;
    if (rc == 0 && most > 0) {
        double wall_sum = 0, kernel_sum = 0;
        for (unsigned i = 0; i < cs.n[0]; ++i) {
            wall_sum += cs.s[0][i].wall_us;
            kernel_sum += cs.s[0][i].kernel_us;
        }
        /* The latency kernel really runs for a tiny fraction of its wall
         * time; only a run time of next to nothing (Mesa 22 rusticl reports
         * about 1 ns) gives profiling away there. */
        if (k->timer_us > 0)
            profiling_ok = true; /* the model's run time, not profiling */
        else if (k->kind == K_LATENCY)
            profiling_ok &= kernel_sum >= 0.05 * cs.n[0];
        else
            profiling_ok &= kernel_sum >= 0.01 * wall_sum;
        if (!profiling_ok && !c->profiling_unusable)
            proto_note(c->out, "event profiling reports almost no kernel run time on this "
                               "platform: the kernel and overhead columns are meaningless");
        if (c->prof_clock < 0 && !c->profiling_unusable)
            proto_note(c->out, "event profiling's timestamps are in neither CLOCK_MONOTONIC nor "
                               "CLOCK_MONOTONIC_RAW: no added latency, and no verdicts on it");
        c->profiling_unusable |= !profiling_ok;
        send_results(c, k, strat, ns, &cs, ok, bad);
        for (int q = 0; q < nck; ++q)
            proto_check(c->out, k->name, cs.rounds, &checks[q]);
    }
    proto_cell(c->out, k->name, most, now_s() - t0, stopped_by, profiling_ok);
    for (int j = 0; j < ns; ++j)
        free(cs.s[j]);
    for (int s = 0; s < NFIG; ++s)
        free(cs.figs[s]);
    free(cs.scratch);
    return ok ? 0 : -1;
}

int child_open(child *c, const options *o) {
    memset(c, 0, sizeof *c);
    c->o = o;
    c->label = o->label ? o->label : "child";
    c->out = fdopen(o->result_fd, "w");
    if (!c->out)
        die("--result-fd %d: %s", o->result_fd, strerror(errno));
    char msg[2300];
    cl_int err = cwh_open(&c->h, o->platform, true, msg, sizeof msg);
    if (err != CL_SUCCESS) {
        child_error(c, "OpenCL set-up failed: %s", msg);
        return -1;
    }
    /* A queue per strategy, on the one device. cw keeps per queue what its
     * waits took (the estimate of auto, spin-park and backoff-poll), and a
     * program that waits one way feeds it with those waits alone; on one
     * queue the strategies interleaved here would feed each other's
     * (a spinning strategy's 5 ms waits on one CPU, cooperative's 20 ms
     * under a model whose callbacks are late). The launches still run one
     * at a time: each is waited for before the next. */
    for (int s = 0; s < NSTRAT; ++s) {
        c->queues[s] =
            clCreateCommandQueue(c->h.context, c->h.device, CL_QUEUE_PROFILING_ENABLE, &err);
        if (err != CL_SUCCESS) {
            child_error(c, "clCreateCommandQueue: OpenCL error %d", err);
            return -1;
        }
    }
    proto_header(c->out, "platform_name", c->h.platform_name);
    proto_header(c->out, "platform_version", c->h.platform_version);
    proto_header(c->out, "device_name", c->h.device_name);
    proto_header(c->out, "device_version", c->h.device_version);
    proto_header(c->out, "driver_version", c->h.driver_version);
    if (model_check_loaded(msg, sizeof msg) != 0) {
        child_error(c, "%s", msg);
        return -1;
    }
    return 0;
}

void child_close(child *c) {
    release_first_queues(c);
    free(c->first_queues);
    for (int s = 0; s < NSTRAT; ++s)
        if (c->queues[s])
            clReleaseCommandQueue(c->queues[s]);
    cwh_close(&c->h);
}

static cl_int kernel_init(child *c, const kernel_spec *k) {
    switch (k->kind) {
    case K_BUSY:
        return cwh_busy_init(&c->h, &c->busy, c->o->busy_global);
    case K_LATENCY:
        c->latency_launches = 0;
        return cwh_latency_init(&c->h, &c->latency);
    case K_SAXPY:
    default:
        c->saxpy_launches = 0;
        return cwh_saxpy_init(&c->h, &c->saxpy, (cl_uint)c->o->saxpy_n);
    }
}

static void kernel_free(child *c, const kernel_spec *k) {
    if (k->kind == K_BUSY)
        cwh_busy_free(&c->busy);
    else if (k->kind == K_LATENCY)
        cwh_latency_free(&c->latency);
    else
        cwh_saxpy_free(&c->saxpy);
}

typedef struct floor_slices {
    double *v;
    unsigned trips, done;
    unsigned slices, taken;
} floor_slices;

/* The next slice of the floor: an equal share of the trips still to do. */
static int floor_slice(child *c, floor_slices *fs) {
    if (fs->taken == fs->slices)
        return 0;
    unsigned n = (fs->trips - fs->done) / (fs->slices - fs->taken++);
    if (floor_sample(n, fs->v + fs->done) != 0) {
        child_error(c, "floor: cannot start the partner thread");
        return -1;
    }
    fs->done += n;
    return 0;
}

int child_run(const options *o) {
    child c;
    if (child_open(&c, o) != 0)
        return 1;
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(o, ks);
    model_timer(o, ks, nk);
    if (nk && ks[0].timer_us > 0) {
        char note[300];
        snprintf(note, sizeof note,
                 "%s: a timer-driven device: the kernel column is the model's run time (a "
                 "busy kernel's target, or its iterations x the model's busy_ns; others the "
                 "model's kernel_us), not event profiling",
                 getenv("CW_BENCH_MODEL"));
        proto_note(c.out, note);
    }
    int failures = 0;
    /* The floor runs in this process, with OpenCL's threads started but idle
     * between cells: the same pinning as the waits it is compared with. */
    floor_slices fs = {.trips = o->floor_trips, .slices = (unsigned)nk + 1};
    fs.v = malloc(sizeof *fs.v * fs.trips);
    if (!fs.v)
        die("out of memory");
    for (int i = 0; i < nk; ++i) {
        failures += floor_slice(&c, &fs) != 0;
        if (ks[i].kind == K_BUSY && ks[i].iters < 64) {
            child_error(&c, "%s: iterations unknown", ks[i].name);
            return 1;
        }
        cl_int err = kernel_init(&c, &ks[i]);
        if (err != CL_SUCCESS) {
            child_error(&c, "%s: cannot allocate buffers: OpenCL error %d", ks[i].name, err);
            ++failures;
            continue;
        }
        /* --run-time: a share of what is left of this config's time
         * (run_share). */
        double max_time = o->max_time;
        if (o->deadline > 0) {
            double share = run_share(o->deadline - now_s(), nk - i);
            max_time = share < max_time ? share : max_time;
        }
        failures += run_cell(&c, &ks[i], max_time) != 0;
        kernel_free(&c, &ks[i]);
    }
    if (floor_slice(&c, &fs) == 0) {
        double st[S_COUNT];
        summarize(fs.v, fs.trips, st);
        proto_floor(c.out, fs.trips, st);
    } else {
        ++failures;
    }
    free(fs.v);
    if (o->stats)
        send_learned(&c);
    child_close(&c);
    fclose(c.out);
    return failures ? 1 : 0;
}
