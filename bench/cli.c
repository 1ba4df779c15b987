/* SPDX-License-Identifier: MIT */
/* cw-bench: the command line (getopt_long) and the kernels it selects. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: cw-bench [options]\n"
            "Compares cw's wait strategies (cw_wait) on OpenCL kernels: per launch, the\n"
            "launching thread's CPU time, the added latency (the wait's return after the\n"
            "command's profiled end), its wake-ups, the command's run time and the wall time,\n"
            "and decides the benchmark's goals cell by cell (PASS, MISS or UNDECIDED).\n"
            "Each CPU configuration runs in a re-executed copy of this program, pinned to its\n"
            "CPUs with the OpenCL runtime's worker count set to match (POCL_MAX_PTHREAD_COUNT,\n"
            "POCL_CPU_MAX_CU_COUNT, LP_NUM_THREADS). Strategies are interleaved in blocks.\n"
            "A cell is one kernel on one configuration, every strategy included.\n"
            "Options take their value as --opt VALUE or --opt=VALUE.\n"
            "\n"
            "options (default in brackets):\n"
            "  --launches N        timed launches per strategy in a cell; a cell with checks\n"
            "                      of the goals stops sooner once they are decided or out\n"
            "                      of its time's reach, and at N launches at most\n"
            "                      [%u; quick %u]\n"
            "  --min-time SEC      keep launching a cell past N launches until SEC seconds\n"
            "                      have passed in it (never past --max-time) [%g]\n"
            "  --max-time SEC      stop a cell after the round in which SEC seconds passed,\n"
            "                      warm-up included, even short of N launches or with\n"
            "                      checks undecided [%g; sweep %g]\n"
            "  --run-time SEC      the run's budget for its cells: each cell's --max-time is\n"
            "                      at most twice what is left of SEC over the cells left\n"
            "                      (never more than is left), so that\n"
            "                      the run ends in about SEC plus start-up; 0: none [%g]\n"
            "  --block N           launches per strategy per round-robin block [%u]\n"
            "  --warmup N          untimed launches per strategy before timing [%u; quick %u]\n"
            "  --strategies LIST   comma-separated subset of:",
            DEF_LAUNCHES, QUICK_LAUNCHES, DEF_MIN_TIME, DEF_MAX_TIME, SWEEP_MAX_TIME, DEF_RUN_TIME,
            DEF_BLOCK, DEF_WARMUP, QUICK_WARMUP);
    int col = 44;
    for (int s = CW_STRATEGY_BLOCKING; s < NSTRAT; ++s) {
        const char *name = strategy_name(s);
        if (col + (int)strlen(name) + 1 > 80) {
            fputs("\n                     ", f);
            col = 21;
        }
        col += fprintf(f, " %s,", name);
    }
    fprintf(
        f,
        "\n"
        "                      (auto-latency: auto with CW_WAIT_LATENCY, its latency\n"
        "                      preference), or %s: the library's default strategy,\n"
        "                      run as such\n"
        "                      (cw currently resolves it to auto) [all but %s]\n"
        "  --configs LIST      CPU configurations: a count N (the first N allowed CPUs,\n"
        "                      N workers) or 'all' (every allowed CPU) [1,all]\n"
        "  --kernels LIST      subset of: saxpy, latency, busy (every busy size), or a\n"
        "                      busy kernel by name, e.g. busy-100us,busy-1ms [all]\n"
        "  --busy-us LIST      target run times of the busy kernel on one worker, in us,\n"
        "                      calibrated at start-up (at most %d)\n"
        "                      [100,1000,20000,100000; quick 100,1000]\n"
        "  --long-time SEC     a long busy kernel (%g ms or more) runs about SEC seconds of\n"
        "                      launches per strategy, at least %u, in blocks of 1, with one\n"
        "                      warm-up launch per strategy where those take at most %g s\n"
        "                      together; --launches caps it [%g]\n"
        "  --driver-model LIST driver models to run every config under, one after another:\n"
        "                      pocl3 (the real driver, no layer loaded), pocl7, nvidia,\n"
        "                      neo, rocm; parameters follow their preset as name=value,\n"
        "                      e.g. pocl3,nvidia,callback_delay_us=5000,pocl7\n"
        "                      [pocl3,pocl7,nvidia; quick pocl3]\n"
        "  --busy-iters LIST   iterations for each busy size instead of calibrating\n"
        "  --busy-global N     work-items of the busy kernel [%u]\n"
        "  --saxpy-n N         floats in saxpy [%u]\n"
        "  --floor-trips N     futex ping-pong round trips for each config's floor\n"
        "                      [%u; quick %u]\n"
        "  --platform NAME     first OpenCL platform whose name contains NAME\n"
        "                      [$CW_PLATFORM, else PoCL, else the first]; for 'rusticl',\n"
        "                      RUSTICL_ENABLE=llvmpipe is set unless already set\n"
        "  --spin-us N         cw_wait_options.spin_us: spin-park's budget, auto's cap\n"
        "                      (1 to %u) [cw's default]\n"
        "  --stats             print cw's wait statistics (cw_stats) per strategy and cell\n"
        "  --json FILE         write {\"header\": {...}, \"floor\": [...], \"results\": [...]}\n"
        "                      [none]\n"
        "  --csv FILE          write a header row and one row per (kernel, config,\n"
        "                      strategy) [none]\n"
        "  --plot FILE.png     plot mean CPU and wall per launch with gnuplot [none]\n"
        "                      (each FILE is opened before the run starts, and a run\n"
        "                      that cannot write one does not start)\n"
        "  --sweep N           instead of the driver models: N models drawn from the\n"
        "                      ranges of the model layer's parameters, each with one\n"
        "                      kernel and one CPU configuration; prints each model and\n"
        "                      whether auto is beaten there (goal c) (at most %d)\n"
        "  --seed S            the sweep's draws: the same seed, the same models\n"
        "                      [taken from the clock, and printed]\n"
        "  --quick             smoke run: %u launches, %u warm-up, %u floor trips, short\n"
        "                      calibration, for what is not given\n"
        "  --dry-run           print the plan and check the output files; run nothing\n"
        "  -h, --help          this text\n"
        "internal, set by the parent when it re-executes itself (not for direct use):\n"
        "  --child MODE        run or calibrate\n"
        "  --result-fd FD      the pipe to write records to\n"
        "  --label TEXT        the name of the child in its messages\n"
        "\n"
        "The table goes to stdout; the plan (cells, launches and an estimate of the\n"
        "run's length, from the options), then one line per cell, to stderr. Exit\n"
        "status: 0 when every wait succeeded and every result verified, 1 otherwise,\n"
        "2 on a usage error or an output file that cannot be opened.\n",
        cw_strategy_name(CW_STRATEGY_DEFAULT), cw_strategy_name(CW_STRATEGY_DEFAULT), MAX_BUSY,
        LONG_US / 1000, LONG_MIN_LAUNCHES, LONG_WARMUP_BUDGET_US / 1e6, DEF_LONG_TIME,
        DEF_BUSY_GLOBAL, DEF_SAXPY_N, DEF_FLOOR_TRIPS, QUICK_FLOOR_TRIPS, CW_SPIN_US_MAX,
        MAX_MODELS, QUICK_LAUNCHES, QUICK_WARMUP, QUICK_FLOOR_TRIPS);
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

/* Splits a comma-separated list in place; -1 when it holds more than max items. */
static int split_list(char *s, char **items, int max) {
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max)
            return -1;
        items[n++] = tok;
    }
    return n;
}

