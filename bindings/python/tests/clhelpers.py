# SPDX-License-Identifier: MIT
"""OpenCL set-up shared by the binding's tests: the platform the C tests use,
an axpy kernel whose result is checked, and a timed completion helper."""

import os
import threading

import numpy as np
import pyopencl as cl

COMPLETE = cl.command_execution_status.COMPLETE

AXPY = """
__kernel void axpy(float a, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
"""


def platform_name():
    # As the C tests pick it (bench/clhost.h): $CW_PLATFORM, else PoCL.
    return os.environ.get("CW_PLATFORM") or "Portable Computing Language"


class Axpy:
    def __init__(self, cl_env, n=1 << 16):
        self.ctx, self.queue, prog = cl_env
        self.kernel = cl.Kernel(prog, "axpy")
        self.x = np.arange(n, dtype=np.float32)
        self.y = np.ones(n, dtype=np.float32)
        mf = cl.mem_flags
        self.xbuf = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=self.x)
        self.ybuf = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=self.y)
        self.launches = 0

    def enqueue(self, a=2.0, wait_for=None):
        self.kernel.set_args(np.float32(a), self.xbuf, self.ybuf)
        self.launches += 1
        return cl.enqueue_nd_range_kernel(self.queue, self.kernel, self.y.shape, None,
                                          wait_for=wait_for)

    def check(self, a=2.0):
        out = np.empty_like(self.y)
        cl.enqueue_copy(self.queue, out, self.ybuf)  # blocking read
        np.testing.assert_allclose(out, 1.0 + self.launches * a * self.x, rtol=1e-5)



def set_later(event, status, delay):
    t = threading.Timer(delay, event.set_status, (status,))
    t.start()
    return t
