/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: the driver models (--driver-model). A model is an OpenCL layer
 * over the real ICD (support/drivermodel, built for the tests and the
 * benchmark only) that makes the driver behave like another one: late
 * callbacks, a spinning clWaitForEvents, a device whose commands take no
 * host CPU, and so on. The ICD loader loads it from OPENCL_LAYERS and the
 * layer reads its configuration from CW_DRIVER_MODEL; both are set in a
 * child's environment before exec, since the loader reads them when the
 * process first calls OpenCL. The parent never loads it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

/* The layer in the build tree (an absolute path) and, relative to the
 * directory of an installed cw-bench, the installed one; both set by
 * bench/CMakeLists.txt. */
#ifndef CW_DRIVER_MODEL_BUILD
#define CW_DRIVER_MODEL_BUILD ""
#endif
#ifndef CW_DRIVER_MODEL_REL
#define CW_DRIVER_MODEL_REL "../lib/cw/libcw_drivermodel.so"
#endif

/* The presets the layer knows (support/drivermodel/config.c), with the two
 * of their parameters the benchmark must know of: how late callbacks come
 * (the plan's estimate of what a callback-driven wait adds per launch) and
 * whether the device is timer-driven (then the bench sets the busy
 * kernel's run time, below). What the model does is the layer's business. */
static const struct {
    const char *name;
    double callback_delay_us;
    bool timer_device; /* commands' run time passes on a timer, not on the CPUs */
} presets[] = {
    {"pocl3", 0, false}, {"pocl7", 100, false}, {"nvidia", 20000, true},
    {"neo", 0, false},   {"rocm", 0, true},
};
/* The layer's run time of a timer-driven kernel other than busy, unless
 * the model sets kernel_us. */
#define LAYER_KERNEL_US 10.0
#define NPRESETS (sizeof presets / sizeof presets[0])

static int preset_index(const char *name) {
    for (size_t i = 0; i < NPRESETS; ++i)
        if (!strcmp(presets[i].name, name))
            return (int)i;
    return -1;
}

static void preset_list(char *out, size_t len) {
    size_t pos = 0;
    out[0] = '\0';
    for (size_t i = 0; i < NPRESETS && pos < len; ++i)
        pos += (size_t)snprintf(out + pos, len - pos, "%s%s", i ? ", " : "", presets[i].name);
}

void model_info(const char *spec, driver_model *m) {
    memset(m, 0, sizeof *m);
    snprintf(m->spec, sizeof m->spec, "%s", spec);
    size_t n = strcspn(spec, ",");
    snprintf(m->preset, sizeof m->preset, "%.*s", (int)(n < sizeof m->preset ? n : 0), spec);
    int p = preset_index(m->preset);
    m->callback_delay_us = p >= 0 ? presets[p].callback_delay_us : 0;
    m->timer_device = p >= 0 && presets[p].timer_device;
    /* pocl3 is the real driver: without parameters nothing is loaded, so
     * that the unchanged driver is measured without a layer in the way. */
    m->layer = strcmp(spec, "pocl3") != 0;
    m->kernel_us = LAYER_KERNEL_US;
    /* Parameters after the preset override it, as in the layer. */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq++ = '\0';
        if (!strcmp(t, "callback_delay_us"))
            m->callback_delay_us = atof(eq);
        else if (!strcmp(t, "device"))
            m->timer_device = !strcmp(eq, "timer");
        else if (!strcmp(t, "busy_ns"))
            m->busy_ns = atof(eq);
        else if (!strcmp(t, "kernel_us"))
            m->kernel_us = atof(eq);
    }
}

void parse_models(const char *list, options *o) {
    char buf[1024], names[256];
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf)
        die("--driver-model: the list is too long");
    preset_list(names, sizeof names);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strchr(tok, '=')) {
            if (n == 0)
                die("--driver-model: '%s' is a parameter before any model; name a preset "
                    "first (%s), e.g. pocl3,%s",
                    tok, names, tok);
            if (tok[0] == '=' || tok[strlen(tok) - 1] == '=')
                die("--driver-model: '%s' is not a parameter=value", tok);
            size_t used = strlen(o->models[n - 1]);
            if (used + 1 + strlen(tok) >= sizeof o->models[0])
                die("--driver-model: the model '%s' is too long", o->models[n - 1]);
            snprintf(o->models[n - 1] + used, sizeof o->models[0] - used, ",%s", tok);
            continue;
        }
        if (preset_index(tok) < 0)
            die("--driver-model: unknown driver model '%s' (presets: %s; a parameter is "
                "written name=value after its preset)",
                tok, names);
        if (n == MAX_MODELS)
            die("--driver-model: at most %d models", MAX_MODELS);
        snprintf(o->models[n++], sizeof o->models[0], "%s", tok);
    }
    if (n == 0)
        die("--driver-model: expected a list of models (%s), got '%s'", names, list);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < i; ++j)
            if (!strcmp(o->models[i], o->models[j]))
                die("--driver-model: '%s' is listed twice", o->models[i]);
    o->nmodels = n;
    o->models_set = true;
}