static unsigned uint_opt(const char *name, const char *v, unsigned long lo, unsigned long hi) {
    unsigned long u;
    if (!parse_uint(v, lo, hi, &u))
        die("--%s: expected a whole number from %lu to %lu, got '%s'", name, lo, hi, v);
    return (unsigned)u;
}

static void parse_strategies(const char *v, options *o) {
    char buf[512], *names[NSTRAT + 1];
    snprintf(buf, sizeof buf, "%s", v);
    int n = split_list(buf, names, NSTRAT);
    if (n <= 0)
        die("--strategies: expected a list of at most %d names, got '%s'", NSTRAT, v);
    memset(o->strategy_on, 0, sizeof o->strategy_on);
    for (int k = 0; k < n; ++k) {
        int s;
        if (strategy_from_name(names[k], &s) != 0)
            die("--strategies: unknown strategy '%s' (see --help)", names[k]);
        o->strategy_on[s] = true;
    }
}

static void parse_configs(const char *v, options *o) {
    char buf[512], *items[MAX_CPU_CONFIGS + 1];
    snprintf(buf, sizeof buf, "%s", v);
    int n = split_list(buf, items, MAX_CPU_CONFIGS);
    if (n <= 0)
        die("--configs: expected a list like 1,all (at most %d), got '%s'", MAX_CPU_CONFIGS, v);
    for (int k = 0; k < n; ++k) {
        unsigned long u;
        if (!strcmp(items[k], "all"))
            o->cfg_cpus[k] = 0;
        else if (parse_uint(items[k], 1, 4096, &u))
            o->cfg_cpus[k] = (int)u;
        else
            die("--configs: '%s' is neither a CPU count nor 'all'", items[k]);
        snprintf(o->cfg_spec[k], sizeof o->cfg_spec[k], "%s", items[k]);
    }
    o->ncfg = n;
}

