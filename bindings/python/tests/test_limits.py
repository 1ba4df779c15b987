# SPDX-License-Identifier: MIT
"""Every number the binding hands to libcw is checked against the C limits
first: nothing wraps silently in ctypes. Out of range is cw.InvalidArgument
(a ValueError) naming the limit; the limits themselves are accepted."""

import asyncio
import math

import pyopencl as cl
import pytest

import cw
from cw import _ffi
from clhelpers import COMPLETE

C = _ffi.CONSTANTS


@pytest.fixture
def done(cl_env):
    ev = cl.UserEvent(cl_env[0])
    ev.set_status(COMPLETE)
    return ev


def rejects(match, call, exc=cw.InvalidArgument):
    with pytest.raises(exc, match=match) as e:
        call()
    if exc is cw.InvalidArgument:
        assert isinstance(e.value, ValueError)
        assert e.value.code == C["CW_ERR_INVALID_ARGUMENT"]


@pytest.mark.parametrize("fn", [cw.wait, lambda ev, **kw: cw.wait_all([ev], **kw),
                                lambda ev, **kw: cw.wait_any([ev], **kw)],
                         ids=["wait", "wait_all", "wait_any"])
def test_timeout_range(done, fn):
    # 9.3e12 s is more microseconds than int64_t holds: it used to wrap negative.
    rejects("INT64_MAX", lambda: fn(done, timeout=9.3e12))
    rejects("INT64_MAX", lambda: fn(done, timeout=2**63))
    rejects("negative", lambda: fn(done, timeout=-1))
    rejects("negative", lambda: fn(done, timeout=-1e-9))
    rejects("NaN", lambda: fn(done, timeout=math.nan))
    rejects("seconds", lambda: fn(done, timeout="1"), TypeError)
    rejects("seconds", lambda: fn(done, timeout=True), TypeError)
    # Just above TIMEOUT_MAX: the next double up is over INT64_MAX µs.
    rejects("INT64_MAX", lambda: fn(done, timeout=math.nextafter(cw.TIMEOUT_MAX, math.inf)))
    # inf and None: no timeout. The largest valid values and 0 are accepted:
    # TIMEOUT_MAX, the documented maximum, is INT64_MAX / 1e6 rounded to a
    # double, whose float product with 1e6 rounds up to 2**63.
    assert cw.TIMEOUT_MAX * 1e6 > _ffi.INT64_MAX
    for ok in (math.inf, None, 0, 1e-9, 9.2e12, (2**63 - 1) // 10**6, cw.TIMEOUT_MAX):
        fn(done, timeout=ok)


def test_timeout_range_async(done):
    async def main():
        with pytest.raises(cw.InvalidArgument, match="INT64_MAX"):
            await cw.wait_async(done, timeout=9.3e12)
        with pytest.raises(cw.InvalidArgument, match="NaN"):
            await cw.wait_all_async([done], timeout=math.nan)
        with pytest.raises(cw.InvalidArgument, match="negative"):
            await cw.wait_any_async([done], timeout=-0.5)
        assert await cw.wait_async(done, timeout=math.inf) == COMPLETE
        assert await cw.wait_all_async([done], timeout=9.2e12) == [COMPLETE]
        assert await cw.wait_async(done, timeout=cw.TIMEOUT_MAX) == COMPLETE
        assert await cw.wait_any_async([done], timeout=cw.TIMEOUT_MAX) == (0, COMPLETE)

    asyncio.run(main())


@pytest.mark.parametrize("fn", [cw.wait, lambda ev, **kw: cw.wait_all([ev], **kw),
                                lambda ev, **kw: cw.wait_any([ev], **kw)],
                         ids=["wait", "wait_all", "wait_any"])
def test_check_interval_range(done, fn):
    limit = C["CW_CHECK_INTERVAL_US_MAX"]
    # 4295 s is 4,295,000,000 µs, beyond uint32_t: it used to wrap to 32.704 ms.
    rejects("CW_CHECK_INTERVAL_US_MAX", lambda: fn(done, check_interval=4295))
    rejects("CW_CHECK_INTERVAL_US_MAX", lambda: fn(done, check_interval=limit / 1e6 + 1e-6))
    rejects("CW_CHECK_INTERVAL_US_MAX", lambda: fn(done, check_interval=math.inf))
    rejects("negative", lambda: fn(done, check_interval=-0.001))
    rejects("NaN", lambda: fn(done, check_interval=math.nan))
    # 0 is cw's default, as in C (check_interval_us = 0), and so is None.
    for ok in (limit / 1e6, 1e-6, 1e-9, 0, 0.0, None):
        fn(done, check_interval=ok)


def test_notifier_check_interval_range():
    async def main():
        with pytest.raises(cw.InvalidArgument, match="CW_CHECK_INTERVAL_US_MAX"):
            cw.Notifier(check_interval=4295)
        with pytest.raises(cw.InvalidArgument, match="NaN"):
            cw.Notifier(check_interval=math.nan)
        cw.Notifier(check_interval=cw.CHECK_INTERVAL_MAX).close()

    asyncio.run(main())


@pytest.mark.parametrize("strategy", ["spin-park", "auto"])
def test_spin_us_range(done, strategy):
    limit = C["CW_SPIN_US_MAX"]
    assert cw.SPIN_US_MAX == limit
    for bad in (limit + 1, 2**32, 2**32 + 1, -1):
        rejects("CW_SPIN_US_MAX", lambda: cw.wait(done, strategy=strategy, spin_us=bad))
    rejects("int", lambda: cw.wait(done, spin_us=1.5), TypeError)
    # 0 is cw's default, as in C (spin_us = 0), and so is None.
    for ok in (0, 1, limit, None):
        assert cw.wait(done, strategy=strategy, spin_us=ok) == COMPLETE
        assert cw.wait_all([done], strategy=strategy, spin_us=ok) == [COMPLETE]


def test_event_count_range(done):
    limit = C["CW_WAIT_MANY_MAX"]
    assert cw.WAIT_MANY_MAX == limit
    for fn in (cw.wait_all, cw.wait_any):
        rejects("CW_WAIT_MANY_MAX", lambda: fn([]))
        rejects("CW_WAIT_MANY_MAX", lambda: fn([done] * (limit + 1)))
    assert cw.wait_all([done] * limit) == [COMPLETE] * limit
    assert cw.wait_any([done] * limit) == (0, COMPLETE)

    async def main():
        with pytest.raises(cw.InvalidArgument, match="CW_WAIT_MANY_MAX"):
            await cw.wait_all_async([done] * (limit + 1))
        with pytest.raises(cw.InvalidArgument, match="CW_WAIT_MANY_MAX"):
            await cw.wait_any_async([])

    asyncio.run(main())


def test_handles_and_strategies(done):
    rejects("handle", lambda: cw.RawEvent(0))
    rejects("handle", lambda: cw.RawEvent(-1))
    rejects("handle", lambda: cw.RawEvent(2**64))
    rejects("an int, not bool", lambda: cw.RawEvent(True), TypeError)
    rejects("an int, not float", lambda: cw.RawEvent(1.0), TypeError)
    rejects("an int, not str", lambda: cw.RawEvent("1"), TypeError)
    # A pyopencl event without a handle (from_int_ptr(0)).
    rejects("handle", lambda: cw.wait_all([done, cl.Event.from_int_ptr(0, False)]))
    rejects("wait_all or wait_any", lambda: cw.wait([done]), TypeError)
    rejects("pyopencl event", lambda: cw.wait(None), TypeError)
    rejects("pyopencl event", lambda: cw.wait(True), TypeError)
    rejects("cw.RawEvent", lambda: cw.wait(done.int_ptr), TypeError)
    rejects("sequence", lambda: cw.wait_all(done), TypeError)
    rejects("unknown strategy", lambda: cw.wait(done, strategy="no-such"))
    n = len(cw.strategies())
    rejects("outside", lambda: cw.wait(done, strategy=n))
    rejects("outside", lambda: cw.wait(done, strategy=-1))
    rejects("outside", lambda: cw.wait(done, strategy=2**32))
    # A raw handle and a strategy given by number work as well as the usual forms.
    assert cw.wait(cw.RawEvent(done.int_ptr), strategy=n - 1) == COMPLETE


def test_flush_takes_only_bools(done):
    for bad in ("no", "", 0, 1, None, 1.0):
        rejects("flush must be True or False", lambda: cw.wait(done, flush=bad), TypeError)
        rejects("flush must be True or False", lambda: cw.wait_all([done], flush=bad),
                TypeError)
        rejects("flush must be True or False", lambda: cw.wait_any([done], flush=bad),
                TypeError)
    assert cw.wait(done, flush=False) == cw.wait(done, flush=True) == COMPLETE


def test_latency_takes_only_bools(done):
    for bad in ("yes", 1, None, 1.0):
        rejects("latency must be True or False", lambda: cw.wait(done, latency=bad), TypeError)
        rejects("latency must be True or False", lambda: cw.wait_all([done], latency=bad),
                TypeError)
        rejects("latency must be True or False", lambda: cw.wait_any([done], latency=bad),
                TypeError)
        for call in (lambda: cw.wait_async(done, latency=bad),
                     lambda: cw.wait_all_async([done], latency=bad),
                     lambda: cw.wait_any_async([done], latency=bad)):
            rejects("latency must be True or False", lambda: asyncio.run(call()), TypeError)


def test_strerror_arguments():
    assert cw.strerror(C["CW_ERR_TIMEOUT"]) == "timed out"
    for bad in ("x", 1.0, None, True, b"-3"):
        rejects("a cw_error code", lambda: cw.strerror(bad), TypeError)
    rejects("C int", lambda: cw.strerror(2**31))
    rejects("C int", lambda: cw.strerror(-2**31 - 1))
    assert cw.strerror(2**31 - 1) == cw.strerror(-2**31) == "unknown error"
