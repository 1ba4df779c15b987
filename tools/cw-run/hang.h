/* SPDX-License-Identifier: MIT */
/*
 * The --hang-ms report: a wait that has lasted longer than the threshold is
 * described on stderr, once, with what each unfinished event can tell
 * (docs/cw-run.md, "Hang diagnosis", shows one).
 */
#ifndef CWP_HANG_H
#define CWP_HANG_H

#include <CL/cl.h>

#include "profile.h"

/* Report that call k has waited past the threshold on evs[0..n-1], and
 * count it in the profile; with --on-hang=abort, abort after the report. */
void cwp_hang_report(enum cwp_call k, const cl_event *evs, cl_uint n);

#endif
