/* SPDX-License-Identifier: MIT */
/* cw-bench: the tables on stdout, and the lookups they share with the exports. */
#include <math.h>
#include <string.h>

#include "bench.h"

const record *find_record(const results *r, const char *kernel, int cfg, const char *strategy) {
    for (int i = 0; i < r->nrec; ++i)
        if (r->rec[i].cfg == cfg && !strcmp(r->rec[i].kernel, kernel) &&
            !strcmp(r->rec[i].strategy, strategy))
            return &r->rec[i];
    return NULL;
}

const cell *find_cell(const results *r, const char *kernel, int cfg) {
    for (int i = 0; i < r->ncells; ++i)
        if (r->cells[i].cfg == cfg && !strcmp(r->cells[i].kernel, kernel))
            return &r->cells[i];
    return NULL;
}

const char *kernel_param(const results *r, const char *kernel) {
    for (int i = 0; i < r->nkparam; ++i)
        if (!strcmp(r->kparam[i][0], kernel))
            return r->kparam[i][1];
    return "";
}

double ratio_to_blocking(const results *r, const record *p, int metric, int stat) {
    const record *b = find_record(r, p->kernel, p->cfg, "blocking");
    if (!b || !(b->st[metric][stat] > 0))
        return NAN;
    return p->st[metric][stat] / b->st[metric][stat];
}

double coop_latency_overhead(const results *r, int cfg, bool *from_wall) {
    const record *p = find_record(r, "latency", cfg, "cooperative");
    const cell *c = find_cell(r, "latency", cfg);
    bool wall = c && !c->profiling_ok;
    if (from_wall)
        *from_wall = wall;
    if (!p || !c)
        return NAN;
    return wall ? p->st[M_WALL][S_MEDIAN] : p->st[M_OVERHEAD][S_MEDIAN];
}

double coop_floor_ratio(const results *r, int cfg) {
    double over = coop_latency_overhead(r, cfg, NULL);
    if (cfg < 0 || cfg >= MAX_CONFIGS || !r->floors[cfg].have || !(r->floors[cfg].st[S_MEDIAN] > 0))
        return NAN;
    return over / r->floors[cfg].st[S_MEDIAN];
}

double cpu_per_wait_s(const record *p) {
    double w = p->st[M_WAIT_WALL][S_MEAN];
    return w > 0 ? p->st[M_WAIT_CPU][S_MEAN] / w : NAN;
}

static void fmt_num(char *buf, size_t len, const char *fmt, double v) {
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
}

