# SPDX-License-Identifier: MIT
"""Await OpenCL kernels on asyncio with cw (the README's example; the tests run it)."""
import asyncio

import numpy as np
import pyopencl as cl

import cw


async def main():
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prog = cl.Program(ctx, "__kernel void twice(__global float *x)"
                           "{ x[get_global_id(0)] *= 2.0f; }").build()
    x = np.arange(1 << 20, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    events = [prog.twice(queue, x.shape, None, buf) for _ in range(3)]

    # All three awaits share one file descriptor on this loop; no thread waits.
    await asyncio.gather(*(cw.wait_async(ev, timeout=10) for ev in events))
    out = np.empty_like(x)
    cl.enqueue_copy(queue, out, buf)
    assert (out == 8 * x).all()

    gate = cl.UserEvent(ctx)
    gate.set_status(-5)  # a failed command: no callback on PoCL, still reported
    try:
        await cw.wait_async(gate)
    except cw.CommandFailed as e:
        print("kernels ok; failed event raised CommandFailed, status", e.status)


asyncio.run(main())
