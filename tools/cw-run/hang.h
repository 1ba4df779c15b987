/* SPDX-License-Identifier: MIT */
/*
 * The --hang-ms report: a wait that has lasted longer than the threshold is
 * described on stderr, once, with what each unfinished event can tell
 * (docs/cw-run.md, "Hang reports", shows one).
 */
#ifndef CWP_HANG_H
#define CWP_HANG_H

#include <stdint.h>

#include <CL/cl.h>

#include "profile.h"

/* Report that call k has waited past the threshold on evs[0..n-1], and
 * count it in the profile; with --on-hang=abort, abort after the report. */
void cwp_hang_report(enum cwp_call k, const cl_event *evs, cl_uint n);

/* After a reported wait of call k ended, `waited_ns` after it began: one
 * line saying so, and how (`how`: "complete", "a command failed"). */
void cwp_hang_ended(enum cwp_call k, uint64_t waited_ns, const char *how);

/* While this thread's clFinish waits on `marker`, its own: a report then
 * says so and names `last`, the program's last command on the queue (NULL:
 * not seen). NULL, NULL after the wait. */
void cwp_hang_finish_marker(cl_event marker, cl_event last);

/* The constant's name of a command type ("CL_COMMAND_MARKER"). */
const char *cwp_command_type_name(cl_command_type t);

#endif
