/* SPDX-License-Identifier: MIT */
/*
 * cw-bench's internal types and the interfaces between its parts:
 *   cli.c       options (getopt_long)
 *   kernels.c   the kernels the options select, with each one's launch counts
 *   models.c    the driver models (--driver-model): presets, the layer, the
 *               child's environment
 *   runner.c    CPU configurations and the pinned re-execution of this program
 *   child.c     the child's launch loop: every strategy on every kernel
 *   calibrate.c the busy kernel's calibration (a child mode)
 *   floor.c     the futex wake floor (a child measurement)
 *   record.c    the child-to-parent record protocol, writer and reader
 *   plan.c      what a run will do and how long it should take, from the options
 *   table.c     the tables on stdout
 *   export.c    JSON and CSV
 *   plot.c      the gnuplot plot
 *   main.c      the parent's sequence of all of the above
 *   util.c      messages, clocks and summary statistics
 * The parent process never touches OpenCL; every wait goes through cw_wait.
 */
#ifndef CW_BENCH_H
#define CW_BENCH_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clhost.h"
#include "cw.h"

/* CPU configurations from --configs; every driver model runs each of them,
 * and a "config" below is one (driver model, CPU configuration) pair. */
#define MAX_CPU_CONFIGS 16
#define MAX_MODELS 64
#define MAX_CONFIGS 64
#define MAX_BUSY 8
#define MAX_KERNELS (2 + MAX_BUSY)
#define MAX_CELLS (MAX_KERNELS * MAX_CONFIGS)
/* The strategies cw-bench runs: cw's (indexed by cw_strategy), then
 * auto-latency, auto with CW_WAIT_LATENCY, which is no cw_strategy of its
 * own but a flag on auto's wait. strategy_name and strategy_wait map an
 * index to its name and to the cw_wait_options it waits with. */
#define S_AUTO_LATENCY CW_STRATEGY_COUNT
#define NSTRAT (CW_STRATEGY_COUNT + 1)
const char *strategy_name(int s);
/* 0 and the index in *out, or -1 for a name that is none of them. */
int strategy_from_name(const char *name, int *out);
/* Whether s is a fixed strategy (goal c, goal e): not auto, auto-latency
 * or the default (auto in this release). */
bool strategy_fixed(int s);
/* --stats per (kernel, config, strategy): cw_stats's counters, its latency
 * buckets, then the counts of what auto decided (cw_stats_auto: AUTO_*),
 * all as differences over the strategy's blocks. */
#define NSTATS_AUTO 7
#define AUTO_BASE (8 + CW_STATS_LATENCY_BUCKETS)
#define NSTATS (AUTO_BASE + NSTATS_AUTO)
/* What cw learned of the platform by the end of a config (cw_stats_auto's
 * platforms_* fields, lateness_ns and lateness_samples). */
#define NLEARNED 7

/* Defaults; --quick replaces the ones the user did not set. */
#define DEF_LAUNCHES 6000u
#define DEF_BLOCK 5u
#define DEF_WARMUP 10u
#define DEF_MIN_TIME 0.0
/* A cell's time budget, its cap when its checks stay undecided: most of
 * the default run's 36 cells are decided in a few seconds; the long
 * commands on the real driver, whose strategies take seconds a round,
 * need tens of seconds. The run's own budget (DEF_RUN_TIME) may cut it
 * shorter, and a cell whose checks are out of reach (checks_out_of_reach)
 * stops sooner: the cap serves checks that more rounds decide. A long
 * cell keeps its LONG_MIN_LAUNCHES whatever the budget. */
#define DEF_MAX_TIME 90.0
/* The run's time budget (--run-time), for cells: each cell's --max-time is
 * at most an equal share of what is left of it over the cells left, so
 * that time a cell saves by deciding early goes to the cells after it,
 * and the run ends in about this long however loaded the machine is (its
 * checks then more often UNDECIDED). It cuts no cell before its checks'
 * first interval (MIN_ROUNDS_SHORT or _LONG rounds). 540 s leaves a default run or sweep
 * a minute for calibration, start-ups, the rounds that end past a cell's
 * share and the exports, within 10 minutes. */
