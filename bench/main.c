/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: compare cw's wait strategies on real kernels.
 *
 * The parent process never touches OpenCL: it calibrates the busy kernel in
 * one child, runs each CPU configuration in another (runner.c), then prints
 * the tables and writes JSON, CSV and a plot. Every wait goes through
 * cw_wait: the benchmark never waits by itself.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef CW_BENCH_GIT_COMMIT
#define CW_BENCH_GIT_COMMIT "unknown"
#endif
#if defined(__clang__)
#define BENCH_COMPILER __VERSION__
#elif defined(__GNUC__)
#define BENCH_COMPILER "gcc " __VERSION__
#else
#define BENCH_COMPILER "unknown"
#endif

static void shell_join(int argc, char **argv, char *out, size_t len) {
    size_t pos = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && pos + 4 < len; ++i) {
        const char *a = argv[i];
        bool plain = *a != '\0';
        for (const char *p = a; *p; ++p)
            plain &= isalnum((unsigned char)*p) || strchr("-_./,=:+@%", *p) != NULL;
        if (i)
            out[pos++] = ' ';
        if (plain) {
            pos += (size_t)snprintf(out + pos, len - pos, "%s", a);
        } else {
            out[pos++] = '\'';
            for (const char *p = a; *p && pos + 6 < len; ++p) {
                if (*p == '\'')
                    pos += (size_t)snprintf(out + pos, len - pos, "'\\''");
                else
                    out[pos++] = *p;
            }
            out[pos++] = '\'';
        }
        if (pos >= len)
            pos = len - 1;
        out[pos] = '\0';
    }
}

static void gather_run_info(int argc, char **argv, run_info *ri) {
    memset(ri, 0, sizeof *ri);
    shell_join(argc, argv, ri->command, sizeof ri->command);
    time_t t = time(NULL);
    strftime(ri->date, sizeof ri->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(ri->host, sizeof ri->host, "%s %s %s %s %s", u.sysname, u.nodename, u.release,
                 u.version, u.machine);
    ri->nproc_online = sysconf(_SC_NPROCESSORS_ONLN);
    ri->nallowed = allowed_cpus();
    /* The library that runs, which may be newer than the headers. */
    snprintf(ri->cw_version, sizeof ri->cw_version, "%s", cw_version_string());
    ri->git_commit = CW_BENCH_GIT_COMMIT;
    ri->compiler = BENCH_COMPILER;
}

static void add_note(results *r, const char *text) {
    if (r->nnotes < 8)
        snprintf(r->notes[r->nnotes++], sizeof r->notes[0], "%s", text);
}

/* Opens an output file before the run, so that a path the run could not
 * write fails now, with the reason, rather than after the whole run. A file
 * that was not there is removed again at once, so that a run that fails or
 * is interrupted later leaves no empty file behind; one that was there is
 * opened without truncating it, and keeps its old content until the run
 * writes the new. */
static void check_output(const char *option, const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
        close(fd);
        unlink(path);
        return;
    }
    if (errno == EEXIST)
        fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        die("%s %s: cannot write it: %s", option, path, strerror(errno));
    close(fd);
}

/* Calibrates the busy sizes on one worker, pinned to the first allowed CPU. */
static int calibrate_busy(int argc, char **argv, options *o, results *r, run_info *ri) {
    config one;
    options tmp = *o;
    tmp.ncfg = 1;
    tmp.cfg_cpus[0] = 1;
    /* On the real driver: the iterations are the kernel's, whatever a model
     * then does with its completion. */
    tmp.nmodels = 1;
    snprintf(tmp.models[0], sizeof tmp.models[0], "pocl3");
    build_configs(&tmp, &one);
    fprintf(stderr, "[calibration] busy kernel on 1 worker (cpu %s), targets", one.cpu_list);
    for (int b = 0; b < o->nbusy; ++b)
        fprintf(stderr, " %.0f us", o->busy_us[b]);
    fputc('\n', stderr);
    const char *extra[] = {"--child", "calibrate", "--label", "calibration", NULL};
    int st = run_child(argv, argc, o, &one, extra, -1, r, &ri->cal, NULL);
    for (int b = 0; b < o->nbusy; ++b)
        if (!ri->cal.have[b])
            st = st ? st : 1;
    if (st != 0) {
        fprintf(stderr, "%s: calibration failed\n", prog);
        for (int i = 0; i < r->nerr; ++i)
            fprintf(stderr, "  %s\n", r->errors[i]);
        return -1;
    }
    ri->calibrated = true;
    for (int b = 0; b < o->nbusy; ++b) {
        o->busy_iters[b] = ri->cal.iters[b];
        fprintf(stderr, "[calibration] %.0f us target: %u iterations, measured %.1f us\n",
                o->busy_us[b], ri->cal.iters[b], ri->cal.measured_us[b]);
        if (!ri->cal.reached[b]) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "busy kernel: cannot calibrate to %.0f us on this platform: %u iterations "
                     "run %.1f us; its cells run at that length",
                     o->busy_us[b], ri->cal.iters[b], ri->cal.measured_us[b]);
            fprintf(stderr, "[calibration] %s\n", msg);
            add_note(r, msg);
        }
    }
    return 0;
}

