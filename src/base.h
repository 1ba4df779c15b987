/* SPDX-License-Identifier: MIT */
/*
 * cw internals, the bottom of the stack: time conversion, test-only delay
 * injection and the one exit for broken invariants. Every layer may include
 * it; it includes nothing of cw but the public error codes, and no OpenCL.
 */
#ifndef CW_BASE_H
#define CW_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cw/common.h"

/*
 * Test-only delay injection (CMake option CW_INJECT_DELAYS): at the marked
 * points of the lock, condition and completion protocols, sometimes yield or
 * spin a little, widening the windows in which a preemption would hurt. In
 * normal builds the macro is empty.
 */
#ifdef CW_INJECT_DELAYS
void cw__inject_delay(void);
#define CW__INJECT() cw__inject_delay()
#else
#define CW__INJECT() ((void)0)
#endif

/*
 * Invariant violations end here: the message names the call and its errno,
 * then the process aborts. Resource exhaustion never comes here: it is a
 * returned code (CW_ERR_NO_MEMORY, CW_ERR_NO_RESOURCES). Each call site
 * says, where it calls, why its call cannot fail in a correct program.
 */
_Noreturn void cw__die(const char *what, int err);

/* One CPU pause hint (x86 `pause`, arm64 `yield`): cheaper for the sibling
 * hyperthread and the memory system than a bare load loop. cw__relax (layer 1)
 * is this; it lives here so that delay injection can spin without reaching up. */
static inline void cw__pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* `now` + `ns`, saturating at CW_DEADLINE_NONE ("no deadline"): a deadline
 * that would not fit in 64 bits of nanoseconds is none. */
static inline uint64_t cw__after_ns(uint64_t now, uint64_t ns) {
    return ns >= CW_DEADLINE_NONE - now ? CW_DEADLINE_NONE : now + ns;
}

/* The object that holds `ptr` as its `member`: how a callback that is handed
 * an embedded part (a watcher) reaches the object around it. */
#define cw__container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/*
 * Teardown of an object that is read outside its owner's lock (a record a
 * sweep reads, a watch a status check reads). All three calls run under
 * the owner's lock: a reader pins it before letting go of the lock; whoever
 * takes it out while it is pinned dooms it, and the last unpin then owns
 * the teardown.
 */
typedef struct cw__pins {
    unsigned count;
    bool doomed;
} cw__pins;

static inline void cw__pins_take(cw__pins *p) {
    p->count++;
}

/* Taken out: true when the caller tears it down now, false when the last
 * unpin will. */
static inline bool cw__pins_doom(cw__pins *p) {
    if (p->count) {
        p->doomed = true;
        return false;
    }
    return true;
}

/* Unpinned: true when this caller now owns the teardown. */
static inline bool cw__pins_drop(cw__pins *p) {
    return --p->count == 0 && p->doomed;
}

static inline struct timespec cw__timespec(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

/* A moving average: `old` moved 1/2^shift of the way toward the sample
 * `ns` (the estimates and the learned lateness all move so). */
static inline uint64_t cw__moving(uint64_t old, uint64_t ns, unsigned shift) {
    return old - (old >> shift) + (ns >> shift);
}

#endif
