/* SPDX-License-Identifier: MIT */
/*
 * The preload's configuration: the CW_RUN_* variables that cw-run sets
 * (cw-run(1) lists them), read once at start-up.
 */
#ifndef CWP_CONFIG_H
#define CWP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "cw.h"

/* Written by cwp_config_read under the start-up's pthread_once
 * (preload.h), before any wrapper reads it, and never again. */
extern struct cwp_config {
    bool active; /* false: every wrapper forwards, nothing is measured */
    bool native; /* --strategy blocking: the real blocking calls */
    bool stats;  /* measure and print the profile at exit */
    /* The profile's JSON file, absolute (resolved at start-up, so that a
     * program's chdir does not move it), %p not yet replaced; NULL: the
     * table on stderr. */
    const char *stats_file;
    bool trace;             /* record the waits for --trace */
    const char *trace_file; /* absolute, as stats_file */
    /* This process is one the program started (not the one cw-run ran):
     * its files get its pid (profile.h, cwp_out_path). */
    bool child;
    long pid; /* the process that read the configuration */
    /* The file of what auto learned, kept across runs (learned.h),
     * absolute; NULL: none. */
    const char *learned_file;
    uint64_t hang_ns; /* 0: no hang diagnosis */
    bool hang_abort;
    cw_wait_options opt;
} cwp_cfg;

/* Read the environment. A bad value is reported on stderr and leaves the
 * preload inactive (cwp_cfg.active false), so the program runs natively. */
void cwp_config_read(void);

/* The program's own calls, only measured: --strategy blocking without
 * --hang-ms (with it, a wait's first N ms are cw's, as the real calls cannot
 * time out). */
static inline bool cwp_native_blocking(void) {
    return cwp_cfg.native && !cwp_cfg.hang_ns;
}

/* --stats or --trace: the calls are measured (profile.h). */
static inline bool cwp_profiled(void) {
    return cwp_cfg.stats || cwp_cfg.trace;
}

#endif
