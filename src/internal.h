/* Internal helpers shared by cw's layers; not installed. */
#ifndef CW_INTERNAL_H
#define CW_INTERNAL_H

#include <stdint.h>
#include <time.h>

/*
 * Test-only delay injection (CMake option CW_INJECT_DELAYS): at the marked
 * points of the lock, condition and completion protocols, sometimes yield or
 * spin a little, widening the windows in which a preemption would hurt. In
 * normal builds the macro is empty.
 */
#ifdef CW_INJECT_DELAYS
void cw__inject_delay(void);
#define CW_INJECT() cw__inject_delay()
#else
#define CW_INJECT() ((void)0)
#endif

/* Impossible failures of system calls end here, with the errno, not in silence. */
_Noreturn void cw__die(const char *what, int err);

/* Layer 6 helpers shared by wait.c and notify.c (defined in wait.c). */
#include "cw/opencl.h"
int cw__cl_failure(cl_int err, cl_int *cl_status);
int cw__flush_if_queued(cl_event event, cl_int status, cl_int *cl_status);

static inline struct timespec cw__timespec(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

#endif
