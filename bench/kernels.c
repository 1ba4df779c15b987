/* SPDX-License-Identifier: MIT */
/* cw-bench: the kernels a run selects, in run order, with their launch counts. */
#include <math.h>
#include <string.h>

#include "bench.h"

void busy_name(double us, unsigned iters, char *out, size_t len) {
    if (us <= 0)
        snprintf(out, len, "busy-%ui", iters);
    else if (us >= 1e6 && fmod(us, 1e6) == 0)
        snprintf(out, len, "busy-%.0fs", us / 1e6);
    else if (us >= 1000 && fmod(us, 1000) == 0)
        snprintf(out, len, "busy-%.0fms", us / 1000);
    else
        snprintf(out, len, "busy-%gus", us);
}

static bool kernel_selected(const options *o, const char *name, bool is_busy) {
    if (!o->kernels_sel[0])
        return true;
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", o->kernels_sel);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!strcmp(tok, name) || (is_busy && !strcmp(tok, "busy")))
            return true;
    return false;
}

/* A long kernel's launches: about --long-time seconds of its run time per
 * strategy, at least LONG_MIN_LAUNCHES (a mean and a spread), never more
 * than --launches; blocks of one, so that even two launches interleave the
 * strategies in two different orders. A short kernel keeps the options'. */
static void launch_counts(const options *o, kernel_spec *k) {
    cw_strategy strat[NSTRAT];
    int ns = selected_strategies(o, strat);
    k->launches = o->launches;
    k->warmup = o->warmup;
    k->block = o->block;
    k->is_long = k->nominal_us >= LONG_US;
    if (!k->is_long)
        return;
    double want = o->long_time * 1e6 / k->nominal_us;
    unsigned n = want < LONG_MIN_LAUNCHES ? LONG_MIN_LAUNCHES : (unsigned)(want + 0.5);
    k->launches = n < o->launches ? n : o->launches;
    k->block = 1;
    /* One warm-up launch per strategy (LONG_WARMUP_BUDGET_US): the
     * strategy's first use was mostly in the short cells before, but the
     * queue's estimate is still the previous kernel's. */
    k->warmup = o->warmup && k->nominal_us * ns <= LONG_WARMUP_BUDGET_US ? 1 : 0;
}

int build_kernels(const options *o, kernel_spec *k) {
    int n = 0;
    if (kernel_selected(o, "saxpy", false)) {
        memset(&k[n], 0, sizeof k[n]);
        snprintf(k[n].name, sizeof k[n].name, "saxpy");
        k[n].kind = K_SAXPY;
        launch_counts(o, &k[n++]);
    }
    for (int b = 0; b < o->nbusy; ++b) {
        char name[32];
        busy_name(o->busy_us[b], o->busy_iters[b], name, sizeof name);
        if (!kernel_selected(o, name, true))
            continue;
        memset(&k[n], 0, sizeof k[n]);
        snprintf(k[n].name, sizeof k[n].name, "%s", name);
        k[n].kind = K_BUSY;
        k[n].busy_index = b;
        k[n].target_us = o->busy_us[b];
        k[n].iters = o->busy_iters[b];
        k[n].nominal_us = k[n].target_us > 0 ? k[n].target_us
                                             : (double)k[n].iters * (double)o->busy_global *
                                                   BUSY_NS_PER_ITER_ITEM / 1e3;
        launch_counts(o, &k[n]);
        ++n;
    }
    if (kernel_selected(o, "latency", false)) {
        memset(&k[n], 0, sizeof k[n]);
        snprintf(k[n].name, sizeof k[n].name, "latency");
        k[n].kind = K_LATENCY;
        launch_counts(o, &k[n++]);
    }
    return n;
}
