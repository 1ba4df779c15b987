#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small pyopencl program, written the way pyopencl users write them:
Event.wait(), queue.finish() and blocking enqueue_copy in both directions.
It prints its results (sums and checks), so that its output can be
compared natively and under cw-run. Exit status 1 if a result is wrong."""
import sys

import numpy as np
import pyopencl as cl

SRC = """
__kernel void scale_add(__global const float *a, __global const float *b,
                        __global float *out, float k) {
    size_t i = get_global_id(0);
    out[i] = k * a[i] + b[i];
}
__kernel void square(__global int *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * x[i];
}
"""


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    n = 1 << 16
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2.0, dtype=np.float32)
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY, a.nbytes)
    b_buf = cl.Buffer(ctx, mf.READ_ONLY, b.nbytes)
    out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    # Blocking host-to-device copies (is_blocking defaults to True).
    cl.enqueue_copy(queue, a_buf, a)
    cl.enqueue_copy(queue, b_buf, b)
    failures = 0
    out = np.empty_like(a)
    for k in (0.5, 2.0, 3.0):
        ev = prg.scale_add(queue, (n,), None, a_buf, b_buf, out_buf, np.float32(k))
        ev.wait()
        cl.enqueue_copy(queue, out, out_buf)  # blocking device-to-host copy
        ok = np.array_equal(out, np.float32(k) * a + b)
        failures += not ok
        print(f"scale_add k={k}: sum={float(out.astype(np.float64).sum()):.1f} "
              f"{'ok' if ok else 'WRONG'}")
    x = np.arange(1000, dtype=np.int32)
    x_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    for _ in range(3):
        prg.square(queue, x.shape, None, x_buf)
        queue.finish()
    got = np.empty_like(x)
    ev = cl.enqueue_copy(queue, got, x_buf, is_blocking=False)
    ev.wait()
    want = x.astype(np.int64) ** 8 % (1 << 32)
    want = np.where(want >= 1 << 31, want - (1 << 32), want).astype(np.int32)
    ok = np.array_equal(got, want)
    failures += not ok
    print(f"square x3: checksum={int(got.astype(np.int64).sum())} {'ok' if ok else 'WRONG'}")
    # Many short waits, as a training loop or a solver makes them.
    acc = 0
    for i in range(200):
        ev = prg.square(queue, (16,), None, x_buf)
        ev.wait()
        acc += 1
    queue.finish()
    print(f"short waits: {acc}")
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
