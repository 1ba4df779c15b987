# SPDX-License-Identifier: MIT
"""cw.pyopencl: pyopencl's own waits routed through cw while installed.

That a call went through cw is seen in cw.stats(): each routed wait is one
cw wait, and pyopencl's own waits are none. Results (data, returned objects,
errors) must be pyopencl's."""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pyopencl as cl
import pytest

import cw
import cw.pyopencl as cwp
from clhelpers import COMPLETE, Axpy, platform_name
from test_interrupt import BOUND, interrupted

ROUTED = [(cl._cl.Event, "wait"), (cl._cl.CommandQueue, "finish"), (cl, "wait_for_events"),
          (cl._cl, "wait_for_events"), (cl._cl, "_enqueue_read_buffer"),
          (cl._cl, "_enqueue_write_buffer"), (cl._cl, "_enqueue_read_buffer_rect"),
          (cl._cl, "_enqueue_write_buffer_rect"), (cl._cl, "_enqueue_read_image"),
          (cl._cl, "_enqueue_write_image"), (cl, "enqueue_map_buffer"),
          (cl._cl, "enqueue_map_buffer"), (cl, "enqueue_map_image"),
          (cl._cl, "enqueue_map_image")]


def current():
    return [getattr(owner, name) for owner, name in ROUTED]


ORIGINALS = current()


@pytest.fixture
def routed():
    cwp.install()
    yield
    cwp.uninstall()
    assert current() == ORIGINALS


def waits_of(call):
    """(call's result, how many cw waits it made)."""
    cw.reset_stats()
    result = call()
    return result, cw.stats().waits


def test_install_twice_is_once_and_uninstall_restores():
    assert not cwp.is_installed() and current() == ORIGINALS
    cwp.install()
    try:
        once = current()
        assert all(a is not b for a, b in zip(once, ORIGINALS))
        cwp.install("cooperative", spin_us=5)
        assert current() == once  # no second layer, only the options changed
        assert cwp.options() == {"strategy": "cooperative", "check_interval": None,
                                 "spin_us": 5, "latency": False}
    finally:
        cwp.uninstall()
    assert current() == ORIGINALS and not cwp.is_installed() and cwp.options() == {}
    cwp.uninstall()  # not installed: nothing happens
    assert current() == ORIGINALS


def test_bad_options_install_nothing():
    with pytest.raises(cw.InvalidArgument):
        cwp.install("no-such-strategy")
    with pytest.raises(TypeError):
        cwp.install(spin_us=1.5)
    with pytest.raises(TypeError, match="latency must be True or False"):
        cwp.install(latency="yes")
    assert current() == ORIGINALS and not cwp.is_installed()


def test_latency_reaches_the_routed_waits(cl_env, monkeypatch):
    flags = []
    real = cw._lib.cw_wait

    def spy(handle, opts, status):
        flags.append(opts._obj.flags)
        return real(handle, opts, status)

    monkeypatch.setattr(cw._lib, "cw_wait", spy)
    k = Axpy(cl_env)
    with cwp.installed(latency=True):
        assert cwp.options()["latency"] is True
        k.enqueue().wait()
    k.enqueue().wait()  # pyopencl's own wait again: not through cw
    assert flags and all(f & cw._ffi.CONSTANTS["CW_WAIT_LATENCY"] for f in flags)
    k.check()


def test_context_manager_restores_the_state_before():
    with cwp.installed("spin-park", spin_us=20):
        assert cwp.is_installed() and cwp.options()["strategy"] == "spin-park"
    assert current() == ORIGINALS
    cwp.install("cooperative")
    try:
        with cwp.installed("poll"):
            assert cwp.options()["strategy"] == "poll"
        assert cwp.is_installed() and cwp.options()["strategy"] == "cooperative"
    finally:
        cwp.uninstall()
    with pytest.raises(RuntimeError):
        with cwp.installed():
            raise RuntimeError("left by an exception")
    assert current() == ORIGINALS


@pytest.mark.parametrize("strategy", ["default", "cooperative", "blocking"])
def test_event_wait_finish_and_wait_for_events(cl_env, strategy):
    k = Axpy(cl_env)
    with cwp.installed(strategy):
        _, n = waits_of(lambda: k.enqueue().wait())
        assert n == 1
        _, n = waits_of(lambda: cl.wait_for_events([k.enqueue(), k.enqueue()]))
        assert n == 1  # one cw_wait_all
        k.enqueue()
        _, n = waits_of(k.queue.finish)
        assert n == 1
        u = cl.UserEvent(k.ctx)
        threading.Timer(0.05, u.set_status, (COMPLETE,)).start()
        _, n = waits_of(u.wait)
        assert n == 1 and u.command_execution_status == COMPLETE
    # Not installed: pyopencl's own waits, none of cw's.
    _, n = waits_of(lambda: k.enqueue().wait())
    assert n == 0
    k.check()


