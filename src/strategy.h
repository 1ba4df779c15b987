/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6 (internal): the strategies as a table. A row says everything
 * cw_wait needs to know about a strategy; adding one is a row here (and a
 * wait function in wait.c when it waits in a new way).
 */
#ifndef CW_STRATEGY_H
#define CW_STRATEGY_H

#include <stdbool.h>
#include <stdint.h>

#include "completion.h"
#include "cw/wait.h"

/* How the waiting thread learns that the command finished. */
typedef enum cw__method {
    CW__BLOCK,    /* clWaitForEvents; with a timeout, as CW__CALLBACK on `kind` */
    CW__POLL,     /* read the status in a busy loop */
    CW__BACKOFF,  /* read the status with growing sleeps, planned by the estimate */
    CW__CALLBACK, /* CL_COMPLETE callback signals a completion of `kind` */
} cw__method;

/* Whether a callback wait spins on the completion before it parks. */
typedef enum cw__spin {
    CW__SPIN_NONE,
    CW__SPIN_BUDGET, /* options.spin_us, default CW_SPIN_US_DEFAULT */
    CW__SPIN_AUTO,   /* about the expected wait, when a CPU is spare (estimate.c) */
} cw__spin;

typedef struct cw__strategy_row {
    const char *name;
    cw__method method;
    cw_completion_kind kind; /* lock and wake order of the completion (callback waits) */
    cw__spin spin;
    bool estimates; /* it reads and feeds the per-queue estimate of the wait */
} cw__strategy_row;

/* The row of a valid strategy; CW_STRATEGY_DEFAULT has the row of the
 * strategy it stands for, under its own name. */
const cw__strategy_row *cw__strategy_row_of(cw_strategy s);

/* Option checks of cw_wait: CW_OK or CW_ERR_INVALID_ARGUMENT. */
int cw__validate_options(const cw_wait_options *o);

/* The absolute deadline of o->timeout_us from now (CW_DEADLINE_NONE for none). */
uint64_t cw__deadline_of(const cw_wait_options *o);

#endif