#define DEF_RUN_TIME 540.0
/* A share of the run's budget is RUN_SHARE_FACTOR times the equal share
 * of what is left over the configs (or cells) left, never more than what
 * is left: most cells decide in a fraction of an equal share, and with
 * equal shares the time they left went unused at the run's end (the kept
 * run before this took 372 s of its 540, with six cells stopped by their
 * share and their checks undecided). The last config and cell get all
 * that is left, and --max-time still caps each cell. */
#define RUN_SHARE_FACTOR 2.0
/* Busy targets from LONG_US up are long kernels: a GPU user's 10 ms to
 * seconds. They get their own launch counts (kernels.c), so that a default
 * run that includes a 1 s kernel stays short. */
#define LONG_US 10000.0
#define DEF_LONG_TIME 0.4
#define LONG_MIN_LAUNCHES 2u
/* One untimed launch per strategy where those take at most this together:
 * every 1 s kernel's, so that its timed launches are planned, as a program
 * that runs a kernel over and over plans them, with that kernel's estimate,
 * not the previous cell's. */
#define LONG_WARMUP_BUDGET_US 10e6
#define DEF_FLOOR_TRIPS 5000u
#define QUICK_LAUNCHES 20u
#define QUICK_WARMUP 2u
#define QUICK_FLOOR_TRIPS 500u
#define DEF_SAXPY_N (1u << 20)
#define DEF_BUSY_GLOBAL 1024u
/* Untimed round trips before each slice of the floor (floor.c). */
#define FLOOR_WARMUP_TRIPS 100u

extern const char *prog;

#if defined(__GNUC__)
#define BENCH_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define BENCH_NORETURN __attribute__((noreturn))
#else
#define BENCH_PRINTF(a, b)
#define BENCH_NORETURN
#endif

/* Prints "cw-bench: message" and exits with status 2. */
BENCH_NORETURN void die(const char *fmt, ...) BENCH_PRINTF(1, 2);
double now_s(void);
/* The run's budget: the share of `left` seconds one of `n` configs (or
 * cells) still to run may take (RUN_SHARE_FACTOR); 0 when none is left. */
double run_share(double left, int n);
int64_t ts_ns(const struct timespec *ts);

/* --- statistics --- */

/* Per launch: CPU and wall of enqueue + wait, the kernel's run time, wall -
 * kernel, the CPU and wall of the cw_wait call alone, the added latency
 * (the wait's return - the command's end) and the waiting thread's
 * voluntary context switches in the wait (its wake-ups). */
enum {
    M_CPU,
    M_WALL,
    M_KERNEL,
    M_OVERHEAD,
    M_WAIT_CPU,
    M_WAIT_WALL,
    M_LATENCY,
    M_WAKEUPS,
    M_COUNT
};
enum { S_MEAN, S_MEDIAN, S_P90, S_P99, S_MAX, S_SD, S_COUNT };
extern const char *const metric_names[M_COUNT];
/* "_us" for times, "" for counts: a JSON or CSV key is name, unit, _stat. */
extern const char *const metric_units[M_COUNT];
extern const char *const stat_names[S_COUNT];
extern const char *const stats_names[8];
extern const char *const auto_stats_names[NSTATS_AUTO];
extern const char *const learned_names[NLEARNED];

/* Mean, median, p90, p99, max and sample standard deviation of v (sorted
 * in place); NAN for n == 0 (the deviation: for n < 2). The deviation gives
 * a mean its standard error, sd / sqrt(n): how far apart two strategies'
 * means must be for a cell of few launches to tell them apart. */
void summarize(double *v, size_t n, double out[S_COUNT]);
double median_of(double *v, size_t n);

/* --- options (cli.c) --- */

typedef enum mode { MODE_PARENT, MODE_RUN, MODE_CALIBRATE } mode;

typedef struct options {
    unsigned launches, block, warmup;
    bool launches_set, warmup_set, floor_trips_set;
    double min_time, max_time; /* seconds per cell */
    bool max_time_set;
    double run_time; /* --run-time: the cells' budget, seconds (0: none) */
    double deadline; /* child: its cells' end, CLOCK_MONOTONIC seconds (0: none) */
    unsigned floor_trips;
    bool strategy_on[NSTRAT]; /* indexed by cw_strategy (and S_AUTO_LATENCY); [CW_STRATEGY_DEFAULT]:
                                 "default" */
    int ncfg;
    int cfg_cpus[MAX_CPU_CONFIGS]; /* 0: all allowed CPUs */
    char cfg_spec[MAX_CPU_CONFIGS][16];
    int nmodels;
    char models[MAX_MODELS][256]; /* --driver-model: "preset[,param=value...]" each */
    bool models_set;
    double long_time; /* --long-time: seconds of kernel run time per strategy, long cells */
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
    bool dry_run;          /* print the plan, check the output files, run nothing */
    unsigned long spin_us; /* cw_wait_options.spin_us (0: cw's default) */
    bool stats;            /* cw_stats per (kernel, config, strategy) */
    int sweep;             /* --sweep N: N drawn driver models (0: none) */
    unsigned long seed;    /* --seed: the sweep's draws */
    bool seed_set;
    /* Set by the parent for the re-executed child. */
    mode mode;
    int result_fd;
    const char *label;
} options;

