/*
 * cw: waiting on OpenCL events without burning a core and without
 * lock-holder preemption. One header per layer of the design:
 *   relax.h -> spinlock.h -> parker.h -> cond.h -> completion.h -> wait.h
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

#define CW_VERSION_MAJOR 0
#define CW_VERSION_MINOR 1
#define CW_VERSION_PATCH 0

#endif
