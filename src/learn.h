/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.3 (internal): what a wait teaches, fed in one place after it
 * (wait.c): the queue's estimates, the trials' costs, and the callback
 * lateness a way saw. The ways themselves learn nothing (ways.h).
 */
#ifndef CW_LEARN_H
#define CW_LEARN_H

#include <CL/cl.h>
#include <stdbool.h>

#include "policy.h"
#include "strategy.h"
#include "ways.h"

/*
 * After a wait of plan `p` on `event` that returned `rc`, by choice `ch`
 * (`driver`: the way it took was the driver's wait), with what its way
 * reported. Leaves a completion the report
 * still holds (r->seen_first). Makes no OpenCL call but a status read of
 * the event's record, through the table.
 */
void cw__learn(cl_event event, const cw__plan *p, const cw__choice *ch, bool driver, int rc,
               const cw__report *r);

#endif