/* Parses argv (permuting it, as getopt_long does); exits on --help or an error. */
void parse_options(int argc, char **argv, options *o);
int selected_strategies(const options *o, cw_strategy out[NSTRAT]);

typedef enum kernel_kind { K_SAXPY, K_BUSY, K_LATENCY } kernel_kind;

typedef struct kernel_spec {
    char name[32];
    kernel_kind kind;
    int busy_index;
    double target_us;  /* busy: calibration target on one worker (0: iterations given) */
    unsigned iters;    /* busy */
    double nominal_us; /* run time on one worker: the target, else an estimate */
    bool is_long;      /* nominal_us >= LONG_US */
    unsigned launches, warmup, block; /* per strategy; a long kernel's own */
    double timer_us; /* a timer-driven device's run time, which replaces profiling (0: none) */
} kernel_spec;

void busy_name(double us, unsigned iters, char *out, size_t len);
/* The busy kernel's run time per iteration and work-item on one worker, for
 * estimates where only iterations are given (PoCL's calibration: 816
 * iterations of 1024 work-items for 1 ms). */
#define BUSY_NS_PER_ITER_ITEM 1.25
/* The selected kernels in run order, busy iterations filled in when known. */
int build_kernels(const options *o, kernel_spec *k);

/* --- configurations and children (runner.c) --- */

/* --- driver models (models.c) --- */

/* One --driver-model entry as the children get it. */
typedef struct driver_model {
    char spec[256]; /* as given: "nvidia" or "nvidia,callback_delay_us=5000" */
    char preset[32];
    bool layer;               /* false: the real driver, unchanged (plain pocl3): no layer loaded */
    double callback_delay_us; /* the preset's late callbacks, for the plan's estimate */
    bool timer_device;        /* kernels take no host CPU: device=timer */
    double busy_ns;           /* the model's busy_ns= (0: not given) */
    double kernel_us;         /* a timer-driven kernel other than busy */
} driver_model;

/* Splits a --driver-model LIST into o->models: an item with '=' is a
 * parameter of the model before it, any other item starts a model. Dies
 * with the reason on a name that is no preset or a misplaced parameter. */
void parse_models(const char *list, options *o);
void model_info(const char *spec, driver_model *m);
/* The layer's path: $CW_DRIVER_MODEL_LAYER, else beside this program in the
 * build tree or its installed place; NULL when none is there. */
const char *model_layer_path(void);
/* The same, or exit 2 with where it looked: the run needs it for `spec`. */
const char *model_layer_or_die(const char *spec);
/* The busy kernel's ns per iteration the bench gives a timer-driven device
 * (the layer's busy_ns), so that its run time is the target. */
#define TIMER_BUSY_NS 100
/* In the child before exec: the environment that selects the model
 * (OPENCL_LAYERS, CW_DRIVER_MODEL; CW_BENCH_MODEL, the model as given). */
void model_setenv(const driver_model *m, const char *layer);
/* In a child under a timer-driven device: each kernel's run time there
 * (timer_us), the busy kernels' iterations set to give their targets. */
void model_timer(const options *o, kernel_spec *ks, int nk);
/* In a child: 0 when the model's layer is loaded into this process (or none
 * is wanted), -1 with the reason in msg. */
int model_check_loaded(char *msg, size_t len);

typedef struct config {
    char spec[16];
    int ncpus;
    char cpu_list[256];
    cpu_set_t set;
    int cpu_index; /* which of the --configs */
    int model_index;
    driver_model model;
} config;

/* Every driver model times every CPU configuration, model by model. */
int build_configs(const options *o, config *cfg);
void config_title(const config *c, char *out, size_t len);
int allowed_cpus(void);

