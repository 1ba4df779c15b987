# SPDX-License-Identifier: MIT
"""The rest of the API: wait_all/wait_any (sync and async) on kernels and
failures, every option, error classes and OpenCL status names, statistics,
versions, and the installed package (how the library is found: test_load.py)."""

import asyncio
import importlib.metadata
import os
import pathlib
import threading
import time

import pyopencl as cl
import pytest

import cw
from cw import _ffi
from clhelpers import COMPLETE, Axpy, set_later

SOURCE_TREE = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("strategy", cw.strategies())
def test_wait_all_and_any_kernels(cl_env, strategy):
    k = Axpy(cl_env)
    events = [k.enqueue() for _ in range(4)]
    assert cw.wait_all(events, strategy=strategy, timeout=30, check_interval=0.004,
                       spin_us=10, flush=True) == [COMPLETE] * 4
    index, status = cw.wait_any([k.enqueue()], strategy=strategy, timeout=30)
    assert (index, status) == (0, COMPLETE)
    k.check()


def test_flush_false(cl_env):
    # Flushed by hand: with flush=False cw leaves the queue alone.
    ctx, queue, _ = cl_env
    k = Axpy(cl_env)
    ev = k.enqueue()
    queue.flush()
    assert cw.wait(ev, flush=False, timeout=30) == COMPLETE
    k.check()


def test_wait_all_reports_failures_after_all_finished(cl_env):
    ctx = cl_env[0]
    ok, bad = cl.UserEvent(ctx), cl.UserEvent(ctx)
    bad.set_status(cl.status_code.OUT_OF_RESOURCES)
    t = set_later(ok, COMPLETE, 0.03)
    with pytest.raises(cw.CommandFailed) as e:
        cw.wait_all([ok, bad], check_interval=0.002)
    t.join()
    assert e.value.statuses == [COMPLETE, -5]
    assert e.value.status == -5 and e.value.status_name == "CL_OUT_OF_RESOURCES"
    assert "CL_OUT_OF_RESOURCES (-5)" in str(e.value)


def test_wait_any_and_timeouts(cl_env):
    ctx = cl_env[0]
    a, b = cl.UserEvent(ctx), cl.UserEvent(ctx)
    with pytest.raises(cw.Timeout) as e:
        cw.wait_any([a, b], timeout=0.02)
    assert e.value.index is None and e.value.status_name == "CL_SUBMITTED"
    with pytest.raises(cw.Timeout) as e:
        cw.wait_all([a, b], timeout=0.02)
    assert e.value.statuses == [cl.command_execution_status.SUBMITTED] * 2
    b.set_status(-9)
    with pytest.raises(cw.CommandFailed) as e:
        cw.wait_any([a, b])
    assert e.value.index == 1 and e.value.status == -9
    a.set_status(COMPLETE)
    assert cw.wait_any([a, b]) == (0, COMPLETE)


def test_async_timeouts_carry_what_sync_ones_do(cl_env):
    ctx = cl_env[0]
    a, b = cl.UserEvent(ctx), cl.UserEvent(ctx)
    submitted = cl.command_execution_status.SUBMITTED

    def attrs(e):
        return {k: getattr(e, k, "absent") for k in ("code", "status", "status_name",
                                                      "statuses", "index")}

    sync = {}
    for name, call in (("one", lambda: cw.wait(a, timeout=0.01)),
                       ("all", lambda: cw.wait_all([a, b], timeout=0.01)),
                       ("any", lambda: cw.wait_any([a, b], timeout=0.01))):
        with pytest.raises(cw.Timeout) as e:
            call()
        sync[name] = attrs(e.value)
    assert sync["one"]["status"] == sync["any"]["status"] == submitted
    assert sync["all"]["statuses"] == [submitted] * 2

    async def main():
        got = {}
        with cw.Notifier() as n:
            for name, call in (("one", lambda: cw.wait_async(a, timeout=0.01)),
                               ("all", lambda: cw.wait_all_async([a, b], timeout=0.01)),
                               ("any", lambda: cw.wait_any_async([a, b], timeout=0.01)),
                               ("notifier", lambda: n.wait(a, timeout=0.01))):
                with pytest.raises(cw.Timeout) as e:
                    await call()
                got[name] = attrs(e.value)
            assert n.pending == 0
        return got

    got = asyncio.run(main())
    assert got["notifier"] == got["one"]
    for name in sync:
        assert got[name] == sync[name], name
    for ev in (a, b):
        ev.set_status(COMPLETE)


