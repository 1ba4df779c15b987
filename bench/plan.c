/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: what a run will do, worked out from the options before anything
 * runs: the cells, the launches in each, and an estimate of how long each
 * part takes. The estimate is a model, not a measurement of this machine:
 * each launch costs a fixed PLAN_LAUNCH_US plus its kernel's run time
 * (the busy targets, or nominal rates for saxpy and for busy iterations),
 * shared among the config's CPUs and stretched by PLAN_SHARE_FACTOR for the
 * waiters that spin beside the device's workers. The constants come from
 * the default run kept in results/bench (PoCL on 2 CPUs: 175 s, which the
 * model puts at 187 s); --quick runs, made mostly of fixed costs, took 1.3
 * to 2.5 times their 1.1 s estimate on a shared 2-CPU machine. --max-time
 * still bounds every cell, and the plan says where the estimate reaches it.
 */
#include <stdio.h>

#include "bench.h"

/* One launch beyond its kernel's run time: enqueue, wait, profiling query,
 * release (the latency cells: 47 us a launch in results/bench). */
#define PLAN_LAUNCH_US 45.0
/* Kernel run time a launch costs on a config's CPUs, as a multiple of the
 * run time on one idle worker divided among them (the busy cells of
 * results/bench: 1.45 on 1 CPU and on 2). */
#define PLAN_SHARE_FACTOR 1.45
/* saxpy per float on one worker: between a run whose arrays stay in cache
 * (results/bench: 0.2 ns) and one that streams them from memory (1.1 ns). */
#define PLAN_SAXPY_NS_PER_FLOAT 0.3
/* A child's exec and OpenCL set-up with the kernels in PoCL's cache (the
 * first run after a kernel changes compiles them: seconds more). */
#define PLAN_CONFIG_START_S 0.1
/* One round trip of the floor's ping-pong: two wake-ups. */
#define PLAN_FLOOR_TRIP_US 10.0

static double kernel_us(const options *o, const kernel_spec *k) {
    switch (k->kind) {
    case K_BUSY:
        return k->nominal_us;
    case K_SAXPY:
        return (double)o->saxpy_n * PLAN_SAXPY_NS_PER_FLOAT / 1e3;
    case K_LATENCY:
    default:
        return 0;
    }
}

/* Whether a strategy's wait ends on the command's callback, and so takes
 * a model's late callbacks on every launch (the plan's view: blocking is
 * the driver's own wait, poll and backoff-poll ask for the status). */
static bool ends_on_callback(cw_strategy s) {
    return s != CW_STRATEGY_BLOCKING && s != CW_STRATEGY_POLL && s != CW_STRATEGY_BACKOFF_POLL;
}

/* The calibration child (calibrate.c): its warm-up, the fit's launches of
 * up to about 1 ms, then two rounds of launches at each short target and
 * one launch at each long one (scaled from the short ones). */
static double calibration_s(const options *o) {
    int reps = o->quick ? 5 : 9;
    double s = PLAN_CONFIG_START_S + (o->quick ? 0.05 : 0.2) + reps * 1e-3;
    for (int b = 0; b < o->nbusy; ++b)
        s += (o->busy_us[b] >= LONG_US ? 1 : 2 * reps) * o->busy_us[b] / 1e6;
    return s;
}

void make_plan(const options *o, const config *cfgs, int ncfg, const kernel_spec *ks, int nk,
               bool calibrate, plan *p) {
    cw_strategy strat[NSTRAT];
    int ns = selected_strategies(o, strat);
    int ncb = 0;
    for (int j = 0; j < ns; ++j)
        ncb += ends_on_callback(strat[j]);
    p->ncfg = ncfg;
    p->nk = nk;
    p->ns = ns;
    p->ncells = ncfg * nk;
    p->launches = 0;
    p->calibration_s = calibrate ? calibration_s(o) : 0;
    p->config_s =
        PLAN_CONFIG_START_S +
        ((double)o->floor_trips + (double)FLOOR_WARMUP_TRIPS * (nk + 1)) * PLAN_FLOOR_TRIP_US / 1e6;
    p->total_s = p->calibration_s + ncfg * p->config_s;
    p->at_max_time = 0;
    for (int c = 0; c < ncfg; ++c)
        for (int k = 0; k < nk; ++k) {
            /* Per cell: blocking's first launch, then every strategy's
             * warm-up and timed launches (child.c, run_cell). */
            unsigned long per = ks[k].warmup + ks[k].launches;
            p->launches += 1 + (unsigned long)ns * per;
            /* A timer-driven device's commands take their time whatever the
             * CPUs; PoCL's share the config's CPUs with the waiters. */
            double run_us = cfgs[c].model.timer_device
                                ? kernel_us(o, &ks[k])
                                : kernel_us(o, &ks[k]) * PLAN_SHARE_FACTOR / cfgs[c].ncpus;
            double round_us =
                ns * (PLAN_LAUNCH_US + run_us) + ncb * cfgs[c].model.callback_delay_us;
            double s = (PLAN_LAUNCH_US + run_us + (double)per * round_us) / 1e6;
            /* A long cell runs its first launches whatever --max-time says. */
            double least = ks[k].is_long ? LONG_MIN_LAUNCHES * round_us / 1e6 : 0;
            if (s < o->min_time)
                s = o->min_time;
            if (s >= o->max_time && o->max_time >= least) {
                s = o->max_time;
                ++p->at_max_time;
            } else if (s >= o->max_time) {
                s = least;
                ++p->at_max_time;
            }
            p->cell_s[c * nk + k] = s;
            p->total_s += s;
        }
}