/* --- what the children report (record.c reads it into these) --- */

typedef struct record {
    char kernel[32];
    int cfg;
    char strategy[48];
    unsigned launches;
    bool ok;
    size_t mismatches;
    double st[M_COUNT][S_COUNT];
    bool has_stats;
    uint64_t stats[NSTATS];
} record;

/* One (kernel, config) cell: how its time budget ended. */
typedef struct cell {
    char kernel[32];
    int cfg;
    unsigned launches; /* per strategy */
    double elapsed_s;  /* warm-up included */
    char stopped_by[16];
    bool profiling_ok; /* event profiling reported real kernel run times */
} cell;

/* One config's floor: one-way futex wake-to-run latency, in us. */
typedef struct floor_result {
    bool have;
    unsigned trips;
    double st[S_COUNT];
} floor_result;

typedef struct calibration {
    bool have[MAX_BUSY];
    bool reached[MAX_BUSY];
    unsigned iters[MAX_BUSY];
    double target_us[MAX_BUSY], measured_us[MAX_BUSY];
} calibration;

/* One goal check's outcome in a cell, as the child sent it. */
typedef struct check_rec {
    char kernel[32];
    int cfg;
    char goal;
    char strategy[48];
    char what[128];
    int v; /* verdict */
    int pairs, rounds, ncond;
    double est[2], lo[2], hi[2], res[2];
    int lean; /* an UNDECIDED check's projection (vcheck) */
    double to_decide_pairs, to_decide_s;
} check_rec;

typedef struct results {
    record *rec;
    int nrec, caprec;
    check_rec *checks;
    int nchecks, capchecks;
    char header[8][2][256];
    int nheader;
    char errors[32][512];
    int nerr;
    char notes[8][512];
    int nnotes;
    char kparam[MAX_KERNELS][2][64]; /* per kernel name: its parameters */
    int nkparam;
    cell cells[MAX_CELLS];
    int ncells;
    floor_result floors[MAX_CONFIGS];
    bool have_learned[MAX_CONFIGS];
    uint64_t learned[MAX_CONFIGS][NLEARNED];
} results;

/* --- the record protocol (record.c): one tab-separated record a line --- */

void proto_header(FILE *f, const char *key, const char *value);
void proto_note(FILE *f, const char *text);
void proto_error(FILE *f, const char *text);
void proto_kernel(FILE *f, const char *kernel, const char *param);
void proto_calibration(FILE *f, int index, unsigned iters, double target_us, double measured_us,
                       bool reached);
void proto_result(FILE *f, const char *kernel, const char *strategy, unsigned launches, bool ok,
                  size_t mismatches, const double st[M_COUNT][S_COUNT]);
void proto_stats(FILE *f, const char *kernel, const char *strategy, const uint64_t v[NSTATS]);
void proto_cell(FILE *f, const char *kernel, unsigned launches, double elapsed_s,
                const char *stopped_by, bool profiling_ok);
struct vcheck;
void proto_check(FILE *f, const char *kernel, int rounds, const struct vcheck *ck);
void proto_floor(FILE *f, unsigned trips, const double st[S_COUNT]);
void proto_learned(FILE *f, const uint64_t v[NLEARNED]);

/* Parses one line from the child of config `cfg` (-1: calibration) into r and
 * cal; returns the record's type letter, or 0 for a line it did not know. */
char proto_read(char *line, int cfg, results *r, calibration *cal);

/* --- child side (child.c, calibrate.c, floor.c) --- */

typedef struct child {
    const options *o;
    FILE *out; /* records to the parent */
    const char *label;
    cwh h;
    cl_command_queue queues[NSTRAT]; /* one per strategy, indexed by cw_strategy (child_open) */
    /* Goal f's queues, held until their cell ends (first_launch) */
    cl_command_queue *first_queues;
    size_t nfirst, first_cap;
    cwh_saxpy saxpy;
    unsigned saxpy_launches; /* a = +0.5 and -0.5 alternate, so y stays exact */
    cwh_busy busy;
    cwh_latency latency;
    unsigned latency_launches;
    bool calib_started;
    bool calib_wall;         /* calibration: profiling unusable, time by wall */
    bool profiling_unusable; /* found on a kernel that runs long enough to tell */
    /* The clockid_t of event profiling's timestamps; 0: not yet known,
     * -1: neither host clock (added latency unknown). */
    int prof_clock;
} child;

