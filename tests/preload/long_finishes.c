/* SPDX-License-Identifier: MIT */
/*
 * A program whose every wait is a long clFinish: LAUNCHES busy kernels of
 * about BUSY_US each (a first launch builds the kernel and is not
 * counted), one clFinish after each, then the results checked. For
 * tests/preload/learned.sh, which runs it under cw-run; prints "ok" and
 * exits 0 when every launch succeeded and every result is right.
 * Usage: long_finishes [LAUNCHES [ITERS]]   (default 12 launches, 20000 iters)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clhost.h"

int main(int argc, char **argv) {
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: long_finishes [LAUNCHES [ITERS]]\n");
        return 0;
    }
    if (argc > 1 && atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: long_finishes [LAUNCHES [ITERS]]\n");
        return 2;
    }
    int launches = argc > 1 ? atoi(argv[1]) : 12;
    cl_uint iters = argc > 2 ? (cl_uint)strtoul(argv[2], NULL, 10) : 20000u;
    if (iters < 64)
        iters = 64;
    cwh h;
    char msg[256];
    if (cwh_open(&h, NULL, false, msg, sizeof msg) != CL_SUCCESS) {
        fprintf(stderr, "long_finishes: %s\n", msg);
        return 1;
    }
    cwh_busy b;
    int rc = 1;
    if (cwh_busy_init(&h, &b, 64) != CL_SUCCESS) {
        fprintf(stderr, "long_finishes: busy kernel set-up failed\n");
        goto out;
    }
    for (int i = 0; i <= launches; ++i) {
        if (cwh_busy_enqueue(&h, &b, iters, 0, NULL, NULL) != CL_SUCCESS) {
            fprintf(stderr, "long_finishes: launch %d failed\n", i);
            goto free;
        }
        cl_int err = clFinish(h.queue);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "long_finishes: clFinish %d returned %d\n", i, err);
            goto free;
        }
    }
    size_t bad = 0;
    if (cwh_busy_check(&h, &b, &bad) != CL_SUCCESS || bad) {
        fprintf(stderr, "long_finishes: %zu wrong results\n", bad);
        goto free;
    }
    printf("ok\n");
    rc = 0;
free:
    cwh_busy_free(&b);
out:
    cwh_close(&h);
    return rc;
}
