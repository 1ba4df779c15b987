/* SPDX-License-Identifier: MIT */
/*
 * How cw-run reaches the program (reach.h).
 *
 * The layer is the default: the loader hands it every call, whether the
 * program linked libOpenCL or loaded it with dlopen and looks the entry
 * points up with dlsym, which an LD_PRELOAD never sees. A loader supports
 * layers when it reads OPENCL_LAYERS and looks clInitLayer up in each layer
 * (ocl-icd 2.3.0 and later, the Khronos loader since 2020). Neither says so
 * otherwise: clGetLayerInfo and clInitLayer are the layer's exports, not the
 * loader's, and ocl-icd's version (clGetICDLoaderInfoOCLICD) is reached only
 * through clGetExtensionFunctionAddress, which loads every ICD first. So
 * cw-run opens the loader the program would get (libOpenCL.so.1, found as
 * the program finds it: same LD_LIBRARY_PATH) without calling it, and looks
 * in its file for those two names, which a loader has only to use them.
 * Opening runs no OpenCL code: ocl-icd and the Khronos loader start up at
 * their first call.
 */
#include "reach.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file holds both names, each as a C string. */
static int file_has_both(const char *path, const char *a, const char *b) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    int found = 0;
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger)
            break;
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        found = memmem(buf, len, a, strlen(a) + 1) && memmem(buf, len, b, strlen(b) + 1);
    free(buf);
    return found;
}

/* 1: the loader supports layers; 0: it does not, or there is none. */
static int loader_has_layers(void) {
    void *h = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return 0;
    struct link_map *lm = NULL;
    int yes = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
              file_has_both(lm->l_name, "OPENCL_LAYERS", "clInitLayer");
    dlclose(h);
    return yes;
}

/* VAR becomes "FIRST:OLD" or "OLD:LAST" (at_end), or just the object when
 * VAR is empty; an object already listed is not listed again. */
static int add_to_list(const char *var, const char *object, int at_end) {
    const char *old = getenv(var);
    if (old && *old) {
        size_t n = strlen(object);
        for (const char *p = old; (p = strstr(p, object)) != NULL; p += n)
            if ((p == old || p[-1] == ':') && (p[n] == '\0' || p[n] == ':'))
                return 0;
    }
    size_t len = (old ? strlen(old) + 1 : 0) + strlen(object) + 1;
    char *joined = malloc(len);
    if (!joined) {
        perror("cw-run");
        return 127;
    }
    if (!old || !*old)
        snprintf(joined, len, "%s", object);
    else if (at_end)
        snprintf(joined, len, "%s:%s", old, object);
    else
        snprintf(joined, len, "%s:%s", object, old);
    int rc = setenv(var, joined, 1);
    free(joined);
    if (rc != 0) {
        perror("cw-run: setenv");
        return 127;
    }
    return 0;
}

int cwr_reach(const char *object) {
    const char *m = getenv("CW_RUN_MECHANISM");
    int layer;
    if (!m || !*m || !strcmp(m, "auto"))
        layer = loader_has_layers();
    else if (!strcmp(m, "layer"))
        layer = 1;
    else if (!strcmp(m, "preload"))
        layer = 0;
    else {
        fprintf(stderr, "cw-run: CW_RUN_MECHANISM='%s' is not layer, preload or auto\n", m);
        return 2;
    }
    /*
     * The layer goes first in OPENCL_LAYERS, i.e. next to the ICDs: the
     * loader stacks each listed layer on the ones before it, so the user's
     * layers stay above cw and see the program's own calls, not the
     * non-blocking calls and callbacks cw makes of them. ocl-icd also cuts
     * OPENCL_LAYERS in the process's environment down to its first entry as
     * it reads it, so the processes the program starts keep cw.
     * The preload is appended: a sanitizer runtime the user preloads must
     * stay first.
     */
    if (!layer)
        return add_to_list("LD_PRELOAD", object, 1);
    /* The loader opens its layers at the program's first OpenCL call, maybe
     * after a chdir: the path must not depend on the directory. */
    char abs[PATH_MAX];
    return add_to_list("OPENCL_LAYERS", realpath(object, abs) ? abs : object, 0);
}