typedef struct sample {
    double cpu_us, wall_us, kernel_us;
    double wait_cpu_us, wait_wall_us; /* the cw_wait call alone */
    double latency_us;                /* the wait's return - the command's end */
    double wakeups;                   /* voluntary context switches in the wait */
} sample;

/* Opens OpenCL and sends the header records; 0, or -1 after reporting. */
int child_open(child *c, const options *o);
/* Releases what child_open made. */
void child_close(child *c);
/* Reports an error on stderr and to the parent. */
void child_error(child *c, const char *fmt, ...) BENCH_PRINTF(2, 3);
/* One launch: enqueue + cw_wait, timed into *out when out is not NULL.
 * Returns 0, or -1 after reporting. */
int launch(child *c, const kernel_spec *k, cw_strategy s, sample *out);

int child_run(const options *o);
int child_calibrate(const options *o);
/* A ping-pong of `trips` round trips between two threads, after a warm-up;
 * stores each trip's one-way latency in us. 0, or -1 when no thread starts. */
int floor_sample(unsigned trips, double *one_way_us);

/* --- parent side --- */

typedef struct run_info {
    char command[4096];
    char date[64];
    char host[1024];
    long nproc_online;
    int nallowed;
    double elapsed_s;
    calibration cal;
    bool calibrated;
    char cw_version[32];
    const char *git_commit;
    const char *compiler;
    const char *layer;              /* the driver model layer the children load; NULL: none */
    const struct sweep_draw *draws; /* --sweep: the models drawn, one per config */
} run_info;

/* A run's plan (plan.c): worked out from the options before anything runs. */
typedef struct plan {
    int ncfg, nk, ns, ncells;
    unsigned long launches;   /* in all cells: warm-up and timed, every strategy */
    double cell_s[MAX_CELLS]; /* each cell's estimate, in run order (config by config) */
    double config_s;          /* each config's start-up and floor */
    double calibration_s;     /* 0: no calibration */
    double total_s;
    int at_max_time; /* cells whose estimate reaches --max-time */
} plan;

void make_plan(const options *o, const config *cfgs, int ncfg, const kernel_spec *ks, int nk,
               bool calibrate, plan *p);
void print_plan(FILE *f, const options *o, const plan *p, const config *cfgs, const kernel_spec *ks,
                const char *layer);
/* The estimate of what is left after `cells_done` cells. */
double plan_to_go(const plan *p, int cells_done);

typedef struct progress {
    int cell, ncells; /* cells done, cells in the run */
    double t_start;
    const plan *plan;
    double run_time; /* --run-time: the run's budget from t_start; 0 none */
} progress;

/* Re-executes this program pinned to c, reading its records into r (and cal);
 * returns the child's exit status, or 128 + signal. */
int run_child(char *const *argv, int argc, const options *o, const config *c,
              const char *const *extra, int cfg, results *r, calibration *cal, progress *pg);

const record *find_record(const results *r, const char *kernel, int cfg, const char *strategy);
const cell *find_cell(const results *r, const char *kernel, int cfg);
const char *kernel_param(const results *r, const char *kernel);
/* A record's statistic over blocking's in the same (kernel, config); NAN if none. */
double ratio_to_blocking(const results *r, const record *p, int metric, int stat);
/* CPU seconds per second of waiting: the mean CPU of the cw_wait calls over
 * their mean wall (1.0: a core spun throughout); NAN when not measured. */
double cpu_per_wait_s(const record *p);
/* Cooperative's wake-up overhead on the latency cell of config cfg, in us: its
 * median wall - kernel, or its median wall where profiling is unusable (then
 * *from_wall is set; an upper bound), NAN when not run; and its ratio to that
 * config's median floor, NAN where either is missing. */
double coop_latency_overhead(const results *r, int cfg, bool *from_wall);
double coop_floor_ratio(const results *r, int cfg);

void print_run_header(FILE *f, const options *o, const run_info *ri, const results *r);
void print_tables(FILE *f, const results *r, const config *cfgs, int ncfg, const kernel_spec *ks,
                  int nk);
void print_floors(FILE *f, const results *r, const config *cfgs, int ncfg);
/* The goals' checks, cell by cell, and each goal's count of verdicts. */
void print_checks(FILE *f, const results *r, const config *cfgs, int ncfg);
/* A goal's verdict in config cfg over its checks there (n: the count of
 * each verdict): MISS if one missed, PASS if all passed, else UNDECIDED. */
