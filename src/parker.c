/* SPDX-License-Identifier: MIT */
/* Layer 3: parker. The default parks an OS thread on a futex word. */
/* The public struct holds the word as a plain int (C++ can include it); it
 * is only ever accessed here, through the __atomic builtins, which GCC and
 * clang define on any suitably aligned int and ThreadSanitizer understands. */
#include "base.h"
#include "cw/parker.h"

#include <errno.h>
#include <stdbool.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { PARKED = -1, EMPTY = 0, TOKEN = 1 };

static long futex(int *word, int op, int val, const struct timespec *ts) {
    return syscall(SYS_futex, word, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

static int futex_park(cw_parker *p, uint64_t deadline_ns) {
    cw_futex_parker *fp = (cw_futex_parker *)p;
    /* EMPTY -> PARKED, or TOKEN -> EMPTY: then the token was already there.
     * Acquire pairs with unpark's release: what the unparker wrote before
     * unparking is visible when park returns. */
    if (__atomic_fetch_sub(&fp->state, 1, __ATOMIC_ACQUIRE) == TOKEN)
        return CW_OK;
    struct timespec ts = cw__timespec(deadline_ns);
    for (;;) {
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so
         * restarting after EINTR or a spurious wake-up does not extend it. */
        long rc = futex(&fp->state, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, PARKED,
                        deadline_ns == CW_DEADLINE_NONE ? NULL : &ts);
        int e = rc == 0 ? 0 : errno;
        /* EFAULT or EINVAL would mean a bad address or deadline, but the word
         * is the caller's live parker and the deadline comes from
         * cw__timespec; ENOSYS cannot happen on a Linux cw builds for. */
        if (e != 0 && e != EAGAIN && e != EINTR && e != ETIMEDOUT)
            cw__die("futex wait", e);
        int token = TOKEN;
        if (__atomic_compare_exchange_n(&fp->state, &token, EMPTY, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return CW_OK;
        if (e == ETIMEDOUT || (deadline_ns != CW_DEADLINE_NONE && cw_now_ns() >= deadline_ns)) {
            /* Leave PARKED for EMPTY; a token that raced in is still ours. */
            return __atomic_exchange_n(&fp->state, EMPTY, __ATOMIC_ACQUIRE) == TOKEN
                       ? CW_OK
                       : CW_ERR_TIMEOUT;
        }
        /* EINTR, EAGAIN or a spurious return: still PARKED, sleep again. */
    }
}

static void futex_unpark(cw_parker *p) {
    cw_futex_parker *fp = (cw_futex_parker *)p;
    CW__INJECT();
    /* After this exchange the parked thread may return and free the parker:
     * the wake below only passes the address to the kernel. */
    if (__atomic_exchange_n(&fp->state, TOKEN, __ATOMIC_RELEASE) == PARKED)
        futex(&fp->state, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL);
}

static const cw_parker_ops futex_ops = {futex_park, futex_unpark};

void cw_futex_parker_init(cw_futex_parker *fp) {
    fp->parker.ops = &futex_ops;
    __atomic_store_n(&fp->state, EMPTY, __ATOMIC_RELAXED);
}