static bool readable(const char *path) {
    struct stat st;
    return path[0] && stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

const char *model_layer_path(void) {
    static char path[PATH_MAX];
    const char *env = getenv("CW_DRIVER_MODEL_LAYER");
    if (env && *env)
        return readable(env) ? env : NULL;
    /* The installed layer beside an installed cw-bench first, as the
     * kernels are found: a moved prefix keeps working. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
    if (slash && CW_DRIVER_MODEL_REL[0] != '/') {
        *slash = '\0';
        char rel[PATH_MAX + 64];
        snprintf(rel, sizeof rel, "%s/%s", exe, CW_DRIVER_MODEL_REL);
        if (readable(rel) && realpath(rel, path))
            return path;
    } else if (readable(CW_DRIVER_MODEL_REL)) {
        return CW_DRIVER_MODEL_REL;
    }
    if (readable(CW_DRIVER_MODEL_BUILD)) {
        snprintf(path, sizeof path, "%s", CW_DRIVER_MODEL_BUILD);
        return path;
    }
    return NULL;
}

const char *model_layer_or_die(const char *spec) {
    const char *layer = model_layer_path();
    if (!layer)
        die("--driver-model %s: the driver model layer is not there (looked for "
            "$CW_DRIVER_MODEL_LAYER, then %s beside this program, then %s): build the "
            "cw_drivermodel target, set CW_DRIVER_MODEL_LAYER, or run --driver-model pocl3 "
            "for the real driver alone",
            spec, CW_DRIVER_MODEL_REL,
            CW_DRIVER_MODEL_BUILD[0] ? CW_DRIVER_MODEL_BUILD : "the build tree's (none built)");
    return layer;
}

void model_setenv(const driver_model *m, const char *layer) {
    setenv("CW_BENCH_MODEL", m->spec, 1);
    if (m->layer && layer) {
        char spec[320];
        /* A timer-driven busy kernel runs iterations x busy_ns: the child
         * sets its iterations from its target at this rate (model_timer). */
        if (m->timer_device && !(m->busy_ns > 0))
            snprintf(spec, sizeof spec, "%s,busy_ns=%d", m->spec, TIMER_BUSY_NS);
        else
            snprintf(spec, sizeof spec, "%s", m->spec);
        setenv("OPENCL_LAYERS", layer, 1);
        setenv("CW_DRIVER_MODEL", spec, 1);
    } else {
        /* The real driver: nothing between the loader and it. */
        unsetenv("OPENCL_LAYERS");
        unsetenv("CW_DRIVER_MODEL");
    }
}

void model_timer(const options *o, kernel_spec *ks, int nk) {
    const char *spec = getenv("CW_BENCH_MODEL");
    if (!spec)
        return;
    driver_model m;
    model_info(spec, &m);
    if (!m.layer || !m.timer_device)
        return;
    for (int i = 0; i < nk; ++i) {
        kernel_spec *k = &ks[i];
        if (k->kind != K_BUSY) {
            k->timer_us = m.kernel_us;
            continue;
        }
        if (m.busy_ns > 0) {
            /* The model's own rate: the calibrated iterations at it. */
            k->timer_us = (double)k->iters * m.busy_ns / 1e3;
            continue;
        }
        /* The target's length (the layer runs at most 64 iterations for
         * real, which give the kernel's checked result). */
        double iters = k->nominal_us * 1e3 / TIMER_BUSY_NS;
        k->iters = iters < 64 ? 64u : iters > 4e9 ? 4000000000u : (unsigned)(iters + 0.5);
        k->timer_us = (double)k->iters * TIMER_BUSY_NS / 1e3;
    }
    (void)o;
}

int model_check_loaded(char *msg, size_t len) {
    const char *layer = getenv("OPENCL_LAYERS");
    if (!layer || !*layer || !getenv("CW_DRIVER_MODEL"))
        return 0;
    /* The ICD loader skips a layer it cannot load without a word: a run
     * that measured the real driver under a model's name would mislead, so
     * the child asks, once OpenCL is up, whether the layer is in the
     * process (RTLD_NOLOAD loads nothing) and is a layer at all. */
    void *h = dlopen(layer, RTLD_NOW | RTLD_NOLOAD);
    bool ok = h && dlsym(h, "clInitLayer") && dlsym(h, "clGetLayerInfo");
    if (h)
        dlclose(h);
    if (!ok)
        snprintf(msg, len,
                 "the driver model %s was asked for, but %s is not loaded as an OpenCL layer "
                 "(%s; the ICD loader must support OPENCL_LAYERS: ocl-icd 2.3 or later)",
                 getenv("CW_DRIVER_MODEL"), layer,
                 h ? "it is in the process but is no layer" : "it is not in the process");
    return ok ? 0 : -1;
}
