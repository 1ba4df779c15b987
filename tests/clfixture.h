/*
 * Group fixture for the OpenCL tests: one PoCL context (or the platform in
 * $CW_PLATFORM) per test process, and a leak check of cw's completion pool
 * when the group ends: every test must give back every slot it took.
 */
#ifndef CW_TEST_CLFIXTURE_H
#define CW_TEST_CLFIXTURE_H

#include <stdio.h>

#include "clhost.h"
#include "cw/completion.h"

static cwh host;

static int open_host(void **state) {
    (void)state;
    char msg[2300];
    if (cwh_open(&host, NULL, false, msg, sizeof msg) != CL_SUCCESS) {
        fprintf(stderr, "OpenCL set-up failed: %s\n", msg);
        return -1;
    }
    return 0;
}

static int close_host(void **state) {
    (void)state;
    cwh_close(&host);
    if (cw_completion_outstanding() != 0) {
        fprintf(stderr, "%u completions were not released\n", cw_completion_outstanding());
        return -1;
    }
    return 0;
}

#endif