double plan_to_go(const plan *p, int cells_done) {
    double s = 0;
    for (int i = cells_done; i < p->ncells; ++i)
        s += p->cell_s[i];
    /* The start-up of every config whose first cell is still to come. */
    int not_started = p->ncfg - cells_done / p->nk - (cells_done % p->nk != 0);
    return s + not_started * p->config_s;
}

static void print_seconds(FILE *f, double s) {
    if (s < 60)
        fprintf(f, "%.1f s", s);
    else
        fprintf(f, "%.0f s (%.1f min)", s, s / 60);
}

void print_plan(FILE *f, const options *o, const plan *p, const config *cfgs, const kernel_spec *ks,
                const char *layer) {
    fprintf(f,
            "[plan] %d cell%s (%d kernel%s x %d config%s) of %d strateg%s, %u launches and %u "
            "warm-up per strategy: %lu launches; estimated about ",
            p->ncells, p->ncells == 1 ? "" : "s", p->nk, p->nk == 1 ? "" : "s", p->ncfg,
            p->ncfg == 1 ? "" : "s", p->ns, p->ns == 1 ? "y" : "ies", o->launches, o->warmup,
            p->launches);
    print_seconds(f, p->total_s);
    fputs(p->calibration_s > 0 ? " with calibration and start-up" : " with start-up", f);
    if (o->min_time > 0)
        fprintf(f, "; a cell runs at least --min-time %g s", o->min_time);
    if (p->at_max_time)
        fprintf(f, "; %d cell%s reach%s --max-time %g s", p->at_max_time,
                p->at_max_time == 1 ? "" : "s", p->at_max_time == 1 ? "es" : "", o->max_time);
    fputc('\n', f);
    bool any_long = false;
    for (int k = 0; k < p->nk; ++k)
        if (ks[k].is_long) {
            fprintf(f, "%s %s %u",
                    any_long ? "," : "[plan] long kernels, launches per strategy:", ks[k].name,
                    ks[k].launches);
            if (ks[k].warmup)
                fprintf(f, " (+%u warm-up)", ks[k].warmup);
            any_long = true;
        }
    if (any_long)
        fprintf(f, "; in blocks of 1, at least %u whatever --max-time\n", LONG_MIN_LAUNCHES);
    if (o->strategy_on[CW_STRATEGY_BLOCKING] || o->strategy_on[CW_STRATEGY_AUTO])
        fprintf(f,
                "[plan] a cell that holds checks of the goals ends once they are decided, "
                "often sooner than estimated here; --max-time %g s and --launches %u cap it\n",
                o->max_time, o->launches);
    if (o->run_time > 0)
        fprintf(f,
                "[plan] --run-time %g s: no cell runs past its share of what is left of it "
                "(twice the time left over the cells left, at most what is left)%s\n",
                o->run_time, p->total_s > o->run_time ? ", which cuts this plan short" : "");
    fputs("[plan] driver models:", f);
    for (int c = 0; c < p->ncfg; ++c) {
        if (c && cfgs[c].model_index == cfgs[c - 1].model_index)
            continue;
        fprintf(f, "%s %s%s", c ? "," : "", cfgs[c].model.spec,
                cfgs[c].model.layer ? "" : " (the real driver, no layer)");
    }
    if (layer)
        fprintf(f, "; layer %s", layer);
    fputc('\n', f);
}