static void parse_busy(int which, const char *v, options *o) {
    char buf[512], *items[MAX_BUSY + 1];
    snprintf(buf, sizeof buf, "%s", v);
    int n = split_list(buf, items, MAX_BUSY);
    if (n <= 0)
        die("--busy-%s: expected 1 to %d values, got '%s'", which ? "iters" : "us", MAX_BUSY, v);
    for (int k = 0; k < n; ++k) {
        unsigned long u;
        if (which == 0 && !parse_double(items[k], 1, 1e7, &o->busy_us[k]))
            die("--busy-us: '%s' is not a run time in us (1 to 1e7)", items[k]);
        if (which == 1 && !parse_uint(items[k], 64, 4000000000ul, &u))
            die("--busy-iters: '%s' is not a count from 64 to 4000000000", items[k]);
        if (which == 1)
            o->busy_iters[k] = (unsigned)u;
    }
    if (which == 1) {
        o->busy_iters_set = true;
        if (n != o->nbusy) /* the counts define the sizes; their targets are unknown */
            for (int k = 0; k < n; ++k)
                o->busy_us[k] = 0;
    }
    o->nbusy = n;
}

enum {
    OPT_LAUNCHES = 256,
    OPT_MIN_TIME,
    OPT_MAX_TIME,
    OPT_BLOCK,
    OPT_WARMUP,
    OPT_STRATEGIES,
    OPT_CONFIGS,
    OPT_KERNELS,
    OPT_BUSY_US,
    OPT_BUSY_ITERS,
    OPT_BUSY_GLOBAL,
    OPT_SAXPY_N,
    OPT_FLOOR_TRIPS,
    OPT_PLATFORM,
    OPT_SPIN_US,
    OPT_STATS,
    OPT_JSON,
    OPT_CSV,
    OPT_PLOT,
    OPT_QUICK,
    OPT_DRY_RUN,
    OPT_DRIVER_MODEL,
    OPT_LONG_TIME,
    OPT_SWEEP,
    OPT_SEED,
    OPT_CHILD,
    OPT_RESULT_FD,
    OPT_LABEL,
    OPT_RUN_TIME,
    OPT_DEADLINE,
};

static const struct option long_options[] = {
    {"launches", required_argument, NULL, OPT_LAUNCHES},
    {"min-time", required_argument, NULL, OPT_MIN_TIME},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"run-time", required_argument, NULL, OPT_RUN_TIME},
    {"deadline", required_argument, NULL, OPT_DEADLINE},
    {"block", required_argument, NULL, OPT_BLOCK},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"strategies", required_argument, NULL, OPT_STRATEGIES},
    {"configs", required_argument, NULL, OPT_CONFIGS},
    {"kernels", required_argument, NULL, OPT_KERNELS},
    {"busy-us", required_argument, NULL, OPT_BUSY_US},
    {"busy-iters", required_argument, NULL, OPT_BUSY_ITERS},
    {"busy-global", required_argument, NULL, OPT_BUSY_GLOBAL},
    {"saxpy-n", required_argument, NULL, OPT_SAXPY_N},
    {"floor-trips", required_argument, NULL, OPT_FLOOR_TRIPS},
    {"platform", required_argument, NULL, OPT_PLATFORM},
    {"spin-us", required_argument, NULL, OPT_SPIN_US},
    {"stats", no_argument, NULL, OPT_STATS},
    {"json", required_argument, NULL, OPT_JSON},
    {"csv", required_argument, NULL, OPT_CSV},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"driver-model", required_argument, NULL, OPT_DRIVER_MODEL},
    {"long-time", required_argument, NULL, OPT_LONG_TIME},
    {"sweep", required_argument, NULL, OPT_SWEEP},
    {"seed", required_argument, NULL, OPT_SEED},
    {"help", no_argument, NULL, 'h'},
    {"child", required_argument, NULL, OPT_CHILD},
    {"result-fd", required_argument, NULL, OPT_RESULT_FD},
    {"label", required_argument, NULL, OPT_LABEL},
    {NULL, 0, NULL, 0},
};

