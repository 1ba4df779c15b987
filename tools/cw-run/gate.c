/* SPDX-License-Identifier: MIT */
/* The user events commands wait for, for the hang report (gate.h). */
#include "gate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config.h"
#include "settle.h"

/* A hang report names what the program is stuck on: a few dozen commands
 * behind unset user events cover the programs seen; more go unnamed. */
#define GATES 32

typedef struct gate {
    cl_event command, user; /* both NULL: a free slot */
} gate;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gate gates[GATES];
/* Entries in use: a sweep with none costs one load. */
static atomic_uint used;

static cl_int status_of(cl_event ev) {
    cl_int st;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
        return -1;
    return st;
}

/* An unset user event: a user event's status is CL_SUBMITTED until set. */
static bool unset_user_event(cl_event ev) {
    cl_command_type type;
    return ev &&
           clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL) == CL_SUCCESS &&
           type == CL_COMMAND_USER && status_of(ev) > CL_COMPLETE;
}

/* The entries whose command has finished or whose user event was set,
 * taken out of the table (lock held) into out[]; their count. */
static unsigned take_finished(gate *out) {
    unsigned n = 0;
    for (unsigned i = 0; i < GATES; ++i)
        if (gates[i].command && (status_of(gates[i].command) <= CL_COMPLETE ||
                                 status_of(gates[i].user) <= CL_COMPLETE)) {
            out[n++] = gates[i];
            gates[i] = (gate){NULL, NULL};
        }
    atomic_fetch_sub_explicit(&used, n, memory_order_relaxed);
    return n;
}

/* The references of taken entries, let go after the lock: through
 * settle.h, since a failing status may still be spreading through the
 * driver. */
static void release_taken(const gate *taken, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
        cwp_settle_release(taken[i].command);
        cwp_settle_release(taken[i].user);
    }
}

void cwp_gate_note(cl_event command, cl_uint nw, const cl_event *wl) {
    if (!cwp_cfg.hang_ns || !command || !wl)
        return;
    cl_event user = NULL;
    for (cl_uint i = 0; i < nw && !user; ++i)
        if (unset_user_event(wl[i]))
            user = wl[i];
    if (!user || clRetainEvent(command) != CL_SUCCESS)
        return;
    if (clRetainEvent(user) != CL_SUCCESS) {
        clReleaseEvent(command);
        return;
    }
    gate taken[GATES];
    unsigned n = 0;
    pthread_mutex_lock(&lock);
    unsigned slot = GATES;
    for (int pass = 0; pass < 2 && slot == GATES; ++pass) {
        if (pass)
            n = take_finished(taken);
        for (unsigned i = 0; i < GATES && slot == GATES; ++i)
            if (!gates[i].command)
                slot = i;
    }
    if (slot < GATES) {
        gates[slot] = (gate){command, user};
        atomic_fetch_add_explicit(&used, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&lock);
    release_taken(taken, n);
    if (slot == GATES) {
        clReleaseEvent(command);
        clReleaseEvent(user);
    }
}

cl_event cwp_gate_of(cl_event command) {
    if (!command || !atomic_load_explicit(&used, memory_order_relaxed))
        return NULL;
    cl_event user = NULL;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < GATES && !user; ++i)
        if (gates[i].command == command && clRetainEvent(gates[i].user) == CL_SUCCESS)
            user = gates[i].user;
    pthread_mutex_unlock(&lock);
    return user;
}

void cwp_gate_sweep(void) {
    if (!atomic_load_explicit(&used, memory_order_relaxed))
        return;
    gate taken[GATES];
    pthread_mutex_lock(&lock);
    unsigned n = take_finished(taken);
    pthread_mutex_unlock(&lock);
    release_taken(taken, n);
}
