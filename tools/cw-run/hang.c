/* SPDX-License-Identifier: MIT */
/* The --hang-ms report (hang.h). */
#include "hang.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "gate.h"

/* A case that returns its constant's own name. */
#define NAMED(c)                                                                                   \
    case c:                                                                                        \
        return #c;

const char *cwp_command_type_name(cl_command_type t) {
    switch (t) {
        NAMED(CL_COMMAND_NDRANGE_KERNEL)
        NAMED(CL_COMMAND_TASK)
        NAMED(CL_COMMAND_NATIVE_KERNEL)
        NAMED(CL_COMMAND_READ_BUFFER)
        NAMED(CL_COMMAND_WRITE_BUFFER)
        NAMED(CL_COMMAND_COPY_BUFFER)
        NAMED(CL_COMMAND_READ_IMAGE)
        NAMED(CL_COMMAND_WRITE_IMAGE)
        NAMED(CL_COMMAND_MAP_BUFFER)
        NAMED(CL_COMMAND_MAP_IMAGE)
        NAMED(CL_COMMAND_UNMAP_MEM_OBJECT)
        NAMED(CL_COMMAND_MARKER)
        NAMED(CL_COMMAND_READ_BUFFER_RECT)
        NAMED(CL_COMMAND_WRITE_BUFFER_RECT)
        NAMED(CL_COMMAND_USER)
        NAMED(CL_COMMAND_BARRIER)
        NAMED(CL_COMMAND_SVM_MEMCPY)
        NAMED(CL_COMMAND_SVM_MAP)
    default:
        return "another command";
    }
}

static const char *status_name(cl_int s) {
    switch (s) {
        NAMED(CL_QUEUED)
        NAMED(CL_SUBMITTED)
        NAMED(CL_RUNNING)
        NAMED(CL_COMPLETE)
    default:
        return s < 0 ? "failed" : "unknown";
    }
}

#undef NAMED

/* One line about one event into buf. Reads only what the event can tell;
 * every query may fail on a broken handle, and the line then says so. */
static void describe_event(char *buf, size_t len, cl_event ev, const char *label) {
    cl_command_type type = 0;
    cl_command_queue q = NULL;
    cl_int status = 0;
    char device[256] = "none";
    cl_int e1 = clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
    clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL);
    cl_int e2 = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (q) {
        cl_device_id d = NULL;
        if (clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL) == CL_SUCCESS && d &&
            clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof device, device, NULL) != CL_SUCCESS)
            snprintf(device, sizeof device, "unknown");
        device[sizeof device - 1] = '\0';
    }
    if (e1 != CL_SUCCESS || e2 != CL_SUCCESS) {
        snprintf(buf, len, "  %s (%p): cannot be queried (OpenCL error %d)\n", label, (void *)ev,
                 e1 != CL_SUCCESS ? e1 : e2);
        return;
    }
    snprintf(buf, len, "  %s (%p): command %s, queue %p, device \"%s\", execution status %s (%d)\n",
             label, (void *)ev, cwp_command_type_name(type), (void *)q, device, status_name(status),
             status);
}

/* The line of describe_event for the unset user event `ev` waits for, if
 * the preload noted one (gate.h), indented under ev's own line. */
static size_t describe_gate(char *buf, size_t len, cl_event ev) {
    cl_event user = cwp_gate_of(ev);
    if (!user || len == 0)
        return 0;
    describe_event(buf, len, user, "  which waits for the user event");
    clReleaseEvent(user);
    return strlen(buf);
}

/* The marker of the clFinish this thread is in, and the program's last
 * command it stands for (cwp_hang_finish_marker). */
static __thread cl_event finish_marker, finish_last;

void cwp_hang_finish_marker(cl_event marker, cl_event last) {
    finish_marker = marker;
    finish_last = last;
}

/* The marker is the preload's, not a command of the program's: say so,
 * and name the program's own last command where the preload saw it. */
static size_t describe_marker(char *buf, size_t len) {
    size_t used = (size_t)snprintf(buf, len,
                                   "    (cw-run's marker for clFinish: it completes once every "
                                   "command enqueued before it on the queue has)\n");
    if (finish_last && used < len) {
        describe_event(buf + used, len - used, finish_last, "the program's last command");
        used += strlen(buf + used);
        if (used < len)
            used += describe_gate(buf + used, len - used, finish_last);
    }
    return used < len ? used : len;
}

void cwp_hang_report(enum cwp_call k, const cl_event *evs, cl_uint n) {
    cwp_count_hang(k);
    /* One write, so that reports of several threads do not interleave. */
    char msg[4096];
    size_t used = (size_t)snprintf(
        msg, sizeof msg, "cw-run: hang: %s (pid %ld) has waited %" PRIu64 " ms, on %u event%s:\n",
        cwp_call_name(k), (long)getpid(), cwp_cfg.hang_ns / 1000000u, n, n == 1 ? "" : "s");
    unsigned shown = 0;
    for (cl_uint i = 0; i < n && used < sizeof msg; ++i) {
        cl_int st = CL_COMPLETE;
        if (clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                CL_SUCCESS &&
            st <= CL_COMPLETE)
            continue; /* finished: not what the wait is stuck on */
        if (shown++ == 8) {
            used += (size_t)snprintf(msg + used, sizeof msg - used, "  ...\n");
            break;
        }
        char label[32];
        snprintf(label, sizeof label, "event %u", (unsigned)i);
        describe_event(msg + used, sizeof msg - used, evs[i], label);
        used += strlen(msg + used);
        if (used < sizeof msg)
            used += describe_gate(msg + used, sizeof msg - used, evs[i]);
        if (k == CWP_FINISH && finish_marker && evs[i] == finish_marker && used < sizeof msg)
            used += describe_marker(msg + used, sizeof msg - used);
    }
    if (used < sizeof msg)
        snprintf(msg + used, sizeof msg - used, "cw-run: %s\n",
                 cwp_cfg.hang_abort ? "aborting (--on-hang=abort)"
                                    : "still waiting (a line follows when the wait ends)");
    fputs(msg, stderr);
    fflush(stderr);
    if (cwp_cfg.hang_abort)
        abort();
}

void cwp_hang_ended(enum cwp_call k, uint64_t waited_ns, const char *how) {
    char msg[256];
    snprintf(msg, sizeof msg, "cw-run: hang over: %s (pid %ld) ended after %" PRIu64 " ms: %s\n",
             cwp_call_name(k), (long)getpid(), waited_ns / 1000000u, how);
    fputs(msg, stderr);
    fflush(stderr);
}
