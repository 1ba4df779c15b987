/* SPDX-License-Identifier: MIT */
/*
 * The profile of --stats: per interposed call, its count, durations,
 * sampled CPU time, failures and hangs, and the table (stderr) or JSON
 * (file) written at exit (docs/cw-run.md shows both). Lock-free counters:
 * any thread may count at any time.
 */
#ifndef CWP_PROFILE_H
#define CWP_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include <CL/cl.h>

/* The calls the profile counts, and that the hang report names. */
enum cwp_call {
    CWP_WAIT_FOR_EVENTS,
    CWP_FINISH,
    CWP_READ_BUFFER,
    CWP_WRITE_BUFFER,
    CWP_READ_BUFFER_RECT,
    CWP_WRITE_BUFFER_RECT,
    CWP_READ_IMAGE,
    CWP_WRITE_IMAGE,
    CWP_MAP_BUFFER,
    CWP_MAP_IMAGE,
    CWP_SVM_MEMCPY,
    CWP_SVM_MAP,
    CWP_CALLS
};

/* The OpenCL name of call k ("clFinish"). */
const char *cwp_call_name(enum cwp_call k);

/* One call's measurement: wall and (when sampled) thread CPU time at its
 * beginning. For clFinish the wall clock is read even without --stats: it
 * times the waits for the queue's typical wait (lastcmd.h), so that one
 * read serves both. */
typedef struct cwp_span {
    uint64_t wall, cpu;
    bool sampled;
} cwp_span;

cwp_span cwp_span_begin(enum cwp_call k);
/* Count the call, with its result: not CL_SUCCESS counts as failed. */
void cwp_span_end(enum cwp_call k, cwp_span s, cl_int result);
/* The same, with the wall clock at the end, `wall_end`, read by the caller. */
void cwp_span_end_at(enum cwp_call k, cwp_span s, cl_int result, uint64_t wall_end);

/* The wall clock (CLOCK_MONOTONIC), in ns, as spans read it. */
uint64_t cwp_wall_ns(void);

/* clFinish waited on the queue's last command (true) or on a marker. */
void cwp_count_finish_path(bool on_last);
/* Call k was reported as a hang (hang.h). */
void cwp_count_hang(enum cwp_call k);

/* Measure the CPU clock's own cost, once, before the first span. */
void cwp_profile_calibrate(void);
/* Write the profile; an atexit handler. */
void cwp_profile_report(void);

#endif