void print_run_header(FILE *f, const options *o, const run_info *ri, const results *r) {
    fprintf(f, "cw-bench: %s\n", ri->command);
    fprintf(f, "%-17s %s (git %s), built with %s\n", "cw", ri->cw_version, ri->git_commit,
            ri->compiler);
    for (int i = 0; i < r->nheader; ++i)
        fprintf(f, "%-17s %s\n", r->header[i][0], r->header[i][1]);
    fprintf(f, "%-17s %s (nproc %ld, allowed %d)\n", "host", ri->host, ri->nproc_online,
            ri->nallowed);
    fprintf(f, "%-17s %s\n", "date", ri->date);
    fprintf(f,
            "%-17s %u timed per (kernel, config, strategy) or %g s per cell, whichever first%s;\n"
            "%-17s blocks of %u, warm-up %u per strategy; a cell with checks of the goals\n"
            "%-17s ends sooner once they are decided (its 'cell:' line says which)\n",
            "launches", o->launches, o->max_time, o->min_time > 0 ? " (at least min-time)" : "", "",
            o->block, o->warmup, "");
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(o, ks);
    for (int k = 0; k < nk; ++k)
        if (ks[k].is_long)
            fprintf(f,
                    "%-17s %s: blocks of 1, warm-up %u; without checks %u timed per strategy (at "
                    "least %u whatever the time), with checks as they need, up to the launches\n",
                    "long kernel", ks[k].name, ks[k].warmup, ks[k].launches, LONG_MIN_LAUNCHES);
    fprintf(f, "%-17s", "driver models");
    for (int m = 0; m < o->nmodels; ++m) {
        driver_model dm;
        model_info(o->models[m], &dm);
        fprintf(f, "%s %s%s", m ? "," : "", dm.spec, dm.layer ? "" : " (the real driver)");
    }
    fputc('\n', f);
    if (ri->layer)
        fprintf(f, "%-17s %s\n", "model layer", ri->layer);
    for (int k = 0; k < nk; ++k) {
        if (ks[k].kind != K_BUSY)
            continue;
        int b = ks[k].busy_index;
        if (ri->calibrated && ri->cal.have[b])
            fprintf(f,
                    "%-17s %s: %u iterations x %lu work-items, calibrated on 1 worker to %.1f us "
                    "(target %.0f us)%s\n",
                    "calibration", ks[k].name, ks[k].iters, o->busy_global, ri->cal.measured_us[b],
                    o->busy_us[b], ri->cal.reached[b] ? "" : ": TARGET NOT REACHED");
        else
            fprintf(f, "%-17s %s: %u iterations x %lu work-items (given, not calibrated)\n",
                    "busy kernel", ks[k].name, ks[k].iters, o->busy_global);
    }
    for (int i = 0; i < r->nnotes; ++i)
        fprintf(f, "%-17s %s\n", "note", r->notes[i]);
    fprintf(f,
            "%-17s microseconds per launch; CPU = launching thread's CPU time (enqueue+wait);\n"
            "%-17s added latency = the wait's return - the command's end (event profiling's\n"
            "%-17s CL_PROFILING_COMMAND_END; under a timer-driven device, the end of the\n"
            "%-17s model's marker); wake-ups = voluntary context switches of the launching\n"
            "%-17s thread per launch; command = its run time (profiling, or the model's);\n"
            "%-17s wall = enqueue+wait; CPU/wait s = CPU time of the cw_wait calls over their\n"
            "%-17s wall time (1.00: a core spun throughout); 'x' columns = ratio to blocking\n"
            "%-17s in the same table\n",
            "units", "", "", "", "", "", "", "");
}

static void print_row(FILE *f, const results *r, const record *p) {
    char rc[2][16], cw[16];
    fmt_num(cw, sizeof cw, "%.3f", cpu_per_wait_s(p));
    fmt_num(rc[0], 16, "%.2f", ratio_to_blocking(r, p, M_CPU, S_MEAN));
    fmt_num(rc[1], 16, "%.2f", ratio_to_blocking(r, p, M_LATENCY, S_MEDIAN));
    fprintf(f,
            "%-24s %6u | %8.1f %8.1f %8.1f %8.1f | %6s | %8.1f %8.1f %8.1f | %5.2f | %9.1f "
            "%9.1f | %6s %6s%s\n",
            p->strategy, p->launches, p->st[M_CPU][S_MEAN], p->st[M_CPU][S_MEDIAN],
            p->st[M_CPU][S_P90], p->st[M_CPU][S_P99], cw, p->st[M_LATENCY][S_MEDIAN],
            p->st[M_LATENCY][S_MEAN], p->st[M_LATENCY][S_P90], p->st[M_WAKEUPS][S_MEAN],
            p->st[M_KERNEL][S_MEDIAN], p->st[M_WALL][S_MEAN], rc[0], rc[1],
            p->ok ? "" : "  WRONG RESULT");
}

/* Under the latency table: the config's floor and cooperative against it. */
static void print_floor_line(FILE *f, const results *r, int cfg) {
    const floor_result *fl = &r->floors[cfg];
    if (!fl->have)
        return;
    char over[32], ratio[32];
    bool from_wall = false;
    fmt_num(over, sizeof over, "%.1f us", coop_latency_overhead(r, cfg, &from_wall));
    fmt_num(ratio, sizeof ratio, "%.1fx", coop_floor_ratio(r, cfg));
    fprintf(f,
            "floor (futex wake to run, one way, this pinning): median %.1f us, p90 %.1f us; "
            "cooperative's median %s %s = %s the floor\n",
            fl->st[S_MEDIAN], fl->st[S_P90], from_wall ? "wall (no profiling)" : "overhead", over,
            ratio);
}

