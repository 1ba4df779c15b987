/* SPDX-License-Identifier: MIT */
/* cw: how cw_wait would wait on a command queue now, for a caller that can wait another way. */
#ifndef CW_ADVICE_H
#define CW_ADVICE_H

#include <stddef.h>
#include <stdint.h>
#include "cw/common.h"
#include <CL/cl.h>
#include "cw/wait.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What cw_advice_get answers. Later releases may append fields:
 * cw_advice_get fills the first `size` bytes only.
 */
typedef struct cw_advice {
    /* The wait cw expects on a command of the queue now, ns: its moving
     * estimate of the waits on the queue (fed by cw_wait's waits on its
     * commands and by cw_advice_waited); 0 when it has none yet. */
    uint64_t expected_ns;
    /* Non-zero: cw_wait with these options, on a command of this queue,
     * would now be served by the driver's own clWaitForEvents, after at
     * most one status read (CW_STRATEGY_BLOCKING without a timeout; or auto,
     * where it has settled on the driver's own wait for a wait of
     * expected_ns on the queue's platform, cw_wait(3)). A caller that
     * would make a command only to wait on it (a marker, for clFinish)
     * waits cheaper in the driver's own call (clFinish) then. 0: a wait of
     * cw's, or auto still timing both ways on this platform, whose trials
     * are made by cw_wait's waits. */
    uint32_t driver_wait;
} cw_advice;

/*
 * How cw_wait with `options` (NULL: the defaults) would wait on a command
 * of `queue` now: fills the first `size` bytes of *out (pass sizeof *out).
 * A hint only, read from what cw knows at the call: a wait that follows
 * may decide otherwise, as the queue's estimate and what cw learned of the
 * platform change. Under auto it asks OpenCL for the queue's device and
 * platform (two queries); under the other strategies it makes no OpenCL
 * call. Returns CW_OK; CW_ERR_INVALID_ARGUMENT for a NULL `queue` or
 * `out`, a `size` of 0, or options cw_wait would reject; CW_ERR_OPENCL
 * when OpenCL does not tell the queue's device or platform (a bad queue).
 * Any thread, at any time.
 */
CW_API int cw_advice_get(cl_command_queue queue, const cw_wait_options *options, cw_advice *out,
                         size_t size);

/*
 * Tell cw that the caller waited `waited_ns` for commands of `queue` in a
 * way of its own (the driver's clFinish or clWaitForEvents, where
 * cw_advice_get said driver_wait): it feeds the queue's estimate as a
 * wait of cw_wait's would, so that the advice follows the queue's waits
 * while cw makes none of them. A wait that found its commands as good as
 * done (under 10 µs, as cw_wait judges its own waits in the driver's
 * wait) tells nothing of the queue and is left out.
 * `queue` is only a key: it is not dereferenced, and no OpenCL call is
 * made. Returns CW_OK; CW_ERR_INVALID_ARGUMENT for a NULL `queue`. Any
 * thread, at any time.
 */
CW_API int cw_advice_waited(cl_command_queue queue, uint64_t waited_ns);

#ifdef __cplusplus
}
#endif
#endif