/* The default run: the short kernels, then GPU-length ones; the real
 * driver, then the models of PoCL 7 and NVIDIA's driver. --quick keeps the
 * short kernels on the real driver only, unless told otherwise. */
static const double def_busy_us[] = {100, 1000, 20000, 100000};
#define DEF_NBUSY ((int)(sizeof def_busy_us / sizeof def_busy_us[0]))
#define QUICK_NBUSY 2
static const char *const def_models[] = {"pocl3", "pocl7", "nvidia", NULL};

static void defaults(options *o) {
    memset(o, 0, sizeof *o);
    o->launches = DEF_LAUNCHES;
    o->block = DEF_BLOCK;
    o->warmup = DEF_WARMUP;
    o->min_time = DEF_MIN_TIME;
    o->max_time = DEF_MAX_TIME;
    o->run_time = DEF_RUN_TIME;
    o->floor_trips = DEF_FLOOR_TRIPS;
    for (int s = CW_STRATEGY_BLOCKING; s < NSTRAT; ++s)
        o->strategy_on[s] = true;
    o->ncfg = 2;
    o->cfg_cpus[0] = 1;
    strcpy(o->cfg_spec[0], "1");
    o->cfg_cpus[1] = 0;
    strcpy(o->cfg_spec[1], "all");
    for (int b = 0; b < DEF_NBUSY; ++b)
        o->busy_us[b] = def_busy_us[b];
    o->nbusy = DEF_NBUSY;
    o->long_time = DEF_LONG_TIME;
    o->nmodels = 0;
    for (const char *const *m = def_models; *m; ++m)
        snprintf(o->models[o->nmodels++], sizeof o->models[0], "%s", *m);
    o->busy_global = DEF_BUSY_GLOBAL;
    o->saxpy_n = DEF_SAXPY_N;
    o->result_fd = -1;
}

