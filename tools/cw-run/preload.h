/* SPDX-License-Identifier: MIT */
/*
 * The start-up every wrapper goes through first, and the gate that says
 * whether a call is interposed at all (preload.c says how interposition and
 * the recursion guard work).
 */
#ifndef CWP_PRELOAD_H
#define CWP_PRELOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config.h"
#include "real.h"

/* An interposed OpenCL entry point: the only symbols the preload exports. */
#define CWP_EXPORT __attribute__((visibility("default")))

/* Depth of cw calls this thread makes on the preload's behalf. Initial-exec
 * TLS: the preload is loaded at start-up, so its variables sit in the
 * static TLS block and the access is a plain load, with no __tls_get_addr
 * call on every wrapper. */
extern __thread int cwp_inside_cw __attribute__((tls_model("initial-exec")));

/* For cwp_init only. */
extern pthread_once_t cwp_started;
void cwp_start_once(void);

/* A call of the program reached a wrapper, by either mechanism: what the
 * notice at exit asks (layer.h). Set once; a relaxed load costs a wrapper
 * nothing it would notice. */
extern atomic_bool cwp_reached;

/* Find the real entry points and read the configuration, once, before
 * anything reads them. */
static inline void cwp_init(void) {
    pthread_once(&cwp_started, cwp_start_once);
}

/* Every wrapper's first step: cwp_init, and note the call; a wrapper may
 * run before the preload's constructor (from another library's). */
static inline void cwp_start(void) {
    cwp_init();
    if (!atomic_load_explicit(&cwp_reached, memory_order_relaxed))
        atomic_store_explicit(&cwp_reached, true, memory_order_relaxed);
}

/* Start up, and say whether the loader has cwp_real.field (the SVM calls
 * may be missing, real.h). */
#define CWP_START_WITH(field) (cwp_start(), cwp_real.field != NULL)

/* Forward without interposing: not configured, or a call cw makes itself. */
static inline bool cwp_passthrough(void) {
    cwp_start();
    return !cwp_cfg.active || cwp_inside_cw;
}

/* "cw-run: " and one line on stderr; fmt takes one string. */
void cwp_warn(const char *fmt, const char *arg);

#endif
