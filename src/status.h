/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.0 (internal): what an event says about itself. Every waiter
 * reads statuses, flushes and maps OpenCL errors through these, so the
 * rules below hold for all of them alike.
 */
#ifndef CW_STATUS_H
#define CW_STATUS_H

#include <CL/cl.h>
#include <stdbool.h>

#include "cw/common.h"

/* Map the OpenCL error of a call on an event to cw's code, handing the error
 * back in *cl_status. */
int cw__status_error(cl_int err, cl_int *cl_status);

/* The event's execution status, or cw's code for the failed call (with the
 * OpenCL error in *status). */
int cw__status_read(cl_event event, cl_int *status);

/* The verdict on a final status (CL_COMPLETE or negative). */
static inline int cw__status_verdict(cl_int st) {
    return st == CL_COMPLETE ? CW_OK : CW_ERR_COMMAND_FAILED;
}

/* Flush the event's queue when `status` (just read) is CL_QUEUED: only such a
 * command can still be waiting for a flush; from CL_SUBMITTED on it is with
 * the device already, and user events have no queue. */
int cw__status_flush(cl_event event, cl_int status, cl_int *cl_status);

/* The first look at an event: read its status and, when it is unfinished
 * and `flush`, apply the flush rule. CW_OK with the status in *status, or
 * the error of the failed call with the OpenCL error in *status. */
int cw__status_first_look(cl_event event, bool flush, cl_int *status);

#endif