void parse_options(int argc, char **argv, options *o) {
    defaults(o);
    /* --quick's busy sizes and models are in place before the options are
     * read, so that --busy-iters compares its count with the sizes it will
     * really replace (a child gets the parent's --quick and the iterations). */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); ++i)
        if (!strcmp(argv[i], "--quick")) {
            o->nbusy = QUICK_NBUSY;
            o->nmodels = 1; /* pocl3 */
        }
    opterr = 0;
    int c, longindex;
    while ((c = getopt_long(argc, argv, ":h", long_options, &longindex)) != -1) {
        const char *v = optarg;
        switch (c) {
        case 'h':
            usage(stdout);
            exit(0);
        case OPT_LAUNCHES:
            o->launches = uint_opt("launches", v, 1, 10000000);
            o->launches_set = true;
            break;
        case OPT_MIN_TIME:
        case OPT_MAX_TIME:
            o->max_time_set |= c == OPT_MAX_TIME;
            if (!parse_double(v, 0, 1e6, c == OPT_MIN_TIME ? &o->min_time : &o->max_time))
                die("--%s: expected seconds from 0 to 1e6, got '%s'",
                    c == OPT_MIN_TIME ? "min-time" : "max-time", v);
            break;
        case OPT_BLOCK:
            o->block = uint_opt("block", v, 1, 1000000);
            break;
        case OPT_WARMUP:
            o->warmup = uint_opt("warmup", v, 0, 1000000);
            o->warmup_set = true;
            break;
        case OPT_STRATEGIES:
            parse_strategies(v, o);
            break;
        case OPT_CONFIGS:
            parse_configs(v, o);
            break;
        case OPT_KERNELS:
            snprintf(o->kernels_sel, sizeof o->kernels_sel, "%s", v);
            break;
        case OPT_BUSY_US:
            parse_busy(0, v, o);
            break;
        case OPT_BUSY_ITERS:
            parse_busy(1, v, o);
            break;
        case OPT_BUSY_GLOBAL:
            o->busy_global = uint_opt("busy-global", v, 1, 1ul << 26);
            break;
        case OPT_SAXPY_N:
            o->saxpy_n = uint_opt("saxpy-n", v, 1, 1ul << 28);
            break;
        case OPT_FLOOR_TRIPS:
            o->floor_trips = uint_opt("floor-trips", v, 10, 10000000);
            o->floor_trips_set = true;
            break;
        case OPT_PLATFORM:
            o->platform = v;
            break;
        case OPT_SPIN_US:
            o->spin_us = uint_opt("spin-us", v, 1, CW_SPIN_US_MAX);
            break;
        case OPT_STATS:
            o->stats = true;
            break;
        case OPT_JSON:
            o->json = v;
            break;
        case OPT_CSV:
            o->csv = v;
            break;
        case OPT_PLOT:
            o->plot = v;
            break;
        case OPT_QUICK:
            o->quick = true;
            break;
        case OPT_DRY_RUN:
            o->dry_run = true;
            break;
        case OPT_DRIVER_MODEL:
            parse_models(v, o);
            break;
        case OPT_LONG_TIME:
            if (!parse_double(v, 0, 1e6, &o->long_time))
                die("--long-time: expected seconds from 0 to 1e6, got '%s'", v);
            break;
        case OPT_SWEEP:
            o->sweep = (int)uint_opt("sweep", v, 1, MAX_MODELS);
            break;
        case OPT_SEED: {
            unsigned long u;
            if (!parse_uint(v, 0, 0xfffffffful, &u))
                die("--seed: expected a whole number from 0 to 4294967295, got '%s'", v);
            o->seed = u;
            o->seed_set = true;
            break;
        }
        case OPT_CHILD:
            if (!strcmp(v, "run"))
                o->mode = MODE_RUN;
            else if (!strcmp(v, "calibrate"))
                o->mode = MODE_CALIBRATE;
            else
                die("--child: expected run or calibrate, got '%s'", v);
            break;
        case OPT_RESULT_FD:
            o->result_fd = (int)uint_opt("result-fd", v, 0, 1 << 20);
            break;
        case OPT_LABEL:
            o->label = v;
            break;
        case OPT_RUN_TIME:
            if (!parse_double(v, 0, 1e6, &o->run_time))
                die("--run-time: expected seconds from 0 to 1e6, got '%s'", v);
            break;
        case OPT_DEADLINE: /* the parent's, for a child */
            if (!parse_double(v, 0, 1e12, &o->deadline))
                die("--deadline: expected a CLOCK_MONOTONIC time in seconds, got '%s'", v);
            break;
        case ':':
            die("%s: missing value (see --help)", argv[optind - 1]);
        default:
            fprintf(stderr, "%s: unknown option '%s'\n\n", prog, argv[optind - 1]);
            usage(stderr);
            exit(2);
        }
    }
    if (optind < argc)
        die("unexpected argument '%s' (see --help)", argv[optind]);
    if (o->quick) {
        if (!o->launches_set)
            o->launches = QUICK_LAUNCHES;
        if (!o->warmup_set)
            o->warmup = QUICK_WARMUP;
        if (!o->floor_trips_set)
            o->floor_trips = QUICK_FLOOR_TRIPS;
    }
    if (o->seed_set && !o->sweep)
        die("--seed goes with --sweep");
    if (o->sweep) {
        if (o->models_set)
            die("--sweep draws its own driver models: no --driver-model with it");
        if (o->kernels_sel[0] && o->mode == MODE_PARENT)
            die("--sweep draws each model's kernel: no --kernels with it");
        if (o->busy_iters_set && o->mode == MODE_PARENT)
            die("--sweep calibrates its own busy sizes: no --busy-iters with it");
        /* Every child has the same settings: the sweep's busy sizes, its
         * cell budget and a short floor. */
        if (!o->max_time_set)
            o->max_time = SWEEP_MAX_TIME;
        if (!o->floor_trips_set)
            o->floor_trips = QUICK_FLOOR_TRIPS;
        if (!o->busy_iters_set) {
            for (int b = 0; b < SWEEP_NBUSY; ++b)
                o->busy_us[b] = sweep_busy_us[b];
            o->nbusy = SWEEP_NBUSY;
        }
        if (!o->seed_set)
            o->seed = ((unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16)) & 0xfffffffful;
    }
    if (o->min_time > o->max_time)
        die("--min-time %g is above --max-time %g", o->min_time, o->max_time);
    cw_strategy s[NSTRAT];
    if (selected_strategies(o, s) == 0)
        die("no strategy selected");
}

int selected_strategies(const options *o, cw_strategy out[NSTRAT]) {
    int n = 0;
    for (int s = 0; s < NSTRAT; ++s)
        if (o->strategy_on[s])
            out[n++] = (cw_strategy)s;
    return n;
}
