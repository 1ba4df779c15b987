/* SPDX-License-Identifier: MIT */
/* cw-run --compare (compare.h). */
#include "compare.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cw.h"

#define MAX_CONFIGS 16
/* "Equal wall time": a median wall time within this fraction of the best. */
#define EQUAL_WALL 0.05
/* The fewest runs of each way from which --compare names the cheapest: with
 * fewer, one slow start of the program (an interpreter's, a cold cache)
 * decides alone. */
#define DECIDING_RUNS 3

/* One way of running the program: native, or a strategy. */
typedef struct config {
    char name[64];
    const char *strategy;          /* CW_RUN_STRATEGY of its runs */
    double *wall, *cpu, *wait_cpu; /* s, per run; wait_cpu NAN: no profile */
    uint64_t *waits, *hash;
    int *status;
    double med_wall, med_cpu, med_wait;
} config;

/* The program's own calls, timed by the preload: its waits' CPU is then
 * measured as the strategies' are (docs/cw-run-internals.md says why). */
static const char native_strategy[] = "blocking";

static int parse_list(const char *list, config *cfg, unsigned *n) {
    cfg[0] = (config){.strategy = native_strategy};
    snprintf(cfg[0].name, sizeof cfg[0].name, "native");
    *n = 1;
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= sizeof cfg[0].name) {
            fprintf(stderr, "cw-run: --compare: an empty or too long name in '%s'\n", list);
            return 2;
        }
        if (*n == MAX_CONFIGS) {
            fprintf(stderr, "cw-run: --compare takes at most %d strategies\n", MAX_CONFIGS - 1);
            return 2;
        }
        config *c = &cfg[*n];
        *c = (config){0};
        memcpy(c->name, p, len);
        c->name[len] = '\0';
        cw_strategy st;
        if (cw_strategy_from_name(c->name, &st) != CW_OK) {
            fprintf(stderr, "cw-run: --compare: unknown strategy '%s'\n", c->name);
            return 2;
        }
        for (unsigned j = 1; j < *n; ++j)
            if (!strcmp(cfg[j].name, c->name)) {
                fprintf(stderr, "cw-run: --compare: '%s' twice\n", c->name);
                return 2;
            }
        c->strategy = c->name;
        ++*n;
        p += len + (comma ? 1 : 0);
        if (comma && !*p) {
            fprintf(stderr, "cw-run: --compare: an empty name in '%s'\n", list);
            return 2;
        }
    }
    if (*n == 1) {
        fprintf(stderr, "cw-run: --compare needs at least one strategy\n");
        return 2;
    }
    return 0;
}

int cwr_compare_check(const struct cwr_compare *c) {
    config cfg[MAX_CONFIGS];
    unsigned n;
    return parse_list(c->list, cfg, &n);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A number after "key": in the run's profile (the preload's JSON). */
static bool json_number(const char *text, const char *key, double *out) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(text, pat);
    if (!p)
        return false;
    char *end;
    *out = strtod(p + strlen(pat), &end);
    return end != p + strlen(pat);
}

/* The waiting threads' CPU (s) and the number of waits from the run's
 * profile, which it leaves in `path`; false without one (the preload did
 * not run in it, or it ended without exit handlers). */
static bool read_profile(const char *path, double *wait_cpu, uint64_t *waits) {
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char text[1 << 14];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    unlink(path);
    text[n] = '\0';
    double us, calls;
    if (!json_number(text, "wait_cpu_us", &us) || !json_number(text, "wait_calls", &calls))
        return false;
    *wait_cpu = us / 1e6;
    *waits = (uint64_t)calls;
    return true;
}

/* One run: the program's stdout hashed (FNV-1a, 64 bits), its exit status,
 * wall time, CPU time (its rusage, with the descendants it waited for)
 * and the profile's figures. Returns false if it could not be started. */