def test_blocking_transfers_wait_in_cw(cl_env, routed):
    ctx, queue, _ = cl_env
    mf = cl.mem_flags
    host = np.arange(4096, dtype=np.float32)
    buf = cl.Buffer(ctx, mf.READ_WRITE, host.nbytes)
    evt, n = waits_of(lambda: cl.enqueue_copy(queue, buf, host))  # blocking write
    assert n == 1 and evt.command_execution_status == COMPLETE
    out = np.zeros_like(host)
    evt, n = waits_of(lambda: cl.enqueue_copy(queue, out, buf))  # blocking read
    assert n == 1 and evt.command_execution_status == COMPLETE
    np.testing.assert_array_equal(out, host)

    # Rectangles: rows 1..2 of a 4x8 block.
    rect = np.zeros((2, 8), np.float32)
    _, n = waits_of(lambda: cl.enqueue_copy(queue, rect, buf, buffer_origin=(0, 1),
                                            host_origin=(0, 0), region=(8 * 4, 2),
                                            buffer_pitches=(8 * 4,), host_pitches=(8 * 4,)))
    assert n == 1
    np.testing.assert_array_equal(rect, host[8:24].reshape(2, 8))
    _, n = waits_of(lambda: cl.enqueue_copy(queue, buf, rect * 2, buffer_origin=(0, 1),
                                            host_origin=(0, 0), region=(8 * 4, 2),
                                            buffer_pitches=(8 * 4,), host_pitches=(8 * 4,)))
    assert n == 1

    # Maps: the mapped memory holds the data once the call returns.
    (mapped, evt), n = waits_of(lambda: cl.enqueue_map_buffer(
        queue, buf, cl.map_flags.READ, 0, host.shape, host.dtype))
    assert n == 1
    expect = host.copy()
    expect[8:24] *= 2
    np.testing.assert_array_equal(mapped, expect)
    mapped.base.release(queue)

    # Non-blocking calls are left alone: no wait of cw's in them.
    evt, n = waits_of(lambda: cl.enqueue_copy(queue, out, buf, is_blocking=False))
    assert n == 0
    # A NannyEvent's routed wait lets go of the host buffer, as pyopencl's does.
    assert isinstance(evt, cl.NannyEvent) and evt.get_ward() is not None
    evt.wait()
    assert evt.get_ward() is None
    np.testing.assert_array_equal(out, expect)
    # Positional is_blocking (the low-level call), True and False.
    _, n = waits_of(lambda: cl._cl._enqueue_read_buffer(queue, buf, out, 0, None, True))
    assert n == 1
    _, n = waits_of(lambda: cl._cl._enqueue_read_buffer(queue, buf, out, 0, None, False).wait())
    assert n == 1  # the wait, not the enqueue


def test_blocking_image_transfers(cl_env, routed):
    ctx, queue, _ = cl_env
    if not ctx.devices[0].image_support:
        pytest.skip("the device has no images")
    fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
    img = cl.Image(ctx, cl.mem_flags.READ_WRITE, fmt, shape=(16, 8))
    host = np.arange(16 * 8, dtype=np.float32).reshape(8, 16)
    _, n = waits_of(lambda: cl.enqueue_copy(queue, img, host, origin=(0, 0), region=(16, 8)))
    assert n == 1
    out = np.zeros_like(host)
    _, n = waits_of(lambda: cl.enqueue_copy(queue, out, img, origin=(0, 0), region=(16, 8)))
    assert n == 1
    np.testing.assert_array_equal(out, host)


def test_failed_command_raises_pyopencls_error_with_the_status(cl_env, routed):
    ctx, queue, _ = cl_env
    u = cl.UserEvent(ctx)
    u.set_status(-42)
    with pytest.raises(cl.RuntimeError) as info:
        u.wait()
    e = info.value
    assert e.code == -14 and e.routine == "clWaitForEvents"  # as pyopencl's own wait
    assert e.status == -42 and "status -42" in str(e)
    assert isinstance(e.__cause__, cw.CommandFailed)

    done = cl.UserEvent(ctx)
    done.set_status(COMPLETE)
    with pytest.raises(cl.RuntimeError) as info:
        cl.wait_for_events([done, u])
    assert info.value.code == -14 and info.value.status == -42

    # A documented execution error keeps its name.
    v = cl.UserEvent(ctx)
    v.set_status(-5)
    with pytest.raises(cl.RuntimeError) as info:
        v.wait()
    assert "CL_OUT_OF_RESOURCES (-5)" in str(info.value)


