/* SPDX-License-Identifier: MIT */
/* cw layer 6.0 (internal): which platform an event is on. */
#ifndef CW_PLATFORM_H
#define CW_PLATFORM_H

#include <CL/cl.h>

/* The most platforms told apart (more are asked of each event). */
#define CW__PLATFORMS_MAX 8u

/*
 * The platform of `event`; NULL when it cannot be told (a failed query).
 * With one platform in the process (clGetPlatformIDs, asked once) this
 * makes no OpenCL call; with more it tells it by the event's first word,
 * the ICD dispatch table's pointer, where that is its platform's alone and
 * once one event confirmed it, else asks the event for its context,
 * devices and platform (platform handles live as long as the process).
 */
cl_platform_id cw__platform_of(cl_event event);

#endif
