/* SPDX-License-Identifier: MIT */
/*
 * With --hang-ms: the user event, not yet set, that a command the program
 * enqueued waits for, so that a hang report can name it. OpenCL cannot say
 * what an event waits for, so the preload notes it at the enqueue, from the
 * wait list: the first user event in it whose status is not yet set. The
 * table holds a reference to the command and to that user event until the
 * command has finished or the user event was set (cwp_gate_sweep), so a
 * handle it names is never a freed one; it keeps at most a few dozen
 * commands (the rest go unnamed).
 *
 * Without --hang-ms it does nothing and costs one test a call. Thread-safe;
 * under its lock no OpenCL call but status reads and a reference taken.
 */
#ifndef CWP_GATE_H
#define CWP_GATE_H

#include <CL/cl.h>

/* After the program's enqueue of `command` with wait list wl[0..nw-1]
 * succeeded. */
void cwp_gate_note(cl_event command, cl_uint nw, const cl_event *wl);

/* The unset user event `command` waits for, with a reference the caller
 * releases; NULL when none was noted. */
cl_event cwp_gate_of(cl_event command);

/* Let go of the entries whose command has finished or whose user event was
 * set; at the end of each wait under --hang-ms. */
void cwp_gate_sweep(void);

#endif
