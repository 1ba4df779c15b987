# SPDX-License-Identifier: MIT
"""cw for Python: wait on OpenCL events without burning a core.

A ctypes binding of cw's C library (libcw-opencl). Events are pyopencl
events (``pyopencl.Event`` and its subclasses ``UserEvent`` and
``NannyEvent``, checked with ``isinstance``) or raw ``cl_event`` handles
wrapped in ``cw.RawEvent(handle)``, which says the caller vouches for them.
Any other object, plain ints included, raises TypeError::

    status = cw.wait(event, strategy="cooperative", timeout=0.5)
    statuses = cw.wait_all([ev1, ev2])
    index, status = cw.wait_any([ev1, ev2])
    status = await cw.wait_async(event)          # asyncio, no thread per wait

The synchronous waits release the GIL and sleep in libcw. In the main
thread a signal (Ctrl-C) ends libcw's wait through Python's wakeup
descriptor, so that its handler runs at once; with the strategies that
cannot be interrupted so, they call libcw in slices of at most 50 ms. The
asynchronous waits register events with a ``cw_notifier`` whose descriptor
the running loop watches: any number of awaits share one descriptor and no
thread. Failures raise ``CwError`` subclasses that carry the OpenCL status
and its name.

The library is ``$CW_LIBRARY`` (a path), else ``libcw-opencl.so.<major>``
through the loader's search, else that file in ``pkg-config --variable=libdir
cw-opencl``. A file there that is not cw's library (it lacks
``cw_notifier_watch``), or not a compatible version, is skipped; one named by
``$CW_LIBRARY`` is never skipped: the import fails (``LibraryNotFound``).
"""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import math
import numbers
import os
import reprlib
import signal
import sys
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import (Any, Callable, Dict, Iterable, List, Optional, Protocol, Sequence, Tuple,
                    Union)

from . import _ffi
from ._ffi import CL_STATUS_NAMES, CONSTANTS as _C, LibraryNotFound
from ._version import __version__

__all__ = [
    "__version__", "CL_COMPLETE", "CL_RUNNING", "CL_SUBMITTED", "CL_QUEUED",
    "CHECK_INTERVAL_MAX", "SPIN_US_MAX", "WAIT_MANY_MAX", "TIMEOUT_MAX", "HOLD_DEFAULT",
    "CwError", "InvalidArgument", "InvalidEvent", "Timeout", "CommandFailed", "OpenCLError",
    "NoMemory", "Unsupported", "NoResources", "Interrupted", "LibraryNotFound", "RawEvent",
    "wait", "wait_all", "wait_any", "wait_async", "wait_all_async", "wait_any_async",
    "Notifier", "Stats", "stats", "execution_status_name", "reset_stats", "AutoStats", "auto_stats", "strategies", "strerror", "status_name",
    "library_path", "library_found_by", "library_version", "library_version_string",
]

# load() checked the library's identity and version and declared its functions.
_lib, _found_by = _ffi.load()
_library_version = _ffi.check_version(_lib)

# Execution statuses (CL/cl.h).
CL_COMPLETE = 0
CL_RUNNING = 1
CL_SUBMITTED = 2
CL_QUEUED = 3

# The C limits, in the units the Python API takes.
CHECK_INTERVAL_MAX = _C["CW_CHECK_INTERVAL_US_MAX"] / 1e6  # seconds
SPIN_US_MAX = _C["CW_SPIN_US_MAX"]  # microseconds
WAIT_MANY_MAX = _C["CW_WAIT_MANY_MAX"]  # events per wait_all / wait_any
TIMEOUT_MAX = _ffi.INT64_MAX / 1e6  # seconds: cw_wait_options.timeout_us is int64_t µs

_OK = _C["CW_OK"]
_TIMEOUT = _C["CW_ERR_TIMEOUT"]
_INVALID_ARGUMENT = _C["CW_ERR_INVALID_ARGUMENT"]
_COMMAND_FAILED = _C["CW_ERR_COMMAND_FAILED"]
_POLL = _C["CW_WAIT_POLL"]
_LATENCY = _C["CW_WAIT_LATENCY"]
_INTERRUPT_FD = _C["CW_WAIT_INTERRUPT_FD"]
_INTERRUPTED = _C["CW_ERR_INTERRUPTED"]
_UNSUPPORTED = _C["CW_ERR_UNSUPPORTED"]

# The longest single call into libcw from the main thread where the strategy
# cannot be interrupted: the bound on how long a signal handler waits to
# run, well inside 100 ms.
_SLICE_US = 50_000


class _HasIntPtr(Protocol):
    @property
    def int_ptr(self) -> int: ...


_INT_MIN, _INT_MAX = -2 ** (8 * ctypes.sizeof(ctypes.c_int) - 1), 2 ** (
    8 * ctypes.sizeof(ctypes.c_int) - 1) - 1


def strerror(code: int) -> str:
    """cw_strerror: a short description of a cw_error code (an int)."""
    if isinstance(code, bool) or not isinstance(code, numbers.Integral):
        raise TypeError("strerror() takes a cw_error code (an int), not %s" % _describe(code))
    if not _INT_MIN <= code <= _INT_MAX:
        raise _bad("a cw_error code is a C int, in %d..%d; got %d" % (_INT_MIN, _INT_MAX, code))
    return _lib.cw_strerror(int(code)).decode()


def status_name(status: int) -> str:
    """The OpenCL name of an error code, e.g. CL_OUT_OF_RESOURCES, or of a
    non-negative execution status (CL_COMPLETE ... CL_QUEUED)."""
    return CL_STATUS_NAMES.get(status) or "unknown OpenCL status"


