/* Error strings and the monotonic clock, shared by every layer. */
#include "cw/common.h"

#include <time.h>

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
    }
    return "unknown error";
}

uint64_t cw_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cw_deadline_after_ns(uint64_t relative_ns) {
    uint64_t now = cw_now_ns();
    return relative_ns >= CW_DEADLINE_NONE - now ? CW_DEADLINE_NONE : now + relative_ns;
}
