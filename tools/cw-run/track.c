/* SPDX-License-Identifier: MIT */
/* The enqueues recorded for clFinish (track.h), and the queue's release,
 * which forgets its record. */
#include "track.h"

#include "gate.h"
#include "lastcmd.h"
#include "preload.h"
#include "real.h"

void cwp_track_begin(cwp_tracked *t, cl_command_queue queue, cl_uint nw, const cl_event *wl,
                     cl_event *event) {
    cwp_start();
    t->queue = queue;
    t->nw = nw;
    t->wl = wl;
    t->own = NULL;
    /* With --strategy blocking clFinish is the program's own call. */
    t->on = cwp_cfg.active && !cwp_inside_cw && !cwp_native_blocking();
    t->evp = t->on && !event ? &t->own : event;
}

cl_int cwp_track_end(const cwp_tracked *t, cl_int err) {
    if (!t->on || err != CL_SUCCESS || !*t->evp)
        return err;
    cwp_gate_note(*t->evp, t->nw, t->wl);
    /* The table takes a reference: the preload's own, or one more on the
     * program's event. */
    if (t->evp == &t->own || clRetainEvent(*t->evp) == CL_SUCCESS)
        cwp_last_put(t->queue, *t->evp);
    return err;
}

/* The queue's handle may be reused once it is released: forget it first,
 * and drop the reference to its last command, which may hold the queue. */
CWP_EXPORT cl_int clReleaseCommandQueue(cl_command_queue queue) {
    cwp_start();
    if (cwp_cfg.active && !cwp_inside_cw)
        cwp_last_forget(queue);
    return cwp_real.release_queue(queue);
}

CWP_EXPORT cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                         const size_t *offset, const size_t *global,
                                         const size_t *local, cl_uint nw, const cl_event *wl,
                                         cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.ndrange(q, k, dim, offset, global, local, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *wl,
                                cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.task(q, k, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t so,
                                      size_t d_o, size_t size, cl_uint nw, const cl_event *wl,
                                      cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.copy_buffer(q, src, dst, so, d_o, size, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst,
                                          const size_t *so, const size_t *d_o, const size_t *r,
                                          size_t srp, size_t ssp, size_t drp, size_t dsp,
                                          cl_uint nw, const cl_event *wl, cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(
        &t, cwp_real.copy_buffer_rect(q, src, dst, so, d_o, r, srp, ssp, drp, dsp, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem buf, const void *pattern,
                                      size_t pattern_size, size_t offset, size_t size, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(
        &t, cwp_real.fill_buffer(q, buf, pattern, pattern_size, offset, size, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so,
                                     const size_t *d_o, const size_t *r, cl_uint nw,
                                     const cl_event *wl, cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.copy_image(q, src, dst, so, d_o, r, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueFillImage(cl_command_queue q, cl_mem img, const void *color,
                                     const size_t *origin, const size_t *region, cl_uint nw,
                                     const cl_event *wl, cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.fill_image(q, img, color, origin, region, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                             const size_t *origin, const size_t *region,
                                             size_t offset, cl_uint nw, const cl_event *wl,
                                             cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(
        &t, cwp_real.copy_image_to_buffer(q, src, dst, origin, region, offset, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                             size_t offset, const size_t *origin,
                                             const size_t *region, cl_uint nw, const cl_event *wl,
                                             cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(
        &t, cwp_real.copy_buffer_to_image(q, src, dst, offset, origin, region, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem mem, void *ptr, cl_uint nw,
                                          const cl_event *wl, cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.unmap(q, mem, ptr, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint n, const cl_mem *mems,
                                             cl_mem_migration_flags flags, cl_uint nw,
                                             const cl_event *wl, cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.migrate(q, n, mems, flags, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nw, const cl_event *wl,
                                              cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.marker(q, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint nw, const cl_event *wl,
                                               cl_event *event) {
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.barrier(q, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueSVMMemFill(cl_command_queue q, void *ptr, const void *pattern,
                                      size_t pattern_size, size_t size, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    if (!CWP_START_WITH(svm_memfill))
        return CL_INVALID_OPERATION;
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t,
                         cwp_real.svm_memfill(q, ptr, pattern, pattern_size, size, nw, wl, t.evp));
}

CWP_EXPORT cl_int clEnqueueSVMUnmap(cl_command_queue q, void *ptr, cl_uint nw, const cl_event *wl,
                                    cl_event *event) {
    if (!CWP_START_WITH(svm_unmap))
        return CL_INVALID_OPERATION;
    cwp_tracked t;
    cwp_track_begin(&t, q, nw, wl, event);
    return cwp_track_end(&t, cwp_real.svm_unmap(q, ptr, nw, wl, t.evp));
}