void print_tables(FILE *f, const results *r, const config *cfgs, int ncfg, const kernel_spec *ks,
                  int nk) {
    for (int k = 0; k < nk; ++k) {
        for (int c = 0; c < ncfg; ++c) {
            char title[320];
            config_title(&cfgs[c], title, sizeof title);
            const cell *ce = find_cell(r, ks[k].name, c);
            bool any = false;
            for (int i = 0; i < r->nrec; ++i)
                any |= r->rec[i].cfg == c && !strcmp(r->rec[i].kernel, ks[k].name);
            if (!any)
                continue;
            fprintf(f, "\n== %s (%s) | config %d/%d: %s ==\n", ks[k].name,
                    kernel_param(r, ks[k].name), c + 1, ncfg, title);
            if (ce)
                fprintf(f, "cell: %.1f s, stopped by %s\n", ce->elapsed_s, ce->stopped_by);
            fprintf(f, "%-31s | %-35s | %-6s | %-26s | %-5s | %-9s %-9s | %-6s %-6s\n", "",
                    "CPU us", "CPU/", "added latency us", "wake-", "command", "wall", "CPU x",
                    "lat x");
            fprintf(f,
                    "%-24s %6s | %8s %8s %8s %8s | %6s | %8s %8s %8s | %5s | %9s %9s | %6s "
                    "%6s\n",
                    "strategy", "n", "mean", "median", "p90", "p99", "wait s", "median", "mean",
                    "p90", "ups", "median", "mean", "mean", "median");
            for (int i = 0; i < r->nrec; ++i)
                if (r->rec[i].cfg == c && !strcmp(r->rec[i].kernel, ks[k].name))
                    print_row(f, r, &r->rec[i]);
            if (ks[k].kind == K_LATENCY)
                print_floor_line(f, r, c);
        }
    }
}

void print_floors(FILE *f, const results *r, const config *cfgs, int ncfg) {
    fprintf(f, "\n== floor: futex wake-to-run latency, one way (cw_unpark -> cw_park returns; "
               "half a ping-pong round trip) ==\n");
    fprintf(f, "%-40s | %7s %8s %8s %8s %8s | %-22s %s\n", "config", "trips", "mean", "median",
            "p90", "p99", "cooperative overhead", "/ floor");
    for (int c = 0; c < ncfg; ++c) {
        const floor_result *fl = &r->floors[c];
        char title[320], over[32], ratio[32];
        config_title(&cfgs[c], title, sizeof title);
        if (!fl->have) {
            fprintf(f, "%-40s | not measured\n", title);
            continue;
        }
        bool from_wall = false;
        double o = coop_latency_overhead(r, c, &from_wall);
        fmt_num(over, sizeof over, from_wall ? "%.1f us (wall)" : "%.1f us", o);
        fmt_num(ratio, sizeof ratio, "%.1fx", coop_floor_ratio(r, c));
        fprintf(f, "%-40s | %7u %8.2f %8.2f %8.2f %8.2f | %-22s %s\n", title, fl->trips,
                fl->st[S_MEAN], fl->st[S_MEDIAN], fl->st[S_P90], fl->st[S_P99], over, ratio);
    }
    fprintf(f, "(cooperative overhead: its median wall - kernel per launch on the latency "
               "kernel; where profiling is\n unusable, its median wall, marked (wall): an "
               "upper bound; '-' where not run)\n");
}

