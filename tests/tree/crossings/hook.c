/* SPDX-License-Identifier: MIT */
/* -finstrument-functions hooks: log every call made on the traced thread. */
#include <stdio.h>

static _Thread_local int on_, depth;
static FILE *out;

__attribute__((no_instrument_function)) void trace_on(const char *path, int on) {
    if (!out)
        out = fopen(path, "w");
    on_ = on;
    if (!on)
        fflush(out);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site) {
    (void)site;
    if (on_)
        fprintf(out, "E %d %p\n", depth, fn);
    depth++;
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site) {
    (void)fn;
    (void)site;
    depth--;
}
