# SPDX-License-Identifier: MIT
"""Fixtures of the binding's tests."""

import signal

import pyopencl as cl
import pytest

from clhelpers import AXPY, platform_name


@pytest.fixture(scope="session")
def cl_env():
    want = platform_name().lower()
    platforms = [p for p in cl.get_platforms() if want in p.name.lower() and p.get_devices()]
    assert platforms, "no OpenCL platform matching %r (OCL_ICD_VENDORS?)" % want
    ctx = cl.Context(devices=platforms[0].get_devices()[:1])
    queue = cl.CommandQueue(ctx)
    prog = cl.Program(ctx, AXPY).build()
    return ctx, queue, prog


@pytest.fixture
def default_sigint():
    # pytest may wrap SIGINT; the Ctrl-C tests rely on Python's own KeyboardInterrupt.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)
