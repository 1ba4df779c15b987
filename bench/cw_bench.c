/*
 * cw-bench: compare cw's wait strategies on real kernels.
 *
 * The parent process never touches OpenCL. For every CPU configuration it
 * re-executes itself (fork + exec of /proc/self/exe with --child) pinned to
 * that many CPUs and with the OpenCL runtime's worker count set to match
 * (PoCL reads its environment at initialisation, so it has to be set before
 * exec). A child runs every kernel with every strategy, interleaved block by
 * block, and reports summaries to the parent through a pipe, one record a
 * line. The parent prints the tables and writes JSON, CSV and a plot.
 *
 * Every wait goes through cw_wait: the benchmark never waits by itself.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clhost.h"
#include "cw.h"
#include "relax.h" /* internal: the timer-slack measurement */

#include "cw_bench_plot_gp.h" /* generated from plot.gp: static const char cw_bench_plot_gp[] */

#define MAX_CONFIGS 16
#define MAX_BUSY 4
#define MAX_KERNELS (1 + MAX_BUSY)
#define NSTRAT CW_STRATEGY_COUNT

/* Defaults; --quick replaces the ones the user did not set. */
#define DEF_LAUNCHES 6000u
#define DEF_BLOCK 5u
#define DEF_WARMUP 10u
#define QUICK_LAUNCHES 20u
#define QUICK_WARMUP 2u
#define DEF_SAXPY_N (1u << 20)
#define DEF_BUSY_GLOBAL 1024u

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static const char *prog = "cw-bench";

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t ts_ns(const struct timespec *ts) {
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static bool parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out) {
    char *end;
    errno = 0;
    if (!s || !isdigit((unsigned char)*s))
        return false;
    unsigned long v = strtoul(s, &end, 0);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    if (!s || !*s)
        return false;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

/* Splits a comma-separated list in place; returns the number of items. */
static int split_list(char *s, char **items, int max) {
    int n = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        if (n == max)
            return -1;
        items[n++] = tok;
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */

typedef struct options {
    unsigned launches, block, warmup;
    bool launches_set, warmup_set;
    bool strategy_on[NSTRAT];
    bool strategies_set;
    int ncfg;
    int cfg_cpus[MAX_CONFIGS]; /* 0: all allowed CPUs */
    char cfg_spec[MAX_CONFIGS][16];
    int nbusy;
    double busy_us[MAX_BUSY];
    unsigned busy_iters[MAX_BUSY];
    bool busy_iters_set;
    unsigned long busy_global;
    unsigned long saxpy_n;
    char kernels_sel[256]; /* empty: all */
    const char *platform;
    const char *json, *csv, *plot;
    bool quick;
    unsigned long spin_us; /* cw_wait_options.spin_us (0: cw's default) */
    bool stats;            /* --stats: cw_stats per (kernel, config, strategy) */
    /* Internal, for the re-executed child. */
    enum { MODE_PARENT, MODE_RUN, MODE_CALIBRATE } mode;
    int result_fd;
    const char *label;
} options;

static void usage(FILE *f) {
    fprintf(f,
            "usage: cw-bench [options]\n"
            "Compares cw's wait strategies (cw_wait) on OpenCL kernels: the launching thread's\n"
            "CPU time, wall time, kernel run time (event profiling) and overhead per launch.\n"
            "Each CPU configuration runs in a re-executed copy of this program, pinned to its\n"
            "CPUs with the OpenCL runtime's worker count set to match (POCL_MAX_PTHREAD_COUNT,\n"
            "POCL_CPU_MAX_CU_COUNT, LP_NUM_THREADS). Strategies are interleaved in blocks.\n"
            "\n"
            "options (default in brackets):\n"
            "  --launches N        timed launches per (kernel, config, strategy) [%u; quick %u]\n"
            "  --block N           launches per strategy per round-robin block [%u]\n"
            "  --warmup N          untimed launches per strategy before timing [%u; quick %u]\n"
            "  --strategies LIST   comma-separated subset of: ",
            DEF_LAUNCHES, QUICK_LAUNCHES, DEF_BLOCK, DEF_WARMUP, QUICK_WARMUP);
    for (int s = CW_STRATEGY_BLOCKING; s < CW_STRATEGY_COUNT; ++s)
        fprintf(f, "%s%s", s > CW_STRATEGY_BLOCKING ? "," : "", cw_strategy_name((cw_strategy)s));
    fprintf(f,
            "\n"
            "                      [all of them]\n"
            "  --configs LIST      CPU configurations: a count N (the first N allowed CPUs,\n"
            "                      N workers) or 'all' (every allowed CPU) [1,all]\n"
            "  --kernels LIST      subset of: saxpy, busy (every busy size), or a busy kernel\n"
            "                      by name, e.g. busy-100us,busy-1ms [all]\n"
            "  --busy-us LIST      target run times of the busy kernel on one worker, in us,\n"
            "                      calibrated at start-up (at most %d) [100,1000]\n"
            "  --busy-iters LIST   iterations for each busy size instead of calibrating\n"
            "  --busy-global N     work-items of the busy kernel [%u]\n"
            "  --saxpy-n N         floats in saxpy [%u]\n"
            "  --platform NAME     first OpenCL platform whose name contains NAME\n"
            "  --spin-us N         cw_wait_options.spin_us: spin-park's budget, auto's cap [0 =\n"
            "                      cw's default]\n"
            "  --stats             print cw's wait statistics (cw_stats) per strategy and cell\n"
            "                      [$CW_PLATFORM, else PoCL, else the first]; for 'rusticl',\n"
            "                      RUSTICL_ENABLE=llvmpipe is set unless already set\n"
            "  --json FILE         write {\"header\": {...}, \"results\": [...]} [none]\n"
            "  --csv FILE          write one row per (kernel, config, strategy) [none]\n"
            "  --plot FILE.png     plot mean CPU and wall per launch with gnuplot [none]\n"
            "  --quick             smoke run: %u launches, %u warm-up, short calibration\n"
            "  --help              this text\n"
            "internal: --child run|calibrate, --result-fd FD, --label TEXT (set by the parent\n"
            "when it re-executes itself; not for direct use)\n"
            "\n"
            "The table goes to stdout, progress to stderr. Exit status: 0 when every wait\n"
            "succeeded and every result verified, 1 otherwise, 2 on a usage error.\n",
            MAX_BUSY, DEF_BUSY_GLOBAL, DEF_SAXPY_N, QUICK_LAUNCHES, QUICK_WARMUP);
}

static void parse_options(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->launches = DEF_LAUNCHES;
    o->block = DEF_BLOCK;
    o->warmup = DEF_WARMUP;
    for (int s = CW_STRATEGY_BLOCKING; s < CW_STRATEGY_COUNT; ++s)
        o->strategy_on[s] = true;
    o->ncfg = 2;
    o->cfg_cpus[0] = 1;
    strcpy(o->cfg_spec[0], "1");
    o->cfg_cpus[1] = 0;
    strcpy(o->cfg_spec[1], "all");
    o->nbusy = 2;
    o->busy_us[0] = 100;
    o->busy_us[1] = 1000;
    o->busy_global = DEF_BUSY_GLOBAL;
    o->saxpy_n = DEF_SAXPY_N;
    o->result_fd = -1;

    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long u;
        char buf[512], *items[MAX_CONFIGS + 1];
        if (!strcmp(a, "--stats")) {
            o->stats = true;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) {
            o->quick = true;
            continue;
        }
        if (!v)
            die("%s: missing value (see --help)", a);
        ++i;
        if (!strcmp(a, "--launches")) {
            if (!parse_uint(v, 1, 10000000, &u))
                die("--launches: expected a positive count, got '%s'", v);
            o->launches = (unsigned)u;
            o->launches_set = true;
        } else if (!strcmp(a, "--block")) {
            if (!parse_uint(v, 1, 1000000, &u))
                die("--block: expected a positive count, got '%s'", v);
            o->block = (unsigned)u;
        } else if (!strcmp(a, "--warmup")) {
            if (!parse_uint(v, 0, 1000000, &u))
                die("--warmup: expected a count, got '%s'", v);
            o->warmup = (unsigned)u;
            o->warmup_set = true;
        } else if (!strcmp(a, "--strategies")) {
            snprintf(buf, sizeof buf, "%s", v);
            char *names[NSTRAT + 1];
            int n = split_list(buf, names, NSTRAT);
            if (n <= 0)
                die("--strategies: expected a list of names, got '%s'", v);
            memset(o->strategy_on, 0, sizeof o->strategy_on);
            for (int k = 0; k < n; ++k) {
                cw_strategy s;
                if (cw_strategy_from_name(names[k], &s) != CW_OK)
                    die("--strategies: unknown strategy '%s' (see --help)", names[k]);
                if (s == CW_STRATEGY_DEFAULT)
                    s = CW_STRATEGY_COOPERATIVE; /* "default" is cw's recommended one */
                o->strategy_on[s] = true;
            }
            o->strategies_set = true;
        } else if (!strcmp(a, "--configs")) {
            snprintf(buf, sizeof buf, "%s", v);
            int n = split_list(buf, items, MAX_CONFIGS);
            if (n <= 0)
                die("--configs: expected a list like 1,all (at most %d), got '%s'", MAX_CONFIGS, v);
            for (int k = 0; k < n; ++k) {
                if (!strcmp(items[k], "all"))
                    o->cfg_cpus[k] = 0;
                else if (parse_uint(items[k], 1, 4096, &u))
                    o->cfg_cpus[k] = (int)u;
                else
                    die("--configs: '%s' is neither a CPU count nor 'all'", items[k]);
                snprintf(o->cfg_spec[k], sizeof o->cfg_spec[k], "%s", items[k]);
            }
            o->ncfg = n;
        } else if (!strcmp(a, "--busy-us")) {
            snprintf(buf, sizeof buf, "%s", v);
            int n = split_list(buf, items, MAX_BUSY);
            if (n < 0)
                die("--busy-us: at most %d sizes", MAX_BUSY);
            for (int k = 0; k < n; ++k)
                if (!parse_double(items[k], 1, 1e7, &o->busy_us[k]))
                    die("--busy-us: '%s' is not a run time in us (1 to 1e7)", items[k]);
            o->nbusy = n;
        } else if (!strcmp(a, "--busy-iters")) {
            snprintf(buf, sizeof buf, "%s", v);
            int n = split_list(buf, items, MAX_BUSY);
            if (n <= 0)
                die("--busy-iters: expected up to %d counts", MAX_BUSY);
            for (int k = 0; k < n; ++k) {
                if (!parse_uint(items[k], 64, 4000000000ul, &u))
                    die("--busy-iters: '%s' is not a count >= 64", items[k]);
                o->busy_iters[k] = (unsigned)u;
            }
            o->busy_iters_set = true;
            if (n != o->nbusy) /* given counts define the sizes; targets unknown */
                for (int k = 0; k < n; ++k)
                    o->busy_us[k] = 0;
            o->nbusy = n;
        } else if (!strcmp(a, "--spin-us")) {
            if (!parse_uint(v, 1, CW_SPIN_US_MAX, &o->spin_us))
                die("--spin-us: expected 1 to %u, got '%s'", CW_SPIN_US_MAX, v);
        } else if (!strcmp(a, "--busy-global")) {
            if (!parse_uint(v, 1, 1ul << 26, &u))
                die("--busy-global: expected a positive count, got '%s'", v);
            o->busy_global = u;
        } else if (!strcmp(a, "--saxpy-n")) {
            if (!parse_uint(v, 1, 1ul << 28, &u))
                die("--saxpy-n: expected a positive count, got '%s'", v);
            o->saxpy_n = u;
        } else if (!strcmp(a, "--kernels")) {
            snprintf(o->kernels_sel, sizeof o->kernels_sel, "%s", v);
        } else if (!strcmp(a, "--platform")) {
            o->platform = v;
        } else if (!strcmp(a, "--json")) {
            o->json = v;
        } else if (!strcmp(a, "--csv")) {
            o->csv = v;
        } else if (!strcmp(a, "--plot")) {
            o->plot = v;
        } else if (!strcmp(a, "--child")) {
            if (!strcmp(v, "run"))
                o->mode = MODE_RUN;
            else if (!strcmp(v, "calibrate"))
                o->mode = MODE_CALIBRATE;
            else
                die("--child: expected run or calibrate");
        } else if (!strcmp(a, "--result-fd")) {
            if (!parse_uint(v, 0, 1 << 20, &u))
                die("--result-fd: expected a file descriptor");
            o->result_fd = (int)u;
        } else if (!strcmp(a, "--label")) {
            o->label = v;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n\n", prog, a);
            usage(stderr);
            exit(2);
        }
    }
    if (o->quick) {
        if (!o->launches_set)
            o->launches = QUICK_LAUNCHES;
        if (!o->warmup_set)
            o->warmup = QUICK_WARMUP;
    }
    int nstrat = 0;
    for (int s = 0; s < NSTRAT; ++s)
        nstrat += o->strategy_on[s];
    if (nstrat == 0)
        die("no strategy selected");
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */

typedef struct kernel_spec {
    char name[32];
    bool is_busy;
    int busy_index;
    double target_us; /* busy: calibration target on one worker (0: iterations given) */
    unsigned iters;   /* busy */
} kernel_spec;

static void busy_name(double us, unsigned iters, char *out, size_t len) {
    if (us <= 0)
        snprintf(out, len, "busy-%ui", iters);
    else if (us >= 1000 && fmod(us, 1000) == 0)
        snprintf(out, len, "busy-%.0fms", us / 1000);
    else
        snprintf(out, len, "busy-%gus", us);
}

static bool kernel_selected(const options *o, const char *name, bool is_busy) {
    if (!o->kernels_sel[0])
        return true;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", o->kernels_sel);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (!strcmp(tok, name) || (is_busy && !strcmp(tok, "busy")))
            return true;
    return false;
}

/* The kernels to run, in order; busy iterations filled in when known. */
static int build_kernels(const options *o, kernel_spec *k) {
    int n = 0;
    if (kernel_selected(o, "saxpy", false)) {
        memset(&k[n], 0, sizeof k[n]);
        snprintf(k[n].name, sizeof k[n].name, "saxpy");
        ++n;
    }
    for (int b = 0; b < o->nbusy; ++b) {
        char name[32];
        busy_name(o->busy_us[b], o->busy_iters[b], name, sizeof name);
        if (!kernel_selected(o, name, true))
            continue;
        memset(&k[n], 0, sizeof k[n]);
        snprintf(k[n].name, sizeof k[n].name, "%s", name);
        k[n].is_busy = true;
        k[n].busy_index = b;
        k[n].target_us = o->busy_us[b];
        k[n].iters = o->busy_iters[b];
        ++n;
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */

enum { M_CPU, M_WALL, M_KERNEL, M_OVERHEAD, M_COUNT };
enum { S_MEAN, S_MEDIAN, S_P90, S_P99, S_MAX, S_COUNT };
static const char *const metric_names[M_COUNT] = {"cpu", "wall", "kernel", "overhead"};
static const char *const stat_names[S_COUNT] = {"mean", "median", "p90", "p99", "max"};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile_sorted(const double *v, size_t n, double q) {
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;
    return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

/* Sorts v in place. */
static void summarize(double *v, size_t n, double out[S_COUNT]) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += v[i];
    qsort(v, n, sizeof *v, cmp_double);
    out[S_MEAN] = n ? sum / (double)n : NAN;
    out[S_MEDIAN] = quantile_sorted(v, n, 0.5);
    out[S_P90] = quantile_sorted(v, n, 0.9);
    out[S_P99] = quantile_sorted(v, n, 0.99);
    out[S_MAX] = n ? v[n - 1] : NAN;
}

/* ------------------------------------------------------------------------ */
/* Child: the measurements                                                  */

typedef struct child {
    const options *o;
    FILE *out; /* results to the parent */
    cwh h;
    cwh_saxpy saxpy;
    unsigned saxpy_launches; /* a = +0.5 and -0.5 alternate, so y stays exact */
    cwh_busy busy;
    const char *label;
    bool tty;
    bool calib_wall; /* calibration: profiling unusable, time by wall */
    bool noted_profiling;
} child;

static void report_error(child *c, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s%s%s\n", prog, c->label ? c->label : "", c->label ? ": " : "", msg);
    for (char *p = msg; *p; ++p)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    fprintf(c->out, "E\t%s\n", msg);
    fflush(c->out);
}

static cl_int enqueue(child *c, const kernel_spec *k, cl_event *ev) {
    if (k->is_busy)
        return cwh_busy_enqueue(&c->h, &c->busy, k->iters, 0, NULL, ev);
    float a = (c->saxpy_launches & 1u) ? -0.5f : 0.5f;
    cl_int err = cwh_saxpy_enqueue(&c->h, &c->saxpy, a, 0, NULL, ev);
    if (err == CL_SUCCESS)
        c->saxpy_launches++;
    return err;
}

typedef struct sample {
    double cpu_us, wall_us, kernel_us;
} sample;

/* --stats: counters of one strategy's timed launches, summed from the
 * difference of cw_stats snapshots around each launch (the other strategies'
 * launches in between do not count). */
#define NSTATS (8 + CW_STATS_LATENCY_BUCKETS)
static void stats_vector(const cw_stats *s, uint64_t v[NSTATS]) {
    uint64_t head[8] = {s->waits,  s->spins, s->yields,   s->parks,
                        s->sleeps, s->polls, s->timeouts, s->latency_count};
    memcpy(v, head, sizeof head);
    for (int b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
        v[8 + b] = s->latency_us[b];
}
static const char *const stats_names[8] = {"waits",  "spins", "yields",   "parks",
                                           "sleeps", "polls", "timeouts", "latency_count"};

/* One timed launch: enqueue + cw_wait. Returns 0, or -1 after reporting. */
static int launch(child *c, const kernel_spec *k, cw_strategy s, sample *out) {
    cw_wait_options wo = {.strategy = s, .spin_us = (uint32_t)c->o->spin_us};
    struct timespec c0, w0, w1, c1;
    cl_event ev = NULL;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &w0);
    cl_int err = enqueue(c, k, &ev);
    int rc = CW_OK;
    cl_int st = CL_SUCCESS;
    if (err == CL_SUCCESS)
        rc = cw_wait(ev, &wo, &st);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    if (err != CL_SUCCESS) {
        report_error(c, "%s: enqueue failed: OpenCL error %d", k->name, err);
        return -1;
    }
    if (rc != CW_OK) {
        report_error(c, "%s: cw_wait(%s) failed: %s (OpenCL status %d)", k->name,
                     cw_strategy_name(s), cw_strerror(rc), st);
        clFinish(c->h.queue);
        clReleaseEvent(ev);
        return -1;
    }
    cl_ulong kns = 0;
    err = cwh_event_runtime_ns(ev, &kns);
    clReleaseEvent(ev);
    if (err != CL_SUCCESS) {
        report_error(c, "%s: event profiling failed: OpenCL error %d", k->name, err);
        return -1;
    }
    if (out) {
        out->cpu_us = (double)(ts_ns(&c1) - ts_ns(&c0)) / 1e3;
        out->wall_us = (double)(ts_ns(&w1) - ts_ns(&w0)) / 1e3;
        out->kernel_us = (double)kns / 1e3;
    }
    return 0;
}

static void progress(child *c, const kernel_spec *k, unsigned round, unsigned rounds, bool done) {
    if (c->tty) {
        fprintf(stderr, "\r[%s kernel %s] block %u/%u%s", c->label, k->name, round, rounds,
                done ? "\n" : "   ");
    } else {
        /* Not a terminal: about ten lines per kernel. */
        unsigned step = rounds >= 10 ? rounds / 10 : 1;
        if (done || round % step == 0)
            fprintf(stderr, "[%s kernel %s] block %u/%u\n", c->label, k->name, round, rounds);
    }
}

/* Runs one kernel with every selected strategy; returns 0 or -1 (reported). */
static int run_kernel(child *c, const kernel_spec *k) {
    const options *o = c->o;
    cw_strategy strat[NSTRAT];
    int ns = 0;
    for (int s = 0; s < NSTRAT; ++s)
        if (o->strategy_on[s])
            strat[ns++] = (cw_strategy)s;

    if (k->is_busy) {
        fprintf(c->out, "K\t%s\titers=%u global=%lu\n", k->name, k->iters, o->busy_global);
    } else {
        fprintf(c->out, "K\t%s\tn=%lu\n", k->name, o->saxpy_n);
    }
    fflush(c->out);

    /* Warm-up: kernel compilation (cache), first launches, every strategy's
     * first use (completion pool, callback thread paths). */
    if (launch(c, k, CW_STRATEGY_BLOCKING, NULL) != 0)
        return -1;
    for (unsigned w = 0; w < o->warmup; ++w)
        for (int j = 0; j < ns; ++j)
            if (launch(c, k, strat[j], NULL) != 0)
                return -1;

    sample *samples[NSTRAT] = {0};
    for (int j = 0; j < ns; ++j) {
        samples[j] = calloc(o->launches, sizeof(sample));
        if (!samples[j])
            die("out of memory");
    }
    unsigned rounds = (o->launches + o->block - 1) / o->block;
    int rc = 0;
    uint64_t counts[NSTRAT][NSTATS];
    memset(counts, 0, sizeof counts);
    /* Round r runs a block of each strategy, in a new random order each
     * round (a fixed seed, so runs are repeatable), so drift and ordering
     * effects hit every strategy alike. A rotation alone kept each
     * strategy's predecessor fixed, and with nine strategies that mattered:
     * the one after blocking measured up to 2 us CPU per launch lower than
     * the same code in another position. */
    int order[NSTRAT];
    for (int j = 0; j < ns; ++j)
        order[j] = j;
    uint32_t seed = 0x9e3779b9u;
    for (unsigned r = 0; r < rounds && rc == 0; ++r) {
        unsigned first = r * o->block;
        unsigned count = o->launches - first < o->block ? o->launches - first : o->block;
        for (int j = ns - 1; j > 0; --j) {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            int pick = (int)(seed % (uint32_t)(j + 1)), tmp = order[j];
            order[j] = order[pick];
            order[pick] = tmp;
        }
        for (int j = 0; j < ns && rc == 0; ++j) {
            int idx = order[j];
            cw_stats before, after;
            if (o->stats)
                cw_stats_get(&before);
            for (unsigned m = 0; m < count && rc == 0; ++m)
                rc = launch(c, k, strat[idx], &samples[idx][first + m]);
            if (o->stats) {
                uint64_t a[NSTATS], b[NSTATS];
                cw_stats_get(&after);
                stats_vector(&before, b);
                stats_vector(&after, a);
                for (int q = 0; q < NSTATS; ++q)
                    counts[idx][q] += a[q] - b[q];
            }
        }
        progress(c, k, r + 1, rounds, r + 1 == rounds);
    }

    /* Verify what the device computed, after every launch of this kernel. */
    size_t bad = 0;
    cl_int err = clFinish(c->h.queue);
    if (err == CL_SUCCESS)
        err = k->is_busy ? cwh_busy_check(&c->h, &c->busy, &bad)
                         : cwh_saxpy_check(&c->h, &c->saxpy, 0.5f, c->saxpy_launches & 1u, &bad);
    bool ok = rc == 0 && err == CL_SUCCESS && bad == 0;
    if (err != CL_SUCCESS)
        report_error(c, "%s: reading the result back failed: OpenCL error %d", k->name, err);
    else if (bad)
        report_error(c, "%s: WRONG RESULT: %zu elements differ", k->name, bad);

    if (rc == 0 && o->launches > 0) {
        double wall_sum = 0, kernel_sum = 0;
        for (unsigned i = 0; i < o->launches; ++i) {
            wall_sum += samples[0][i].wall_us;
            kernel_sum += samples[0][i].kernel_us;
        }
        if (kernel_sum < 0.01 * wall_sum && !c->noted_profiling) {
            c->noted_profiling = true;
            fprintf(c->out, "N\tevent profiling reports almost no kernel run time on this "
                            "platform: the kernel and overhead columns are meaningless\n");
        }
    }
    if (rc == 0) {
        for (int j = 0; j < ns; ++j) {
            double *v = malloc(sizeof(double) * o->launches);
            if (!v)
                die("out of memory");
            fprintf(c->out, "R\t%s\t%s\t%u\t%d\t%zu", k->name, cw_strategy_name(strat[j]),
                    o->launches, ok, bad);
            for (int m = 0; m < M_COUNT; ++m) {
                for (unsigned i = 0; i < o->launches; ++i) {
                    const sample *p = &samples[j][i];
                    v[i] = m == M_CPU      ? p->cpu_us
                           : m == M_WALL   ? p->wall_us
                           : m == M_KERNEL ? p->kernel_us
                                           : p->wall_us - p->kernel_us;
                }
                double st[S_COUNT];
                summarize(v, o->launches, st);
                for (int q = 0; q < S_COUNT; ++q)
                    fprintf(c->out, "\t%.4f", st[q]);
            }
            fputc('\n', c->out);
            free(v);
            if (o->stats) {
                fprintf(c->out, "S\t%s\t%s", k->name, cw_strategy_name(strat[j]));
                for (int q = 0; q < NSTATS; ++q)
                    fprintf(c->out, "\t%llu", (unsigned long long)counts[j][q]);
                fputc('\n', c->out);
            }
        }
        fflush(c->out);
    }
    for (int j = 0; j < ns; ++j)
        free(samples[j]);
    return ok ? 0 : -1;
}

static int child_open(child *c, const options *o) {
    memset(c, 0, sizeof *c);
    c->o = o;
    c->label = o->label ? o->label : "child";
    c->tty = isatty(STDERR_FILENO);
    c->out = fdopen(o->result_fd, "w");
    if (!c->out)
        die("--result-fd %d: %s", o->result_fd, strerror(errno));
    char msg[2300];
    cl_int err = cwh_open(&c->h, o->platform, true, msg, sizeof msg);
    if (err != CL_SUCCESS) {
        report_error(c, "OpenCL set-up failed: %s", msg);
        return -1;
    }
    fprintf(c->out,
            "H\tplatform_name\t%s\nH\tplatform_version\t%s\nH\tdevice_name\t%s\n"
            "H\tdevice_version\t%s\nH\tdriver_version\t%s\n",
            c->h.platform_name, c->h.platform_version, c->h.device_name, c->h.device_version,
            c->h.driver_version);
    fflush(c->out);
    return 0;
}

/* Median kernel run time of `reps` busy launches with `iters`, in us. */
static double busy_runtime_us(child *c, unsigned iters, int reps) {
    kernel_spec k = {.is_busy = true, .iters = iters};
    snprintf(k.name, sizeof k.name, "busy (calibration)");
    double t[32];
    if (reps > 32)
        reps = 32;
    for (int r = 0; r < reps; ++r) {
        sample s;
        if (launch(c, &k, CW_STRATEGY_BLOCKING, &s) != 0)
            return -1;
        /* Event profiling that reports nothing useful (Mesa 22 rusticl reports
         * about 1 ns): fall back to the blocking launch's wall time. */
        if (!c->calib_wall && s.wall_us > 50 && s.kernel_us < 0.01 * s.wall_us) {
            c->calib_wall = true;
            fprintf(c->out,
                    "N\tevent profiling reports %.3f us for a launch of %.0f us wall: "
                    "busy calibration uses wall time instead\n",
                    s.kernel_us, s.wall_us);
        }
        t[r] = c->calib_wall ? s.wall_us : s.kernel_us;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    return quantile_sorted(t, (size_t)reps, 0.5);
}

/*
 * Calibration: fit run time = a + b * iters from two points well above the
 * launch's fixed cost, then solve for each target. Prints
 * "C <index> <iters> <target_us> <measured_us>" per busy size.
 */
static int child_calibrate(const options *o) {
    child c;
    if (child_open(&c, o) != 0)
        return 1;
    if (cwh_busy_init(&c.h, &c.busy, o->busy_global) != CL_SUCCESS) {
        report_error(&c, "cannot allocate the busy kernel's buffer");
        return 1;
    }
    int reps = o->quick ? 5 : 9;
    double maxus = 0;
    for (int b = 0; b < o->nbusy; ++b)
        maxus = o->busy_us[b] > maxus ? o->busy_us[b] : maxus;
    /* Warm up first (kernel build or cache, the worker threads, the CPU's
     * clock): the first launches of a process run slower. */
    double warm_until = now_s() + (o->quick ? 0.05 : 0.2);
    while (now_s() < warm_until)
        if (busy_runtime_us(&c, 256, 1) < 0)
            return 1;
    unsigned i1 = 64;
    double t1 = busy_runtime_us(&c, i1, 3);
    /* Grow until the run time dominates fixed costs (or reaches the largest target). */
    double floor_us = maxus > 200 ? 200 : maxus;
    while (t1 >= 0 && t1 < floor_us && i1 < (1u << 28)) {
        i1 *= 2;
        t1 = busy_runtime_us(&c, i1, 3);
    }
    if (t1 < 0)
        return 1;
    t1 = busy_runtime_us(&c, i1, reps);
    unsigned i2 = i1 * 4;
    double t2 = busy_runtime_us(&c, i2, reps);
    if (t2 < 0)
        return 1;
    double slope = (t2 - t1) / (double)(i2 - i1);
    double icpt = t1 - slope * (double)i1;
    if (!(slope > 0)) {
        report_error(&c,
                     "calibration failed: run time does not grow with iterations (%g us "
                     "at %u, %g us at %u)",
                     t1, i1, t2, i2);
        return 1;
    }
    int rc = 0;
    for (int b = 0; b < o->nbusy; ++b) {
        double want = (o->busy_us[b] - icpt) / slope;
        unsigned iters = want < 64 ? 64 : want > 4e9 ? 4000000000u : (unsigned)(want + 0.5);
        double got = busy_runtime_us(&c, iters, reps);
        if (got < 0)
            return 1;
        /* One proportional correction when the straight line missed. */
        if (got > 0 && fabs(got / o->busy_us[b] - 1) > 0.03) {
            double again = (double)iters * o->busy_us[b] / got;
            iters = again < 64 ? 64 : again > 4e9 ? 4000000000u : (unsigned)(again + 0.5);
            got = busy_runtime_us(&c, iters, reps);
            if (got < 0)
                return 1;
        }
        fprintf(c.out, "C\t%d\t%u\t%.1f\t%.2f\n", b, iters, o->busy_us[b], got);
    }
    size_t bad = 0;
    if (cwh_busy_check(&c.h, &c.busy, &bad) != CL_SUCCESS || bad) {
        report_error(&c, "busy kernel: WRONG RESULT during calibration (%zu bad)", bad);
        rc = 1;
    }
    fflush(c.out);
    cwh_busy_free(&c.busy);
    cwh_close(&c.h);
    fclose(c.out);
    return rc;
}

static int child_run(const options *o) {
    child c;
    if (child_open(&c, o) != 0)
        return 1;
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(o, ks);
    int failures = 0;
    for (int i = 0; i < nk; ++i) {
        cl_int err;
        if (ks[i].is_busy) {
            if (ks[i].iters < 64) {
                report_error(&c, "%s: iterations unknown", ks[i].name);
                return 1;
            }
            err = cwh_busy_init(&c.h, &c.busy, o->busy_global);
        } else {
            err = cwh_saxpy_init(&c.h, &c.saxpy, (cl_uint)o->saxpy_n);
            c.saxpy_launches = 0;
        }
        if (err != CL_SUCCESS) {
            report_error(&c, "%s: cannot allocate buffers: OpenCL error %d", ks[i].name, err);
            ++failures;
            continue;
        }
        failures += run_kernel(&c, &ks[i]) != 0;
        if (ks[i].is_busy)
            cwh_busy_free(&c.busy);
        else
            cwh_saxpy_free(&c.saxpy);
    }
    cwh_close(&c.h);
    fclose(c.out);
    return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Parent: configurations, child processes, aggregation, output              */

typedef struct config {
    char spec[16];
    int ncpus;
    char cpu_list[256];
    cpu_set_t set;
} config;

typedef struct record {
    char kernel[32];
    char kernel_param[64];
    int cfg;
    char strategy[48];
    unsigned launches;
    bool ok;
    size_t mismatches;
    double st[M_COUNT][S_COUNT];
    bool has_stats;
    uint64_t stats[NSTATS];
} record;

typedef struct results {
    record *rec;
    int nrec, caprec;
    char header[8][2][256];
    int nheader;
    char errors[32][512];
    int nerr;
    char notes[8][512];
    int nnotes;
    /* Per (kernel name): parameter string, from the first child that ran it. */
    char kparam[MAX_KERNELS][2][64];
    int nkparam;
    bool child_failed;
} results;

static void cpu_list_string(const cpu_set_t *set, char *out, size_t len) {
    size_t pos = 0;
    out[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, set))
            continue;
        int end = cpu;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
            ++end;
        int w = end > cpu ? snprintf(out + pos, len - pos, "%s%d-%d", pos ? "," : "", cpu, end)
                          : snprintf(out + pos, len - pos, "%s%d", pos ? "," : "", cpu);
        if (w < 0 || (size_t)w >= len - pos)
            return;
        pos += (size_t)w;
        cpu = end;
    }
}

static int build_configs(const options *o, config *cfg) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        die("sched_getaffinity: %s", strerror(errno));
    int nallowed = CPU_COUNT(&allowed);
    for (int i = 0; i < o->ncfg; ++i) {
        config *c = &cfg[i];
        snprintf(c->spec, sizeof c->spec, "%s", o->cfg_spec[i]);
        int want = o->cfg_cpus[i] ? o->cfg_cpus[i] : nallowed;
        if (want > nallowed)
            die("--configs: %d CPUs asked, only %d allowed", want, nallowed);
        CPU_ZERO(&c->set);
        int got = 0;
        for (int cpu = 0; cpu < CPU_SETSIZE && got < want; ++cpu)
            if (CPU_ISSET(cpu, &allowed)) {
                CPU_SET(cpu, &c->set);
                ++got;
            }
        c->ncpus = got;
        cpu_list_string(&c->set, c->cpu_list, sizeof c->cpu_list);
    }
    return o->ncfg;
}

static void config_title(const config *c, char *out, size_t len) {
    snprintf(out, len, "%s%d CPU%s (cpu %s), %d worker%s", strcmp(c->spec, "all") ? "" : "all ",
             c->ncpus, c->ncpus == 1 ? "" : "s", c->cpu_list, c->ncpus, c->ncpus == 1 ? "" : "s");
}

static record *add_record(results *r) {
    if (r->nrec == r->caprec) {
        r->caprec = r->caprec ? 2 * r->caprec : 64;
        r->rec = realloc(r->rec, sizeof *r->rec * (size_t)r->caprec);
        if (!r->rec)
            die("out of memory");
    }
    record *p = &r->rec[r->nrec++];
    memset(p, 0, sizeof *p);
    return p;
}

/* Splits a tab-separated line in place. */
static int split_tabs(char *line, char **f, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

/* Calibration results, by busy index. */
typedef struct calibration {
    bool have[MAX_BUSY];
    unsigned iters[MAX_BUSY];
    double target_us[MAX_BUSY], measured_us[MAX_BUSY];
} calibration;

static void parse_child_line(char *line, int cfg, results *r, calibration *cal) {
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    char *f[8 + M_COUNT * S_COUNT + NSTATS];
    int n = split_tabs(line, f, (int)(sizeof f / sizeof f[0]));
    if (!strcmp(f[0], "H") && n == 3) {
        for (int i = 0; i < r->nheader; ++i)
            if (!strcmp(r->header[i][0], f[1]))
                return;
        if (r->nheader < 8) {
            snprintf(r->header[r->nheader][0], 256, "%s", f[1]);
            snprintf(r->header[r->nheader][1], 256, "%s", f[2]);
            r->nheader++;
        }
    } else if (!strcmp(f[0], "N") && n >= 2) {
        for (int i = 0; i < r->nnotes; ++i)
            if (!strcmp(r->notes[i], f[1]))
                return;
        if (r->nnotes < 8)
            snprintf(r->notes[r->nnotes++], 512, "%s", f[1]);
    } else if (!strcmp(f[0], "E") && n >= 2) {
        if (r->nerr < 32)
            snprintf(r->errors[r->nerr++], 512, "%s", f[1]);
    } else if (!strcmp(f[0], "K") && n == 3) {
        for (int i = 0; i < r->nkparam; ++i)
            if (!strcmp(r->kparam[i][0], f[1]))
                return;
        if (r->nkparam < MAX_KERNELS) {
            snprintf(r->kparam[r->nkparam][0], 64, "%s", f[1]);
            snprintf(r->kparam[r->nkparam][1], 64, "%s", f[2]);
            r->nkparam++;
        }
    } else if (!strcmp(f[0], "C") && n == 5 && cal) {
        int b = atoi(f[1]);
        if (b >= 0 && b < MAX_BUSY) {
            cal->have[b] = true;
            cal->iters[b] = (unsigned)strtoul(f[2], NULL, 10);
            cal->target_us[b] = atof(f[3]);
            cal->measured_us[b] = atof(f[4]);
        }
    } else if (!strcmp(f[0], "S") && n == 3 + NSTATS) {
        /* Follows its R line: attach to that record. */
        for (int i = r->nrec - 1; i >= 0; --i) {
            record *p = &r->rec[i];
            if (p->cfg == cfg && !strcmp(p->kernel, f[1]) && !strcmp(p->strategy, f[2])) {
                p->has_stats = true;
                for (int q = 0; q < NSTATS; ++q)
                    p->stats[q] = strtoull(f[3 + q], NULL, 10);
                break;
            }
        }
    } else if (!strcmp(f[0], "R") && n == 6 + M_COUNT * S_COUNT) {
        record *p = add_record(r);
        snprintf(p->kernel, sizeof p->kernel, "%s", f[1]);
        snprintf(p->strategy, sizeof p->strategy, "%s", f[2]);
        p->cfg = cfg;
        p->launches = (unsigned)strtoul(f[3], NULL, 10);
        p->ok = atoi(f[4]) != 0;
        p->mismatches = (size_t)strtoull(f[5], NULL, 10);
        for (int m = 0; m < M_COUNT; ++m)
            for (int q = 0; q < S_COUNT; ++q)
                p->st[m][q] = atof(f[6 + m * S_COUNT + q]);
    } else {
        fprintf(stderr, "%s: unexpected line from child: %s\n", prog, line);
    }
}

/*
 * Re-executes this program pinned to `c` with the worker count set, passing
 * the user's arguments plus `extra`. Reads its result lines. Returns the
 * child's exit status (or 128 + signal).
 */
static int run_child(int argc, char **argv, const options *o, const config *c,
                     const char *const *extra, int cfg, results *r, calibration *cal) {
    int fds[2];
    if (pipe(fds) != 0)
        die("pipe: %s", strerror(errno));
    char fdbuf[16];
    snprintf(fdbuf, sizeof fdbuf, "%d", fds[1]);
    int nextra = 0;
    while (extra[nextra])
        ++nextra;
    char **args = calloc((size_t)argc + (size_t)nextra + 3, sizeof *args);
    if (!args)
        die("out of memory");
    int na = 0;
    args[na++] = argv[0];
    for (int i = 1; i < argc; ++i)
        args[na++] = argv[i];
    for (int i = 0; i < nextra; ++i)
        args[na++] = (char *)extra[i];
    args[na++] = "--result-fd";
    args[na++] = fdbuf;
    args[na] = NULL;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        char n[16];
        snprintf(n, sizeof n, "%d", c->ncpus);
        /* PoCL 3.x and >= 4.0 spellings; Mesa llvmpipe (rusticl) threads. */
        setenv("POCL_MAX_PTHREAD_COUNT", n, 1);
        setenv("POCL_CPU_MAX_CU_COUNT", n, 1);
        setenv("LP_NUM_THREADS", n, 1);
        if (o->platform && strstr(o->platform, "rusticl") && !getenv("RUSTICL_ENABLE"))
            setenv("RUSTICL_ENABLE", "llvmpipe", 1);
        if (sched_setaffinity(0, sizeof c->set, &c->set) != 0) {
            fprintf(stderr, "%s: sched_setaffinity(%s): %s\n", prog, c->cpu_list, strerror(errno));
            _exit(127);
        }
        execv("/proc/self/exe", args);
        fprintf(stderr, "%s: exec /proc/self/exe: %s\n", prog, strerror(errno));
        _exit(127);
    }
    free(args);
    close(fds[1]);
    int errors_before = r->nerr;
    FILE *in = fdopen(fds[0], "r");
    if (!in)
        die("fdopen: %s", strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0)
        parse_child_line(line, cfg, r, cal);
    free(line);
    fclose(in);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid: %s", strerror(errno));
    int rc = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    if (rc != 0 && r->nerr < 32) {
        /* Make a crash or a silent failure visible in the table and the JSON. */
        if (WIFSIGNALED(status))
            snprintf(r->errors[r->nerr++], 512, "config %s: child died of signal %d (%s)", c->spec,
                     WTERMSIG(status), strsignal(WTERMSIG(status)));
        else if (r->nerr == errors_before)
            snprintf(r->errors[r->nerr++], 512, "config %s: child exited with status %d", c->spec,
                     rc);
    }
    if (WIFSIGNALED(status))
        fprintf(stderr, "%s: child for config %s died of signal %d (%s)\n", prog, c->spec,
                WTERMSIG(status), strsignal(WTERMSIG(status)));
    return rc;
}

static const record *find_record(const results *r, const char *kernel, int cfg,
                                 const char *strategy) {
    for (int i = 0; i < r->nrec; ++i)
        if (r->rec[i].cfg == cfg && !strcmp(r->rec[i].kernel, kernel) &&
            !strcmp(r->rec[i].strategy, strategy))
            return &r->rec[i];
    return NULL;
}

/* Ratio of a record's statistic to blocking's in the same (kernel, config); NAN if none. */
static double ratio(const results *r, const record *p, int metric, int stat) {
    const record *b = find_record(r, p->kernel, p->cfg, "blocking");
    if (!b || !(b->st[metric][stat] > 0))
        return NAN;
    return p->st[metric][stat] / b->st[metric][stat];
}

static const char *kernel_param(const results *r, const char *kernel) {
    for (int i = 0; i < r->nkparam; ++i)
        if (!strcmp(r->kparam[i][0], kernel))
            return r->kparam[i][1];
    return "";
}

static void fmt_ratio(char *buf, size_t len, double v) {
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f", v);
}

static void print_tables(FILE *f, const results *r, const config *cfgs, int ncfg,
                         const kernel_spec *ks, int nk) {
    for (int k = 0; k < nk; ++k) {
        for (int c = 0; c < ncfg; ++c) {
            char title[320];
            config_title(&cfgs[c], title, sizeof title);
            bool any = false;
            for (int i = 0; i < r->nrec; ++i)
                any |= r->rec[i].cfg == c && !strcmp(r->rec[i].kernel, ks[k].name);
            if (!any)
                continue;
            fprintf(f, "\n== %s (%s) | config %d/%d: %s ==\n", ks[k].name,
                    kernel_param(r, ks[k].name), c + 1, ncfg, title);
            fprintf(f, "%-31s | %-35s | %-26s | %-17s | %-13s %-13s\n", "", "CPU us", "wall us",
                    "kernel   overhd", "CPU x", "wall x");
            fprintf(f, "%-24s %6s | %8s %8s %8s %8s | %8s %8s %8s | %8s %8s | %6s %6s %6s %6s\n",
                    "strategy", "n", "mean", "median", "p90", "p99", "mean", "median", "p99",
                    "median", "median", "mean", "median", "mean", "median");
            for (int i = 0; i < r->nrec; ++i) {
                const record *p = &r->rec[i];
                if (p->cfg != c || strcmp(p->kernel, ks[k].name))
                    continue;
                char rc[4][16];
                fmt_ratio(rc[0], 16, ratio(r, p, M_CPU, S_MEAN));
                fmt_ratio(rc[1], 16, ratio(r, p, M_CPU, S_MEDIAN));
                fmt_ratio(rc[2], 16, ratio(r, p, M_WALL, S_MEAN));
                fmt_ratio(rc[3], 16, ratio(r, p, M_WALL, S_MEDIAN));
                fprintf(f,
                        "%-24s %6u | %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f | %8.1f %8.1f | "
                        "%6s %6s %6s %6s%s\n",
                        p->strategy, p->launches, p->st[M_CPU][S_MEAN], p->st[M_CPU][S_MEDIAN],
                        p->st[M_CPU][S_P90], p->st[M_CPU][S_P99], p->st[M_WALL][S_MEAN],
                        p->st[M_WALL][S_MEDIAN], p->st[M_WALL][S_P99], p->st[M_KERNEL][S_MEDIAN],
                        p->st[M_OVERHEAD][S_MEDIAN], rc[0], rc[1], rc[2], rc[3],
                        p->ok ? "" : "  WRONG RESULT");
            }
        }
    }
}

/* --stats: per cell, the counters per launch and the wake-up latency histogram. */
static void print_stats(FILE *f, const results *r, const config *cfgs, int ncfg,
                        const kernel_spec *ks, int nk) {
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
        }
}

/*
 * How long a requested sleep really takes (clock_nanosleep, relative), with
 * the thread's default timer slack and with 1 ns: the figures behind
 * backoff-poll lowering the slack (seed 002: the JDK's ThreadSleep table).
 * Measured in the parent thread, unpinned, after the children finished.
 */
#define NSLEEP 4
static const unsigned sleep_req_us[NSLEEP] = {1, 10, 100, 1000};
typedef struct slack_row {
    unsigned requested_us;
    uint64_t slack_ns;
    bool is_default;
    unsigned n;
    double mean_us, median_us, p90_us;
} slack_row;

static void measure_timerslack(bool quick, slack_row rows[2 * NSLEEP]) {
    uint64_t dflt = 0;
    cw_timerslack_get(&dflt);
    for (int pass = 0; pass < 2; ++pass) {
        uint64_t old = 0;
        if (pass == 1)
            cw_timerslack_set(1, &old);
        for (int i = 0; i < NSLEEP; ++i) {
            unsigned n = quick ? 20 : sleep_req_us[i] >= 1000 ? 200 : 1000;
            double *v = malloc(n * sizeof *v);
            if (!v)
                die("out of memory");
            struct timespec req = {0, (long)sleep_req_us[i] * 1000};
            for (unsigned j = 0; j < n; ++j) {
                struct timespec a, b;
                clock_gettime(CLOCK_MONOTONIC, &a);
                clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
                clock_gettime(CLOCK_MONOTONIC, &b);
                v[j] = (double)(ts_ns(&b) - ts_ns(&a)) / 1e3;
            }
            double st[S_COUNT];
            summarize(v, n, st);
            free(v);
            rows[pass * NSLEEP + i] = (slack_row){sleep_req_us[i], pass ? 1 : dflt, pass == 0, n,
                                                  st[S_MEAN],      st[S_MEDIAN],    st[S_P90]};
        }
        if (pass == 1)
            cw_timerslack_set(old, NULL);
    }
}

static void print_timerslack(FILE *f, const slack_row rows[2 * NSLEEP]) {
    fprintf(f,
            "\n== timer slack: a requested sleep (clock_nanosleep) against the time it took ==\n");
    fprintf(f, "%-12s | %-32s | %s\n", "", "default slack", "1 ns slack");
    fprintf(f, "%-12s | %6s %8s %8s %8s | %6s %8s %8s %8s\n", "requested us", "n", "mean", "median",
            "p90", "n", "mean", "median", "p90");
    for (int i = 0; i < NSLEEP; ++i) {
        const slack_row *a = &rows[i], *b = &rows[NSLEEP + i];
        fprintf(f, "%12u | %6u %8.1f %8.1f %8.1f | %6u %8.1f %8.1f %8.1f\n", a->requested_us, a->n,
                a->mean_us, a->median_us, a->p90_us, b->n, b->mean_us, b->median_us, b->p90_us);
    }
    fprintf(f, "(default slack of this thread: %llu ns)\n", (unsigned long long)rows[0].slack_ns);
}

/* --- JSON / CSV --- */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, "%.4f", v);
    else
        fputs("null", f);
}

