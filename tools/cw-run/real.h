/* SPDX-License-Identifier: MIT */
/*
 * The next level's entry points that the wrappers forward to: every function
 * the preload interposes, and those cw and the wrappers call themselves.
 * Preloaded, they are found once with dlsym(RTLD_NEXT, ...), i.e. the
 * loader's (preload.c says why RTLD_NEXT reaches it); as an OpenCL layer
 * they are the entries of the dispatch table below it (layer.c). The
 * preload's sources are built for OpenCL 3.0's headers (CMakeLists.txt),
 * which declare the SVM calls.
 */
#ifndef CWP_REAL_H
#define CWP_REAL_H

#include <CL/cl.h>

#include <stdbool.h>

/* X(field, function): the entry points of an OpenCL 1.2 loader. */
#define CWP_REAL_1_2(X)                                                                            \
    X(wait_for_events, clWaitForEvents)                                                            \
    X(finish, clFinish)                                                                            \
    X(release_queue, clReleaseCommandQueue)                                                        \
    X(set_user_event_status, clSetUserEventStatus)                                                 \
    X(read_buffer, clEnqueueReadBuffer)                                                            \
    X(write_buffer, clEnqueueWriteBuffer)                                                          \
    X(read_buffer_rect, clEnqueueReadBufferRect)                                                   \
    X(write_buffer_rect, clEnqueueWriteBufferRect)                                                 \
    X(read_image, clEnqueueReadImage)                                                              \
    X(write_image, clEnqueueWriteImage)                                                            \
    X(map_buffer, clEnqueueMapBuffer)                                                              \
    X(map_image, clEnqueueMapImage)                                                                \
    X(ndrange, clEnqueueNDRangeKernel)                                                             \
    X(task, clEnqueueTask)                                                                         \
    X(copy_buffer, clEnqueueCopyBuffer)                                                            \
    X(copy_buffer_rect, clEnqueueCopyBufferRect)                                                   \
    X(fill_buffer, clEnqueueFillBuffer)                                                            \
    X(copy_image, clEnqueueCopyImage)                                                              \
    X(fill_image, clEnqueueFillImage)                                                              \
    X(copy_image_to_buffer, clEnqueueCopyImageToBuffer)                                            \
    X(copy_buffer_to_image, clEnqueueCopyBufferToImage)                                            \
    X(unmap, clEnqueueUnmapMemObject)                                                              \
    X(migrate, clEnqueueMigrateMemObjects)                                                         \
    X(marker, clEnqueueMarkerWithWaitList)                                                         \
    X(barrier, clEnqueueBarrierWithWaitList)

/* The OpenCL 2.0 SVM entry points: NULL when the loader has none, and then
 * a program has no way to call them either, so their wrappers only guard. */
#define CWP_REAL_2_0(X)                                                                            \
    X(svm_memcpy, clEnqueueSVMMemcpy)                                                              \
    X(svm_map, clEnqueueSVMMap)                                                                    \
    X(svm_memfill, clEnqueueSVMMemFill)                                                            \
    X(svm_unmap, clEnqueueSVMUnmap)

/* The calls cw and the wrappers make themselves, not interposed: layer.c
 * defines them in this object (hidden) to go through this table, so that as
 * a layer they reach the level below it, as the wrappers' real calls do,
 * never the loader's top of the chain again. */
#define CWP_REAL_OWN(X)                                                                            \
    X(get_event_info, clGetEventInfo)                                                              \
    X(set_event_callback, clSetEventCallback)                                                      \
    X(flush, clFlush)                                                                              \
    X(retain_event, clRetainEvent)                                                                 \
    X(release_event, clReleaseEvent)                                                               \
    X(get_queue_info, clGetCommandQueueInfo)                                                       \
    X(get_device_info, clGetDeviceInfo)

#define CWP_REAL_FIELD(field, function) __typeof__(function) *field;

/* Written by cwp_real_load, under the start-up's pthread_once (preload.h),
 * before any wrapper reads it; as a layer, written again by clInitLayer
 * (layer.c) before the loader can call a wrapper, and never after. */
extern struct cwp_real {
    CWP_REAL_1_2(CWP_REAL_FIELD)
    CWP_REAL_OWN(CWP_REAL_FIELD)
    CWP_REAL_2_0(CWP_REAL_FIELD)
} cwp_real;

#undef CWP_REAL_FIELD

/* Look every entry point up. False when one of OpenCL 1.2's (or of
 * CWP_REAL_OWN) is missing:
 * the preload then forwards what it can and interposes nothing. */
bool cwp_real_load(void);

#endif
