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
#include <stddef.h>
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

/* One call's measurement: wall (with --stats or --trace) and, when
 * sampled, thread CPU time at its beginning. */
typedef struct cwp_span {
    uint64_t wall, cpu;
    bool sampled;
    /* For --trace only (trace.h): the call's place among all calls, and
     * what it waits on (cwp_span_subject). */
    uint64_t seq;
    cl_command_queue queue;
    const cl_event *evs;
    cl_uint n;
    cl_command_type command;
    /* cw's process-wide parks and failed-command checks at the beginning,
     * so that the span can say how many happened during the call. */
    uint64_t parks, checks;
} cwp_span;

/* A span's thread CPU time when the call was not sampled. */
#define CWP_NO_CPU UINT64_MAX

cwp_span cwp_span_begin(enum cwp_call k);
/* What the call waits on, for --trace: its queue (NULL: the first event's),
 * and the events it waits on (n may be 0), which must stay valid until the
 * span ends. Does nothing without --trace. */
void cwp_span_subject(cwp_span *s, cl_command_queue queue, const cl_event *evs, cl_uint n);
/* Count the call, with its result: not CL_SUCCESS counts as failed. */
void cwp_span_end(enum cwp_call k, cwp_span s, cl_int result);
/* The same, with the wall clock at the end, `wall_end`, read by the caller. */
void cwp_span_end_at(enum cwp_call k, cwp_span s, cl_int result, uint64_t wall_end);

/* The wall clock (CLOCK_MONOTONIC), in ns, as spans read it. */
uint64_t cwp_wall_ns(void);

/* How a clFinish under the cw strategies waited: with cw on the queue's
 * last command or on a marker; in the driver's own clFinish (where cw said
 * its wait would be the driver's, or no marker could be enqueued, wait.c);
 * or not at all, on an idle queue (the driver's clFinish alone, which
 * returns at once). Under the cw strategies every clFinish takes exactly
 * one path, so the paths sum to the calls counted. */
enum cwp_finish_path {
    CWP_FINISH_ON_LAST,
    CWP_FINISH_ON_MARKER,
    CWP_FINISH_BY_DRIVER,
    CWP_FINISH_IDLE,
    CWP_FINISH_PATHS
};
void cwp_count_finish_path(enum cwp_finish_path path);
/* Call k was reported as a hang (hang.h). */
void cwp_count_hang(enum cwp_call k);

/* Before the first span, with --stats or --trace: measure the CPU clock's
 * own cost, and keep a descriptor of stderr for the table (a program may
 * close its stderr before exit: coreutils do). */
void cwp_profile_start(void);
/* Write the profile and the trace; an atexit handler. */
void cwp_profile_report(void);

/* The name of an output file from its pattern: every %p becomes the pid,
 * and a process the program started (cwp_cfg.child) adds ".PID" to a name
 * without %p, so that it does not overwrite the program's. False when it
 * does not fit. */
bool cwp_out_path(const char *pattern, char *out, size_t len);

#endif