static bool run_one(const config *cf, unsigned r, char **argv, const char *profile) {
    int out[2];
    if (pipe(out) != 0) {
        perror("cw-run: --compare: pipe");
        return false;
    }
    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("cw-run: --compare: fork");
        close(out[0]);
        close(out[1]);
        return false;
    }
    if (pid == 0) {
        /* The runs read no input (each would take a share of it) and
         * write their output to the hash. */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != STDIN_FILENO) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        char pid_text[32];
        snprintf(pid_text, sizeof pid_text, "%ld", (long)getpid());
        if (setenv("CW_RUN_STRATEGY", cf->strategy, 1) || setenv("CW_RUN_STATS", profile, 1) ||
            setenv("CW_RUN_PID", pid_text, 1) || unsetenv("CW_RUN_TRACE") ||
            unsetenv("CW_RUN_STATS_CHILDREN"))
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "cw-run: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    close(out[1]);
    uint64_t h = 0xcbf29ce484222325u;
    unsigned char buf[1 << 15];
    for (;;) {
        ssize_t got = read(out[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got; ++i)
            h = (h ^ buf[i]) * 0x100000001b3u;
    }
    close(out[0]);
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("cw-run: --compare: wait4");
            return false;
        }
    }
    double t1 = now_s();
    cf->wall[r] = t1 - t0;
    cf->cpu[r] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    cf->hash[r] = h;
    cf->status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (!read_profile(profile, &cf->wait_cpu[r], &cf->waits[r])) {
        cf->wait_cpu[r] = NAN;
        cf->waits[r] = 0;
    }
    return true;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of n values; NAN if any is NAN (a run without a profile). */
