# SPDX-License-Identifier: MIT
"""The Python binding on PoCL through pyopencl: blocking waits, asyncio awaits
through the notifier's descriptor, failures and timeouts."""

import asyncio
import os
import random
import threading
import time

import pyopencl as cl
import pytest

import cw
from clhelpers import COMPLETE, Axpy, set_later


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


def test_cancelled_wait_async_leaves_nothing(cl_env):
    ctx = cl_env[0]
    a, b = cl.UserEvent(ctx), cl.UserEvent(ctx)

    async def main():
        first = asyncio.create_task(cw.wait_async(a))
        second = asyncio.create_task(cw.wait_async(b))
        await asyncio.sleep(0.01)
        n = cw._loop_notifiers[asyncio.get_running_loop()]
        assert n.pending == 2
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert n.pending == 1  # its watch went; the other await keeps the notifier
        b.set_status(COMPLETE)
        assert await second == COMPLETE
        assert not cw._loop_notifiers  # the last await closed the shared notifier
        a.set_status(COMPLETE)

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


def test_readme_example_runs(tmp_path):
    import pathlib
    import subprocess
    import sys

    # run_path, from a scratch directory, with the tests' cw first on the
    # path: the example imports the same cw as the tests (the installed
    # package in CI), not a cw beside the script.
    example = pathlib.Path(__file__).resolve().parents[1] / "example.py"
    code = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(pathlib.Path(cw.__file__).resolve().parents[1])
    p = subprocess.run([sys.executable, "-c", code, str(example)], env=env,
                       capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert "kernels ok; failed event raised CommandFailed, status -5" in p.stdout


def test_notifier_holds_a_stream_of_completions(cl_env):
    # After a delivery that leaves watches pending, the notifier delivers
    # what lands during its hold together at the hold's end; the first
    # completion after a quiet spell comes at once; nothing is held when
    # nothing is pending. The hold here is long (0.6 s) so that a loaded
    # machine cannot blur the order; the test checks order, not speed.
    ctx = cl_env[0]
    hold = 0.6

    async def main():
        loop = asyncio.get_running_loop()
        evs = [cl.UserEvent(ctx) for _ in range(3)]
        with cw.Notifier(hold=hold) as n:
            futs = [n.watch(e)[1] for e in evs]
            start = loop.time()
            evs[0].set_status(COMPLETE)
            assert await futs[0] == COMPLETE
            first = loop.time() - start
            assert n._holding  # two watches still pending
            evs[1].set_status(COMPLETE)
            evs[2].set_status(COMPLETE)
            await asyncio.sleep(0.05)
            # Landed inside the hold: not delivered before it ends.
            assert not futs[1].done() and not futs[2].done()
            assert await asyncio.gather(*futs[1:]) == [COMPLETE, COMPLETE]
            both = loop.time() - start
            assert not n._holding and not n._reading  # nothing pending: idle
            # The first completion did not wait for a hold; the others did.
            assert first < both and both >= hold * 0.9
        # hold=0: no hold at all.
        ev = cl.UserEvent(ctx)
        other = cl.UserEvent(ctx)
        with cw.Notifier(hold=0) as n:
            f, g = n.watch(ev)[1], n.watch(other)[1]
            ev.set_status(COMPLETE)
            assert await f == COMPLETE and not n._holding
            other.set_status(COMPLETE)
            assert await g == COMPLETE
        # Closing during a hold cancels what is pending and leaves no reader.
        evs = [cl.UserEvent(ctx) for _ in range(2)]
        n = cw.Notifier(hold=1)
        futs = [n.watch(e)[1] for e in evs]
        evs[0].set_status(COMPLETE)
        assert await futs[0] == COMPLETE and n._holding
        timer_fd = n._timer.fd
        n.close()
        assert futs[1].cancelled() and not n._holding
        with pytest.raises(OSError):
            os.fstat(timer_fd)  # closed
        evs[1].set_status(COMPLETE)

    asyncio.run(main())
    with pytest.raises(cw.InvalidArgument):
        asyncio.run(_notifier(hold=-1))
    with pytest.raises(cw.InvalidArgument):
        asyncio.run(_notifier(hold=2))


async def _notifier(**kw):
    cw.Notifier(**kw).close()
