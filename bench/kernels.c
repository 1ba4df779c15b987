/* SPDX-License-Identifier: MIT */
/* cw-bench: the kernels a run selects, in run order. */
#include <math.h>
#include <string.h>

#include "bench.h"

void busy_name(double us, unsigned iters, char *out, size_t len) {
    if (us <= 0)
        snprintf(out, len, "busy-%ui", iters);
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

int build_kernels(const options *o, kernel_spec *k) {
    int n = 0;
    if (kernel_selected(o, "saxpy", false)) {
        memset(&k[n], 0, sizeof k[n]);
        snprintf(k[n].name, sizeof k[n].name, "saxpy");
        k[n++].kind = K_SAXPY;
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
        ++n;
    }
    if (kernel_selected(o, "latency", false)) {
        memset(&k[n], 0, sizeof k[n]);
        snprintf(k[n].name, sizeof k[n].name, "latency");
        k[n++].kind = K_LATENCY;
    }
    return n;
}