static double median(const double *v, unsigned n) {
    double s[n];
    for (unsigned i = 0; i < n; ++i) {
        if (isnan(v[i]))
            return NAN;
        s[i] = v[i];
    }
    qsort(s, n, sizeof *s, by_value);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static bool varies_u64(const uint64_t *v, unsigned n, uint64_t ref) {
    for (unsigned i = 0; i < n; ++i)
        if (v[i] != ref)
            return true;
    return false;
}

static bool varies_int(const int *v, unsigned n, int ref) {
    for (unsigned i = 0; i < n; ++i)
        if (v[i] != ref)
            return true;
    return false;
}

static unsigned distinct(const uint64_t *v, unsigned n) {
    unsigned d = 0;
    for (unsigned i = 0; i < n; ++i) {
        bool seen = false;
        for (unsigned j = 0; j < i; ++j)
            seen |= v[j] == v[i];
        d += !seen;
    }
    return d;
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_ratio(FILE *f, double x, double native) {
    if (isnan(x) || isnan(native) || native <= 0)
        fprintf(f, "null");
    else
        fprintf(f, "%.4f", x / native);
}

static void json_doubles(FILE *f, const double *v, unsigned n) {
    fputc('[', f);
    for (unsigned i = 0; i < n; ++i) {
        if (isnan(v[i]))
            fprintf(f, "%snull", i ? ", " : "");
        else
            fprintf(f, "%s%.6f", i ? ", " : "", v[i]);
    }
    fputc(']', f);
}

/*
 * The cheapest way at equal wall time, by the medians, is named only where
 * the runs decide it: at least DECIDING_RUNS runs of each way, and in every
 * round its process CPU below that of each other way at equal wall time
 * (the rounds are interleaved, so each compares runs made side by side).
 * Otherwise `why` says what is missing, and nothing is named.
 */
typedef struct verdict {
    int cheapest; /* by the medians; -1 none */
    bool decided;
    unsigned rivals; /* other ways at equal wall time */
    char why[256];
} verdict;

static verdict decide(const config *cfg, unsigned n, unsigned runs, double best) {
    verdict v = {.cheapest = -1, .decided = false, .rivals = 0, .why = ""};
    /* Cheapest at equal wall time: the least process CPU among the ways
     * whose wall time is within EQUAL_WALL of the best; the waiting
     * threads' CPU breaks a tie. */
    for (unsigned j = 0; j < n; ++j) {
        const config *k = &cfg[j];
        if (k->med_wall > best * (1 + EQUAL_WALL))
            continue;
        if (v.cheapest < 0 || k->med_cpu < cfg[v.cheapest].med_cpu ||
            (k->med_cpu == cfg[v.cheapest].med_cpu && k->med_wait < cfg[v.cheapest].med_wait))
            v.cheapest = (int)j;
    }
    if (v.cheapest < 0) {
        snprintf(v.why, sizeof v.why, "no way has a wall time");
        return v;
    }
    if (runs < DECIDING_RUNS) {
        snprintf(v.why, sizeof v.why, "%u run%s of each decide%s nothing; --runs %u or more", runs,
                 runs == 1 ? "" : "s", runs == 1 ? "s" : "", DECIDING_RUNS);
        return v;
    }
    const config *c = &cfg[v.cheapest];
    for (unsigned j = 0; j < n; ++j) {
        const config *k = &cfg[j];
        if ((int)j == v.cheapest || k->med_wall > best * (1 + EQUAL_WALL))
            continue;
        ++v.rivals;
        unsigned below = 0;
        for (unsigned r = 0; r < runs; ++r)
            below += c->cpu[r] < k->cpu[r];
        if (below < runs) {
            snprintf(v.why, sizeof v.why, "%s's CPU was below %s's in %u of %u rounds only",
                     c->name, k->name, below, runs);
            return v;
        }
    }
    v.decided = true;
    return v;
}

static int write_json(const struct cwr_compare *c, char **argv, const config *cfg, unsigned n,
                      double best, const verdict *v, bool out_differ, bool rc_differ) {
    FILE *f = fopen(c->json, "w");
    if (!f) {
        fprintf(stderr, "cw-run: cannot write %s: %s\n", c->json, strerror(errno));
        return 2;
    }
    unsigned runs = c->runs;
    fprintf(f, "{\n  \"program\": [");
    for (char **a = argv; *a; ++a) {
        if (a != argv)
            fprintf(f, ", ");
        json_string(f, *a);
    }
    fprintf(f, "],\n  \"runs\": %u,\n  \"equal_wall_within\": %.2f,\n  \"configs\": [", runs,
            EQUAL_WALL);
    for (unsigned j = 0; j < n; ++j) {
        const config *k = &cfg[j];
        fprintf(f, "%s\n    {\"name\": ", j ? "," : "");
        json_string(f, k->name);
        fprintf(f, ", \"strategy\": ");
        json_string(f, k->strategy);
        fprintf(f, ",\n     \"wall_s\": ");
        json_doubles(f, k->wall, runs);
        fprintf(f, ", \"cpu_s\": ");
        json_doubles(f, k->cpu, runs);
        fprintf(f, ", \"wait_cpu_s\": ");
        json_doubles(f, k->wait_cpu, runs);
        fprintf(f, ",\n     \"waits\": [");
        for (unsigned r = 0; r < runs; ++r)
            fprintf(f, "%s%" PRIu64, r ? ", " : "", k->waits[r]);
        fprintf(f, "], \"exit_status\": [");
        for (unsigned r = 0; r < runs; ++r)
            fprintf(f, "%s%d", r ? ", " : "", k->status[r]);
        fprintf(f, "], \"stdout_fnv1a64\": [");
        for (unsigned r = 0; r < runs; ++r)
            fprintf(f, "%s\"%016" PRIx64 "\"", r ? ", " : "", k->hash[r]);
        fprintf(f, "],\n     \"median\": {\"wall_s\": %.6f, \"cpu_s\": %.6f, \"wait_cpu_s\": ",
                k->med_wall, k->med_cpu);
        if (isnan(k->med_wait))
            fprintf(f, "null");
        else
            fprintf(f, "%.6f", k->med_wait);
        fprintf(f, "},\n     \"ratio_to_native\": {\"wall\": ");
        json_ratio(f, k->med_wall, cfg[0].med_wall);
        fprintf(f, ", \"cpu\": ");
        json_ratio(f, k->med_cpu, cfg[0].med_cpu);
        fprintf(f, ", \"wait_cpu\": ");
        json_ratio(f, k->med_wait, cfg[0].med_wait);
        fprintf(f,
                "},\n     \"equal_wall\": %s, \"output_varies\": %s, "
                "\"output_differs_from_native\": %s, \"exit_status_differs\": %s}",
                k->med_wall <= best * (1 + EQUAL_WALL) ? "true" : "false",
                distinct(k->hash, runs) > 1 ? "true" : "false",
                varies_u64(k->hash, runs, cfg[0].hash[0]) ? "true" : "false",
                varies_int(k->status, runs, cfg[0].status[0]) ? "true" : "false");
    }
    fprintf(f, "\n  ],\n  \"best_wall_s\": %.6f,\n  \"decided\": %s,\n  \"cheapest\": ", best,
            v->decided ? "true" : "false");
    if (v->decided)
        json_string(f, cfg[v->cheapest].name);
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"cheapest_by_medians\": ");
    if (v->cheapest >= 0)
        json_string(f, cfg[v->cheapest].name);
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"undecided_because\": ");
    if (v->decided)
        fprintf(f, "null");
    else
        json_string(f, v->why);
    fprintf(f, ",\n  \"outputs_differ\": %s,\n  \"exit_statuses_differ\": %s\n}\n",
            out_differ ? "true" : "false", rc_differ ? "true" : "false");
    if (fclose(f) != 0) {
        fprintf(stderr, "cw-run: cannot write %s: %s\n", c->json, strerror(errno));
        return 2;
    }
    return 0;
}

