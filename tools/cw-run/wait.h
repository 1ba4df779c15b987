/* SPDX-License-Identifier: MIT */
/*
 * The waits with cw: clWaitForEvents and clFinish are interposed in wait.c;
 * the blocking enqueues (blocking.c) wait on their command's event here.
 */
#ifndef CWP_WAIT_H
#define CWP_WAIT_H

#include <CL/cl.h>

#include "profile.h"

/* Wait for `event` with cw, for call k, and return what clWaitForEvents
 * would: CL_SUCCESS, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST for a
 * failed command, or, where cw could not judge the event, the code of the
 * real clWaitForEvents on it (which then did the waiting). */
cl_int cwp_wait_one(enum cwp_call k, cl_event event);

#endif
