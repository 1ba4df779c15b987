/* SPDX-License-Identifier: MIT */
/*
 * Test shim over the OpenCL entry points cw calls. The test executable
 * exports these symbols, so libcw's calls reach them first; they forward to
 * the real ICD loader through dlsym(RTLD_NEXT). Its purposes:
 * - count clFlush calls per thread, so a test can see that a wait flushed
 *   the queue (PoCL's CPU device runs unflushed commands anyway, so a
 *   missing flush would not show as a hang there; rusticl does not);
 * - count clFlush and clWaitForEvents calls per process, so that a test
 *   can open a gate once a wait has reached one of them;
 * - count the callbacks registered, so a test can see how many a pattern of
 *   waits leaves in the driver (OpenCL cannot unregister one);
 * - report another device type when a test asks (clshim_device_type), so
 *   that what cw decides for a GPU can be seen on PoCL's CPU device;
 * - reject one sentinel handle with CL_INVALID_EVENT, as an implementation
 *   that validates handles does (PoCL 3.1 checks only for NULL and crashes
 *   on a foreign pointer, so no real handle can exercise that path on it).
 */
#include "clshim.h"

#include <dlfcn.h>
#include <stdlib.h>

static char sentinel;
const cl_event clshim_bad_event = (cl_event)&sentinel;
_Thread_local unsigned clshim_thread_flushes;
atomic_ulong clshim_flushes;
atomic_ulong clshim_driver_waits;

static __typeof__(clFlush) *real_flush;
static __typeof__(clGetEventInfo) *real_get_event_info;
static __typeof__(clWaitForEvents) *real_wait_for_events;
static __typeof__(clSetEventCallback) *real_set_event_callback;
static __typeof__(clRetainEvent) *real_retain_event;
static __typeof__(clReleaseEvent) *real_release_event;
static __typeof__(clGetDeviceInfo) *real_get_device_info;
_Atomic cl_device_type clshim_device_type;
atomic_ulong clshim_callbacks_registered;

/* Resolved once, before main and before any thread exists. */
__attribute__((constructor)) static void resolve(void) {
    real_flush = (__typeof__(clFlush) *)dlsym(RTLD_NEXT, "clFlush");
    real_get_event_info = (__typeof__(clGetEventInfo) *)dlsym(RTLD_NEXT, "clGetEventInfo");
    real_wait_for_events = (__typeof__(clWaitForEvents) *)dlsym(RTLD_NEXT, "clWaitForEvents");
    real_set_event_callback =
        (__typeof__(clSetEventCallback) *)dlsym(RTLD_NEXT, "clSetEventCallback");
    real_retain_event = (__typeof__(clRetainEvent) *)dlsym(RTLD_NEXT, "clRetainEvent");
    real_release_event = (__typeof__(clReleaseEvent) *)dlsym(RTLD_NEXT, "clReleaseEvent");
    real_get_device_info = (__typeof__(clGetDeviceInfo) *)dlsym(RTLD_NEXT, "clGetDeviceInfo");
    if (!real_get_device_info || !real_flush || !real_get_event_info || !real_wait_for_events ||
        !real_set_event_callback || !real_retain_event || !real_release_event)
        abort();
}

CL_API_ENTRY cl_int CL_API_CALL clFlush(cl_command_queue q) {
    clshim_thread_flushes++;
    atomic_fetch_add(&clshim_flushes, 1);
    return real_flush(q);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event e, cl_event_info p, size_t s, void *v,
                                               size_t *r) {
    return e == clshim_bad_event ? CL_INVALID_EVENT : real_get_event_info(e, p, s, v, r);
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *list) {
    atomic_fetch_add(&clshim_driver_waits, 1);
    for (cl_uint i = 0; list && i < n; ++i)
        if (list[i] == clshim_bad_event)
            return CL_INVALID_EVENT;
    return real_wait_for_events(n, list);
}

CL_API_ENTRY cl_int CL_API_CALL clSetEventCallback(cl_event e, cl_int type,
                                                   void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                                                   void *data) {
    if (e == clshim_bad_event)
        return CL_INVALID_EVENT;
    cl_int err = real_set_event_callback(e, type, fn, data);
    if (err == CL_SUCCESS)
        atomic_fetch_add(&clshim_callbacks_registered, 1);
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clRetainEvent(cl_event e) {
    return e == clshim_bad_event ? CL_INVALID_EVENT : real_retain_event(e);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event e) {
    return e == clshim_bad_event ? CL_INVALID_EVENT : real_release_event(e);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id d, cl_device_info p, size_t s, void *v,
                                                size_t *r) {
    cl_device_type type = atomic_load(&clshim_device_type);
    if (p != CL_DEVICE_TYPE || !type || s < sizeof type || !v)
        return real_get_device_info(d, p, s, v, r);
    *(cl_device_type *)v = type;
    if (r)
        *r = sizeof type;
    return CL_SUCCESS;
}
