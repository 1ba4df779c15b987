/* SPDX-License-Identifier: MIT */
/*
 * libcw_preload.so: cw's waits under an unmodified OpenCL program, loaded
 * as an OpenCL layer (OPENCL_LAYERS) or with LD_PRELOAD (cw-run chooses;
 * docs/cw-run-internals.md). This file starts it up; the rest is one file a purpose:
 *
 *   layer.c     the OpenCL layer: the same wrappers in a dispatch table,
 *               the calls cw makes itself, the notice at exit
 *   real.c      the next level's entry points the wrappers forward to
 *   config.c    the CW_RUN_* environment, read once
 *   profile.c   the counters of --stats and the table or JSON at exit
 *   trace.c     the spans of --trace, per thread, written at exit
 *   hang.c      the --hang-ms report
 *   wait.c      clWaitForEvents and clFinish: the waits with cw, and
 *               clSetUserEventStatus, which they need
 *   track.c     the non-blocking enqueues, recorded for clFinish (lastcmd.c)
 *   settle.c    the preload's own releases, put off while a failure spreads
 *   blocking.c  the blocking reads, writes, maps and copies
 *   learned.c   what auto learned, kept across runs in a file
 *
 * Interposition. An LD_PRELOADed library comes first in the global symbol
 * scope, so every reference to clWaitForEvents, clFinish or a blocking
 * enqueue that the dynamic linker resolves through that scope binds here:
 * the program's own references, and those of any library it loads later
 * with dlopen that lists libOpenCL.so.1 as NEEDED (pyopencl's _cl module).
 * Everything else, and the real entry points these wrappers forward to, are
 * reached with dlsym(RTLD_NEXT, ...), i.e. the ICD loader, untouched. A
 * program that looks entry points up with dlsym(handle, ...) on its own
 * handle of libOpenCL gets the loader's functions and is not interposed:
 * the layer (layer.c) reaches those, through the loader's dispatch.
 *
 * The preload carries its own copy of cw (the static library, hidden
 * symbols), so its counters (cw_stats_get) count only the waits it made,
 * and a program that links libcw-opencl.so itself keeps its own copy untouched.
 *
 * Recursion: the waits call cw, and cw calls OpenCL. cw's blocking strategy
 * calls clWaitForEvents, and a reference to that name from inside this
 * shared object binds to the interposer (-Bsymbolic-functions, which the
 * layer needs). A per-thread depth counter (cwp_inside_cw) marks the calls
 * cw makes on the preload's behalf; the interposers forward those straight
 * to the real function.
 */
#include "preload.h"

#include <stdio.h>
#include <stdlib.h>

#include "layer.h"
#include "learned.h"
#include "profile.h"
#include "real.h"

__thread int cwp_inside_cw __attribute__((tls_model("initial-exec")));

atomic_bool cwp_reached;

pthread_once_t cwp_started = PTHREAD_ONCE_INIT;

void cwp_start_once(void) {
    if (!cwp_real_load()) {
        cwp_warn("%s", "no OpenCL 1.2 ICD loader after the preload: waits are not interposed");
        return;
    }
    cwp_config_read();
    /* Before the first wait the profile measures. */
    if (cwp_cfg.active && cwp_profiled())
        cwp_profile_start();
}

/* Configuration errors show at start-up, not at the first wait. The
 * notice is registered first, so that it comes after the profile. */
__attribute__((constructor)) static void start_at_load(void) {
    cwp_init();
    if (cwp_cfg.active && atexit(cwp_reach_notice) != 0)
        cwp_warn("%s", "cannot register the exit handler that checks what cw-run reached");
    if (cwp_cfg.active && cwp_profiled() && atexit(cwp_profile_report) != 0)
        cwp_warn("%s", "cannot register the profile's exit handler: no profile");
    if (cwp_cfg.active && cwp_cfg.learned_file && atexit(cwp_learned_end) != 0)
        cwp_warn("%s", "cannot register the exit handler that keeps what auto learned");
}

void cwp_warn(const char *fmt, const char *arg) {
    fprintf(stderr, "cw-run: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}
