/* SPDX-License-Identifier: MIT */
/*
 * --trace: each interposed call as a span of its thread (call, command
 * type, queue, strategy, how it ended), and, where the queue has profiling
 * enabled, the device spans of the commands waited on; written at exit as
 * Chrome trace-event JSON (Perfetto, chrome://tracing; docs/cw-run-internals.md,
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
/* At a span's beginning: its seq, and cw's counters it reports deltas of. */
void cwp_trace_begin(cwp_span *s);
/* The calling thread's current call waits with cw, with these flags
 * (cw_wait_options.flags). */
void cwp_trace_wait_flags(unsigned flags);
/* cwp_span_subject under --trace. */
void cwp_trace_subject(cwp_span *s, cl_command_queue queue, const cl_event *evs, cl_uint n);
/* Record the span of call k, which returned `result` at `wall_end`, with
 * the thread CPU time it took (CWP_NO_CPU: not sampled). */
void cwp_trace_span(enum cwp_call k, const cwp_span *s, cl_int result, uint64_t wall_end,
                    uint64_t cpu_ns);
/* Whether the calling thread's current clFinish waited on a marker (called
 * before its span ends), and that its current call was reported as a hang. */
void cwp_trace_finish_path(bool on_marker);
void cwp_trace_hang(void);
/* After a wait on `ev` completed: its command's device span, when its
 * queue has profiling enabled. Does nothing without --trace. */
void cwp_trace_device(cl_event ev);
/* Write the file (at exit). */
void cwp_trace_write(void);

#endif
