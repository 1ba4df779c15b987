# SPDX-License-Identifier: MIT
"""The Python binding on PoCL through pyopencl: blocking waits, asyncio awaits
through the notifier's descriptor, failures and timeouts."""

import asyncio
import os
import random
import threading
import time

import numpy as np
import pyopencl as cl
import pytest

import cw

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


@pytest.fixture(scope="module")
def cl_env():
    want = platform_name().lower()
    platforms = [p for p in cl.get_platforms() if want in p.name.lower() and p.get_devices()]
    assert platforms, "no OpenCL platform matching %r (OCL_ICD_VENDORS?)" % want
    ctx = cl.Context(devices=platforms[0].get_devices()[:1])
    queue = cl.CommandQueue(ctx)
    prog = cl.Program(ctx, AXPY).build()
    return ctx, queue, prog


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


def test_library_and_strategies():
    assert cw.library_path()
    names = cw.strategies()
    assert names[0] == "default" and "cooperative" in names and "blocking" in names


@pytest.mark.parametrize("strategy", cw.strategies())
def test_wait_kernel_result(cl_env, strategy):
    k = Axpy(cl_env)
    for _ in range(3):
        ev = k.enqueue()
        assert cw.wait(ev, strategy=strategy) == COMPLETE
    k.check()


def test_wait_async_kernel_result(cl_env):
    ctx = cl_env[0]
    k = Axpy(cl_env)

    async def main():
        gate = cl.UserEvent(ctx)
        ev = k.enqueue(wait_for=[gate])  # not flushed: the watch flushes it
        asyncio.get_running_loop().call_later(0.02, gate.set_status, COMPLETE)
        return await cw.wait_async(ev)

    assert asyncio.run(main()) == COMPLETE
    k.check()


def test_concurrent_awaits_on_one_loop(cl_env):
    ctx = cl_env[0]
    n = 50
    events = [cl.UserEvent(ctx) for _ in range(n)]
    ticks = [0]
    seen_pending = []

    def complete_in_random_order():
        while ticks[0] < 5:  # only once the loop has shown it is free
            time.sleep(0.001)
        seen_pending.append(cw._loop_notifiers and next(iter(cw._loop_notifiers.values())).pending)
        order = list(range(n))
        random.shuffle(order)
        for i in order:
            events[i].set_status(COMPLETE)

    async def ticker(done):
        while not done.is_set():
            ticks[0] += 1
            await asyncio.sleep(0.001)

    async def main():
        done = asyncio.Event()
        tick = asyncio.create_task(ticker(done))
        th = threading.Thread(target=complete_in_random_order)
        th.start()
        results = await asyncio.gather(*(cw.wait_async(e) for e in events))
        done.set()
        await tick
        await asyncio.get_running_loop().run_in_executor(None, th.join)
        return results

    assert asyncio.run(main()) == [COMPLETE] * n
    # All fifty were pending at once on the one shared notifier, with the loop ticking.
    assert seen_pending == [n]
    assert ticks[0] >= 5
    assert not cw._loop_notifiers  # closed with its last await


def test_failed_event_raises(cl_env):
    ctx = cl_env[0]
    ev = cl.UserEvent(ctx)
    ev.set_status(-5)
    with pytest.raises(cw.CommandFailed) as e:
        cw.wait(ev)
    assert e.value.status == -5

    # Failing while the waiter sleeps: PoCL fires no callback; the status check reports it.
    ev = cl.UserEvent(ctx)
    t = set_later(ev, -9, 0.02)
    with pytest.raises(cw.CommandFailed) as e:
        cw.wait(ev, check_interval=0.002)
    assert e.value.status == -9
    t.join()


def test_failed_event_raises_async(cl_env):
    ctx = cl_env[0]

    async def main():
        ev = cl.UserEvent(ctx)
        asyncio.get_running_loop().call_later(0.02, ev.set_status, -5)
        n = cw.Notifier(check_interval=0.002)
        try:
            with pytest.raises(cw.CommandFailed) as e:
                await n.wait(ev)
            assert e.value.status == -5
            # The shared per-loop notifier (default check interval) reports it too.
            with pytest.raises(cw.CommandFailed) as e:
                await cw.wait_async(ev)
            assert e.value.status == -5
            assert n.pending == 0
        finally:
            n.close()

    asyncio.run(main())


def test_timeout(cl_env):
    ctx = cl_env[0]
    ev = cl.UserEvent(ctx)
    with pytest.raises(cw.Timeout) as e:
        cw.wait(ev, timeout=0.02)
    assert isinstance(e.value, TimeoutError)

    async def main():
        with pytest.raises(cw.Timeout):
            await cw.wait_async(ev, timeout=0.02)
        assert not cw._loop_notifiers  # the timed-out watch was cancelled and closed
        asyncio.get_running_loop().call_later(0.01, ev.set_status, COMPLETE)
        return await cw.wait_async(ev, timeout=10)

    assert asyncio.run(main()) == COMPLETE
    assert cw.wait(ev, timeout=0.02) == COMPLETE


def test_cancelled_await_leaves_nothing(cl_env):
    ctx = cl_env[0]
    ev = cl.UserEvent(ctx)

    async def main():
        n = cw.Notifier()
        task = asyncio.create_task(n.wait(ev))
        await asyncio.sleep(0.01)
        assert n.pending == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert n.pending == 0
        ev.set_status(COMPLETE)
        n.close()

    asyncio.run(main())


def test_bad_arguments(cl_env):
    ctx = cl_env[0]
    ev = cl.UserEvent(ctx)
    with pytest.raises(TypeError):
        cw.wait(None)
    with pytest.raises(cw.InvalidArgument):
        cw.wait(ev, strategy="no-such")
    with pytest.raises(cw.InvalidArgument):
        cw.wait(ev, timeout=-1)
    # blocking honours a timeout (it waits as "pthread" then): no longer Unsupported
    with pytest.raises(cw.Timeout):
        cw.wait(ev, strategy="blocking", timeout=0.001)
    ev.set_status(COMPLETE)
    assert cw.wait(ev, strategy="blocking") == COMPLETE


def test_readme_example_runs():
    import pathlib
    import subprocess
    import sys

    example = pathlib.Path(__file__).resolve().parents[1] / "example.py"
    out = subprocess.run([sys.executable, str(example)], env=dict(os.environ), check=True,
                         capture_output=True, text=True, timeout=60).stdout
    assert "kernels ok; failed event raised CommandFailed, status -5" in out
