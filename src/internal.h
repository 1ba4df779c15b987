/* Internal helpers shared by cw's layers; not installed. */
#ifndef CW_INTERNAL_H
#define CW_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "cw/opencl.h"
#include "cw/wait.h"

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

/* Layer 6 helpers shared by wait.c, waitmany.c and notify.c (defined in wait.c). */
int cw__cl_failure(cl_int err, cl_int *cl_status);
int cw__read_status(cl_event event, cl_int *status);
int cw__flush_if_queued(cl_event event, cl_int status, cl_int *cl_status);
struct cw_wait_options;
/* Option checks of cw_wait (CW_OK or CW_ERR_INVALID_ARGUMENT), shared with waitmany.c. */
int cw__validate_options(const struct cw_wait_options *o);
/* The absolute deadline of o->timeout_us from now (CW_DEADLINE_NONE for none). */
uint64_t cw__deadline_of(const struct cw_wait_options *o);

/* Statistics (stats.c): relaxed counters behind cw_stats_get. */
typedef enum cw__stat {
    CW__STAT_WAITS,
    CW__STAT_SPINS,
    CW__STAT_YIELDS,
    CW__STAT_PARKS,
    CW__STAT_SLEEPS,
    CW__STAT_POLLS,
    CW__STAT_TIMEOUTS,
    CW__STAT_LATENCY_COUNT,
    CW__STAT_COUNT
} cw__stat;
void cw__stat_add(cw__stat which, uint64_t n);
/* One wake-up latency sample, in nanoseconds. */
void cw__stat_latency(uint64_t ns);

/* Completion internals for layer 6 (completion.c): when the signal landed
 * (CLOCK_MONOTONIC ns); meaningful once cw_completion_is_signalled. */
struct cw_completion;
uint64_t cw__completion_landed_ns(const struct cw_completion *c);

/*
 * When a callback wait reads the event's status, because a failed command
 * fires no callback on PoCL 3.1 to 6.0 or rusticl: first after the option's
 * interval (CW_CHECK_INTERVAL_US_DEFAULT for 0), then doubling up to
 * CW_CHECK_INTERVAL_GROWTH times it. One schedule for cw_wait, wait-all/any
 * and the notifier, so the documented 16, 32, 64, 128, 256 ms holds for all.
 */
typedef struct cw__check_schedule {
    uint64_t first_ns, interval_ns;
} cw__check_schedule;

static inline cw__check_schedule cw__check_schedule_start(uint32_t check_interval_us) {
    uint64_t first =
        (uint64_t)(check_interval_us ? check_interval_us : CW_CHECK_INTERVAL_US_DEFAULT) * 1000u;
    cw__check_schedule s = {first, first};
    return s;
}

/* After a check: the next interval, doubled up to the cap. */
static inline void cw__check_schedule_grow(cw__check_schedule *s) {
    if (s->interval_ns < CW_CHECK_INTERVAL_GROWTH * s->first_ns)
        s->interval_ns *= 2;
}

static inline struct timespec cw__timespec(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

#endif
