/* SPDX-License-Identifier: MIT */
/*
 * cw-timerslack: how long a requested sleep (clock_nanosleep, relative)
 * really takes, with the thread's default timer slack and with 1 ns: the
 * figures behind backoff-poll lowering the slack for its sleeps. It measures
 * the kernel, not cw, so it sets the slack itself with prctl(2) and links
 * nothing of cw's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define NSLEEP 4
static const unsigned sleep_req_us[NSLEEP] = {1, 10, 100, 1000};

typedef struct slack_row {
    unsigned requested_us;
    uint64_t slack_ns;
    bool is_default;
    unsigned n;
    double mean_us, median_us, p90_us;
} slack_row;

static void usage(FILE *f) {
    fputs("usage: cw-timerslack [options]\n"
          "Measures how long clock_nanosleep takes for requested sleeps of 1, 10, 100 and\n"
          "1000 us, first with this thread's default timer slack, then with 1 ns (set and\n"
          "restored with prctl(PR_SET_TIMERSLACK)), and prints a table on stdout.\n"
          "\n"
          "options:\n"
          "  --quick        20 sleeps per row instead of 1000 (200 for 1000 us)\n"
          "  --json FILE    also write {\"timerslack\": [...]}, one object per row\n"
          "  -h, --help     this text\n"
          "Options take their value as --opt VALUE or --opt=VALUE.\n"
          "Exit status: 0 on success, 1 when FILE cannot be written, 2 on a usage error.\n",
          f);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double elapsed_us(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

/* The calling thread's timer slack; PR_SET_TIMERSLACK with 0 would mean
 * "the default", so 1 ns is the lowest settable value. */
static void set_slack(uint64_t ns) {
    if (prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0) != 0) {
        fprintf(stderr, "cw-timerslack: prctl(PR_SET_TIMERSLACK): %s\n", strerror(errno));
        exit(1);
    }
}

static void measure(bool quick, slack_row rows[2 * NSLEEP]) {
    int got = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (got < 0) {
        fprintf(stderr, "cw-timerslack: prctl(PR_GET_TIMERSLACK): %s\n", strerror(errno));
        exit(1);
    }
    uint64_t dflt = (uint64_t)got;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1)
            set_slack(1);
        for (int i = 0; i < NSLEEP; ++i) {
            unsigned n = quick ? 20 : sleep_req_us[i] >= 1000 ? 200 : 1000;
            double *v = malloc(n * sizeof *v), sum = 0;
            if (!v) {
                fputs("cw-timerslack: out of memory\n", stderr);
                exit(1);
            }
            struct timespec req = {0, (long)sleep_req_us[i] * 1000};
            for (unsigned j = 0; j < n; ++j) {
                struct timespec a, b;
                clock_gettime(CLOCK_MONOTONIC, &a);
                clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
                clock_gettime(CLOCK_MONOTONIC, &b);
                v[j] = elapsed_us(&a, &b);
                sum += v[j];
            }
            qsort(v, n, sizeof *v, cmp_double);
            rows[pass * NSLEEP + i] = (slack_row){sleep_req_us[i], pass ? 1 : dflt, pass == 0,    n,
                                                  sum / n,         v[n / 2],        v[n * 9 / 10]};
            free(v);
        }
        if (pass == 1)
            set_slack(dflt);
    }
}

static void print_table(const slack_row rows[2 * NSLEEP]) {
    printf("== timer slack: a requested sleep (clock_nanosleep) against the time it took ==\n");
    printf("%-12s | %-32s | %s\n", "", "default slack", "1 ns slack");
    printf("%-12s | %6s %8s %8s %8s | %6s %8s %8s %8s\n", "requested us", "n", "mean", "median",
           "p90", "n", "mean", "median", "p90");
    for (int i = 0; i < NSLEEP; ++i) {
        const slack_row *a = &rows[i], *b = &rows[NSLEEP + i];
        printf("%12u | %6u %8.1f %8.1f %8.1f | %6u %8.1f %8.1f %8.1f\n", a->requested_us, a->n,
               a->mean_us, a->median_us, a->p90_us, b->n, b->mean_us, b->median_us, b->p90_us);
    }
    printf("(default slack of this thread: %llu ns)\n", (unsigned long long)rows[0].slack_ns);
}

static int write_json(const char *path, const slack_row rows[2 * NSLEEP]) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cw-timerslack: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fputs("{\"timerslack\": [", f);
    for (int i = 0; i < 2 * NSLEEP; ++i) {
        const slack_row *t = &rows[i];
        fprintf(f,
                "%s\n  {\"requested_us\": %u, \"slack\": \"%s\", \"slack_ns\": %llu, \"n\": %u, "
                "\"mean_us\": %.4f, \"median_us\": %.4f, \"p90_us\": %.4f}",
                i ? "," : "", t->requested_us, t->is_default ? "default" : "1ns",
                (unsigned long long)t->slack_ns, t->n, t->mean_us, t->median_us, t->p90_us);
    }
    fputs("\n]}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "cw-timerslack: error writing %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    static const struct option opts[] = {{"quick", no_argument, NULL, 'q'},
                                         {"json", required_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool quick = false;
    const char *json = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'q':
            quick = true;
            break;
        case 'j':
            json = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cw-timerslack: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    slack_row rows[2 * NSLEEP];
    measure(quick, rows);
    print_table(rows);
    return json && write_json(json, rows) != 0 ? 1 : 0;
}