static void print_ratio(double x, double native) {
    if (isnan(x) || isnan(native) || native <= 0)
        printf(" %7s", "-");
    else
        printf(" %7.2f", x / native);
}

static void print_table(const struct cwr_compare *c, char **argv, const config *cfg, unsigned n,
                        double best, const verdict *v, bool out_differ, bool rc_differ) {
    unsigned runs = c->runs;
    printf("cw-run --compare: %u run%s of each, interleaved:", runs, runs == 1 ? "" : "s");
    for (char **a = argv; *a; ++a)
        printf(" %s", *a);
    printf("\n%-24s %10s %7s %10s %7s %14s %7s %10s  %s\n", "", "wall s", "x nat", "CPU s", "x nat",
           "wait CPU ms", "x nat", "waits", "output");
    for (unsigned j = 0; j < n; ++j) {
        const config *k = &cfg[j];
        printf("%-24s %10.3f", j ? k->name : "native (own calls)", k->med_wall);
        print_ratio(k->med_wall, cfg[0].med_wall);
        printf(" %10.3f", k->med_cpu);
        print_ratio(k->med_cpu, cfg[0].med_cpu);
        if (isnan(k->med_wait))
            printf(" %14s", "-");
        else
            printf(" %14.3f", k->med_wait * 1e3);
        print_ratio(k->med_wait, cfg[0].med_wait);
        uint64_t w = k->waits[0];
        printf(" %10" PRIu64 "  ", w);
        unsigned d = distinct(k->hash, runs);
        if (d > 1)
            printf("VARIES (%u different)", d);
        else if (k->hash[0] != cfg[0].hash[0])
            printf("DIFFERS from native");
        else
            printf("same");
        if (varies_int(k->status, runs, cfg[0].status[0]))
            printf(", EXIT STATUS differs");
        printf("\n");
    }
    printf("median of the runs; CPU: the process's (user + system, with the children it "
           "waited for); wait CPU: the waiting threads' during the calls cw-run interposed\n");
    if (v->decided && v->rivals)
        printf("cheapest at equal wall time (median wall within %.0f%% of the best, %.3f s): %s "
               "(the least CPU in each of the %u rounds)\n",
               EQUAL_WALL * 100, best, cfg[v->cheapest].name, c->runs);
    else if (v->decided)
        printf("cheapest at equal wall time (median wall within %.0f%% of the best, %.3f s): %s "
               "(the only way within it)\n",
               EQUAL_WALL * 100, best, cfg[v->cheapest].name);
    else
        printf("cheapest at equal wall time (median wall within %.0f%% of the best, %.3f s): "
               "undecided (%s)\n",
               EQUAL_WALL * 100, best, v->why);
    if (out_differ || rc_differ)
        printf("cw-run --compare: the program's %s differed between runs: the figures may "
               "not compare the same work\n",
               out_differ && rc_differ ? "output and exit status"
               : out_differ            ? "output"
                                       : "exit status");
}