def test_failed_command_finish_answers_as_clfinish(cl_env):
    # clFinish decides what a queue with a failed command gives: the same
    # with and without cw.
    ctx = cl_env[0]

    def finish_after_failure():
        queue = cl.CommandQueue(ctx)
        u = cl.UserEvent(ctx)
        m = cl.enqueue_marker(queue, wait_for=[u])
        u.set_status(-42)
        try:
            queue.finish()
            outcome = "ok"
        except cl.Error as e:
            outcome = (type(e), e.code)
        return outcome, m.command_execution_status

    without = finish_after_failure()
    with cwp.installed():
        routed, n = waits_of(finish_after_failure)
    assert routed == without and n == 1


def test_what_cw_cannot_take_goes_to_pyopencl(routed):
    with pytest.raises(cl.LogicError):
        cl.wait_for_events([])  # clWaitForEvents(0, NULL): CL_INVALID_VALUE
    with pytest.raises(TypeError):
        cl.wait_for_events(3)


def test_ctrl_c_during_finish_and_event_wait(cl_env, default_sigint, routed):
    k = Axpy(cl_env)
    gate = cl.UserEvent(k.ctx)
    queue = cl.CommandQueue(k.ctx)
    k.queue = queue
    ev = k.enqueue(wait_for=[gate])
    latency = interrupted(queue.finish)
    assert latency <= BOUND, "KeyboardInterrupt %.1f ms after SIGINT" % (latency * 1e3)
    latency = interrupted(ev.wait)
    assert latency <= BOUND
    latency = interrupted(lambda: cl.wait_for_events([ev]))
    assert latency <= BOUND
    gate.set_status(COMPLETE)
    queue.finish()
    assert ev.command_execution_status == COMPLETE
    k.check()


def test_threads(cl_env):
    # Routed waits in several threads at once, while another thread installs
    # and uninstalls: every call waits (by cw or by pyopencl) and every
    # result is right.
    ctx, _, prog = cl_env
    errors = []
    stop = threading.Event()

    def worker():
        try:
            k = Axpy((ctx, cl.CommandQueue(ctx), prog), n=1 << 12)
            for i in range(20):
                ev = k.enqueue()
                if i % 3 == 0:
                    ev.wait()
                elif i % 3 == 1:
                    cl.wait_for_events([ev])
                else:
                    k.queue.finish()
                assert ev.command_execution_status == COMPLETE
            k.check()
        except Exception as e:  # reported below
            errors.append(e)

    def toggler():
        while not stop.is_set():
            cwp.install("cooperative")
            time.sleep(0.001)
            cwp.uninstall()

    cw.reset_stats()
    cwp.install()
    workers = [threading.Thread(target=worker) for _ in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(60)
    assert not errors, errors
    assert cw.stats().waits >= 4 * 20  # the blocking reads of check() add theirs
    cwp.uninstall()

    t = threading.Thread(target=toggler)
    t.start()
    workers = [threading.Thread(target=worker) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    stop.set()
    t.join(10)
    cwp.uninstall()
    assert not errors, errors
    assert current() == ORIGINALS


def test_pyopencl_array_waits_are_routed(cl_env, routed):
    # pyopencl's own modules call through the module: array.get() is a
    # blocking read, routed like any.
    import pyopencl.array as cla
    queue = cl_env[1]
    a = cla.to_device(queue, np.arange(1000, dtype=np.float32))
    (b, n) = waits_of(lambda: (2 * a).get())
    assert n >= 1
    np.testing.assert_array_equal(b, 2 * np.arange(1000, dtype=np.float32))


def test_sigint_handler_left_alone():
    # install() touches no signal handler: Ctrl-C stays the program's.
    before = signal.getsignal(signal.SIGINT)
    with cwp.installed():
        assert signal.getsignal(signal.SIGINT) is before


def test_readme_program(tmp_path):
    # The README's pyopencl program, as a user runs it: its own process, with
    # the tests' cw first on the path and the tests' platform picked for
    # create_some_context; it asserts its own result.
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## pyopencl's own waits through cw", 1)[1]
    program = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert "cw.pyopencl.install()" in program and "queue.finish()" in program
    script = tmp_path / "program.py"
    script.write_text(program + "print('routed', cw.stats().waits)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(pathlib.Path(cw.__file__).resolve().parents[1])
    want = platform_name().lower()
    env["PYOPENCL_CTX"] = str(next(i for i, p in enumerate(cl.get_platforms())
                                   if want in p.name.lower()))
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=120, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    # finish, wait and the blocking read: three waits of cw's at least.
    assert int(p.stdout.split("routed")[1]) >= 3
