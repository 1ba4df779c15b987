/* SPDX-License-Identifier: MIT */
/*
 * The blocking enqueues: reads, writes, rectangles, images, maps and SVM.
 *
 * Under the cw strategies a blocking call becomes the same call made
 * non-blocking, then a wait with cw on its event. The caller's event, when
 * it asked for one, is the one waited on and stays the caller's; otherwise
 * the wrapper asks for one of its own and releases it after the wait. A
 * failed enqueue returns its error as the blocking call would (the checks
 * are the same).
 *
 * What the call returns is the enqueue's code, whatever became of the
 * command, and a map returns its pointer: that is what PoCL 3.1 and Mesa's
 * rusticl return natively when an event of the wait list fails during a
 * blocking call (their blocking calls wait, then return the enqueue's
 * code). The specification's code for that case,
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, would be a difference the
 * program sees, and a map that returned NULL would leave its mapping made
 * with no pointer to unmap it (tests/preload/adversarial.c,
 * blocking-failed-gate and map-failed-gate).
 *
 * Only CL_TRUE is made a wait with cw. Another non-zero flag (a program
 * passing `flags & BIT`) is the implementation's to judge: rusticl rejects
 * it with CL_INVALID_VALUE, PoCL's clEnqueueSVMMemcpy treats it as
 * non-blocking and its other calls as blocking; the call goes to it
 * unchanged, and the profile counts it as the blocking call the program
 * asked for (with the driver's verdict), as it counts CL_TRUE.
 *
 * Each wrapper makes its real call once, with the blocking flag and the
 * event argument that begin() chose for one of three ways:
 *   FORWARD  not CL_TRUE, or not interposed: the call as the program made
 *            it, recorded for clFinish (track.h), and measured when its
 *            flag asked for a blocking call;
 *   NATIVE   --strategy blocking: the program's blocking call, measured;
 *   CW       non-blocking, then the wait with cw, measured.
 */
#include "real.h"

#include <stdbool.h>

#include "gate.h"
#include "preload.h"
#include "profile.h"
#include "settle.h"
#include "trace.h"
#include "track.h"
#include "wait.h"

typedef enum way { FORWARD, NATIVE, CW } way;

/* One blocking call. It points into itself: keep it where begin() put it. */
typedef struct blocking_call {
    enum cwp_call k;
    way way;
    cl_bool blocking; /* the real call's blocking argument */
    cl_event *evp;    /* the real call's event argument */
    bool measured;    /* counted in the profile: NATIVE, CW, and FORWARD
                       * with a flag that is neither CL_FALSE nor CL_TRUE */
    cl_int err;       /* a map's errcode_ret */
    cl_event own;     /* CW: the wrapper's own event */
    cl_uint nw;       /* CW: the wait list, for gate.h */
    const cl_event *wl;
    cwp_span span;     /* NATIVE, CW */
    cwp_tracked track; /* FORWARD */
} blocking_call;

static void begin(blocking_call *b, enum cwp_call k, cl_command_queue q, cl_bool blocking,
                  cl_uint nw, const cl_event *wl, cl_event *event) {
    cwp_start();
    b->k = k;
    b->blocking = blocking;
    b->err = CL_SUCCESS;
    b->own = NULL;
    bool interposed = cwp_cfg.active && !cwp_inside_cw;
    b->measured = interposed && blocking != CL_FALSE;
    if (blocking != CL_TRUE || !interposed) {
        b->way = FORWARD;
        cwp_track_begin(&b->track, q, nw, wl, event);
        b->evp = b->track.evp;
        if (b->measured) {
            b->span = cwp_span_begin(k);
            cwp_span_subject(&b->span, q, NULL, 0);
        }
        return;
    }
    if (cwp_native_blocking()) {
        b->way = NATIVE;
        b->evp = event;
    } else {
        b->way = CW;
        b->blocking = CL_FALSE;
        b->evp = event ? event : &b->own;
    }
    b->nw = nw;
    b->wl = wl;
    b->span = cwp_span_begin(k);
    cwp_span_subject(&b->span, q, NULL, 0);
}

/* After the real call returned `err`: the code the wrapper returns. */
static cl_int end(blocking_call *b, cl_int err) {
    switch (b->way) {
    case FORWARD:
        err = cwp_track_end(&b->track, err);
        if (!b->measured)
            return err;
        break;
    case CW:
        /* The wait's verdict is not the call's (see the top). */
        if (err == CL_SUCCESS) {
            cwp_gate_note(*b->evp, b->nw, b->wl);
            (void)cwp_wait_one(b->k, *b->evp);
            cwp_trace_device(*b->evp);
        }
        cwp_settle_release(b->own);
        break;
    case NATIVE:
        break;
    }
    cwp_span_end(b->k, b->span, err);
    return err;
}

/* The same for a map, whose real call returned `p` and set b->err: the
 * pointer goes back to the program as the enqueue returned it. */