typedef struct run_info {
    char command[4096];
    char date[64];
    char host[6 * sizeof(((struct utsname *)0)->sysname)];
    char kernel_name[sizeof(((struct utsname *)0)->sysname)];
    char kernel_release[sizeof(((struct utsname *)0)->release)];
    char kernel_version[sizeof(((struct utsname *)0)->version)];
    char machine[sizeof(((struct utsname *)0)->machine)];
    char nodename[sizeof(((struct utsname *)0)->nodename)];
    long nproc_online;
    int nallowed;
    double elapsed_s;
    calibration cal;
    bool calibrated;
} run_info;

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

/* Record fields shared by JSON and CSV, in order. */
typedef struct field {
    const char *name;
    int metric, stat; /* -1: not a statistic */
} field;

/* 0, or -1 after reporting why the file could not be written. */
static int write_json(const char *path, const options *o, const run_info *ri, const results *r,
                      const config *cfgs, int ncfg, const slack_row *slack) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    fputs("{\n  \"header\": {\n", f);
    for (int i = 0; i < r->nheader; ++i) {
        fprintf(f, "    \"%s\": ", r->header[i][0]);
        json_string(f, r->header[i][1]);
        fputs(",\n", f);
    }
    fputs("    \"host\": {\"sysname\": ", f);
    json_string(f, ri->kernel_name);
    fputs(", \"nodename\": ", f);
    json_string(f, ri->nodename);
    fputs(", \"release\": ", f);
    json_string(f, ri->kernel_release);
    fputs(", \"version\": ", f);
    json_string(f, ri->kernel_version);
    fputs(", \"machine\": ", f);
    json_string(f, ri->machine);
    fprintf(f, ", \"nproc\": %ld, \"allowed_cpus\": %d},\n", ri->nproc_online, ri->nallowed);
    fputs("    \"uname\": ", f);
    json_string(f, ri->host);
    fputs(",\n    \"date\": ", f);
    json_string(f, ri->date);
    fputs(",\n    \"command\": ", f);
    json_string(f, ri->command);
    fprintf(f,
            ",\n    \"elapsed_s\": %.1f,\n    \"launches\": %u,\n    \"block\": %u,\n"
            "    \"warmup\": %u,\n    \"quick\": %s,\n    \"saxpy_n\": %lu,\n"
            "    \"busy_global\": %lu,\n",
            ri->elapsed_s, o->launches, o->block, o->warmup, o->quick ? "true" : "false",
            o->saxpy_n, o->busy_global);
    fputs("    \"busy_calibration\": [", f);
    for (int b = 0; b < o->nbusy; ++b) {
        char name[32];
        busy_name(o->busy_us[b], o->busy_iters[b], name, sizeof name);
        fprintf(f, "%s{\"kernel\": \"%s\", \"iters\": %u, \"target_us\": ", b ? ", " : "", name,
                o->busy_iters[b]);
        json_number(f, o->busy_us[b]);
        fputs(", \"measured_us_one_worker\": ", f);
        json_number(f, ri->calibrated && ri->cal.have[b] ? ri->cal.measured_us[b] : NAN);
        fputs("}", f);
    }
    fputs("],\n    \"strategies\": [", f);
    int k = 0;
    for (int s = 0; s < NSTRAT; ++s)
        if (o->strategy_on[s])
            fprintf(f, "%s\"%s\"", k++ ? ", " : "", cw_strategy_name((cw_strategy)s));
    fputs("],\n    \"configs\": [", f);
    for (int c = 0; c < ncfg; ++c) {
        fprintf(f, "%s{\"config\": ", c ? ", " : "");
        json_string(f, cfgs[c].spec);
        fprintf(f, ", \"cpus\": %d, \"workers\": %d, \"cpu_list\": ", cfgs[c].ncpus, cfgs[c].ncpus);
        json_string(f, cfgs[c].cpu_list);
        fputs("}", f);
    }
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(o, ks);
    fputs("],\n    \"kernels\": [", f);
    for (int i = 0; i < nk; ++i)
        fprintf(f, "%s\"%s\"", i ? ", " : "", ks[i].name);
    fputs("],\n    \"notes\": [", f);
    for (int i = 0; i < r->nnotes; ++i) {
        fputs(i ? ", " : "", f);
        json_string(f, r->notes[i]);
    }
    fputs("],\n    \"errors\": [", f);
    for (int i = 0; i < r->nerr; ++i) {
        fputs(i ? ", " : "", f);
        json_string(f, r->errors[i]);
    }
    fputs("],\n    \"units\": \"microseconds per launch; ratios against blocking in the same "
          "(kernel, config)\"\n  },\n  \"results\": [",
          f);
    for (int i = 0; i < r->nrec; ++i) {
        const record *p = &r->rec[i];
        const config *c = &cfgs[p->cfg];
        fprintf(f, "%s\n    {\"kernel\": \"%s\", \"kernel_param\": ", i ? "," : "", p->kernel);
        json_string(f, kernel_param(r, p->kernel));
        fputs(", \"config\": ", f);
        json_string(f, c->spec);
        fprintf(f, ", \"cpus\": %d, \"workers\": %d, \"cpu_list\": ", c->ncpus, c->ncpus);
        json_string(f, c->cpu_list);
        fprintf(f, ", \"strategy\": \"%s\", \"launches\": %u, \"ok\": %s, \"mismatches\": %zu",
                p->strategy, p->launches, p->ok ? "true" : "false", p->mismatches);
        for (int m = 0; m < M_COUNT; ++m)
            for (int q = 0; q < S_COUNT; ++q) {
                fprintf(f, ", \"%s_us_%s\": ", metric_names[m], stat_names[q]);
                json_number(f, p->st[m][q]);
            }
        fputs(", \"cpu_ratio_mean\": ", f);
        json_number(f, ratio(r, p, M_CPU, S_MEAN));
        fputs(", \"cpu_ratio_median\": ", f);
        json_number(f, ratio(r, p, M_CPU, S_MEDIAN));
        fputs(", \"wall_ratio_mean\": ", f);
        json_number(f, ratio(r, p, M_WALL, S_MEAN));
        fputs(", \"wall_ratio_median\": ", f);
        json_number(f, ratio(r, p, M_WALL, S_MEDIAN));
        if (p->has_stats) {
            fputs(", \"stats\": {", f);
            for (int q = 0; q < 8; ++q)
                fprintf(f, "%s\"%s\": %llu", q ? ", " : "", stats_names[q],
                        (unsigned long long)p->stats[q]);
            fputs(", \"latency_us_log2_buckets\": [", f);
            for (int b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
                fprintf(f, "%s%llu", b ? ", " : "", (unsigned long long)p->stats[8 + b]);
            fputs("]}", f);
        }
        fputs("}", f);
    }
    fputs("\n  ],\n  \"timerslack\": [", f);
    for (int i = 0; i < 2 * NSLEEP; ++i) {
        const slack_row *t = &slack[i];
        fprintf(f,
                "%s\n    {\"requested_us\": %u, \"slack\": \"%s\", \"slack_ns\": %llu, \"n\": %u, "
                "\"mean_us\": ",
                i ? "," : "", t->requested_us, t->is_default ? "default" : "1ns",
                (unsigned long long)t->slack_ns, t->n);
        json_number(f, t->mean_us);
        fputs(", \"median_us\": ", f);
        json_number(f, t->median_us);
        fputs(", \"p90_us\": ", f);
        json_number(f, t->p90_us);
        fputs("}", f);
    }
    fputs("\n  ]\n}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "%s: error writing %s\n", prog, path);
        return -1;
    }
    return 0;
}