int goal_verdict(const results *r, int cfg, char goal, int n[3]);
void print_stats(FILE *f, const results *r, const config *cfgs, int ncfg, const kernel_spec *ks,
                 int nk);

/* 0, or -1 after reporting why the file could not be written. */
int write_json(const char *path, const options *o, const run_info *ri, const results *r,
               const config *cfgs, int ncfg);
int write_csv(const char *path, const run_info *ri, const results *r, const config *cfgs);
/* Before the run, with --plot: says now when gnuplot is missing (the plot
 * will be skipped); dies when its scratch folder cannot be made. */
void plot_preflight(const char *png);
/* 0 on success, 1 when gnuplot is missing (skipped), -1 on failure. */
int write_plot(const char *png, const options *o, const results *r, const config *cfgs, int ncfg,
               const kernel_spec *ks, int nk, const run_info *ri);

/* --- goals and verdicts (verdict.c) --- */

/* Commands from this long on are judged by CPU per second waited (goal a). */
#define GOAL_LONG_US 20000.0
/* Goal b's commands: this long and longer. */
#define GOAL_B_MIN_US 100.0
/* Goal f's commands (late callbacks near the limit): this long and longer. */
#define GOAL_F_MIN_US 100000.0
/* Goal f's CPU: at most this share of the time waited. */
#define GOAL_F_CPS 0.005
/* A strategy's figures over one round's block: added latency (the block's
 * median) and CPU per launch (its mean without its largest value), CPU of the waits over their wall
 * (s/s), and goal b's latency bound max(100 us, 0.5% of the mean command). */
enum { VM_LAT, VM_CPU, VM_CPS, VM_CMDB, VM_COUNT };
/* The figures' series, per round: one per strategy (NSTRAT), then auto's
 * first launches for goal f: each round a new queue, one untimed launch of
 * the command on it (the queue's earlier command, waited with auto), then
 * the timed one: of the cell's command, and of 1 s commands (the default
 * run has no 1 s cell: that series rides in the 100 ms one). */
#define F_FIRST NSTRAT
#define F_FIRST_1S (NSTRAT + 1)
#define NFIG (NSTRAT + 2)
#define GOAL_F_LONG_US 1000000.0
typedef struct round_fig {
    bool ran;
    double v[VM_COUNT];
} round_fig;
void round_figures(const sample *s, unsigned n, round_fig *f);

typedef enum verdict { V_UNDECIDED, V_PASS, V_MISS } verdict;
extern const char *const verdict_names[3];
typedef struct vterm {
    int strat, metric; /* cw_strategy, VM_* */
    double coef;
} vterm;
/* sum(coef x figure) + c <= 0, per round. */
typedef struct vcond {
    int nterm;
    vterm t[2];
    double c;
    bool equal_ok; /* no margin of its own: "at most another's figure" */
} vcond;
/* The resolution of a condition without a margin of its own (equal_ok:
 * "CPU <= auto's"), where two strategies on the same path sit on the bound
 * for ever: differences within RES_REL of its bound (the condition
 * without its first term) plus RES_ABS of its first term's metric count
 * as equal, and equal meets "at most". A condition is decided true when
 * its interval's upper end is at most its resolution, false when its
 * lower end is above it; a condition with a margin (x 1.05, / 1.2, + 2 us,
 * ...) has a resolution of 0 (bench/README.md says why). */
#define RES_REL 0.02
#define RES_ABS_LAT_US 0.5
#define RES_ABS_CPU_US 0.5
#define RES_ABS_CPS 0.00005
/* One check of a goal in a cell. ncond 1: a requirement, PASS when its
 * condition's interval lies wholly at or below 0, MISS wholly above. ncond
 * 2: the judged strategy does not beat auto: PASS when either condition is
 * decided false, MISS when both are decided true. */
