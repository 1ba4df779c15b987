/* SPDX-License-Identifier: MIT */
/*
 * cw: wait on OpenCL events without burning a core and without lock-holder
 * preemption. The whole public API:
 *   cw/common.h    error codes, cw_strerror, deadlines, cw_version
 *   cw/version.h   CW_VERSION_* of these headers
 *   cw/parker.h    how a waiter sleeps: the seam for task runtimes
 *   cw/wait.h      cw_wait, its options and strategies
 *   cw/waitmany.h  cw_wait_all, cw_wait_any
 *   cw/notify.h    completions that signal an event loop's descriptor
 *   cw/stats.h     counters of what the waits did
 *   cw/learned.h   what auto learned, as text a later process starts from
 *   cw/advice.h    how cw_wait would wait on a queue now
 * The headers include <CL/cl.h> and leave CL_TARGET_OPENCL_VERSION to the
 * program, as any OpenCL header should. They are C11 and C++11 and later.
 */
#ifndef CW_H
#define CW_H

#include "cw/common.h"
#include "cw/version.h"
#include "cw/parker.h"
#include "cw/wait.h"
#include "cw/waitmany.h"
#include "cw/notify.h"
#include "cw/stats.h"
#include "cw/learned.h"
#include "cw/advice.h"

#endif