def test_async_all_and_any(cl_env):
    ctx = cl_env[0]
    k = Axpy(cl_env)

    async def main():
        loop = asyncio.get_running_loop()
        events = [k.enqueue() for _ in range(3)]
        assert await cw.wait_all_async(events, timeout=30) == [COMPLETE] * 3
        gates = [cl.UserEvent(ctx) for _ in range(3)]
        loop.call_later(0.01, gates[2].set_status, COMPLETE)
        assert await cw.wait_any_async(gates, timeout=30) == (2, COMPLETE)
        assert not cw._loop_notifiers  # the other two watches were cancelled
        with pytest.raises(cw.Timeout):
            await cw.wait_all_async(gates, timeout=0.02)
        gates[0].set_status(-5)
        with pytest.raises(cw.CommandFailed) as e:
            await cw.wait_any_async(gates[:2], timeout=30)
        assert e.value.index == 0 and e.value.status_name == "CL_OUT_OF_RESOURCES"
        loop.call_later(0.01, gates[1].set_status, COMPLETE)
        with pytest.raises(cw.CommandFailed) as e:
            await cw.wait_all_async(gates, timeout=30)
        assert e.value.statuses == [-5, COMPLETE, COMPLETE]
        with cw.Notifier(check_interval=0.001) as n:
            assert await n.wait_all(gates[1:]) == [COMPLETE, COMPLETE]
            assert n.pending == 0

    asyncio.run(main())
    k.check()


def test_error_classes_and_names():
    cases = {
        "CW_ERR_INVALID_ARGUMENT": (cw.InvalidArgument, ValueError),
        "CW_ERR_INVALID_EVENT": (cw.InvalidEvent, cw.CwError),
        "CW_ERR_TIMEOUT": (cw.Timeout, TimeoutError),
        "CW_ERR_COMMAND_FAILED": (cw.CommandFailed, cw.CwError),
        "CW_ERR_OPENCL": (cw.OpenCLError, cw.CwError),
        "CW_ERR_NO_MEMORY": (cw.NoMemory, MemoryError),
        "CW_ERR_UNSUPPORTED": (cw.Unsupported, cw.CwError),
        "CW_ERR_NO_RESOURCES": (cw.NoResources, OSError),
    }
    for name, (cls, base) in cases.items():
        e = cw._error(_ffi.CONSTANTS[name], -5)
        assert type(e) is cls and isinstance(e, base) and isinstance(e, cw.CwError)
        assert e.code_name == name and e.status_name == "CL_OUT_OF_RESOURCES"
        assert str(e) == "%s: CL_OUT_OF_RESOURCES (-5)" % cw.strerror(e.code)
    assert cw._error(-8).status is None and "system resources" in str(cw._error(-8))
    unknown = cw._error(-99, 1234)
    assert type(unknown) is cw.CwError and "unknown OpenCL status (1234)" in str(unknown)
    assert cw.status_name(-58) == "CL_INVALID_EVENT" and cw.status_name(3) == "CL_QUEUED"