static void csv_string(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_number(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, "%.4f", v);
}

/* 0, or -1 after reporting why the file could not be written. */
static int write_csv(const char *path, const run_info *ri, const results *r, const config *cfgs) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    /* Header record: '#'-prefixed key,value lines, then the column names. */
    for (int i = 0; i < r->nheader; ++i) {
        fprintf(f, "# %s,", r->header[i][0]);
        csv_string(f, r->header[i][1]);
        fputc('\n', f);
    }
    fputs("# host,", f);
    csv_string(f, ri->host);
    fprintf(f, "\n# nproc,%ld\n# allowed_cpus,%d\n# date,%s\n# command,", ri->nproc_online,
            ri->nallowed, ri->date);
    csv_string(f, ri->command);
    fputc('\n', f);
    fputs("kernel,kernel_param,config,cpus,workers,cpu_list,strategy,launches,ok", f);
    for (int m = 0; m < M_COUNT; ++m)
        for (int q = 0; q < S_COUNT; ++q)
            fprintf(f, ",%s_us_%s", metric_names[m], stat_names[q]);
    fputs(",cpu_ratio_mean,cpu_ratio_median,wall_ratio_mean,wall_ratio_median\n", f);
    for (int i = 0; i < r->nrec; ++i) {
        const record *p = &r->rec[i];
        const config *c = &cfgs[p->cfg];
        fprintf(f, "%s,", p->kernel);
        csv_string(f, kernel_param(r, p->kernel));
        fprintf(f, ",%s,%d,%d,", c->spec, c->ncpus, c->ncpus);
        csv_string(f, c->cpu_list);
        fprintf(f, ",%s,%u,%d", p->strategy, p->launches, p->ok);
        for (int m = 0; m < M_COUNT; ++m)
            for (int q = 0; q < S_COUNT; ++q) {
                fputc(',', f);
                csv_number(f, p->st[m][q]);
            }
        const int rm[4][2] = {
            {M_CPU, S_MEAN}, {M_CPU, S_MEDIAN}, {M_WALL, S_MEAN}, {M_WALL, S_MEDIAN}};
        for (int j = 0; j < 4; ++j) {
            fputc(',', f);
            csv_number(f, ratio(r, p, rm[j][0], rm[j][1]));
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "%s: error writing %s\n", prog, path);
        return -1;
    }
    return 0;
}

