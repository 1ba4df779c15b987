# SPDX-License-Identifier: MIT
"""Signals during synchronous waits: Ctrl-C (SIGINT) and any other Python
signal handler run while the wait goes on, with every strategy, on an event that
never completes by itself; the abandoned wait leaves cw and the driver
usable (the event completes later, and later waits succeed)."""

import os
import signal
import socket
import threading
import time

import pyopencl as cl
import pytest

import cw
from clhelpers import COMPLETE, Axpy

# Seconds from the signal to its handler. The binding's wait ends at the
# signal (or, with the strategies it slices, within about 50 ms), but this
# is a behaviour test, not a timing one: a wait that
# ignored signals would never return (the event never completes by itself),
# so the bound only has to be far below the test's timeout and far above
# what a loaded CI machine adds to a 50 ms slice.
BOUND = 2.0
DELAY = 0.120  # when the signal is sent, after the wait started


def send_sigint_later(delay):
    """SIGINT to this process from another thread; returns (thread, [sent time])."""
    sent = []

    def run():
        time.sleep(delay)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=run)
    t.start()
    return t, sent


def interrupted(call):
    """Run call() until SIGINT interrupts it; returns seconds from signal to handler."""
    t, sent = send_sigint_later(DELAY)
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
        caught = time.monotonic()
    finally:
        t.join()
    return caught - sent[0]


@pytest.mark.parametrize("strategy", cw.strategies())
def test_ctrl_c_interrupts_wait(cl_env, default_sigint, strategy):
    ctx = cl_env[0]
    ev = cl.UserEvent(ctx)
    latency = interrupted(lambda: cw.wait(ev, strategy=strategy))
    assert latency <= BOUND, "KeyboardInterrupt %.1f ms after SIGINT" % (latency * 1e3)
    # With a timeout of its own the wait is interruptible too.
    latency = interrupted(lambda: cw.wait(ev, strategy=strategy, timeout=3600))
    assert latency <= BOUND, "KeyboardInterrupt %.1f ms after SIGINT" % (latency * 1e3)

    # The driver may still call back into the abandoned waits: nothing of
    # theirs is used any more. Then the same event and new work wait as usual.
    ev.set_status(COMPLETE)
    assert cw.wait(ev, strategy=strategy) == COMPLETE
    k = Axpy(cl_env)
    assert cw.wait(k.enqueue(), strategy=strategy) == COMPLETE
    k.check()


@pytest.mark.parametrize("strategy", cw.strategies())
def test_any_signal_handler_runs_during_wait(cl_env, strategy):
    ctx = cl_env[0]
    ev = cl.UserEvent(ctx)
    ran = []

    def handler(signum, frame):
        # An ordinary handler that does not raise: it completes the event, so
        # the wait goes on and then returns normally.
        ran.append(time.monotonic())
        ev.set_status(COMPLETE)

    old = signal.signal(signal.SIGALRM, handler)
    try:
        armed = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, DELAY)
        assert cw.wait(ev, strategy=strategy) == COMPLETE
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert len(ran) == 1
    latency = ran[0] - (armed + DELAY)
    assert latency <= BOUND, "handler ran %.1f ms after SIGALRM" % (latency * 1e3)


def test_ctrl_c_interrupts_wait_all_and_wait_any(cl_env, default_sigint):
    ctx = cl_env[0]
    done = cl.UserEvent(ctx)
    done.set_status(COMPLETE)
    never = [cl.UserEvent(ctx) for _ in range(3)]
    latency = interrupted(lambda: cw.wait_all([done] + never))
    assert latency <= BOUND
    latency = interrupted(lambda: cw.wait_any(never))
    assert latency <= BOUND
    for e in never:
        e.set_status(COMPLETE)
    assert cw.wait_all([done] + never) == [COMPLETE] * 4
    assert cw.wait_any(never) == (0, COMPLETE)


@pytest.mark.parametrize("strategy", ["default", "pthread"])
def test_main_thread_wait_keeps_the_callers_timeout(cl_env, strategy):
    # In the main thread a wait that a signal interrupted goes on, and a
    # strategy the binding slices makes several calls into libcw; the caller
    # still sees one wait of the length asked for.
    ev = cl.UserEvent(cl_env[0])
    old = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        start = time.monotonic()
        with pytest.raises(cw.Timeout):
            cw.wait(ev, strategy=strategy, timeout=0.18)
        assert time.monotonic() - start >= 0.18
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    ev.set_status(COMPLETE)


def test_wakeup_descriptor_is_restored_and_told(cl_env):
    # A program's own wakeup descriptor (an event loop's) is put back after
    # the wait and receives the number of the signal that came during it.
    ev = cl.UserEvent(cl_env[0])
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.setblocking(False)
    old_fd = signal.set_wakeup_fd(ours.fileno())
    old = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.03)
        with pytest.raises(cw.Timeout):
            cw.wait(ev, timeout=0.15)
        assert signal.set_wakeup_fd(ours.fileno()) == ours.fileno()
        assert theirs.recv(16) == bytes([signal.SIGALRM])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        signal.set_wakeup_fd(old_fd)
        ours.close()
        theirs.close()
    ev.set_status(COMPLETE)


def test_wait_in_another_thread(cl_env):
    # No signal reaches other threads' Python code: they wait in one call.
    ev = cl.UserEvent(cl_env[0])
    out = []
    t = threading.Thread(target=lambda: out.append(cw.wait(ev, timeout=30)))
    t.start()
    time.sleep(0.02)
    ev.set_status(COMPLETE)
    t.join(10)
    assert out == [COMPLETE]