def test_negative_execution_status_is_a_number_unless_documented(cl_env):
    # A command's negative status is an execution status: only the documented
    # execution errors have names; -42 is not CL_INVALID_BINARY, nor PoCL's -1
    # for a failed command's dependents CL_DEVICE_NOT_FOUND.
    ctx, queue, _ = cl_env
    u = cl.UserEvent(ctx)
    marker = cl.enqueue_marker(queue, wait_for=[u])
    u.set_status(-42)
    with pytest.raises(cw.CommandFailed) as e:
        cw.wait(u)
    assert e.value.status == -42 and e.value.status_name is None
    assert str(e.value).endswith(": status -42") and "CL_INVALID_BINARY" not in str(e.value)
    with pytest.raises(cw.CommandFailed) as e:
        cw.wait(marker, check_interval=0.002)
    assert e.value.status < 0 and e.value.status not in (-4, -5, -6, -14)
    assert str(e.value).endswith(": status %d" % e.value.status)
    for status, name in ((-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"), (-5, "CL_OUT_OF_RESOURCES"),
                         (-6, "CL_OUT_OF_HOST_MEMORY"),
                         (-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST")):
        v = cl.UserEvent(ctx)
        v.set_status(status)
        with pytest.raises(cw.CommandFailed) as e:
            cw.wait_all([v])
        assert e.value.status_name == name and str(e.value).endswith("%s (%d)" % (name, status))
        assert cw.execution_status_name(status) == name
    assert cw.execution_status_name(-42) is None and cw.execution_status_name(-1) is None
    assert cw.execution_status_name(2) == "CL_SUBMITTED"
    # A timeout's status is an execution status too.
    p = cl.UserEvent(ctx)
    with pytest.raises(cw.Timeout) as e:
        cw.wait(p, timeout=0.001)
    assert e.value.status_name == "CL_SUBMITTED" and str(e.value).endswith("CL_SUBMITTED (2)")
    p.set_status(COMPLETE)
    # An OpenCL call's error code keeps its API name.
    assert str(cw._error(_ffi.CONSTANTS["CW_ERR_OPENCL"], -42)).endswith("CL_INVALID_BINARY (-42)")


def test_timeout_zero_looks_once(cl_env):
    # timeout=0 is a look without waiting (CW_WAIT_POLL), in every wait, in
    # the main thread and others; None is no timeout.
    ctx = cl_env[0]
    pending = cl.UserEvent(ctx)
    done = cl.UserEvent(ctx)
    done.set_status(COMPLETE)
    failed = cl.UserEvent(ctx)
    failed.set_status(-5)
    calls = (lambda e, **kw: cw.wait(e, **kw), lambda e, **kw: cw.wait_all([done, e], **kw),
             lambda e, **kw: cw.wait_any([e], **kw))

    def check():
        for call in calls:
            start = time.monotonic()
            with pytest.raises(cw.Timeout) as e:
                call(pending, timeout=0, strategy="cooperative")
            assert time.monotonic() - start < 1.0  # far below a wait that waits
            # The status read: wait_all's per event, in `statuses`.
            status = getattr(e.value, "statuses", [e.value.status])[-1]
            assert status in (cw.CL_SUBMITTED, cw.CL_QUEUED)
            call(done, timeout=0)
            with pytest.raises(cw.CommandFailed):
                call(failed, timeout=0)
        cw.reset_stats()
        with pytest.raises(cw.Timeout):
            cw.wait(pending, timeout=0.0)
        s = cw.stats()
        assert s.waits == 1 and s.timeouts == 1 and s.parks == 0

    check()
    errors = []
    t = threading.Thread(target=lambda: errors.append(None) if check() is None else None)
    t.start()
    t.join(30)
    assert errors == [None]
    # None waits without a timeout.
    set_later(pending, COMPLETE, 0.05)
    assert cw.wait(pending, timeout=None) == COMPLETE


def _stats_of(wait):
    cw.reset_stats()
    wait()
    s = cw.stats()
    return (s.waits, s.timeouts, s.parks, s.polls, s.latency_count)


def test_a_main_thread_wait_counts_as_in_c(cl_env):
    # In the main thread a wait is one interruptible call into libcw: stats()
    # counts a 200 ms wait as the same wait in another thread counts it (one
    # call, as in C), its parks included. With no status check inside the
    # 200 ms (a 1 s check interval) one call parks once, whatever the load;
    # 50 ms slices would park four times.
    pending = cl.UserEvent(cl_env[0])

    def timed_out():
        with pytest.raises(cw.Timeout):
            cw.wait(pending, timeout=0.2, check_interval=1.0)

    main = _stats_of(timed_out)
    other = []
    t = threading.Thread(target=lambda: other.append(_stats_of(timed_out)))
    t.start()
    t.join(30)
    assert main == (1, 1, 1, 0, 0)
    assert main == other[0]
    # A strategy that cannot be interrupted waits in slices: still one wait and
    # one timeout, as C counts one call.
    cw.reset_stats()
    with pytest.raises(cw.Timeout):
        cw.wait(pending, strategy="pthread", timeout=0.2)
    with pytest.raises(cw.Timeout):
        cw.wait_all([pending], timeout=0.12)
    with pytest.raises(cw.Timeout):
        cw.wait_any([pending], timeout=0.12)
    s = cw.stats()
    assert (s.waits, s.timeouts) == (3, 3)
    set_later(pending, COMPLETE, 0.15)
    assert cw.wait(pending, strategy="pthread") == COMPLETE  # outlasts slices, ends well
    s = cw.stats()
    assert (s.waits, s.timeouts) == (4, 3)
    cw.reset_stats()
    assert cw.stats().waits == 0


def test_stats(cl_env):
    ev = cl.UserEvent(cl_env[0])
    ev.set_status(COMPLETE)
    cw.reset_stats()
    assert cw.stats().waits == 0
    cw.wait(ev)
    cw.wait_all([ev, ev])
    s = cw.stats()
    assert s.waits == 2 and s.timeouts == 0
    assert len(s.latency_us) == _ffi.CONSTANTS["CW_STATS_LATENCY_BUCKETS"]
    pending = cl.UserEvent(cl_env[0])
    with pytest.raises(cw.Timeout):
        cw.wait(pending, timeout=0.001)
    assert cw.stats().timeouts == 1
    pending.set_status(COMPLETE)
    cw.reset_stats()
    assert cw.stats() == cw.Stats(0, 0, 0, 0, 0, 0, 0, 0, (0,) * 16)


def test_auto_stats(cl_env):
    # A callback wait on a command of a queue probes the platform once.
    gate = cl.UserEvent(cl_env[0])
    marker = cl.enqueue_marker(cl_env[1], wait_for=[gate])
    timer = set_later(gate, COMPLETE, 0.05)
    try:
        cw.wait(marker, strategy="cooperative")
    finally:
        timer.join()
    a = cw.auto_stats()
    assert a.platforms_probed >= 1
    assert a.platforms_failed_fire + a.platforms_failed_silent <= a.platforms_probed
    cw.reset_stats()
    b = cw.auto_stats()
    assert b.platforms_probed == a.platforms_probed and b.checks == 0 and b.hybrid_waits == 0
    assert set(vars(b)) == {name for name, _ in _ffi.StatsAuto._fields_}


def test_versions():
    assert cw.__version__.count(".") == 2
    major, minor, patch = cw.library_version()
    assert cw.library_version_string() == "%d.%d.%d" % (major, minor, patch)
    assert major == int(cw.__version__.split(".")[0])


def test_version_check_rejects_incompatible_libraries():
    class Fake:
        _name = "fake-libcw"

        def __init__(self, number):
            self.cw_version = lambda: number

    major, minor = (int(x) for x in cw.__version__.split(".")[:2])
    assert _ffi.check_version(Fake(major * 10000 + minor * 100)) == (major, minor, 0)
    assert _ffi.check_version(Fake(major * 10000 + (minor + 1) * 100 + 3))[1] == minor + 1
    for number in ((major + 1) * 10000, (major - 1) * 10000 + 9999):
        with pytest.raises(ImportError, match="not compatible"):
            _ffi.check_version(Fake(number))
    if minor > 0:
        with pytest.raises(ImportError, match="not compatible"):
            _ffi.check_version(Fake(major * 10000 + (minor - 1) * 100))


def test_installed_package():
    """CI installs the package into a venv and sets CW_EXPECT_INSTALLED=1
    (and CW_EXPECT_FOUND_BY to how the library must be found there)."""
    if os.environ.get("CW_EXPECT_INSTALLED") != "1":
        pytest.skip("not run against an installed package (CW_EXPECT_INSTALLED)")
    where = pathlib.Path(cw.__file__).resolve()
    assert SOURCE_TREE not in where.parents, "imported from the source tree: %s" % where
    assert "site-packages" in where.parts
    assert (where.parent / "py.typed").exists()
    assert importlib.metadata.version("cw-opencl") == cw.__version__
    expect = os.environ.get("CW_EXPECT_FOUND_BY")
    if expect:
        assert cw.library_found_by() == expect, cw.library_path()


def test_latency_reaches_the_flags_of_every_wait(cl_env, monkeypatch):
    # latency=True is CW_WAIT_LATENCY in the options each C wait receives;
    # False (the default) leaves it out.
    seen = {}
    for name in ("cw_wait", "cw_wait_all", "cw_wait_any"):
        real = getattr(cw._lib, name)

        def spy(*args, name=name, real=real):
            opts = args[1] if name == "cw_wait" else args[2]
            seen.setdefault(name, []).append(opts._obj.flags & _ffi.CONSTANTS["CW_WAIT_LATENCY"])
            return real(*args)

        monkeypatch.setattr(cw._lib, name, spy)
    k = Axpy(cl_env)
    assert cw.wait(k.enqueue(), latency=True, timeout=30) == COMPLETE
    assert cw.wait_all([k.enqueue()], latency=True) == [COMPLETE]
    assert cw.wait_any([k.enqueue()], latency=True) == (0, COMPLETE)
    assert cw.wait(k.enqueue()) == COMPLETE
    k.check()
    flag = _ffi.CONSTANTS["CW_WAIT_LATENCY"]
    assert seen == {"cw_wait": [flag, 0], "cw_wait_all": [flag], "cw_wait_any": [flag]}


def test_latency_await_is_not_held(cl_env):
    # A notifier holds its deliveries after one that left watches pending,
    # unless a pending watch asked for latency: then each completion is
    # delivered at the wake-up it causes.
    ctx = cl_env[0]

    async def run(latency):
        events = [cl.UserEvent(ctx) for _ in range(2)]
        with cw.Notifier(hold=1) as n:
            _, first = n.watch(events[0])
            second = asyncio.ensure_future(n.wait(events[1], latency=latency))
            await asyncio.sleep(0)
            events[0].set_status(COMPLETE)
            assert await first == COMPLETE
            held = n._holding
            events[1].set_status(COMPLETE)
            assert await second == COMPLETE
            return held

    assert asyncio.run(run(False))  # the hold this test relies on
    assert not asyncio.run(run(True))
    done = cl.UserEvent(ctx)
    done.set_status(COMPLETE)

    async def shared():
        return (await cw.wait_async(done, latency=True),
                await cw.wait_all_async([done], latency=True),
                await cw.wait_any_async([done], latency=True))

    assert asyncio.run(shared()) == (COMPLETE, [COMPLETE], (0, COMPLETE))