/* --- Plot --- */

static bool find_in_path(const char *name) {
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char dir[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s/%s", (int)n, path, name);
        if (n && access(dir, X_OK) == 0)
            return true;
        path += n + (path[n] == ':');
    }
    return false;
}

/* A gnuplot single-quoted string: only ' needs escaping, as ''. */
static void gp_string(FILE *f, const char *s) {
    fputc('\'', f);
    for (; *s; ++s) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* Returns 0 on success, 1 if gnuplot is missing (skipped), -1 on failure. */
static int write_plot(const char *png, const options *o, const results *r, const config *cfgs,
                      int ncfg, const kernel_spec *ks, int nk, const run_info *ri) {
    if (!find_in_path("gnuplot")) {
        fprintf(stderr,
                "%s: gnuplot not found in PATH: skipping the plot %s "
                "(install it with: apt-get install gnuplot-nox)\n",
                prog, png);
        return 1;
    }
    char dir[] = "/tmp/cw-bench-plot.XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
        return -1;
    }
    char dat[64], gp[64];
    snprintf(dat, sizeof dat, "%s/data.tsv", dir);
    snprintf(gp, sizeof gp, "%s/plot.gp", dir);
    FILE *f = fopen(dat, "w");
    FILE *g = f ? fopen(gp, "w") : NULL;
    if (!f || !g) {
        fprintf(stderr, "%s: cannot write plot files in %s\n", prog, dir);
        if (f)
            fclose(f);
        return -1;
    }
    /* Columns: group label, then mean CPU per strategy, then mean wall per strategy. */
    int nstrat = 0;
    fputs("group", f);
    for (int pass = 0; pass < 2; ++pass)
        for (int s = 0; s < NSTRAT; ++s)
            if (o->strategy_on[s]) {
                fprintf(f, "\t%s", cw_strategy_name((cw_strategy)s));
                nstrat += pass == 0;
            }
    fputc('\n', f);
    for (int k = 0; k < nk; ++k)
        for (int c = 0; c < ncfg; ++c) {
            fprintf(f, "%s %dcpu", ks[k].name, cfgs[c].ncpus);
            for (int pass = 0; pass < 2; ++pass)
                for (int s = 0; s < NSTRAT; ++s) {
                    if (!o->strategy_on[s])
                        continue;
                    const record *p =
                        find_record(r, ks[k].name, c, cw_strategy_name((cw_strategy)s));
                    double v = p ? p->st[pass ? M_WALL : M_CPU][S_MEAN] : NAN;
                    if (isfinite(v) && v > 0)
                        fprintf(f, "\t%.3f", v);
                    else
                        fputs("\tNaN", f);
                }
            fputc('\n', f);
        }
    fclose(f);
    /* Parameters, then the script from bench/plot.gp (embedded at build time). */
    fprintf(g, "datafile = '%s'\noutfile = ", dat);
    gp_string(g, png);
    fprintf(g, "\nnstrat = %d\nsubtitle = ", nstrat);
    char sub[1024];
    snprintf(sub, sizeof sub,
             "%s, %s | %s | %u launches per bar | Ncpu: pinned to N CPUs, N workers",
             r->nheader ? r->header[0][1] : "", r->nheader > 2 ? r->header[2][1] : "", ri->date,
             o->launches);
    gp_string(g, sub);
    fputc('\n', g);
    fputs(cw_bench_plot_gp, g);
    fclose(g);

    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", gp, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int rc = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
    if (rc != 0)
        fprintf(stderr, "%s: gnuplot failed; its input is kept in %s\n", prog, dir);
    else {
        unlink(dat);
        unlink(gp);
        rmdir(dir);
    }
    return rc;
}