# The negative execution statuses that have a name as such: the failures any
# command may end with that OpenCL documents for its enqueue calls (no memory
# for a buffer's data store, no device resources, no host memory) and the
# status of a command whose wait list failed. Any other negative status is
# whatever the implementation or a user event chose (PoCL ends a failed
# command's dependents with -1, which as an API error code would read
# CL_DEVICE_NOT_FOUND): it is reported as a number.
_EXECUTION_ERRORS = (-4, -5, -6, -14)


def execution_status_name(status: int) -> Optional[str]:
    """The name of a command's execution status (CL_COMPLETE, CL_RUNNING, ...,
    or one of the documented execution errors CL_MEM_OBJECT_ALLOCATION_FAILURE,
    CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY and
    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST); None for any other value."""
    if status >= 0 or status in _EXECUTION_ERRORS:
        return CL_STATUS_NAMES.get(status)
    return None


def _status_text(status: int) -> str:
    """An execution status for a message: "CL_OUT_OF_RESOURCES (-5)", "status -42"."""
    name = execution_status_name(status)
    return "%s (%d)" % (name, status) if name else "status %d" % status


_CODE_NAMES = {v: k for k, v in _C.items() if k == "CW_OK" or k.startswith("CW_ERR_")}


class CwError(Exception):
    """A cw_error ``code`` (negative), with the OpenCL ``status`` that came
    with it when there is one, and that status's name (``status_name``).

    With CommandFailed and Timeout the status is the command's execution
    status: ``status_name`` is ``execution_status_name(status)`` (None for a
    negative status without a documented name, which the message gives as
    "status -42"). With the other codes it is the error an OpenCL call
    returned, named by ``status_name()``."""

    code: int
    code_name: str
    status: Optional[int]
    status_name: Optional[str]

    def __init__(self, code: int, status: Optional[int] = None, detail: Optional[str] = None):
        self.code = code
        self.code_name = _CODE_NAMES.get(code, "CW_ERR_%d" % -code)
        self.status = status
        msg = strerror(code)
        if status is None:
            self.status_name = None
        elif code in (_COMMAND_FAILED, _TIMEOUT):
            self.status_name = execution_status_name(status)
            msg += ": " + _status_text(status)
        else:
            self.status_name = status_name(status)
            msg += ": %s (%d)" % (self.status_name, status)
        if detail:
            msg += ": " + detail
        super().__init__(msg)


class InvalidArgument(CwError, ValueError):
    """An argument out of range or of the wrong kind (CW_ERR_INVALID_ARGUMENT)."""


class InvalidEvent(CwError):
    """The OpenCL implementation rejected the event (CW_ERR_INVALID_EVENT)."""


class Timeout(CwError, TimeoutError):
    """The timeout passed first (CW_ERR_TIMEOUT); ``status`` is the last status read."""


class CommandFailed(CwError):
    """The command ended with a negative execution status (CW_ERR_COMMAND_FAILED)."""


class OpenCLError(CwError):
    """Another OpenCL call failed (CW_ERR_OPENCL); ``status`` is its error code."""


class NoMemory(CwError, MemoryError):
    """Allocation failed or cw's completion pool is full (CW_ERR_NO_MEMORY)."""


class Unsupported(CwError):
    """A valid request the strategy cannot honour (CW_ERR_UNSUPPORTED)."""


class NoResources(CwError, OSError):
    """Out of file descriptors, epoll watches or another system limit (CW_ERR_NO_RESOURCES)."""


class Interrupted(CwError, InterruptedError):
    """The wait's interrupt descriptor became readable first (CW_ERR_INTERRUPTED). The
    binding's own waits never raise it: a signal whose handler returns lets them wait on."""


_CLASSES: Dict[int, type] = {
    _C["CW_ERR_INVALID_ARGUMENT"]: InvalidArgument,
    _C["CW_ERR_INVALID_EVENT"]: InvalidEvent,
    _C["CW_ERR_TIMEOUT"]: Timeout,
    _C["CW_ERR_COMMAND_FAILED"]: CommandFailed,
    _C["CW_ERR_OPENCL"]: OpenCLError,
    _C["CW_ERR_NO_MEMORY"]: NoMemory,
    _C["CW_ERR_UNSUPPORTED"]: Unsupported,
    _C["CW_ERR_NO_RESOURCES"]: NoResources,
    _C["CW_ERR_INTERRUPTED"]: Interrupted,
}


def _error(code: int, status: Optional[int] = None, **extra: Any) -> CwError:
    # A code this binding does not know (a later libcw) is still a CwError.
    err = _CLASSES.get(code, CwError)(code, status)
    for k, v in extra.items():
        setattr(err, k, v)
    return err


def _bad(detail: str) -> InvalidArgument:
    return InvalidArgument(_INVALID_ARGUMENT, None, detail)


# --- arguments: checked here so that nothing wraps silently in ctypes ------


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a number of seconds, not %r" % (name, value))
    if math.isnan(value):
        raise _bad("%s must not be NaN" % name)
    if value < 0:
        raise _bad("%s must not be negative (got %r)" % (name, value))
    return value  # type: ignore[return-value]


def _timeout_us(timeout: Optional[float]) -> Optional[int]:
    """Seconds to cw's int64 microseconds; None for no timeout, 0 for a
    timeout of 0 (a look without waiting, CW_WAIT_POLL)."""
    if timeout is None:
        return None
    t = _real("timeout", timeout)
    if math.isinf(t):
        return None
    if t == 0:
        return 0
    us = math.ceil(t * 1_000_000)
    if us > _ffi.INT64_MAX:
        # Near INT64_MAX µs the float product rounds up past it (TIMEOUT_MAX
        # itself becomes 2**63): decide on the exact value. Only here: below,
        # the float product is what people mean (0.001 s is 1000 µs, where the
        # double nearest 0.001 is a little more).
        exact = t if isinstance(t, numbers.Rational) else Fraction(float(t))
        us = math.ceil(exact * 1_000_000)
    if us > _ffi.INT64_MAX:
        raise _bad("timeout must be at most %d.%06d s (INT64_MAX microseconds, the range of "
                   "cw_wait_options.timeout_us), got %r; use None or float('inf') for no "
                   "timeout" % (divmod(_ffi.INT64_MAX, 1_000_000) + (timeout,)))
    return us


