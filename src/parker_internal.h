/* SPDX-License-Identifier: MIT */
/* cw layer 3 (internal): the futex parker that a readable descriptor interrupts. */
#ifndef CW_PARKER_INTERNAL_H
#define CW_PARKER_INTERNAL_H

#include "cw/parker.h"

/*
 * The parker of a wait with CW_WAIT_INTERRUPT_FD: the futex parker's token
 * and unpark, and a park that returns CW_ERR_INTERRUPTED once `fd` is
 * readable, a third result only cw's own layers see (they end the wait
 * with it, as with a timeout). A token wins over the descriptor: a park
 * that finds one returns 0 whatever the descriptor says.
 *
 * The descriptor is looked at when the park begins, when a signal handler
 * interrupts the futex wait (EINTR: a handler that writes to the descriptor
 * ran on this thread), and every CW__INTERRUPT_LOOK_NS of sleep: a handler
 * that ran on another thread, or on this one between the first look and the
 * futex wait, does not interrupt that wait, and a futex cannot wait on a
 * descriptor too. Waiting on the descriptor itself with poll(2) would need
 * a descriptor to unpark through as well, which an unpark may write to after
 * the owner has returned and closed it (cw/parker.h: unpark must not touch
 * the parker once the token is visible).
 */
typedef struct cw__interrupt_parker {
    cw_futex_parker futex;
    int fd;
} cw__interrupt_parker;

/* CW_INTERRUPT_LOOK_US (cw/wait.h, which this layer does not see; the plan
 * checks that the two agree). */
#define CW__INTERRUPT_LOOK_NS 100000000u

/* `fd` -1: no descriptor, the futex parker as it is. */
void cw__interrupt_parker_init(cw__interrupt_parker *ip, int fd);

#endif
