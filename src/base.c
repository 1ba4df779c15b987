/* SPDX-License-Identifier: MIT */
/* Error strings, version, the monotonic clock, and the internal base (base.h). */
#include "base.h"
#include "cw/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cw_strerror(int error) {
    switch ((cw_error)error) {
    case CW_OK:
        return "success";
    case CW_ERR_INVALID_ARGUMENT:
        return "invalid argument";
    case CW_ERR_INVALID_EVENT:
        return "invalid OpenCL event";
    case CW_ERR_TIMEOUT:
        return "timed out";
    case CW_ERR_COMMAND_FAILED:
        return "command failed (negative execution status)";
    case CW_ERR_OPENCL:
        return "OpenCL call failed";
    case CW_ERR_NO_MEMORY:
        return "out of memory";
    case CW_ERR_UNSUPPORTED:
        return "not supported by this strategy";
    case CW_ERR_NO_RESOURCES:
        return "out of system resources (file descriptors, kernel limits)";
    case CW_ERR_INTERRUPTED:
        return "interrupted (the wait's interrupt descriptor became readable)";
    }
    return "unknown error";
}

unsigned cw_version(void) {
    return CW_VERSION_NUMBER;
}

const char *cw_version_string(void) {
    return CW_VERSION_STRING;
}

uint64_t cw_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cw_deadline_after_ns(uint64_t relative_ns) {
    return cw__after_ns(cw_now_ns(), relative_ns);
}

_Noreturn void cw__die(const char *what, int err) {
    fprintf(stderr, "cw: %s failed: %s\n", what, strerror(err));
    abort();
}

#ifdef CW_INJECT_DELAYS
#include <sched.h>
void cw__inject_delay(void) {
    /* A cheap per-thread xorshift: no locks, no shared state to perturb. */
    static _Thread_local uint32_t x = 0;
    if (x == 0)
        x = (uint32_t)(uintptr_t)&x | 1u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    switch (x & 15u) {
    case 0:
        sched_yield();
        break;
    case 1:
    case 2:
        for (uint32_t i = 0, n = (x >> 8) & 255u; i < n; ++i)
            cw__pause();
        break;
    default:
        break;
    }
}
#endif
