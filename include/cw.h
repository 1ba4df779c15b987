/*
 * cw: waiting on OpenCL events without burning a core and without
 * lock-holder preemption. One header per layer of the design:
 *   relax.h -> spinlock.h -> parker.h -> cond.h -> completion.h -> wait.h
 * and beside wait.h: waitmany.h (wait-all / wait-any on one parker) and
 * notify.h (completions that signal an event loop's descriptor); stats.h
 * (counters of what the waits did) cuts across layer 6.
 */
#ifndef CW_H
#define CW_H

#include "cw/common.h"
#include "cw/relax.h"
#include "cw/spinlock.h"
#include "cw/parker.h"
#include "cw/cond.h"
#include "cw/completion.h"
#include "cw/wait.h"
#include "cw/waitmany.h"
#include "cw/notify.h"
#include "cw/stats.h"

#define CW_VERSION_MAJOR 0
#define CW_VERSION_MINOR 2
#define CW_VERSION_PATCH 0

#endif