static void free_configs(config *cfg, unsigned n) {
    for (unsigned j = 0; j < n; ++j) {
        free(cfg[j].wall);
        free(cfg[j].cpu);
        free(cfg[j].wait_cpu);
        free(cfg[j].waits);
        free(cfg[j].hash);
        free(cfg[j].status);
    }
}

static int compare(const struct cwr_compare *c, char **argv, config *cfg, unsigned n);

int cwr_compare_run(const struct cwr_compare *c, char **argv) {
    config cfg[MAX_CONFIGS];
    unsigned n;
    if (parse_list(c->list, cfg, &n))
        return 2;
    int rc = compare(c, argv, cfg, n);
    free_configs(cfg, n);
    return rc;
}

/* cwr_compare_run on the parsed list; cfg's arrays are the caller's to
 * free, allocated or not. */
static int compare(const struct cwr_compare *c, char **argv, config *cfg, unsigned n) {
    unsigned runs = c->runs;
    for (unsigned j = 0; j < n; ++j) {
        config *k = &cfg[j];
        k->wall = calloc(runs, sizeof *k->wall);
        k->cpu = calloc(runs, sizeof *k->cpu);
        k->wait_cpu = calloc(runs, sizeof *k->wait_cpu);
        k->waits = calloc(runs, sizeof *k->waits);
        k->hash = calloc(runs, sizeof *k->hash);
        k->status = calloc(runs, sizeof *k->status);
        if (!k->wall || !k->cpu || !k->wait_cpu || !k->waits || !k->hash || !k->status) {
            fprintf(stderr, "cw-run: --compare: out of memory\n");
            return 2;
        }
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/cw-run-compare-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cw-run: --compare: cannot make a folder for the runs' profiles: %s\n",
                strerror(errno));
        return 2;
    }
    char profile[4200];
    snprintf(profile, sizeof profile, "%s/profile.json", dir);
    /*
     * Interleaved: round after round, each way once, the order rotated
     * each round, so that a slow phase of the machine (another job, the
     * CPU's clock) falls on every way alike rather than on one.
     */
    unsigned total = runs * n, done = 0;
    int rc = 0;
    for (unsigned r = 0; r < runs && !rc; ++r)
        for (unsigned i = 0; i < n; ++i) {
            config *k = &cfg[(i + r) % n];
            fprintf(stderr, "cw-run: compare: run %u of %u: %s (round %u of %u)\n", ++done, total,
                    k->name, r + 1, runs);
            if (!run_one(k, r, argv, profile)) {
                rc = 2;
                break;
            }
            /* A program that cannot be run fails every run alike. */
            if (done == 1 && (k->status[0] == 127 || k->status[0] == 126)) {
                fprintf(stderr,
                        "cw-run: --compare: the program could not be run (exit status %d)\n",
                        k->status[0]);
                rc = 2;
                break;
            }
        }
    unlink(profile);
    rmdir(dir);
    if (rc)
        return rc;
    double best = INFINITY;
    bool out_differ = false, rc_differ = false;
    for (unsigned j = 0; j < n; ++j) {
        config *k = &cfg[j];
        k->med_wall = median(k->wall, runs);
        k->med_cpu = median(k->cpu, runs);
        k->med_wait = median(k->wait_cpu, runs);
        if (k->med_wall < best)
            best = k->med_wall;
        out_differ |= varies_u64(k->hash, runs, cfg[0].hash[0]);
        rc_differ |= varies_int(k->status, runs, cfg[0].status[0]);
    }
    verdict v = decide(cfg, n, runs, best);
    print_table(c, argv, cfg, n, best, &v, out_differ, rc_differ);
    fflush(stdout);
    if (c->json && write_json(c, argv, cfg, n, best, &v, out_differ, rc_differ))
        return 2;
    return out_differ || rc_differ ? 1 : 0;
}