/* --sweep: one config per drawn model, each with its own CPUs and kernel. */
static int sweep_configs(options *o, config *cfgs, sweep_draw *draws) {
    for (int i = 0; i < o->sweep; ++i) {
        sweep_draw_model(o->seed, i, &draws[i]);
        options one = *o;
        one.nmodels = 1;
        memcpy(one.models[0], draws[i].spec, sizeof one.models[0]);
        one.ncfg = 1;
        one.cfg_cpus[0] = draws[i].cpus;
        snprintf(one.cfg_spec[0], sizeof one.cfg_spec[0], "%s", draws[i].cpus ? "1" : "all");
        build_configs(&one, &cfgs[i]);
        cfgs[i].model_index = i;
    }
    return o->sweep;
}

/* Goal c in config cfg: PASS when every check of it passed, MISS when one
 * missed, else UNDECIDED; counts in n[verdict]. */
int goal_verdict(const results *r, int cfg, char goal, int n[3]) {
    n[0] = n[1] = n[2] = 0;
    for (int i = 0; i < r->nchecks; ++i)
        if (r->checks[i].cfg == cfg && r->checks[i].goal == goal)
            n[r->checks[i].v]++;
    return n[V_MISS] ? V_MISS : n[V_UNDECIDED] || !n[V_PASS] ? V_UNDECIDED : V_PASS;
}

static void print_sweep(FILE *f, const options *o, const results *r, const config *cfgs,
                        const sweep_draw *draws) {
    int held = 0, missed = 0, open = 0;
    fprintf(f,
            "\n== sweep: seed %lu, %d driver models drawn; goal c: auto not beaten with a "
            "margin by any fixed strategy ==\n",
            o->seed, o->sweep);
    for (int i = 0; i < o->sweep; ++i) {
        int n[3];
        int v = goal_verdict(r, i, 'c', n);
        held += v == V_PASS;
        missed += v == V_MISS;
        open += v == V_UNDECIDED;
        fprintf(f, "%2d  %-9s  %-10s config %-3s  %s (checks: %d pass, %d miss, %d undecided)\n",
                i + 1, verdict_names[v], draws[i].kernel, cfgs[i].spec, draws[i].spec, n[V_PASS],
                n[V_MISS], n[V_UNDECIDED]);
        for (int q = 0; q < r->nchecks; ++q) {
            const check_rec *c = &r->checks[q];
            if (c->cfg == i && c->v == V_MISS)
                fprintf(f, "      MISS %s\n", c->what);
        }
    }
    fprintf(f,
            "goal d: goal c held in %d of %d models (missed in %d, undecided in %d); the goal "
            "asks for at least 38 of 40\n",
            held, o->sweep, missed, open);
}