static void *map_end(blocking_call *b, void *p, cl_int *errcode_ret) {
    cl_int err = end(b, b->err);
    if (errcode_ret)
        *errcode_ret = err;
    return p;
}

CWP_EXPORT cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                      size_t offset, size_t size, void *ptr, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    blocking_call b;
    begin(&b, CWP_READ_BUFFER, q, blocking, nw, wl, event);
    return end(&b, cwp_real.read_buffer(q, buf, b.blocking, offset, size, ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                       size_t offset, size_t size, const void *ptr, cl_uint nw,
                                       const cl_event *wl, cl_event *event) {
    blocking_call b;
    begin(&b, CWP_WRITE_BUFFER, q, blocking, nw, wl, event);
    return end(&b, cwp_real.write_buffer(q, buf, b.blocking, offset, size, ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueReadBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                          const size_t *bo, const size_t *ho, const size_t *r,
                                          size_t brp, size_t bsp, size_t hrp, size_t hsp, void *ptr,
                                          cl_uint nw, const cl_event *wl, cl_event *event) {
    blocking_call b;
    begin(&b, CWP_READ_BUFFER_RECT, q, blocking, nw, wl, event);
    return end(&b, cwp_real.read_buffer_rect(q, buf, b.blocking, bo, ho, r, brp, bsp, hrp, hsp, ptr,
                                             nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                           const size_t *bo, const size_t *ho, const size_t *r,
                                           size_t brp, size_t bsp, size_t hrp, size_t hsp,
                                           const void *ptr, cl_uint nw, const cl_event *wl,
                                           cl_event *event) {
    blocking_call b;
    begin(&b, CWP_WRITE_BUFFER_RECT, q, blocking, nw, wl, event);
    return end(&b, cwp_real.write_buffer_rect(q, buf, b.blocking, bo, ho, r, brp, bsp, hrp, hsp,
                                              ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueReadImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                     const size_t *origin, const size_t *region, size_t row_pitch,
                                     size_t slice_pitch, void *ptr, cl_uint nw, const cl_event *wl,
                                     cl_event *event) {
    blocking_call b;
    begin(&b, CWP_READ_IMAGE, q, blocking, nw, wl, event);
    return end(&b, cwp_real.read_image(q, img, b.blocking, origin, region, row_pitch, slice_pitch,
                                       ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueWriteImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                      const size_t *origin, const size_t *region, size_t row_pitch,
                                      size_t slice_pitch, const void *ptr, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    blocking_call b;
    begin(&b, CWP_WRITE_IMAGE, q, blocking, nw, wl, event);
    return end(&b, cwp_real.write_image(q, img, b.blocking, origin, region, row_pitch, slice_pitch,
                                        ptr, nw, wl, b.evp));
}

CWP_EXPORT void *clEnqueueMapBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                    cl_map_flags flags, size_t offset, size_t size, cl_uint nw,
                                    const cl_event *wl, cl_event *event, cl_int *errcode_ret) {
    blocking_call b;
    begin(&b, CWP_MAP_BUFFER, q, blocking, nw, wl, event);
    void *p = cwp_real.map_buffer(q, buf, b.blocking, flags, offset, size, nw, wl, b.evp, &b.err);
    return map_end(&b, p, errcode_ret);
}

CWP_EXPORT void *clEnqueueMapImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                   cl_map_flags flags, const size_t *origin, const size_t *region,
                                   size_t *row_pitch, size_t *slice_pitch, cl_uint nw,
                                   const cl_event *wl, cl_event *event, cl_int *errcode_ret) {
    blocking_call b;
    begin(&b, CWP_MAP_IMAGE, q, blocking, nw, wl, event);
    void *p = cwp_real.map_image(q, img, b.blocking, flags, origin, region, row_pitch, slice_pitch,
                                 nw, wl, b.evp, &b.err);
    return map_end(&b, p, errcode_ret);
}

CWP_EXPORT cl_int clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking, void *dst,
                                     const void *src, size_t size, cl_uint nw, const cl_event *wl,
                                     cl_event *event) {
    if (!CWP_START_WITH(svm_memcpy))
        return CL_INVALID_OPERATION;
    blocking_call b;
    begin(&b, CWP_SVM_MEMCPY, q, blocking, nw, wl, event);
    return end(&b, cwp_real.svm_memcpy(q, b.blocking, dst, src, size, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueSVMMap(cl_command_queue q, cl_bool blocking, cl_map_flags flags,
                                  void *svm_ptr, size_t size, cl_uint nw, const cl_event *wl,
                                  cl_event *event) {
    if (!CWP_START_WITH(svm_map))
        return CL_INVALID_OPERATION;
    blocking_call b;
    begin(&b, CWP_SVM_MAP, q, blocking, nw, wl, event);
    return end(&b, cwp_real.svm_map(q, b.blocking, flags, svm_ptr, size, nw, wl, b.evp));
}
