/* SPDX-License-Identifier: MIT */
/* cw: definitions every public header shares: export macro, error codes, deadlines, version. */
#ifndef CW_COMMON_H
#define CW_COMMON_H

#include <stdint.h>

#if defined(CW_BUILDING_LIBRARY) && defined(__GNUC__)
#define CW_API __attribute__((visibility("default")))
#else
#define CW_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every cw function that can fail returns 0 or one of these negative codes.
 * OpenCL's own status (an execution status or the error of a failed OpenCL
 * call) is never folded into this set: cw_wait hands it back separately.
 * Running out of a resource is always a returned code, never an abort; cw
 * aborts only on a broken internal invariant. Later 1.x releases may add
 * codes: treat an unknown negative value as a failure (cw_strerror names it).
 */
typedef enum cw_error {
    CW_OK = 0,
    CW_ERR_INVALID_ARGUMENT = -1, /* NULL where a value is required, out-of-range option */
    CW_ERR_INVALID_EVENT = -2,    /* the OpenCL implementation rejected the event handle */
    CW_ERR_TIMEOUT = -3,          /* the deadline passed before the event completed */
    CW_ERR_COMMAND_FAILED = -4,   /* the command ended with a negative execution status */
    CW_ERR_OPENCL = -5,           /* another OpenCL call failed; its error code is handed back */
    CW_ERR_NO_MEMORY = -6,        /* allocation failed or the completion pool is full */
    CW_ERR_UNSUPPORTED = -7,      /* valid request this strategy cannot honour */
    CW_ERR_NO_RESOURCES = -8, /* out of file descriptors, epoll watches or another system limit */
    CW_ERR_INTERRUPTED = -9,  /* the wait's interrupt descriptor became readable first */
} cw_error;

/* A short, static, English description of a cw_error value ("unknown error"
 * for anything else). Never NULL. */
CW_API const char *cw_strerror(int error);

/* Deadlines are absolute CLOCK_MONOTONIC times in nanoseconds. */
#define CW_DEADLINE_NONE UINT64_MAX

/* CLOCK_MONOTONIC now, in nanoseconds. */
CW_API uint64_t cw_now_ns(void);

/* now + relative_ns, saturating at CW_DEADLINE_NONE. */
CW_API uint64_t cw_deadline_after_ns(uint64_t relative_ns);

/* The version of the library that is running (which may be newer than the
 * headers a program was built with): CW_VERSION_NUMBER and CW_VERSION_STRING
 * of that build (cw/version.h). The same major version is ABI compatible. */
CW_API unsigned cw_version(void);
CW_API const char *cw_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
