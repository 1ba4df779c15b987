/* SPDX-License-Identifier: MIT */
/* cw layer 6 (internal): what cw_wait, wait-all/any share about options. */
#ifndef CW_STRATEGY_H
#define CW_STRATEGY_H

#include <stdint.h>

#include "cw/wait.h"

/* Option checks of cw_wait: CW_OK or CW_ERR_INVALID_ARGUMENT. */
int cw__validate_options(const cw_wait_options *o);

/* The absolute deadline of o->timeout_us from now (CW_DEADLINE_NONE for none). */
uint64_t cw__deadline_of(const cw_wait_options *o);

#endif