static int parent_main(int argc, char **argv, const options *o0) {
    options o = *o0;
    double t_start = now_s();
    run_info ri;
    memset(&ri, 0, sizeof ri);
    shell_join(argc, argv, ri.command, sizeof ri.command);
    time_t t = time(NULL);
    strftime(ri.date, sizeof ri.date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(ri.kernel_name, sizeof ri.kernel_name, "%s", u.sysname);
        snprintf(ri.nodename, sizeof ri.nodename, "%s", u.nodename);
        snprintf(ri.kernel_release, sizeof ri.kernel_release, "%s", u.release);
        snprintf(ri.kernel_version, sizeof ri.kernel_version, "%s", u.version);
        snprintf(ri.machine, sizeof ri.machine, "%s", u.machine);
        snprintf(ri.host, sizeof ri.host, "%s %s %s %s %s", u.sysname, u.nodename, u.release,
                 u.version, u.machine);
    }
    ri.nproc_online = sysconf(_SC_NPROCESSORS_ONLN);

    config cfgs[MAX_CONFIGS];
    int ncfg = build_configs(&o, cfgs);
    {
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        sched_getaffinity(0, sizeof allowed, &allowed);
        ri.nallowed = CPU_COUNT(&allowed);
    }
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(&o, ks);
    if (nk == 0)
        die("--kernels '%s' selects no kernel (see --help)", o.kernels_sel);
    bool need_busy = false;
    for (int i = 0; i < nk; ++i)
        need_busy |= ks[i].is_busy;
    if (!o.strategy_on[CW_STRATEGY_BLOCKING])
        fprintf(stderr, "%s: note: blocking is not selected, so there are no ratios\n", prog);

    results r;
    memset(&r, 0, sizeof r);
    int failures = 0;

    /* Calibrate the busy kernel on one worker, pinned to the first allowed CPU. */
    char itersbuf[128] = "";
    if (need_busy && !o.busy_iters_set) {
        config one;
        options tmp = o;
        tmp.ncfg = 1;
        tmp.cfg_cpus[0] = 1;
        build_configs(&tmp, &one);
        fprintf(stderr, "[calibration] busy kernel on 1 worker (cpu %s), targets", one.cpu_list);
        for (int b = 0; b < o.nbusy; ++b)
            fprintf(stderr, " %g us", o.busy_us[b]);
        fputc('\n', stderr);
        const char *extra[] = {"--child", "calibrate", "--label", "calibration", NULL};
        int st = run_child(argc, argv, &o, &one, extra, -1, &r, &ri.cal);
        for (int b = 0; b < o.nbusy; ++b)
            if (!ri.cal.have[b])
                st = st ? st : 1;
        if (st != 0) {
            fprintf(stderr, "%s: calibration failed\n", prog);
            for (int i = 0; i < r.nerr; ++i)
                fprintf(stderr, "  %s\n", r.errors[i]);
            return 1;
        }
        ri.calibrated = true;
        for (int b = 0; b < o.nbusy; ++b) {
            o.busy_iters[b] = ri.cal.iters[b];
            fprintf(stderr, "[calibration] %g us target: %u iterations, measured %.1f us\n",
                    o.busy_us[b], ri.cal.iters[b], ri.cal.measured_us[b]);
        }
    }
    if (need_busy) {
        size_t pos = 0;
        for (int b = 0; b < o.nbusy; ++b)
            pos += (size_t)snprintf(itersbuf + pos, sizeof itersbuf - pos, "%s%u", b ? "," : "",
                                    o.busy_iters[b]);
        nk = build_kernels(&o, ks);
    }

    for (int c = 0; c < ncfg; ++c) {
        char label[64], title[320];
        snprintf(label, sizeof label, "config %d/%d", c + 1, ncfg);
        config_title(&cfgs[c], title, sizeof title);
        fprintf(stderr, "[%s] %s\n", label, title);
        const char *extra_busy[] = {"--child",      "run",    "--label", label,
                                    "--busy-iters", itersbuf, NULL};
        const char *extra_nobusy[] = {"--child", "run", "--label", label, NULL};
        double t0 = now_s();
        int st =
            run_child(argc, argv, &o, &cfgs[c], need_busy ? extra_busy : extra_nobusy, c, &r, NULL);
        fprintf(stderr, "[%s] done in %.1f s%s\n", label, now_s() - t0, st ? " (FAILED)" : "");
        failures += st != 0;
    }
    ri.elapsed_s = now_s() - t_start;

    /* Stdout: the header, then the tables. */
    printf("cw-bench: %s\n", ri.command);
    for (int i = 0; i < r.nheader; ++i)
        printf("%-17s %s\n", r.header[i][0], r.header[i][1]);
    printf("%-17s %s (nproc %ld, allowed %d)\n", "host", ri.host, ri.nproc_online, ri.nallowed);
    printf("%-17s %s\n", "date", ri.date);
    printf("%-17s %u timed per (kernel, config, strategy), blocks of %u, warm-up %u per "
           "strategy\n",
           "launches", o.launches, o.block, o.warmup);
    for (int b = 0; b < o.nbusy && need_busy; ++b) {
        char name[32];
        busy_name(o.busy_us[b], o.busy_iters[b], name, sizeof name);
        if (ri.calibrated)
            printf("%-17s %s: %u iterations x %lu work-items, calibrated on 1 worker to %.1f us "
                   "(target %g us)\n",
                   "calibration", name, o.busy_iters[b], o.busy_global, ri.cal.measured_us[b],
                   o.busy_us[b]);
        else
            printf("%-17s %s: %u iterations x %lu work-items (given, not calibrated)\n",
                   "busy kernel", name, o.busy_iters[b], o.busy_global);
    }
    for (int i = 0; i < r.nnotes; ++i)
        printf("%-17s %s\n", "note", r.notes[i]);
    printf("%-17s microseconds per launch; CPU = launching thread's CPU time (enqueue+wait),\n"
           "%-17s wall = enqueue+wait, kernel = event profiling run time, overhead = wall - "
           "kernel;\n"
           "%-17s 'x' columns = ratio to blocking in the same table\n",
           "units", "", "");
    print_tables(stdout, &r, cfgs, ncfg, ks, nk);
    if (o.stats)
        print_stats(stdout, &r, cfgs, ncfg, ks, nk);
    slack_row slack[2 * NSLEEP];
    measure_timerslack(o.quick, slack);
    print_timerslack(stdout, slack);
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

    if (o.json && write_json(o.json, &o, &ri, &r, cfgs, ncfg, slack) < 0)
        ++failures;
    if (o.csv && write_csv(o.csv, &ri, &r, cfgs) < 0)
        ++failures;
    if (o.plot && write_plot(o.plot, &o, &r, cfgs, ncfg, ks, nk, &ri) < 0)
        ++failures;
    int status = failures || wrong || r.nerr ? 1 : 0;
    free(r.rec);
    return status;
}

int main(int argc, char **argv) {
    /* A write to a parent that went away must not kill a child silently. */
    signal(SIGPIPE, SIG_IGN);
    options o;
    parse_options(argc, argv, &o);
    switch (o.mode) {
    case MODE_RUN:
        if (o.result_fd < 0)
            die("--child needs --result-fd");
        return child_run(&o);
    case MODE_CALIBRATE:
        if (o.result_fd < 0)
            die("--child needs --result-fd");
        return child_calibrate(&o);
    case MODE_PARENT:
    default:
        return parent_main(argc, argv, &o);
    }
}