def _check_interval_us(check_interval: Optional[float]) -> int:
    if check_interval is None:
        return 0  # cw's default
    t = _real("check_interval", check_interval)
    limit = _C["CW_CHECK_INTERVAL_US_MAX"]
    if math.isinf(t) or math.ceil(t * 1_000_000) > limit:
        raise _bad("check_interval must be at most %g s (CW_CHECK_INTERVAL_US_MAX = %d µs), "
                   "got %r" % (limit / 1e6, limit, check_interval))
    return math.ceil(t * 1_000_000)


def _spin_us(spin_us: Optional[int]) -> int:
    if spin_us is None:
        return 0  # cw's default
    if isinstance(spin_us, bool) or not isinstance(spin_us, numbers.Integral):
        raise TypeError("spin_us must be an int (microseconds), not %r" % (spin_us,))
    limit = _C["CW_SPIN_US_MAX"]
    if not 0 <= spin_us <= limit:
        raise _bad("spin_us must be in 0..%d (CW_SPIN_US_MAX; 0 or None for cw's default), got "
                   "%d" % (limit, spin_us))
    return int(spin_us)


def _strategy(strategy: Union[str, int]) -> int:
    if isinstance(strategy, str):
        code = ctypes.c_int()
        if _lib.cw_strategy_from_name(strategy.encode(), ctypes.byref(code)) != _OK:
            raise _bad("unknown strategy %r (one of: %s)" % (strategy, ", ".join(strategies())))
        return code.value
    if isinstance(strategy, bool) or not isinstance(strategy, numbers.Integral):
        raise TypeError("strategy must be a name from cw.strategies(), not %r" % (strategy,))
    if not 0 <= strategy < len(strategies()):
        raise _bad("strategy %d is outside 0..%d (cw_strategy)" % (strategy,
                                                                   len(strategies()) - 1))
    return int(strategy)


_HANDLE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_void_p)) - 1


def _handle_value(handle: Any) -> int:
    if isinstance(handle, bool) or not isinstance(handle, numbers.Integral):
        raise TypeError("a cl_event handle is an int, not %s" % _describe(handle))
    if not 0 < handle <= _HANDLE_MAX:
        raise _bad("a cl_event handle must be in 1..%#x, got %r" % (_HANDLE_MAX, handle))
    return int(handle)


class RawEvent:
    """A raw ``cl_event`` handle (an int) that the caller vouches for.

    The waits accept pyopencl events, whose handles pyopencl keeps valid,
    and this: the one way to pass a handle from elsewhere (another binding,
    C code, ``pyopencl.Event.int_ptr``). cw cannot check it: the handle goes
    to OpenCL as it is, and one that is not a live ``cl_event`` (released,
    or another kind of object) is undefined behaviour in the OpenCL
    implementation, a crash at best. Keep the event alive (retained) until
    the wait returns. Plain ints are refused so that no stray number, such as
    a pyopencl Context's ``int_ptr``, is taken for an event by accident.

    ``RawEvent(handle)``: handle is an int in 1..(2**64 - 1) (not a bool);
    TypeError or InvalidArgument otherwise.
    """

    __slots__ = ("_handle",)

    def __init__(self, handle: int):
        self._handle = _handle_value(handle)

    @property
    def handle(self) -> int:
        """The cl_event handle, as an int."""
        return self._handle

    def __repr__(self) -> str:
        return "cw.RawEvent(%#x)" % self._handle

    def __eq__(self, other: object) -> bool:
        return type(other) is RawEvent and other._handle == self._handle  # type: ignore

    def __hash__(self) -> int:
        return hash((RawEvent, self._handle))


Event = Union[_HasIntPtr, RawEvent]
"""A ``pyopencl.Event`` (any subclass: ``UserEvent``, ``NannyEvent``) or a
``cw.RawEvent``."""

_repr = reprlib.Repr()
_repr.maxother = 80
_repr.maxstring = 40


def _describe(value: Any) -> str:
    """What was passed, for a TypeError: its type and a bounded repr."""
    t = type(value)
    module = t.__module__
    if module.startswith("pyopencl.") and getattr(sys.modules.get("pyopencl"), t.__qualname__,
                                                  None) is t:
        module = "pyopencl"  # pyopencl._cl.Context is pyopencl.Context
    name = t.__qualname__ if module == "builtins" else "%s.%s" % (module, t.__qualname__)
    return "%s %s" % (name, _repr.repr(value))


# pyopencl.Event once pyopencl is imported. The binding does not import
# pyopencl itself (it works without it): an object cannot be a pyopencl
# event unless pyopencl is already in sys.modules.
_pyopencl_event: Optional[type] = None


def _pyopencl_event_class() -> Optional[type]:
    global _pyopencl_event
    cls = getattr(sys.modules.get("pyopencl"), "Event", None)
    if isinstance(cls, type):
        _pyopencl_event = cls
        return cls
    return None


