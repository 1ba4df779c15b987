/* SPDX-License-Identifier: MIT */
/*
 * cw-run: run a program with libcw_preload.so, so that its OpenCL waits
 * (clWaitForEvents, clFinish, blocking reads, writes, maps and copies) are
 * cw's. It only checks its options, puts them into CW_RUN_* variables,
 * names the preload in OPENCL_LAYERS or LD_PRELOAD (reach.c) and executes
 * the program: the exit status is the program's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cw.h"
#include "reach.h"

#ifndef CW_RUN_PRELOAD_REL
#define CW_RUN_PRELOAD_REL "../lib/cw/libcw_preload.so"
#endif

static void usage(FILE *f) {
    fprintf(f, "usage: cw-run [OPTIONS] [--] PROGRAM [ARGS...]\n"
               "Run PROGRAM with its OpenCL waits done by cw (libcw_preload.so).\n"
               "\n"
               "  --strategy NAME     cw strategy for the waits (default: auto); blocking\n"
               "                      makes the program's own calls, measured   [CW_RUN_STRATEGY]\n"
               "  --spin-us N         spin budget, 1..1000000 us, for spin-park and auto\n"
               "                                                                 [CW_RUN_SPIN_US]\n"
               "  --stats[=FILE]      print a wait profile at exit: a table on stderr, or JSON\n"
               "                      to FILE (%%p in FILE becomes the pid)       [CW_RUN_STATS]\n"
               "  --hang-ms N         report a wait that lasts longer than N ms  [CW_RUN_HANG_MS]\n"
               "  --on-hang=report|abort\n"
               "                      after the report keep waiting (default) or abort\n"
               "                                                                 [CW_RUN_ON_HANG]\n"
               "  -h, --help          this text\n"
               "  --version           cw's version\n"
               "\n"
               "Strategies: default blocking cooperative poll cooperative-wake-locked\n"
               "cooperative-noyield pthread spin-park backoff-poll auto.\n"
               "The preload is found next to cw-run (build tree), then at\n"
               "<cw-run's directory>/" CW_RUN_PRELOAD_REL " (install);\n"
               "CW_RUN_PRELOAD names another one. It is loaded as an OpenCL layer where the\n"
               "loader supports layers, else preloaded (CW_RUN_MECHANISM=layer|preload|auto).\n"
               "See cw-run(1).\n");
}

static int fail(const char *what, const char *arg) {
    fprintf(stderr, "cw-run: %s '%s'\n", what, arg);
    usage(stderr);
    return 2;
}

static int unsigned_in(const char *s, unsigned long long lo, unsigned long long hi) {
    if (!*s || *s == '-' || *s == '+')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    return !errno && !*end && v >= lo && v <= hi;
}

/* The preload: $CW_RUN_PRELOAD, else next to this executable, else at the
 * install's relative place, so a build tree and any install prefix work. */
static int find_preload(char *out, size_t len) {
    const char *env = getenv("CW_RUN_PRELOAD");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0;
    }
    char self[PATH_MAX - 64]; /* room for the file name in `out` */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    snprintf(out, len, "%s/libcw_preload.so", self);
    if (access(out, R_OK) == 0)
        return 1;
    char joined[PATH_MAX + 64];
    snprintf(joined, sizeof joined, "%s/%s", self, CW_RUN_PRELOAD_REL);
    if (!realpath(joined, out))
        return 0;
    return access(out, R_OK) == 0;
}

static int set(const char *name, const char *value) {
    if (setenv(name, value, 1) != 0) {
        perror("cw-run: setenv");
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = NULL;
        if (!strcmp(a, "--")) {
            ++i;
            break;
        }
        if (a[0] != '-')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            printf("cw-run (cw %s)\n", cw_version_string());
            return 0;
        }
        if (!strcmp(a, "--stats")) {
            if (!set("CW_RUN_STATS", ""))
                return 2;
            continue;
        }
        if (!strncmp(a, "--stats=", 8)) {
            if (!a[8])
                return fail("empty file name in", a);
            if (!set("CW_RUN_STATS", a + 8))
                return 2;
            continue;
        }
        /* The options with a value: --opt VALUE or --opt=VALUE. */
        static const char *const with_value[] = {"--strategy", "--spin-us", "--hang-ms",
                                                 "--on-hang"};
        size_t which = 4;
        for (size_t k = 0; k < 4; ++k) {
            size_t l = strlen(with_value[k]);
            if (!strncmp(a, with_value[k], l) && (a[l] == '\0' || a[l] == '=')) {
                which = k;
                v = a[l] == '=' ? a + l + 1 : NULL;
                break;
            }
        }
        if (which == 4)
            return fail("unknown option", a);
        if (!v) {
            if (i + 1 >= argc)
                return fail("missing value after", a);
            v = argv[++i];
        }
        cw_strategy st;
        switch (which) {
        case 0:
            if (cw_strategy_from_name(v, &st) != CW_OK)
                return fail("unknown strategy", v);
            if (!set("CW_RUN_STRATEGY", v))
                return 2;
            break;
        case 1:
            if (!unsigned_in(v, 1, CW_SPIN_US_MAX))
                return fail("--spin-us takes 1 to 1000000, not", v);
            if (!set("CW_RUN_SPIN_US", v))
                return 2;
            break;
        case 2:
            if (!unsigned_in(v, 1, 1000000000ull))
                return fail("--hang-ms takes 1 to 1000000000, not", v);
            if (!set("CW_RUN_HANG_MS", v))
                return 2;
            break;
        default:
            if (strcmp(v, "report") && strcmp(v, "abort"))
                return fail("--on-hang takes report or abort, not", v);
            if (!set("CW_RUN_ON_HANG", v))
                return 2;
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "cw-run: no program to run\n");
        usage(stderr);
        return 2;
    }
    const char *on_hang = getenv("CW_RUN_ON_HANG");
    const char *hang = getenv("CW_RUN_HANG_MS");
    if (on_hang && *on_hang && !(hang && *hang)) {
        fprintf(stderr, "cw-run: --on-hang needs --hang-ms\n");
        return 2;
    }

    char preload[PATH_MAX];
    if (!find_preload(preload, sizeof preload)) {
        fprintf(stderr, "cw-run: libcw_preload.so not found (set CW_RUN_PRELOAD)\n");
        return 127;
    }
    int reached = cwr_reach(preload);
    if (reached != 0)
        return reached;
    execvp(argv[i], argv + i);
    fprintf(stderr, "cw-run: cannot run %s: %s\n", argv[i], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
