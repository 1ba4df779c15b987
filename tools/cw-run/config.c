/* SPDX-License-Identifier: MIT */
/* The CW_RUN_* environment (config.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

void cwp_config_read(void) {
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
    s = getenv("CW_RUN_STATS");
    if (s) {
        cwp_cfg.stats = true;
        cwp_cfg.stats_file = *s && strcmp(s, "-") ? s : NULL;
    }
    cwp_cfg.active = true;
}
