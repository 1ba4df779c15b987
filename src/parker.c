/* SPDX-License-Identifier: MIT */
/* Layer 3: parker. The default parks an OS thread on a futex word; the
 * interrupt parker is that word and a descriptor that ends its parks. */
/* The public struct holds the word as a plain int (C++ can include it); it
 * is only ever accessed here, through the __atomic builtins, which GCC and
 * clang define on any suitably aligned int and ThreadSanitizer understands. */
#include "base.h"
#include "parker_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { PARKED = -1, EMPTY = 0, TOKEN = 1 };

static long futex(int *word, int op, int val, const struct timespec *ts) {
    return syscall(SYS_futex, word, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

/* Whether `fd` is readable (or closed, or in error: poll says so too). */
static bool readable(int fd) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll(&pfd, 1, 0) > 0;
}

/* Park on the futex word until a token, the deadline or, where `fd` is not
 * -1, a readable `fd` (CW_ERR_INTERRUPTED), looked at as
 * parker_internal.h says. */
static int park_until(cw_futex_parker *fp, uint64_t deadline_ns, int fd) {
    /* EMPTY -> PARKED, or TOKEN -> EMPTY: then the token was already there.
     * Acquire pairs with unpark's release: what the unparker wrote before
     * unparking is visible when park returns. */
    if (__atomic_fetch_sub(&fp->state, 1, __ATOMIC_ACQUIRE) == TOKEN)
        return CW_OK;
    bool interrupted = fd >= 0 && readable(fd);
    while (!interrupted) {
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so
         * restarting after EINTR or a spurious wake-up does not extend it. */
        uint64_t until = deadline_ns;
        if (fd >= 0) {
            uint64_t look = cw_deadline_after_ns(CW__INTERRUPT_LOOK_NS);
            until = look < until ? look : until;
        }
        struct timespec ts = cw__timespec(until);
        long rc = futex(&fp->state, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, PARKED,
                        until == CW_DEADLINE_NONE ? NULL : &ts);
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
        if ((e == ETIMEDOUT && until == deadline_ns) ||
            (deadline_ns != CW_DEADLINE_NONE && cw_now_ns() >= deadline_ns))
            break;
        if (fd >= 0 && (e == EINTR || e == ETIMEDOUT))
            interrupted = readable(fd);
        /* EINTR, EAGAIN or a spurious return: still PARKED, sleep again. */
    }
    /* Leave PARKED for EMPTY; a token that raced in is still ours. */
    if (__atomic_exchange_n(&fp->state, EMPTY, __ATOMIC_ACQUIRE) == TOKEN)
        return CW_OK;
    return interrupted ? CW_ERR_INTERRUPTED : CW_ERR_TIMEOUT;
}

static int futex_park(cw_parker *p, uint64_t deadline_ns) {
    return park_until((cw_futex_parker *)p, deadline_ns, -1);
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

static int interrupt_park(cw_parker *p, uint64_t deadline_ns) {
    cw__interrupt_parker *ip = (cw__interrupt_parker *)p;
    return park_until(&ip->futex, deadline_ns, ip->fd);
}

static const cw_parker_ops interrupt_ops = {interrupt_park, futex_unpark};

void cw__interrupt_parker_init(cw__interrupt_parker *ip, int fd) {
    cw_futex_parker_init(&ip->futex);
    if (fd >= 0)
        ip->futex.parker.ops = &interrupt_ops;
    ip->fd = fd;
}