def _handle(event: Event) -> int:
    """The cl_event handle of a pyopencl event or a RawEvent; TypeError for
    anything else. Only pyopencl's Event class is trusted to hold a live
    event: other pyopencl objects (Context, Buffer, ...) have an ``int_ptr``
    too, and handing one to OpenCL as an event crashes or misbehaves."""
    cls = _pyopencl_event or _pyopencl_event_class()
    if cls is not None and isinstance(event, cls):
        handle = event.int_ptr
    elif type(event) is RawEvent:
        return event.handle  # checked when it was made
    else:
        hint = ""
        if isinstance(event, (list, tuple)):
            hint = " (use wait_all or wait_any for several)"
        elif isinstance(event, numbers.Integral) and not isinstance(event, bool):
            hint = " (wrap a raw cl_event handle in cw.RawEvent(handle), which says it is trusted)"
        elif cls is not None and type(event).__module__.startswith("pyopencl"):
            hint = " (only events are waited on, not other OpenCL objects)"
        raise TypeError("expected a pyopencl event (pyopencl.Event, UserEvent, NannyEvent) or "
                        "a cw.RawEvent, got %s%s" % (_describe(event), hint))
    if not 0 < handle <= _HANDLE_MAX:
        # pyopencl.Event.from_int_ptr(0) makes one
        raise _bad("a cl_event handle must be in 1..%#x, got %r" % (_HANDLE_MAX, handle))
    return handle


def _handles(events: Iterable[Event]) -> List[int]:
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise TypeError("expected a sequence of events, got %r" % (events,))
    handles = [_handle(e) for e in events]
    limit = _C["CW_WAIT_MANY_MAX"]
    if not 1 <= len(handles) <= limit:
        raise _bad("between 1 and %d events (CW_WAIT_MANY_MAX) per call, got %d"
                   % (limit, len(handles)))
    return handles


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        # A truthiness test would take flush="no" for True.
        raise TypeError("%s must be True or False, not %s" % (name, _describe(value)))
    return value


def _options(strategy: Union[str, int], check_interval: Optional[float],
             spin_us: Optional[int], flush: bool, latency: bool = False) -> _ffi.WaitOptions:
    opts = _ffi.WaitOptions()  # zeroed: reserved fields must stay 0
    opts.strategy = _strategy(strategy)
    opts.flags = (0 if _bool("flush", flush) else _C["CW_WAIT_NO_FLUSH"]) | (
        _LATENCY if _bool("latency", latency) else 0)
    opts.check_interval_us = _check_interval_us(check_interval)
    opts.spin_us = _spin_us(spin_us)
    return opts


# The calls into libcw that continued a wait already counted (each call after
# the first, and the timeout or interrupt of the call before it): stats()
# takes them out, so that one wait counts once in waits and, when it times
# out, once in timeouts, as in C.
_continued_lock = threading.Lock()
_continued = [0]


def _continue_counted() -> None:
    with _continued_lock:
        _continued[0] += 1


# The main thread's interrupt pipe: Python's own signal handler (the C one,
# which runs on whichever thread the signal lands) writes a byte to it while
# it is the wakeup descriptor (signal.set_wakeup_fd), and libcw's wait ends
# with CW_ERR_INTERRUPTED when its read end is readable. Made once per
# process; a forked child makes its own.
_pipe: List[int] = []


def _interrupt_pipe() -> Tuple[int, int]:
    if not _pipe:
        _pipe.extend(os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC))
    return _pipe[0], _pipe[1]


def _forget_pipe() -> None:
    for fd in _pipe:
        os.close(fd)
    _pipe.clear()


os.register_at_fork(after_in_child=_forget_pipe)


def _pass_on(r: int, old: int) -> None:
    """Empty the pipe, writing what it held (signal numbers) to the wakeup
    descriptor that was there before, so that an event loop's signal
    handling still sees them."""
    while True:
        try:
            data = os.read(r, 512)
        except BlockingIOError:
            return
        if not data:
            return
        if old >= 0:
            try:
                os.write(old, data)
            except OSError:
                pass  # full or closed: that loop would have dropped them too


