/* SPDX-License-Identifier: MIT */
/*
 * --trace: each interposed call as a span of its thread (call, command
 * type, queue, strategy, how it ended), and, where the queue has profiling
 * enabled, the device spans of the commands waited on; written at exit as
 * Chrome trace-event JSON (Perfetto, chrome://tracing; docs/cw-run.md,
 * "The timeline"). Recording is a store into the thread's own buffer; the
 * file is written at exit only.
 */
#ifndef CWP_TRACE_H
#define CWP_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include <CL/cl.h>

#include "profile.h"

/* The next call's place among all calls (cwp_span.seq). */
uint64_t cwp_trace_seq(void);
/* cwp_span_subject under --trace. */
void cwp_trace_subject(cwp_span *s, cl_command_queue queue, const cl_event *evs, cl_uint n);
/* Record the span of call k, which returned `result` at `wall_end`. */
void cwp_trace_span(enum cwp_call k, const cwp_span *s, cl_int result, uint64_t wall_end);
/* The calling thread's current clFinish waited on a marker (false: on the
 * last command), and its current call was reported as a hang. */
void cwp_trace_finish_path(bool on_last);
void cwp_trace_hang(void);
/* After a wait on `ev` completed: its command's device span, when its
 * queue has profiling enabled. Does nothing without --trace. */
void cwp_trace_device(cl_event ev);
/* Write the file (at exit). */
void cwp_trace_write(void);

#endif
