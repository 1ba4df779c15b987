/* SPDX-License-Identifier: MIT */
/* Layer 6.0: the platform of an event (platform.h). */
#include "platform.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* clGetPlatformIDs' answer, asked once: the one platform, or NULL when
 * there are several (or none could be listed) and each event is asked. */
static _Atomic(cl_platform_id) only_platform;
static _Atomic int platforms_known; /* 0 not asked, 1 asked */

/*
 * With several platforms, asking an event for its platform takes three
 * OpenCL calls (event, context, device). Under the ICD loader every OpenCL
 * object begins with a pointer to its vendor's dispatch table (cl_khr_icd),
 * the same for a platform and its events, and the vendor library, so the
 * table, stays loaded for the life of the process. So a platform whose
 * first word no other platform shares is told by an event's first word, a
 * load and a compare. Each entry is believed only once the three calls
 * agreed with it for one event (a program linked to a vendor library with
 * no loader has objects of the vendor's own layout, whose first words need
 * not say anything); a disagreement turns the entry off for good.
 */
enum { DISPATCH_UNTRIED, DISPATCH_TRUSTED, DISPATCH_OFF };
static struct {
    const void *first_word;  /* the platform object's first word; NULL: no entry */
    cl_platform_id platform; /* set before the count is published */
    _Atomic int state;       /* DISPATCH_* */
} dispatch[CW__PLATFORMS_MAX];
static unsigned dispatch_n; /* written once, before platforms_known */

static const void *first_word(const void *object) {
    const void *w;
    memcpy(&w, object, sizeof w);
    return w;
}

/* Asked once (pthread_once), by whichever thread gets here first. */
static void platforms_learn(void) {
    cl_platform_id ps[CW__PLATFORMS_MAX];
    cl_uint n = 0;
    if (clGetPlatformIDs(CW__PLATFORMS_MAX, ps, &n) != CL_SUCCESS)
        n = 0;
    if (n == 1)
        atomic_store_explicit(&only_platform, ps[0], memory_order_relaxed);
    else if (n > 1 && n <= CW__PLATFORMS_MAX) {
        for (cl_uint i = 0; i < n; ++i) {
            dispatch[i].first_word = first_word(ps[i]);
            dispatch[i].platform = ps[i];
        }
        for (cl_uint i = 0; i < n; ++i)
            for (cl_uint j = 0; j < n; ++j)
                if (i != j && dispatch[i].first_word == dispatch[j].first_word)
                    atomic_store_explicit(&dispatch[i].state, DISPATCH_OFF, memory_order_relaxed);
        dispatch_n = n;
    }
    atomic_store_explicit(&platforms_known, 1, memory_order_release);
}

/* The platform of an event, asked of the event itself: its context's first
 * device's platform (a context's devices are all on one platform). */
static cl_platform_id platform_of(cl_event event) {
    cl_context ctx = NULL;
    cl_device_id devs[16];
    size_t size = 0;
    cl_platform_id p = NULL;
    if (clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS || !ctx ||
        clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &size) != CL_SUCCESS ||
        size < sizeof devs[0] ||
        clGetDeviceInfo(devs[0], CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS)
        return NULL;
    return p;
}

/* The platform of a valid event, by its first word where that is trusted. */
static cl_platform_id platform_by_dispatch(cl_event event) {
    const void *w = first_word(event);
    for (unsigned i = 0; i < dispatch_n; ++i) {
        if (dispatch[i].first_word != w)
            continue;
        int state = atomic_load_explicit(&dispatch[i].state, memory_order_relaxed);
        if (state == DISPATCH_TRUSTED)
            return dispatch[i].platform;
        if (state == DISPATCH_OFF)
            break;
        cl_platform_id asked = platform_of(event);
        if (asked)
            atomic_store_explicit(&dispatch[i].state,
                                  asked == dispatch[i].platform ? DISPATCH_TRUSTED : DISPATCH_OFF,
                                  memory_order_relaxed);
        return asked;
    }
    return platform_of(event);
}

cl_platform_id cw__platform_of(cl_event event) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!atomic_load_explicit(&platforms_known, memory_order_acquire))
        pthread_once(&once, platforms_learn);
    cl_platform_id p = atomic_load_explicit(&only_platform, memory_order_relaxed);
    return p ? p : platform_by_dispatch(event);
}