void print_stats(FILE *f, const results *r, const config *cfgs, int ncfg, const kernel_spec *ks,
                 int nk) {
    for (int k = 0; k < nk; ++k)
        for (int c = 0; c < ncfg; ++c) {
            bool any = false;
            for (int i = 0; i < r->nrec; ++i)
                any |= r->rec[i].cfg == c && r->rec[i].has_stats &&
                       !strcmp(r->rec[i].kernel, ks[k].name);
            if (!any)
                continue;
            char title[320];
            config_title(&cfgs[c], title, sizeof title);
            fprintf(f, "\n== stats: %s | config %d/%d: %s ==\n", ks[k].name, c + 1, ncfg, title);
            fprintf(f,
                    "%-24s %7s | per wait: %6s %6s %6s %6s %6s | %8s | wake-up latency (us): "
                    "<1 1-2 2-4 4-8 8-16 16-32 32-64 64-128 128+\n",
                    "strategy", "waits", "spins", "yields", "parks", "sleeps", "polls", "timeouts");
            for (int i = 0; i < r->nrec; ++i) {
                const record *p = &r->rec[i];
                if (p->cfg != c || !p->has_stats || strcmp(p->kernel, ks[k].name))
                    continue;
                double w = p->stats[0] ? (double)p->stats[0] : 1.0;
                fprintf(f, "%-24s %7llu | %16.2f %6.2f %6.2f %6.2f %6.2f | %8llu | %21s",
                        p->strategy, (unsigned long long)p->stats[0], p->stats[1] / w,
                        p->stats[2] / w, p->stats[3] / w, p->stats[4] / w, p->stats[5] / w,
                        (unsigned long long)p->stats[6], "");
                uint64_t tail = 0;
                for (int b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
                    if (b < 8)
                        fprintf(f, " %llu", (unsigned long long)p->stats[8 + b]);
                    else
                        tail += p->stats[8 + b];
                fprintf(f, " %llu\n", (unsigned long long)tail);
            }
            /* What the waits decided from what cw learned (cw_stats_auto). */
            fprintf(f, "%-24s %7s | %9s %9s %9s | %9s %9s | %9s | %9s\n", "decided (cw_stats_auto)",
                    "", "unchecked", "deferred", "checks", "hybrid", "cb first", "late cb",
                    "driver");
            for (int i = 0; i < r->nrec; ++i) {
                const record *p = &r->rec[i];
                if (p->cfg != c || !p->has_stats || strcmp(p->kernel, ks[k].name))
                    continue;
                const uint64_t *v = p->stats + AUTO_BASE;
                fprintf(f, "%-24s %7s | %9llu %9llu %9llu | %9llu %9llu | %9llu | %9llu\n",
                        p->strategy, "", (unsigned long long)v[0], (unsigned long long)v[1],
                        (unsigned long long)v[2], (unsigned long long)v[3],
                        (unsigned long long)v[4], (unsigned long long)v[5],
                        (unsigned long long)v[6]);
            }
        }
    bool any = false;
    for (int c = 0; c < ncfg; ++c)
        any |= r->have_learned[c];
    if (!any)
        return;
    fprintf(f, "\n== what cw learned of the platform, at the end of each config "
               "(cw_stats_auto) ==\n");
    fprintf(f, "%-40s | %6s %6s %6s %6s | %12s %8s | %6s\n", "config", "probed", "fire", "silent",
            "late", "lateness us", "samples", "driver");
    for (int c = 0; c < ncfg; ++c) {
        if (!r->have_learned[c])
            continue;
        char title[320];
        config_title(&cfgs[c], title, sizeof title);
        const uint64_t *v = r->learned[c];
        fprintf(f, "%-40s | %6llu %6llu %6llu %6llu | %12.1f %8llu | %6llu\n", title,
                (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
                (unsigned long long)v[3], (double)v[4] / 1e3, (unsigned long long)v[5],
                (unsigned long long)v[6]);
    }
    fprintf(
        f, "(unchecked: waits with no failed-command check, their platform's failed commands "
           "firing; deferred: first check\n put after twice the expected wait; hybrid: auto "
           "waits that polled because callbacks are late, cb first:\n of them ended by the "
           "callback; late cb: a status read found the command done before its callback;\n driver: "
           "auto waits the driver's own clWaitForEvents served; for a platform, whether its long\n "
           "waits use it)\n");
}

/* The goals decided in a run's cells, in a line each (bench/README.md
 * states them in full; goal d is goal c over a sweep's models). */
static const struct {
    char goal;
    const char *text;
} goal_text[] = {
    {'a', "a: pocl3 unchanged: auto's and cooperative's added latency <= blocking's x 1.05 + 2 us; "
          "CPU per launch <= 1.05x blocking's under 20 ms, from 20 ms CPU per second waited <= "
          "blocking's + 0.5 ms/s"},
    {'b', "b: nvidia: from 100 us, auto's CPU <= 0.10x blocking's and added latency <= max(100 us, "
          "0.5% of the command); latency kernel: added latency <= blocking's x 1.05, CPU <= "
          "blocking's"},
    {'c', "c: every model: no fixed strategy has both added latency <= auto's / 1.05 and CPU <= "
          "auto's, nor both CPU <= auto's / 1.2 and added latency <= auto's"},
    {'e',
     "e: every model: auto-latency's added latency <= the best fixed strategy's x 1.05 + 2 us, "
     "at a CPU per launch <= 1.2x that strategy's"},
    {'f', "f: nvidia, from 100 ms, from the first launch: auto's added latency <= max(100 us, "
          "0.5% of the command), CPU <= 0.5% of the time waited"},
};

/* What deciding an UNDECIDED check would take (check_to_decide), in the
 * words bench/goals.py uses for it. */
static void print_to_decide(FILE *f, const check_rec *c) {
    if (!isfinite(c->to_decide_pairs) || c->lean == V_UNDECIDED || c->pairs <= 0) {
        fprintf(f, "      at this spread: a median sits on its bound, and no number of pairs "
                   "decides it\n");
        return;
    }
    /* Two significant digits: it is a projection. */
    double scale = pow(10, floor(log10(c->to_decide_pairs)) - 1);
    fprintf(f,
            "      at this spread: %s after about %.0f pairs (%.1fx these), about %.0f s more "
            "at the cell's pace\n",
            verdict_names[c->lean], round(c->to_decide_pairs / scale) * scale,
            c->to_decide_pairs / c->pairs, c->to_decide_s);
}

void print_checks(FILE *f, const results *r, const config *cfgs, int ncfg) {
    if (!r->nchecks)
        return;
    fprintf(f, "\n== goals: each check's median paired difference per round and its 95%% "
               "interval (the sign test's): PASS wholly <= its resolution, MISS wholly above ==\n");
    for (size_t g = 0; g < sizeof goal_text / sizeof goal_text[0]; ++g) {
        char goal = goal_text[g].goal;
        int n[3] = {0, 0, 0};
        for (int i = 0; i < r->nchecks; ++i)
            if (r->checks[i].goal == goal)
                n[r->checks[i].v]++;
        if (!n[0] && !n[1] && !n[2])
            continue;
        fprintf(f, "goal %s\n  %d PASS, %d MISS, %d UNDECIDED\n", goal_text[g].text, n[V_PASS],
                n[V_MISS], n[V_UNDECIDED]);
        for (int i = 0; i < r->nchecks; ++i) {
            const check_rec *c = &r->checks[i];
            if (c->goal != goal || c->cfg < 0 || c->cfg >= ncfg)
                continue;
            /* Goal c's and e's passes are many and alike: only their
             * misses and undecided checks are listed. */
            if ((goal == 'c' || goal == 'e') && c->v == V_PASS)
                continue;
            fprintf(f, "  %-9s %s, %s, config %s: %s (%d pairs;", verdict_names[c->v],
                    cfgs[c->cfg].model.spec, c->kernel, cfgs[c->cfg].spec, c->what, c->pairs);
            for (int k = 0; k < c->ncond; ++k)
                fprintf(f, " %s%.4g [%.4g, %.4g] res %.2g", k ? "and " : "difference ", c->est[k],
                        c->lo[k], c->hi[k], c->res[k]);
            fprintf(f, ")\n");
            if (c->v == V_UNDECIDED)
                print_to_decide(f, c);
        }
    }
}
