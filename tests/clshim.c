/*
 * Test shim over the OpenCL entry points cw calls. The test executable
 * exports these symbols, so libcw's calls reach them first; they forward to
 * the real ICD loader through dlsym(RTLD_NEXT). Two purposes:
 * - count clFlush calls, so a test can see that a wait flushed the queue
 *   (PoCL's CPU device runs unflushed commands anyway, so a missing flush
 *   would not show as a hang here);
 * - reject one sentinel handle with CL_INVALID_EVENT, as an implementation
 *   that validates handles does (PoCL 3.1 checks only for NULL and crashes
 *   on a foreign pointer, so no real handle can exercise that path on it).
 */
#include "clshim.h"

#include <dlfcn.h>
#include <stdlib.h>

static char sentinel;
const cl_event clshim_bad_event = (cl_event)&sentinel;
atomic_uint clshim_flushes;

#define REAL(name)                                                                                 \
    static __typeof__(name) *real;                                                                 \
    if (!real)                                                                                     \
        real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);                                        \
    if (!real)                                                                                     \
        abort();

CL_API_ENTRY cl_int CL_API_CALL clFlush(cl_command_queue q) {
    REAL(clFlush)
    atomic_fetch_add(&clshim_flushes, 1);
    return real(q);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event e, cl_event_info p, size_t s, void *v,
                                               size_t *r) {
    REAL(clGetEventInfo)
    return e == clshim_bad_event ? CL_INVALID_EVENT : real(e, p, s, v, r);
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *list) {
    REAL(clWaitForEvents)
    for (cl_uint i = 0; list && i < n; ++i)
        if (list[i] == clshim_bad_event)
            return CL_INVALID_EVENT;
    return real(n, list);
}

CL_API_ENTRY cl_int CL_API_CALL clSetEventCallback(cl_event e, cl_int type,
                                                   void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                                                   void *data) {
    REAL(clSetEventCallback)
    return e == clshim_bad_event ? CL_INVALID_EVENT : real(e, type, fn, data);
}