def _remaining_us(deadline: Optional[int]) -> int:
    if deadline is None:
        return 0
    return max(1, -(-(deadline - time.monotonic_ns()) // 1000))


def _wait_call(call: Callable[[], int], opts: _ffi.WaitOptions, timeout_us: Optional[int]) -> int:
    """Run one of cw's waits (``call``) until it returns something other
    than a timeout of its own slice, or the caller's timeout passes.

    Python runs signal handlers only in the main thread, between bytecodes.
    Other threads get no signals: they make one call with the whole timeout.
    In the main thread the wait is one call that Python's signal handling
    interrupts (CW_WAIT_INTERRUPT_FD on the wakeup descriptor): the handlers
    then run here (a KeyboardInterrupt propagates) and, where none raises,
    the wait goes on. Where libcw cannot honour that flag (the strategies
    that wait in the driver, on a condition variable or in polls), each call
    is bounded to _SLICE_US and the loop gives the handlers their turn
    between calls. cw's waits are safe to abandon at any point, and each
    call starts afresh from the event's current status. A timeout of 0 is
    one look (CW_WAIT_POLL), in any thread.
    """
    if timeout_us == 0:
        opts.flags |= _POLL
        opts.timeout_us = 0
        return call()
    old = None  # the wakeup descriptor before ours; None: no signals in this thread
    if threading.current_thread() is threading.main_thread():
        r, w = _interrupt_pipe()
        _pass_on(r, -1)  # a byte left by a signal that came between waits is spent
        try:
            old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter's main thread: no signals here either
            pass
    if old is None:
        opts.timeout_us = timeout_us or 0
        return call()
    deadline = None if timeout_us is None else time.monotonic_ns() + timeout_us * 1000
    try:
        opts.flags |= _INTERRUPT_FD
        opts.interrupt_fd = r
        while True:
            opts.timeout_us = _remaining_us(deadline)
            rc = call()
            if rc != _INTERRUPTED:
                break
            _pass_on(r, old)
            # The handlers run about here; a wait that goes on counts once.
            _continue_counted()
        if rc != _UNSUPPORTED:
            return rc
    finally:
        signal.set_wakeup_fd(old)
        _pass_on(r, old)
    opts.flags &= ~_INTERRUPT_FD
    opts.interrupt_fd = 0
    while True:
        slice_us = _SLICE_US
        if deadline is not None:
            slice_us = min(slice_us, _remaining_us(deadline))
        opts.timeout_us = slice_us
        rc = call()
        if rc != _TIMEOUT or (deadline is not None and time.monotonic_ns() >= deadline):
            return rc
        _continue_counted()


# --- synchronous waits ---------------------------------------------------------


def wait(event: Event, *, strategy: Union[str, int] = "default",
         timeout: Optional[float] = None, check_interval: Optional[float] = None,
         spin_us: Optional[int] = None, flush: bool = True, latency: bool = False) -> int:
    """Wait for ``event`` in libcw with the GIL released (cw_wait).

    event: a ``pyopencl.Event`` (or subclass) or a ``cw.RawEvent``; any
    other object raises TypeError. strategy: a name from ``strategies()``.
    timeout: seconds, None or ``float('inf')`` for none, 0 for one look
    without waiting (CW_WAIT_POLL). check_interval: seconds before the first
    status check for a failed command (None or 0: cw's 16 ms). spin_us: the
    spin budget of spin-park and auto, in microseconds (None or 0: cw's
    default).
    flush: True or False (TypeError otherwise); False passes
    CW_WAIT_NO_FLUSH. latency: True or False (TypeError otherwise); True
    passes CW_WAIT_LATENCY, which asks the default strategy (auto) for a
    shorter time from the command's end to the return at some CPU cost.
    Returns the execution status, CL_COMPLETE; raises CommandFailed,
    Timeout or another CwError.
    """
    handle = _handle(event)
    opts = _options(strategy, check_interval, spin_us, flush, latency)
    timeout_us = _timeout_us(timeout)
    status = ctypes.c_int32(0)
    rc = _wait_call(lambda: _lib.cw_wait(handle, ctypes.byref(opts), ctypes.byref(status)), opts,
                 timeout_us)
    if rc != _OK:
        raise _error(rc, status.value)
    return status.value


def wait_all(events: Iterable[Event], *, strategy: Union[str, int] = "default",
             timeout: Optional[float] = None, check_interval: Optional[float] = None,
             spin_us: Optional[int] = None, flush: bool = True, latency: bool = False
             ) -> List[int]:
    """Wait until every event finished (cw_wait_all); options as ``wait``
    (``strategy`` and ``spin_us`` are checked but unused: cw_wait_all waits
    one way).

    Returns each event's status (all CL_COMPLETE). When one failed it still
    waits for the others, then raises CommandFailed; every error has
    ``statuses`` (per event, as cw_wait_all reports them).
    """
    handles = _handles(events)
    n = len(handles)
    arr = (ctypes.c_void_p * n)(*handles)
    opts = _options(strategy, check_interval, spin_us, flush, latency)
    timeout_us = _timeout_us(timeout)
    statuses = (ctypes.c_int32 * n)()
    rc = _wait_call(lambda: _lib.cw_wait_all(arr, n, ctypes.byref(opts), statuses), opts,
                 timeout_us)
    result = list(statuses)
    if rc != _OK:
        bad = next((s for s in result if s < 0), None) if rc == _COMMAND_FAILED else None
        raise _error(rc, bad, statuses=result)
    return result


def wait_any(events: Iterable[Event], *, strategy: Union[str, int] = "default",
             timeout: Optional[float] = None, check_interval: Optional[float] = None,
             spin_us: Optional[int] = None, flush: bool = True, latency: bool = False
             ) -> Tuple[int, int]:
    """Wait until at least one event finished (cw_wait_any); options as
    ``wait`` (``strategy`` and ``spin_us`` are checked but unused).

    Returns (index, status) of a completed event (the lowest index when
    several finished). A failed event counts as finished: CommandFailed with
    its ``index``.
    """
    handles = _handles(events)
    n = len(handles)
    arr = (ctypes.c_void_p * n)(*handles)
    opts = _options(strategy, check_interval, spin_us, flush, latency)
    timeout_us = _timeout_us(timeout)
    index = ctypes.c_size_t(n)
    status = ctypes.c_int32(0)
    rc = _wait_call(lambda: _lib.cw_wait_any(arr, n, ctypes.byref(opts), ctypes.byref(index),
                                          ctypes.byref(status)), opts, timeout_us)
    if rc != _OK:
        raise _error(rc, status.value, index=index.value if index.value < n else None)
    return index.value, status.value


# --- asyncio ---------------------------------------------------------------------

import struct as _struct  # noqa: E402  (here with the code that uses it)

# One cw_notifier_result (tag, rc, status) as the drain writes it: unpacking a
# batch with one C loop costs a fraction of reading the ctypes fields one by one.
_RESULT = _struct.Struct("=Qii")
assert _RESULT.size == ctypes.sizeof(_ffi.NotifierResult)


class _HoldTimer:
    """A timerfd (CLOCK_MONOTONIC, non-blocking), armed in nanoseconds:
    asyncio's own timers wait in epoll_wait, whose timeout is whole
    milliseconds, far coarser than a hold."""

    class _Itimerspec(ctypes.Structure):
        # struct itimerspec: two struct timespec {time_t tv_sec; long tv_nsec}.
        _fields_ = [("it_interval", ctypes.c_long * 2), ("it_value", ctypes.c_long * 2)]

    _libc: Optional[ctypes.CDLL] = None

    def __init__(self) -> None:
        libc = _HoldTimer._libc
        if libc is None:
            libc = _HoldTimer._libc = ctypes.CDLL(None, use_errno=True)
            libc.timerfd_create.argtypes = [ctypes.c_int, ctypes.c_int]
            libc.timerfd_settime.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                             ctypes.c_void_p]
        # CLOCK_MONOTONIC; TFD_NONBLOCK | TFD_CLOEXEC.
        self.fd = libc.timerfd_create(1, 0o4000 | 0o2000000)
        if self.fd < 0:
            raise _error(_C["CW_ERR_NO_RESOURCES"])
        self._spec = _HoldTimer._Itimerspec()
        self._settime = libc.timerfd_settime

    def arm(self, ns: int) -> None:
        self._spec.it_value[0], self._spec.it_value[1] = divmod(ns, 1_000_000_000)
        self._settime(self.fd, 0, ctypes.byref(self._spec), None)

    def disarm(self) -> None:
        self.arm(0)

    def expired(self) -> None:
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            pass  # disarmed, or read already

    def close(self) -> None:
        os.close(self.fd)


# How long a notifier holds its deliveries after one that left watches
# pending (see Notifier): seconds.
HOLD_DEFAULT = 500e-6


class Notifier:
    """A cw_notifier on an asyncio loop: awaits any number of events on one
    file descriptor, with no thread per wait. Use it from the loop's thread.

    check_interval: seconds before the first status check for failed
    commands (no callback fires for them on PoCL and rusticl); None or 0
    for cw's default. Close it with ``close()`` (or use it as a context
    manager).

    hold: seconds (default ``HOLD_DEFAULT``, 500 µs; 0: none). Each wake-up
    of the loop costs its thread a sleep and a wake-up, more CPU than
    delivering a result. So after a wake-up that delivered results while
    other watches are still pending, the notifier stops waking the loop on
    each completion for ``hold``: the completions that land meanwhile are
    delivered together, in one wake-up at its end, and the hold goes on
    while each one delivers something; a hold that delivers nothing, or
    nothing left to wait for, ends it. The cost is latency: a completion
    that lands during a hold is delivered up to ``hold`` later (plus the
    timer's slack); the first completion after a quiet spell is delivered
    at once. While a watch made with ``latency=True`` is pending there is
    no hold: each completion is delivered at the wake-up it causes.
    """

    _BATCH = 64

    def __init__(self, loop: Optional[asyncio.AbstractEventLoop] = None,
                 check_interval: Optional[float] = None, hold: Optional[float] = None):
        self._loop = loop or asyncio.get_running_loop()
        hold_s = HOLD_DEFAULT if hold is None else _real("hold", hold)
        if math.isinf(hold_s) or hold_s > 1:
            raise _bad("hold must be at most 1 s, got %r" % (hold,))
        self._hold_ns = math.ceil(hold_s * 1e9)
        us = _check_interval_us(check_interval)
        ptr = ctypes.c_void_p()
        rc = _lib.cw_notifier_create(us, ctypes.byref(ptr))
        if rc != _OK:
            raise _error(rc)
        self._ptr: Optional[ctypes.c_void_p] = ptr
        self._fd: int = _lib.cw_notifier_fd(ptr)
        self._tags = itertools.count(1)
        # tag -> (future, event): the event object stays alive while watched.
        self._waiting: Dict[int, Tuple[asyncio.Future, Any]] = {}
        self._results = (_ffi.NotifierResult * self._BATCH)()
        self._bytes = memoryview(self._results).cast("B")
        self._reading = False
        self._timer: Optional[_HoldTimer] = None
        self._holding = False
        # The pending watches made with latency=True: no hold while any is.
        self._urgent: set = set()

    @property
    def fd(self) -> int:
        return self._fd

    @property
    def pending(self) -> int:
        """Watches not yet finished or cancelled."""
        return _lib.cw_notifier_pending(self._ptr) if self._ptr else 0

    def watch(self, event: Event, latency: bool = False) -> Tuple[int, asyncio.Future]:
        """Start watching ``event`` (a pyopencl event or a ``cw.RawEvent``;
        TypeError otherwise): returns (tag, future of its status).
        latency=True: no hold while this watch is pending (its result, and
        every other, is delivered at the wake-up its completion causes)."""
        if not self._ptr:
            raise _bad("the notifier is closed")
        handle = _handle(event)
        urgent = _bool("latency", latency)
        tag = next(self._tags)
        err = ctypes.c_int32(0)
        rc = _lib.cw_notifier_watch(self._ptr, handle, tag, ctypes.byref(err))
        if rc != _OK:
            raise _error(rc, err.value if rc in (_C["CW_ERR_OPENCL"],
                                                 _C["CW_ERR_INVALID_EVENT"]) else None)
        fut = self._loop.create_future()
        self._waiting[tag] = (fut, event)
        if urgent:
            self._urgent.add(tag)
            self._end_hold()
        if not self._reading and not self._holding:
            self._loop.add_reader(self._fd, self._on_readable)
            self._reading = True
        return tag, fut

    def cancel(self, tag: int) -> None:
        """Stop watching: no result will be delivered for ``tag``."""
        if self._waiting.pop(tag, None) is not None and self._ptr:
            _lib.cw_notifier_cancel(self._ptr, tag)
        self._urgent.discard(tag)
        self._idle()

    async def _watched(self, events: Sequence[Event], timeout: Optional[float],
                       latency: bool, body: Callable[[List[asyncio.Future]], Any],
                       last_look: Callable[[], Any]) -> Any:
        timeout_us = _timeout_us(timeout)
        _bool("latency", latency)
        tags: List[int] = []
        futs: List[asyncio.Future] = []
        try:
            for e in events:
                tag, fut = self.watch(e, latency)
                tags.append(tag)
                futs.append(fut)
            coro = body(futs)
            if timeout_us is None:
                return await coro
            try:
                return await asyncio.wait_for(coro, timeout_us / 1e6)
            except asyncio.TimeoutError:
                pass
            # The timeout passed: answer as the synchronous wait would now, with a
            # Timeout carrying the statuses it read, or the result or failure
            # of an event that finished on the deadline.
            return last_look()
        finally:
            for tag, fut in zip(tags, futs):
                # A cancelled await cancels its future too: its watch must go.
                if not fut.done() or fut.cancelled():
                    self.cancel(tag)
                else:
                    fut.exception()  # retrieved: no "never retrieved" warning

    async def wait(self, event: Event, timeout: Optional[float] = None,
                   latency: bool = False) -> int:
        """Await ``event``; returns its status or raises like ``cw.wait``.
        latency: as in ``watch``."""
        _handle(event)
        return await self._watched([event], timeout, latency, lambda futs: futs[0],
                                   lambda: _last_look(wait, event, latency))

    async def wait_all(self, events: Iterable[Event], timeout: Optional[float] = None,
                       latency: bool = False) -> List[int]:
        """Await every event; raises like ``cw.wait_all`` (after all finished)."""
        events = list(events)
        _handles(events)

        async def body(futs: List[asyncio.Future]) -> List[int]:
            await asyncio.wait(futs)
            statuses = []
            first: Optional[CwError] = None
            for f in futs:
                exc = f.exception()
                if exc is None:
                    statuses.append(f.result())
                else:
                    statuses.append(getattr(exc, "status", None))
                    first = first or exc  # type: ignore[assignment]
            if first is not None:
                first.statuses = statuses  # type: ignore[attr-defined]
                raise first
            return statuses

        return await self._watched(events, timeout, latency, body,
                                   lambda: _last_look(wait_all, events, latency))

    async def wait_any(self, events: Iterable[Event], timeout: Optional[float] = None,
                       latency: bool = False) -> Tuple[int, int]:
        """Await the first event to finish: (index, status), like ``cw.wait_any``."""
        events = list(events)
        _handles(events)

        async def body(futs: List[asyncio.Future]) -> Tuple[int, int]:
            await asyncio.wait(futs, return_when=asyncio.FIRST_COMPLETED)
            i = next(i for i, f in enumerate(futs) if f.done())
            exc = futs[i].exception()
            if exc is not None:
                exc.index = i  # type: ignore[attr-defined]
                raise exc
            return i, futs[i].result()

        return await self._watched(events, timeout, latency, body,
                                   lambda: _last_look(wait_any, events, latency))

    def _on_readable(self) -> None:
        if self._deliver() and self._waiting and self._hold_ns and not self._urgent:
            # Completions that land in the next hold_ns are delivered together.
            if self._timer is None:
                self._timer = _HoldTimer()
            self._loop.remove_reader(self._fd)
            self._reading = False
            self._holding = True
            self._timer.arm(self._hold_ns)
            self._loop.add_reader(self._timer.fd, self._on_hold_end)
        else:
            self._idle()

    def _on_hold_end(self) -> None:
        assert self._timer is not None
        self._timer.expired()
        if self._deliver() and self._waiting and not self._urgent:
            self._timer.arm(self._hold_ns)  # still a stream of completions: hold on
            return
        self._end_hold()
        if self._waiting and not self._reading:
            # Level-triggered: a completion that landed since the drain wakes
            # the loop at once.
            self._loop.add_reader(self._fd, self._on_readable)
            self._reading = True
        self._idle()

    def _end_hold(self) -> None:
        if self._holding:
            assert self._timer is not None
            self._loop.remove_reader(self._timer.fd)
            self._timer.disarm()
            self._holding = False

    def _deliver(self) -> int:
        """Drain every result there is and settle the futures; how many."""
        # Drain until a batch comes back short. Runs once per wake-up of the
        # loop, on its thread: every step here is paid per event. The ctypes
        # call itself costs about 3 µs (cw_notifier_drain included); one
        # result's future about as much again.
        drain, results, batch, waiting, urgent = _lib.cw_notifier_drain, self._results, \
            self._BATCH, self._waiting, self._urgent
        delivered = 0
        while self._ptr:
            k = drain(self._ptr, results, batch)
            delivered += k
            for tag, rc, status in _RESULT.iter_unpack(self._bytes[:k * _RESULT.size]):
                entry = waiting.pop(tag, None)
                if urgent:
                    urgent.discard(tag)
                if entry is None or entry[0].done():
                    continue
                if rc == _OK:
                    entry[0].set_result(status)
                else:
                    entry[0].set_exception(_error(rc, status))
            if k < batch:
                break
        return delivered

    def _idle(self) -> None:
        if not self._waiting:
            if self._reading:
                self._loop.remove_reader(self._fd)
                self._reading = False
            self._end_hold()

    def close(self) -> None:
        """Destroy the notifier; pending awaits are cancelled."""
        if not self._ptr:
            return
        self._bytes.release()
        if self._reading:
            self._loop.remove_reader(self._fd)
            self._reading = False
        self._end_hold()
        if self._timer is not None:
            self._timer.close()
            self._timer = None
        for fut, _ in self._waiting.values():
            fut.cancel()
        self._waiting.clear()
        _lib.cw_notifier_destroy(self._ptr)
        self._ptr = None

    def __enter__(self) -> "Notifier":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_ptr", None):
            _lib.cw_notifier_destroy(self._ptr)
            self._ptr = None
        if getattr(self, "_timer", None) is not None:
            self._timer.close()  # type: ignore[union-attr]
            self._timer = None


def _last_look(sync_wait: Callable[..., Any], events: Any, latency: bool) -> Any:
    """After an asynchronous wait's timeout: the synchronous wait's one
    look (timeout 0, CW_WAIT_POLL), without flushing, from the loop's thread."""
    return sync_wait(events, timeout=0, flush=False, latency=latency)


# One notifier per running loop, kept only while awaits are pending: the
# loop is not referenced once its last await finished.
_loop_notifiers: Dict[asyncio.AbstractEventLoop, Notifier] = {}


def _notifier_of(loop: asyncio.AbstractEventLoop) -> Notifier:
    n = _loop_notifiers.get(loop)
    if n is None:
        n = _loop_notifiers[loop] = Notifier(loop)
    return n


def _unshare(loop: asyncio.AbstractEventLoop, n: Notifier) -> None:
    if not n._waiting and _loop_notifiers.get(loop) is n:
        del _loop_notifiers[loop]
        n.close()


async def _shared(use: Callable[[Notifier], Any]) -> Any:
    loop = asyncio.get_running_loop()
    n = _notifier_of(loop)
    try:
        return await use(n)
    finally:
        _unshare(loop, n)


async def wait_async(event: Event, *, timeout: Optional[float] = None,
                     latency: bool = False) -> int:
    """Await ``event`` on the running loop through its shared notifier.

    timeout: seconds, None or ``float('inf')`` for none. Returns CL_COMPLETE
    or raises CommandFailed, Timeout or another CwError. When the timeout
    passes, the answer is ``cw.wait``'s with ``timeout=0`` (one look): a
    Timeout with the status read, as the synchronous wait's, or the result
    of an event that finished on the deadline. latency=True: the notifier
    delivers at once while this await is pending, without its hold
    (``Notifier``).
    """
    if timeout is not None or latency is not False:
        return await _shared(lambda n: n.wait(event, timeout, latency))
    # The common case, awaited per event by the thousand: one watch and its
    # future, without the layers of coroutines that timeouts and many events
    # need (each is paid again when the await resumes).
    loop = asyncio.get_running_loop()
    n = _notifier_of(loop)
    try:
        tag, fut = n.watch(event)
        try:
            return await fut
        finally:
            if not fut.done() or fut.cancelled():
                n.cancel(tag)  # the await was cancelled: its watch must go
    finally:
        _unshare(loop, n)


async def wait_all_async(events: Iterable[Event], *, timeout: Optional[float] = None,
                         latency: bool = False) -> List[int]:
    """Await every event on the running loop (as ``wait_all``, no thread)."""
    return await _shared(lambda n: n.wait_all(events, timeout, latency))


async def wait_any_async(events: Iterable[Event], *, timeout: Optional[float] = None,
                         latency: bool = False) -> Tuple[int, int]:
    """Await the first of the events to finish: (index, status), as ``wait_any``."""
    return await _shared(lambda n: n.wait_any(events, timeout, latency))


# --- statistics, versions, names ---------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """cw_stats: process-wide counters since start or ``reset_stats()``.

    In the main thread a synchronous wait longer than 50 ms is several calls
    into libcw (see ``wait``): ``waits`` and ``timeouts`` count it once, as
    C counts one call; the counters of the steps inside a wait (``parks``,
    ``polls``, the latency samples, ...) count each call's steps.
    """

    waits: int
    spins: int
    yields: int
    parks: int
    sleeps: int
    polls: int
    timeouts: int
    latency_count: int
    latency_us: Tuple[int, ...]  # log2 buckets of wake-up latency (cw/stats.h)


def stats() -> Stats:
    """A snapshot of cw's counters (cw_stats_get)."""
    s = _ffi.Stats()
    with _continued_lock:
        rc = _lib.cw_stats_get(ctypes.byref(s))
        continued = _continued[0]
    if rc != _OK:
        raise _error(rc)
    # A reset between a slice's return and its count here can leave more
    # continuations than calls counted since: never below zero.
    return Stats(max(0, s.waits - continued), s.spins, s.yields, s.parks, s.sleeps, s.polls,
                 max(0, s.timeouts - continued), s.latency_count, tuple(s.latency_us))


@dataclass(frozen=True)
class AutoStats:
    """cw_stats_auto: what cw learned of the platforms' drivers and what the
    waits decided from it (cw/stats.h and cw_stats_get(3) say what each
    field counts). The counters run since start or ``reset_stats()``; the
    ``platforms_*`` fields and ``lateness_ns`` are what is known now, which
    ``reset_stats()`` leaves alone."""

    platforms_probed: int
    platforms_failed_fire: int
    platforms_failed_silent: int
    platforms_late: int
    lateness_ns: int
    lateness_samples: int
    unchecked_waits: int
    deferred_checks: int
    checks: int
    hybrid_waits: int
    hybrid_callback_first: int
    late_callbacks: int
    driver_waits: int
    platforms_driver_wait: int


def auto_stats() -> AutoStats:
    """A snapshot of what cw learned of the drivers (cw_stats_auto_get)."""
    s = _ffi.StatsAuto()
    rc = _lib.cw_stats_auto_get(ctypes.byref(s), ctypes.sizeof(s))
    if rc != _OK:
        raise _error(rc)
    return AutoStats(*(getattr(s, name) for name, _ in _ffi.StatsAuto._fields_))


def reset_stats() -> None:
    """Zero cw's counters (cw_stats_reset)."""
    with _continued_lock:
        _lib.cw_stats_reset()
        _continued[0] = 0


def strategies() -> List[str]:
    """The strategy names the waits accept, "default" first."""
    names: List[str] = []
    for i in itertools.count():
        name = _lib.cw_strategy_name(i)
        if name is None:
            return names
        names.append(name.decode())
    return names  # unreachable; for type checkers


def library_path() -> str:
    """The path the library was loaded from, or its soname
    (libcw-opencl.so.<major>) when the loader's search found it."""
    return str(_lib._name)


def library_found_by() -> str:
    """How the library was found: "CW_LIBRARY", "loader" or "pkg-config"."""
    return _found_by


def library_version() -> Tuple[int, int, int]:
    """The running libcw's (major, minor, patch), from cw_version()."""
    return _library_version


def library_version_string() -> str:
    """cw_version_string() of the running libcw."""
    return _lib.cw_version_string().decode()
