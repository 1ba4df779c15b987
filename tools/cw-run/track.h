/* SPDX-License-Identifier: MIT */
/*
 * The enqueues recorded for clFinish: under the cw strategies, the event of
 * each command the preload sees enqueued becomes its queue's last command
 * (lastcmd.h). A driver creates an event for every command anyway (PoCL
 * does), so when the program asks for none the preload asks for one.
 *
 * Around the real call:
 *     cwp_tracked t;
 *     cwp_track_begin(&t, queue, nw, wait_list, event);
 *     return cwp_track_end(&t, real_enqueue(..., t.evp));
 */
#ifndef CWP_TRACK_H
#define CWP_TRACK_H

#include <stdbool.h>

#include <CL/cl.h>

/* One enqueue being recorded. It points into itself: begin it where it
 * stays until the end, and do not copy it. */
typedef struct cwp_tracked {
    cl_command_queue queue;
    cl_uint nw; /* the wait list, for gate.h */
    const cl_event *wl;
    cl_event *evp; /* the real call's event argument */
    cl_event own;  /* the preload's event, when the program asked for none */
    bool on;       /* recording: cw strategies, not a call cw makes itself */
} cwp_tracked;

/* Before the real enqueue: the program's wait list and `event` argument
 * in, t->evp out. */
void cwp_track_begin(cwp_tracked *t, cl_command_queue queue, cl_uint nw, const cl_event *wl,
                     cl_event *event);

/* After it returned `err`: record its event; returns `err`. */
cl_int cwp_track_end(const cwp_tracked *t, cl_int err);

#endif
