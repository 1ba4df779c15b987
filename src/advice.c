/* SPDX-License-Identifier: MIT */
/* Layer 6.3, beside cw_wait: how it would wait on a queue now (cw/advice.h). */
#include "cw/advice.h"
#include "driver.h"
#include "estimate.h"
#include "facts.h"
#include "strategy.h"

#include <stdbool.h>
#include <string.h>

/* The platform's record of a queue: its device's platform (two queries). */
static int driver_of_queue(cl_command_queue queue, cw__driver **d) {
    cl_device_id dev = NULL;
    cl_platform_id p = NULL;
    if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS || !p)
        return CW_ERR_OPENCL;
    *d = cw__driver_of_platform(p);
    return CW_OK;
}

/*
 * Whether auto's wait under plan p, on a command of the queue keyed `key`
 * that p expects to last p->expected_ns, is the driver's own
 * clWaitForEvents, decided for good (after its first look): asked of the
 * same policy with the same facts as cw_wait's, without waiting.
 */
static int auto_settled_on_driver(cw__plan *p, cl_command_queue queue, bool *out) {
    *out = false;
    if (p->flags & CW_WAIT_POLL)
        return CW_OK;
    int rc = driver_of_queue(queue, &p->driver);
    if (rc != CW_OK)
        return rc;
    cw__facts f;
    cw__facts_of(p, &f);
    cw__choice c;
    cw__policy_choose(&f, &c);
    *out = f.driver_wait_allowed && c.settled;
    return CW_OK;
}

int cw_advice_get(cl_command_queue queue, const cw_wait_options *options, cw_advice *out,
                  size_t size) {
    if (!queue || !out || size == 0)
        return CW_ERR_INVALID_ARGUMENT;
    cw__plan p;
    int rc = cw__plan_make(options, &p);
    if (rc != CW_OK)
        return rc;
    cw_advice a;
    memset(&a, 0, sizeof a);
    p.queue_key = (uintptr_t)queue;
    p.expected_ns = cw__estimate_get(p.queue_key);
    a.expected_ns = p.expected_ns;
    bool driver = p.bare_block;
    if (p.row->spin == CW__SPIN_AUTO) {
        rc = auto_settled_on_driver(&p, queue, &driver);
        if (rc != CW_OK)
            return rc;
    }
    a.driver_wait = driver;
    memcpy(out, &a, size < sizeof a ? size : sizeof a);
    return CW_OK;
}

int cw_advice_waited(cl_command_queue queue, uint64_t waited_ns) {
    if (!queue)
        return CW_ERR_INVALID_ARGUMENT;
    /* As cw_wait leaves out its own driver waits that found the command as
     * good as done: such a length would cut the estimate for nothing. */
    if (waited_ns >= CW__EST_SETTLED_DONE_NS)
        cw__estimate_put((uintptr_t)queue, waited_ns, true);
    return CW_OK;
}
