/* SPDX-License-Identifier: MIT */
#ifndef CW_TEST_CLSHIM_H
#define CW_TEST_CLSHIM_H
#include <stdatomic.h>
#include <CL/cl.h>

/* A handle the shim rejects with CL_INVALID_EVENT. */
extern const cl_event clshim_bad_event;
/* clFlush calls made by the calling thread so far. */
extern _Thread_local unsigned clshim_thread_flushes;
/* clFlush calls made in the process so far. */
extern atomic_ulong clshim_flushes;
/* clWaitForEvents calls made in the process so far, counted on entry. */
extern atomic_ulong clshim_driver_waits;
/* Successful clSetEventCallback calls in the process so far. */
extern atomic_ulong clshim_callbacks_registered;
/* Non-zero: what clGetDeviceInfo reports for CL_DEVICE_TYPE. */
extern _Atomic cl_device_type clshim_device_type;
#endif
