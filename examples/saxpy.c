/* SPDX-License-Identifier: MIT */
/*
 * cw-example: run saxpy on an OpenCL device (PoCL by default) and wait for it
 * with every cw strategy, checking the result after each wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clhost.h"
#include "cw.h"

static void usage(FILE *f) {
    fprintf(f, "usage: cw-example [--platform NAME] [--n N] [--launches K]\n"
               "  Runs saxpy over N floats (default 1048576) K times (default 20) per wait\n"
               "  strategy, waits with cw_wait, and checks the result after each strategy.\n"
               "  --platform NAME  first OpenCL platform whose name contains NAME\n"
               "                   (default: $CW_PLATFORM, else PoCL, else the first)\n");
}

int main(int argc, char **argv) {
    const char *platform = NULL;
    cl_uint n = 1u << 20;
    unsigned launches = 20;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--platform") && i + 1 < argc) {
            platform = argv[++i];
        } else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
            n = (cl_uint)strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--launches") && i + 1 < argc) {
            launches = (unsigned)strtoul(argv[++i], NULL, 0);
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (n == 0 || launches == 0) {
        usage(stderr);
        return 2;
    }

    cwh h;
    char msg[2300];
    if (cwh_open(&h, platform, false, msg, sizeof msg) != CL_SUCCESS) {
        fprintf(stderr, "cw-example: %s\n", msg);
        return 1;
    }
    printf("platform: %s (%s)\ndevice:   %s\n", h.platform_name, h.platform_version, h.device_name);
    int failures = 0;
    for (int s = CW_STRATEGY_BLOCKING; s < CW_STRATEGY_COUNT; ++s) {
        cwh_saxpy sx;
        if (cwh_saxpy_init(&h, &sx, n) != CL_SUCCESS) {
            fprintf(stderr, "cw-example: cannot allocate buffers\n");
            cwh_close(&h);
            return 1;
        }
        cw_wait_options o = {.strategy = (cw_strategy)s};
        int rc = CW_OK;
        cl_int st = CL_COMPLETE;
        uint64_t t0 = cw_now_ns();
        for (unsigned k = 0; k < launches && rc == CW_OK; ++k) {
            cl_event ev;
            if (cwh_saxpy_enqueue(&h, &sx, 0.5f, 0, NULL, &ev) != CL_SUCCESS) {
                rc = CW_ERR_OPENCL;
                break;
            }
            rc = cw_wait(ev, &o, &st);
            clReleaseEvent(ev);
        }
        double ms = (double)(cw_now_ns() - t0) / 1e6;
        size_t bad = 0;
        cl_int err = rc == CW_OK ? cwh_saxpy_check(&h, &sx, 0.5f, launches, &bad) : CL_SUCCESS;
        bool ok = rc == CW_OK && err == CL_SUCCESS && bad == 0;
        printf("%-24s %u launches in %8.2f ms  result %s", cw_strategy_name((cw_strategy)s),
               launches, ms, ok ? "ok" : "WRONG");
        if (rc != CW_OK)
            printf(" (cw_wait: %s, status %d)", cw_strerror(rc), st);
        else if (bad)
            printf(" (%zu of %u elements differ)", bad, n);
        printf("\n");
        failures += !ok;
        cwh_saxpy_free(&sx);
    }
    cwh_close(&h);
    return failures ? 1 : 0;
}
