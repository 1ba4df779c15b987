/* SPDX-License-Identifier: MIT */
/*
 * What the preload's test programs share (preload_codes.c, adversarial.c,
 * trace_calls.c): an OpenCL call that must succeed, and the one kernel they
 * launch. They are programs written as a user would, against the loader,
 * so they do not use cw's own test fixture.
 */
#ifndef CW_TEST_PRELOAD_CLPROG_H
#define CW_TEST_PRELOAD_CLPROG_H

#include <stdio.h>
#include <stdlib.h>

/* A call the program cannot go on without: exit 3 names it, so that a
 * failing set-up is never mistaken for a difference in what it prints. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        cl_int e_ = (call);                                                                        \
        if (e_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, e_);                    \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

/* add(a, v): a[i] += v. Not every program launches it. */
__attribute__((unused)) static const char *kernel_src =
    "__kernel void add(__global int *a, int v) {\n"
    "    a[get_global_id(0)] += v;\n"
    "}\n";

#endif
