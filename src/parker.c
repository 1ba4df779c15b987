/* Layer 3: parker. The default parks an OS thread on a futex word. */
#include "cw/parker.h"
#include "internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { PARKED = -1, EMPTY = 0, TOKEN = 1 };

static long futex(atomic_int *word, int op, int val, const struct timespec *ts) {
    return syscall(SYS_futex, (int *)word, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

static int futex_park(cw_parker *p, uint64_t deadline_ns) {
    cw_futex_parker *fp = (cw_futex_parker *)p;
    /* EMPTY -> PARKED, or TOKEN -> EMPTY: then the token was already there.
     * Acquire pairs with unpark's release: what the unparker wrote before
     * unparking is visible when park returns. */
    if (atomic_fetch_sub_explicit(&fp->state, 1, memory_order_acquire) == TOKEN)
        return CW_OK;
    struct timespec ts = cw__timespec(deadline_ns);
    for (;;) {
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so
         * restarting after EINTR or a spurious wake-up does not extend it. */
        long rc = futex(&fp->state, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, PARKED,
                        deadline_ns == CW_DEADLINE_NONE ? NULL : &ts);
        int e = rc == 0 ? 0 : errno;
        if (e != 0 && e != EAGAIN && e != EINTR && e != ETIMEDOUT)
            cw__die("futex wait", e);
        int token = TOKEN;
        if (atomic_compare_exchange_strong_explicit(&fp->state, &token, EMPTY, memory_order_acquire,
                                                    memory_order_relaxed))
            return CW_OK;
        if (e == ETIMEDOUT || (deadline_ns != CW_DEADLINE_NONE && cw_now_ns() >= deadline_ns)) {
            /* Leave PARKED for EMPTY; a token that raced in is still ours. */
            return atomic_exchange_explicit(&fp->state, EMPTY, memory_order_acquire) == TOKEN
                       ? CW_OK
                       : CW_ERR_TIMEOUT;
        }
        /* EINTR, EAGAIN or a spurious return: still PARKED, sleep again. */
    }
}

static void futex_unpark(cw_parker *p) {
    cw_futex_parker *fp = (cw_futex_parker *)p;
    CW_INJECT();
    /* After this exchange the parked thread may return and free the parker:
     * the wake below only passes the address to the kernel. */
    if (atomic_exchange_explicit(&fp->state, TOKEN, memory_order_release) == PARKED)
        futex(&fp->state, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL);
}

static const cw_parker_ops futex_ops = {futex_park, futex_unpark};

void cw_futex_parker_init(cw_futex_parker *fp) {
    fp->parker.ops = &futex_ops;
    atomic_init(&fp->state, EMPTY);
}