typedef struct vcheck {
    char goal; /* 'a' to 'f' */
    int strat; /* the strategy the check is about */
    char what[128];
    int ncond;
    vcond cond[2];
    /* Goal e's checks: the second term of the condition is the strategy
     * of best_of (a mask of strategies) whose added latency has the lowest
     * median over the rounds so far, chosen before each evaluation until
     * best_rounds reaches MIN_ROUNDS_DROP, then kept; it is named in what
     * after best_at. */
    unsigned best_of;
    int best_at, best_rounds;
    int pairs; /* rounds in which every strategy of the check ran */
    double est[2], lo[2], hi[2], res[2];
    verdict v;
    /* An UNDECIDED check at the cell's end: the verdict its medians lean
     * to, the pairs that would decide it (check_to_decide) and the seconds
     * more those would take at the pace of the cell's last round; pairs
     * INFINITY where a median sits on its bound. */
    verdict lean;
    double to_decide_pairs, to_decide_s;
} vcheck;
#define MAX_CHECKS 64
typedef struct goal_cell {
    bool pocl3;  /* the real driver, unchanged: goal a */
    bool nvidia; /* the nvidia preset as it is: goals b and f */
    bool latency_kernel;
    double command_us; /* the command's nominal run time */
    bool on[NSTRAT];   /* strategies in the cell */
    bool first_1s;     /* the cell runs goal f's series of 1 s commands */
} goal_cell;
/* The goals' checks of a cell; returns how many (at most max). */
int goal_checks(const goal_cell *gc, vcheck *out, int max);
/* Evaluates ck over rounds 0..nrounds-1 of figs[series][round] (NFIG series);
 * scratch holds nrounds doubles. */
void check_eval(vcheck *ck, const round_fig *const *figs, int nrounds, double *scratch);
/* The pairs at which ck's interval would leave its bound, were its medians
 * to stay where they are and its intervals to narrow as one over the square
 * root of the pairs (the sign test's does, for differences of one spread),
 * and in *lean the verdict that would be: INFINITY (and V_UNDECIDED) where a
 * median the verdict hangs on sits on its bound. A projection, for telling
 * a check that more rounds decide from one they do not. */
double check_to_decide(const vcheck *ck, verdict *lean);
/* Whether more rounds of a cell decide nothing within its budget
 * (`budget_s`, of which `elapsed_s` is spent): every undecided check,
 * projected (check_to_decide), needs more than OUT_OF_REACH_FACTOR times
 * the time left at `round_s` a round, where a round still fits in it.
 * Never before OUT_OF_REACH_ROUNDS rounds and half the budget: a
 * projection from a few rounds is a guess, and a median that sits on its
 * bound after 30 rounds may leave it after 300, which a short cell affords
 * in seconds. */
bool checks_out_of_reach(const vcheck *ck, int n, int rounds, double round_s, double elapsed_s,
                         double budget_s);
#define OUT_OF_REACH_ROUNDS 30
#define OUT_OF_REACH_SPENT 0.5
#define OUT_OF_REACH_FACTOR 2.0
/* The median of d (sorted in place) and its distribution-free 95% interval
 * (the sign test's order statistics); -1, the bounds NAN, below 6 values,
 * where no such interval exists. */
int median_interval(double *d, int n, double *median, double *lo, double *hi);
/* k: the interval is the k-th smallest to the k-th largest of n; 0 below 6. */
int sign_test_rank(int n);
/* Rounds before a cell's checks may stop it: blocks of several launches
 * (short commands), blocks of one (long commands); from MIN_ROUNDS_DROP
 * rounds on, a strategy whose checks are all decided stops launching. */
#define MIN_ROUNDS_SHORT 6
#define MIN_ROUNDS_LONG 6
#define MIN_ROUNDS_DROP 6

/* --- the sweep (sweep.c) --- */

#define SWEEP_NKERNELS 6
#define SWEEP_NBUSY 4
#define SWEEP_MAX_DELAY_US 50000
/* A sweep cell's --max-time: a 100 ms command's strategies need seconds a
 * round, and most cells are decided in a few seconds or out of reach in
 * some more, so that 40 models still fit in about 10 minutes. */
#define SWEEP_MAX_TIME 40.0
extern const char *const sweep_kernels[SWEEP_NKERNELS];
extern const double sweep_busy_us[SWEEP_NBUSY];
typedef struct sweep_draw {
    char spec[256];  /* the model: pocl3 and its drawn parameters */
    char kernel[32]; /* one of sweep_kernels */
    int cpus;        /* 1, or 0: all allowed CPUs */
} sweep_draw;
/* The index-th model of the sweep with this seed. */
void sweep_draw_model(unsigned long seed, int index, sweep_draw *d);

#endif
