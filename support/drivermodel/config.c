/* SPDX-License-Identifier: MIT */
/*
 * The model's configuration: CW_DRIVER_MODEL=preset[,name=value...] or only
 * name=value pairs on top of pocl3 (the driver unchanged). Every value is
 * checked; anything not understood is an error, never a silent default, so
 * a test that names a model runs under that model or not at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* The presets, each a list of the parameters below (docs/driver-models.md
 * gives the source of every value). */
static const struct {
    const char *name;
    const char *params;
} presets[] = {
    {"pocl3", ""},
    {"pocl7", "failed=fire_complete,callback_delay_us=100"},
    {"nvidia", "wait=spin,callback_delay_us=20000,device=timer"},
    {"neo", "wait=yield,stall_us=5000,stall_every=64"},
    {"rocm", "wait=spinblock:200,device=timer"},
};

static void defaults(dm_config *c) {
    memset(c, 0, sizeof *c);
    snprintf(c->preset, sizeof c->preset, "pocl3");
    c->failed = DM_FAILED_REAL;
    c->wait = DM_WAIT_BLOCK;
    c->device = DM_DEVICE_REAL;
    c->kernel_us = 10;
    c->busy_ns = 10;
    c->seed = 1;
}

/* A decimal integer in [lo, hi], the whole of s. */
static int number(const char *s, long lo, long hi, long *out) {
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int set_param(dm_config *c, const char *name, const char *value, char *msg, size_t msglen) {
    long v;
    /* A microsecond figure up to 100 s: anything larger is a typo. */
    const long max_us = 100000000L;
    if (!strcmp(name, "callback_delay_us") || !strcmp(name, "jitter_us") ||
        !strcmp(name, "stall_us") || !strcmp(name, "kernel_us")) {
        if (number(value, 0, max_us, &v))
            goto bad_number;
        if (!strcmp(name, "callback_delay_us"))
            c->callback_delay_us = v;
        else if (!strcmp(name, "jitter_us"))
            c->jitter_us = v;
        else if (!strcmp(name, "stall_us"))
            c->stall_us = v;
        else
            c->kernel_us = v;
        return 0;
    }
    if (!strcmp(name, "stall_every") || !strcmp(name, "busy_ns")) {
        if (number(value, 1, 1000000000L, &v))
            goto bad_number;
        if (!strcmp(name, "stall_every"))
            c->stall_every = v;
        else
            c->busy_ns = v;
        return 0;
    }
    if (!strcmp(name, "seed")) {
        if (number(value, 0, 0x7fffffffL, &v))
            goto bad_number;
        c->seed = (unsigned long)v;
        return 0;
    }
    if (!strcmp(name, "failed")) {
        if (!strcmp(value, "real"))
            c->failed = DM_FAILED_REAL;
        else if (!strcmp(value, "fire"))
            c->failed = DM_FAILED_FIRE;
        else if (!strcmp(value, "fire_complete"))
            c->failed = DM_FAILED_FIRE_COMPLETE;
        else if (!strcmp(value, "drop"))
            c->failed = DM_FAILED_DROP;
        else {
            snprintf(msg, msglen, "failed=%s: must be real, fire, fire_complete or drop", value);
            return -1;
        }
        return 0;
    }
    if (!strcmp(name, "wait")) {
        if (!strcmp(value, "block"))
            c->wait = DM_WAIT_BLOCK;
        else if (!strcmp(value, "spin"))
            c->wait = DM_WAIT_SPIN;
        else if (!strcmp(value, "yield"))
            c->wait = DM_WAIT_YIELD;
        else if (!strncmp(value, "spinblock:", 10) && !number(value + 10, 1, max_us, &v)) {
            c->wait = DM_WAIT_SPINBLOCK;
            c->spin_us = v;
        } else {
            snprintf(msg, msglen,
                     "wait=%s: must be block, spin, yield or spinblock:N (N us, 1..%ld)", value,
                     max_us);
            return -1;
        }
        return 0;
    }
    if (!strcmp(name, "device")) {
        if (!strcmp(value, "real"))
            c->device = DM_DEVICE_REAL;
        else if (!strcmp(value, "timer"))
            c->device = DM_DEVICE_TIMER;
        else {
            snprintf(msg, msglen, "device=%s: must be real or timer", value);
            return -1;
        }
        return 0;
    }
    snprintf(msg, msglen, "unknown parameter '%s'", name);
    return -1;
bad_number:
    snprintf(msg, msglen, "%s=%s: not a whole number in range", name, value);
    return -1;
}

/* Apply a comma-separated list of name=value items. */
static int apply(dm_config *c, char *list, char *msg, size_t msglen) {
    for (char *save = NULL, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            snprintf(msg, msglen, "'%s': expected name=value (a preset may come only first)", item);
            return -1;
        }
        *eq = '\0';
        if (set_param(c, item, eq + 1, msg, msglen))
            return -1;
    }
    return 0;
}

int dm_config_parse(const char *text, dm_config *cfg, char *msg, size_t msglen) {
    defaults(cfg);
    if (!text || !*text)
        return 0;
    char buf[512];
    if (strlen(text) >= sizeof buf) {
        snprintf(msg, msglen, "too long (%zu characters, at most %zu)", strlen(text),
                 sizeof buf - 1);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", text);
    char *rest = buf;
    char *comma = strchr(buf, ',');
    size_t first_len = comma ? (size_t)(comma - buf) : strlen(buf);
    if (!memchr(buf, '=', first_len)) {
        /* The first item is a preset's name. */
        if (comma)
            *comma = '\0';
        size_t i;
        for (i = 0; i < sizeof presets / sizeof presets[0]; ++i)
            if (!strcmp(buf, presets[i].name))
                break;
        if (i == sizeof presets / sizeof presets[0]) {
            snprintf(msg, msglen, "unknown preset '%s' (pocl3, pocl7, nvidia, neo, rocm)", buf);
            return -1;
        }
        snprintf(cfg->preset, sizeof cfg->preset, "%s", presets[i].name);
        char pbuf[256];
        snprintf(pbuf, sizeof pbuf, "%s", presets[i].params);
        if (apply(cfg, pbuf, msg, msglen))
            return -1;
        rest = comma ? comma + 1 : buf + first_len;
    }
    if (apply(cfg, rest, msg, msglen))
        return -1;
    if (cfg->stall_us && !cfg->stall_every)
        cfg->stall_every = 1;
    return 0;
}

bool dm_config_wraps_callbacks(const dm_config *c) {
    return c->callback_delay_us > 0 || c->jitter_us > 0 || c->failed != DM_FAILED_REAL;
}

void dm_config_describe(const dm_config *c, char *buf, size_t len) {
    static const char *const failed[] = {"real", "fire", "fire_complete", "drop"};
    static const char *const wait[] = {"block", "spin", "yield", "spinblock"};
    char spin[32] = "";
    if (c->wait == DM_WAIT_SPINBLOCK)
        snprintf(spin, sizeof spin, ":%ld", c->spin_us);
    snprintf(buf, len,
             "preset=%s callback_delay_us=%ld jitter_us=%ld failed=%s wait=%s%s stall_us=%ld "
             "stall_every=%ld device=%s kernel_us=%ld busy_ns=%ld seed=%lu",
             c->preset, c->callback_delay_us, c->jitter_us, failed[c->failed], wait[c->wait], spin,
             c->stall_us, c->stall_every, c->device == DM_DEVICE_TIMER ? "timer" : "real",
             c->kernel_us, c->busy_ns, c->seed);
}
