/* SPDX-License-Identifier: MIT */
/*
 * The driver's own clWaitForEvents and clFinish, as the modelled driver
 * waits: blocking (the driver below, unchanged), busy-spinning on the
 * status, polling with sched_yield between looks, or spinning for a while
 * and then blocking. The model only decides how the time passes; the
 * return value is always the driver's own, from its wait called once the
 * events are done.
 */
#include <sched.h>

#include "model.h"

/* Between two looks at the status a spinning wait spins this long on the
 * CPU's pause instruction: the core stays busy, as a driver's spin keeps
 * it, without taking the driver's event lock millions of times a second
 * (which would slow down the thread that completes the event). */
#define LOOK_EVERY_NS 1000u

static void relax_for(uint64_t ns) {
    uint64_t until = dm_now_ns() + ns;
    while (dm_now_ns() < until) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

/* Whether every event is done (complete or failed); true too when a status
 * cannot be read, so the driver's wait reports the error. */
static bool all_done(cl_uint n, const cl_event *list) {
    for (cl_uint i = 0; i < n; ++i) {
        cl_int st = CL_COMPLETE;
        if (dm_next->clGetEventInfo(list[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                    NULL) != CL_SUCCESS)
            return true;
        if (st > CL_COMPLETE)
            return false;
    }
    return true;
}

/* Wait as the model says until the events are done, or until a spinblock's
 * spin is over. clWaitForEvents flushes the queues of the events it waits
 * on, and so does this, before it starts to look. */
static void model_wait(cl_uint n, const cl_event *list) {
    cl_command_queue last = NULL;
    for (cl_uint i = 0; i < n; ++i) {
        cl_command_queue q = NULL;
        if (dm_next->clGetEventInfo(list[i], CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) ==
                CL_SUCCESS &&
            q && q != last) {
            dm_next->clFlush(q);
            last = q;
        }
    }
    uint64_t until = dm_cfg.wait == DM_WAIT_SPINBLOCK
                         ? dm_now_ns() + (uint64_t)dm_cfg.spin_us * 1000
                         : UINT64_MAX;
    while (!all_done(n, list) && dm_now_ns() < until) {
        if (dm_cfg.wait == DM_WAIT_YIELD)
            sched_yield();
        else
            relax_for(LOOK_EVERY_NS);
    }
}

cl_int CL_API_CALL dm_wait_for_events(cl_uint n, const cl_event *list) {
    if (dm_cfg.wait != DM_WAIT_BLOCK && n > 0 && list)
        model_wait(n, list);
    return dm_next->clWaitForEvents(n, list);
}

cl_int CL_API_CALL dm_finish(cl_command_queue q) {
    if (dm_cfg.wait != DM_WAIT_BLOCK) {
        /* A marker with no wait list completes after every command enqueued
         * before it, in-order queue or not. */
        cl_event m = NULL;
        if (dm_next->clEnqueueMarkerWithWaitList(q, 0, NULL, &m) == CL_SUCCESS && m) {
            model_wait(1, &m);
            dm_next->clReleaseEvent(m);
        }
    }
    return dm_next->clFinish(q);
}
