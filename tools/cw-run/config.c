/* SPDX-License-Identifier: MIT */
/* The CW_RUN_* environment (config.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

struct cwp_config cwp_cfg;

static bool parse_u64(const char *s, uint64_t max, uint64_t *out) {
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-' || v > max)
        return false;
    *out = v;
    return true;
}

/*
 * A file name as the program's start-up directory sees it: the files are
 * written at exit, when the program may have changed directory. Without a
 * current directory (removed) the name stays relative.
 */
static const char *absolute(const char *name, char *buf, size_t len) {
    if (name[0] == '/')
        return name;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return name;
    int n = snprintf(buf, len, "%s/%s", cwd, name);
    return n > 0 && (size_t)n < len ? buf : name;
}

/*
 * CW_RUN_STATS, CW_RUN_TRACE and who writes them. The profile: unset or
 * "0" none; empty, "1" or "-" the table on stderr; anything else the JSON
 * file (a file named 1 is "./1"). cw-run sets CW_RUN_PID to the pid the
 * program runs with (it executes it in its own process); the processes the
 * program starts see another pid, and are measured only with
 * CW_RUN_STATS_CHILDREN=1. Without CW_RUN_PID (a hand-made LD_PRELOAD)
 * every process is.
 */
static bool read_outputs(void) {
    static char stats_buf[PATH_MAX], trace_buf[PATH_MAX];
    const char *s = getenv("CW_RUN_STATS_CHILDREN");
    if (s && *s && strcmp(s, "0") && strcmp(s, "1")) {
        cwp_warn("CW_RUN_STATS_CHILDREN='%s' is not 0 or 1: waits are not interposed", s);
        return false;
    }
    bool children = s && !strcmp(s, "1");
    s = getenv("CW_RUN_PID");
    uint64_t pid;
    if (s && *s && parse_u64(s, UINT64_MAX, &pid) && pid != (uint64_t)getpid()) {
        if (!children)
            return true; /* waits interposed, nothing measured */
        cwp_cfg.child = true;
    }
    s = getenv("CW_RUN_STATS");
    if (s && strcmp(s, "0")) {
        cwp_cfg.stats = true;
        if (*s && strcmp(s, "1") && strcmp(s, "-"))
            cwp_cfg.stats_file = absolute(s, stats_buf, sizeof stats_buf);
    }
    s = getenv("CW_RUN_TRACE");
    if (s && *s) {
        cwp_cfg.trace = true;
        cwp_cfg.trace_file = absolute(s, trace_buf, sizeof trace_buf);
    }
    return true;
}

/*
 * CW_RUN_LEARNED: "none" no file; unset or empty the user's cache,
 * $XDG_CACHE_HOME/cw-run/learned (~/.cache/cw-run/learned without it, and
 * none without a home either); anything else the file.
 */
static void read_learned(void) {
    static char buf[PATH_MAX];
    const char *s = getenv("CW_RUN_LEARNED");
    if (s && !strcmp(s, "none"))
        return;
    if (s && *s) {
        cwp_cfg.learned_file = absolute(s, buf, sizeof buf);
        return;
    }
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = -1;
    if (cache && cache[0] == '/')
        n = snprintf(buf, sizeof buf, "%s/cw-run/learned", cache);
    else if (home && home[0] == '/')
        n = snprintf(buf, sizeof buf, "%s/.cache/cw-run/learned", home);
    if (n > 0 && (size_t)n < sizeof buf)
        cwp_cfg.learned_file = buf;
}

void cwp_config_read(void) {
    cwp_cfg.pid = (long)getpid();
    const char *s = getenv("CW_RUN_STRATEGY");
    cw_strategy st = CW_STRATEGY_DEFAULT;
    if (s && *s && cw_strategy_from_name(s, &st) != CW_OK) {
        cwp_warn("unknown strategy '%s' in CW_RUN_STRATEGY: waits are not interposed", s);
        return;
    }
    cwp_cfg.opt.strategy = st;
    cwp_cfg.native = st == CW_STRATEGY_BLOCKING;
    uint64_t v;
    s = getenv("CW_RUN_SPIN_US");
    if (s && *s) {
        if (!parse_u64(s, CW_SPIN_US_MAX, &v) || v == 0) {
            cwp_warn("CW_RUN_SPIN_US='%s' is not 1 to 1000000: waits are not interposed", s);
            return;
        }
        cwp_cfg.opt.spin_us = (uint32_t)v;
    }
    /* The latency preference of auto (CW_WAIT_LATENCY), for every wait. */
    s = getenv("CW_RUN_LATENCY");
    if (s && *s && strcmp(s, "0") && strcmp(s, "1")) {
        cwp_warn("CW_RUN_LATENCY='%s' is not 0 or 1: waits are not interposed", s);
        return;
    }
    if (s && !strcmp(s, "1"))
        cwp_cfg.opt.flags |= CW_WAIT_LATENCY;
    s = getenv("CW_RUN_HANG_MS");
    if (s && *s) {
        if (!parse_u64(s, UINT64_MAX / 1000000u, &v)) {
            cwp_warn("CW_RUN_HANG_MS='%s' is not a number of milliseconds: waits are not "
                     "interposed",
                     s);
            return;
        }
        cwp_cfg.hang_ns = v * 1000000u;
    }
    s = getenv("CW_RUN_ON_HANG");
    if (s && *s && strcmp(s, "report") && strcmp(s, "abort")) {
        cwp_warn("CW_RUN_ON_HANG='%s' is not report or abort: waits are not interposed", s);
        return;
    }
    cwp_cfg.hang_abort = s && !strcmp(s, "abort");
    if (!read_outputs())
        return;
    /* The blocking strategy makes the program's own calls: nothing is
     * learned, and nothing seeded would be used. */
    if (!cwp_cfg.native)
        read_learned();
    cwp_cfg.active = true;
}