static int parent_main(int argc, char **argv, const options *o0) {
    options o = *o0;
    double t_start = now_s();
    run_info ri;
    gather_run_info(argc, argv, &ri);
    config cfgs[MAX_CONFIGS];
    static sweep_draw draws[MAX_MODELS];
    int ncfg = o.sweep ? sweep_configs(&o, cfgs, draws) : build_configs(&o, cfgs);
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(&o, ks);
    if (nk == 0)
        die("--kernels '%s' selects no kernel (see --help)", o.kernels_sel);
    bool need_busy = false;
    for (int i = 0; i < nk; ++i)
        need_busy |= ks[i].kind == K_BUSY;
    if (!o.strategy_on[CW_STRATEGY_BLOCKING])
        fprintf(stderr, "%s: note: blocking is not selected, so there are no ratios\n", prog);
    if (o.json)
        check_output("--json", o.json);
    if (o.csv)
        check_output("--csv", o.csv);
    if (o.plot) {
        check_output("--plot", o.plot);
        plot_preflight(o.plot);
    }

    /* A model's layer that is not there stops the run now, as an output
     * file that cannot be written does. */
    const char *layer = NULL;
    for (int c = 0; c < ncfg; ++c)
        if (cfgs[c].model.layer)
            layer = model_layer_or_die(cfgs[c].model.spec);
    const char *user_layers = getenv("OPENCL_LAYERS");
    if (user_layers && *user_layers)
        fprintf(stderr,
                "%s: note: OPENCL_LAYERS=%s is replaced in the children: each driver model "
                "sets its own (pocl3: none)\n",
                prog, user_layers);

    bool calibrate = need_busy && !o.busy_iters_set;
    plan pl;
    make_plan(&o, cfgs, ncfg, ks, nk, calibrate, &pl);
    if (o.sweep) {
        /* One cell a model: the plan's cells are kernels x configs. */
        pl.ncells = ncfg;
        fprintf(stderr,
                "[sweep] seed %lu: %d driver models, one kernel and CPU configuration each, "
                "every selected strategy; a cell stops when its checks are decided or after "
                "--max-time %g s: at most about %.0f s\n",
                o.seed, ncfg, o.max_time, ncfg * (o.max_time + 2) + 10);
        for (int i = 0; i < ncfg; ++i)
            fprintf(stderr, "[sweep] model %d: %s, %s, config %s\n", i + 1, draws[i].spec,
                    draws[i].kernel, cfgs[i].spec);
    } else {
        print_plan(stderr, &o, &pl, cfgs, ks, layer);
    }
    if (o.dry_run) {
        fprintf(stderr, "%s: --dry-run: nothing run\n", prog);
        return 0;
    }
    progress pg = {0, pl.ncells, t_start, &pl, o.run_time};
    ri.layer = layer;

    results r;
    memset(&r, 0, sizeof r);
    if (calibrate && calibrate_busy(argc, argv, &o, &r, &ri) != 0)
        return 1;
    char itersbuf[128] = "";
    if (need_busy) {
        size_t pos = 0;
        for (int b = 0; b < o.nbusy; ++b)
            pos += (size_t)snprintf(itersbuf + pos, sizeof itersbuf - pos, "%s%u", b ? "," : "",
                                    o.busy_iters[b]);
        nk = build_kernels(&o, ks);
    }

    int failures = 0;
    for (int c = 0; c < ncfg; ++c) {
        char label[64], title[320];
        snprintf(label, sizeof label, "config %d/%d", c + 1, ncfg);

        config_title(&cfgs[c], title, sizeof title);
        fprintf(stderr, "[%s] %s\n", label, title);
        const char *extra[16] = {"--child", "run", "--label", label};
        int ne = 4;
        char busybuf[128] = "";
        if (o.sweep) {
            /* The child reads the parent's arguments, then these: its kernel
             * and the sweep's busy sizes. */
            size_t pos = 0;
            for (int b = 0; b < o.nbusy; ++b)
                pos += (size_t)snprintf(busybuf + pos, sizeof busybuf - pos, "%s%g", b ? "," : "",
                                        o.busy_us[b]);
            extra[ne++] = "--busy-us";
            extra[ne++] = busybuf;
            extra[ne++] = "--kernels";
            extra[ne++] = draws[c].kernel;
        }
        if (need_busy) {
            extra[ne++] = "--busy-iters";
            extra[ne++] = itersbuf;
        }
        /* The run's budget: this config's share of what is left of it. */
        char deadline[64];
        if (o.run_time > 0) {
            double now = now_s(), left = t_start + o.run_time - now;
            snprintf(deadline, sizeof deadline, "%.3f", now + run_share(left, ncfg - c));
            extra[ne++] = "--deadline";
            extra[ne++] = deadline;
        }
        extra[ne] = NULL;
        double t0 = now_s();
        int st = run_child(argv, argc, &o, &cfgs[c], extra, c, &r, NULL, &pg);
        fprintf(stderr, "[%s] done in %.1f s%s\n", label, now_s() - t0, st ? " (FAILED)" : "");
        failures += st != 0;
    }
    ri.elapsed_s = now_s() - t_start;

    print_run_header(stdout, &o, &ri, &r);
    print_tables(stdout, &r, cfgs, ncfg, ks, nk);
    print_floors(stdout, &r, cfgs, ncfg);
    if (o.stats)
        print_stats(stdout, &r, cfgs, ncfg, ks, nk);
    if (o.sweep)
        print_sweep(stdout, &o, &r, cfgs, draws);
    else
        print_checks(stdout, &r, cfgs, ncfg);
    int wrong = 0;
    for (int i = 0; i < r.nrec; ++i)
        wrong += !r.rec[i].ok;
    if (r.nerr) {
        printf("\nERRORS:\n");
        for (int i = 0; i < r.nerr; ++i)
            printf("  %s\n", r.errors[i]);
    }
    printf("\nelapsed: %.1f s%s\n", ri.elapsed_s,
           failures || wrong ? "  (FAILED: see errors above)" : "");
    fflush(stdout);

    ri.draws = o.sweep ? draws : NULL;
    if (o.json && write_json(o.json, &o, &ri, &r, cfgs, ncfg) < 0)
        ++failures;
    if (o.csv && write_csv(o.csv, &ri, &r, cfgs) < 0)
        ++failures;
    if (o.plot && write_plot(o.plot, &o, &r, cfgs, ncfg, ks, nk, &ri) < 0)
        ++failures;
    int status = failures || wrong || r.nerr ? 1 : 0;
    free(r.rec);
    free(r.checks);
    return status;
}

int main(int argc, char **argv) {
    /* A write to a parent that went away must not kill a child silently. */
    signal(SIGPIPE, SIG_IGN);
    /* getopt_long permutes argv; children are re-executed with it as given. */
    char **orig = malloc(sizeof *orig * ((size_t)argc + 1));
    if (!orig)
        die("out of memory");
    memcpy(orig, argv, sizeof *orig * ((size_t)argc + 1));
    options o;
    parse_options(argc, argv, &o);
    int rc;
    switch (o.mode) {
    case MODE_RUN:
    case MODE_CALIBRATE:
        if (o.result_fd < 0)
            die("--child needs --result-fd");
        rc = o.mode == MODE_RUN ? child_run(&o) : child_calibrate(&o);
        break;
    case MODE_PARENT:
    default:
        rc = parent_main(argc, orig, &o);
        break;
    }
    free(orig);
    return rc;
}
