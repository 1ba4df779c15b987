# SPDX-License-Identifier: MIT
"""cw for Python: wait on OpenCL events without burning a core.

A ctypes binding of libcw. Events are pyopencl events (anything with an
``int_ptr``) or raw ``cl_event`` handles as ints.

    status = cw.wait(event, strategy="cooperative", timeout=0.5)
    status = await cw.wait_async(event)          # asyncio, no thread per wait

``wait`` releases the GIL and sleeps in libcw; ``wait_async`` registers the
event with a ``cw_notifier`` whose file descriptor the running loop watches
(``loop.add_reader``), so any number of awaits share one descriptor and no
thread. Both return the execution status (``CL_COMPLETE``) or raise
``CommandFailed`` (a negative status), ``Timeout`` (also a ``TimeoutError``)
or another ``CwError``.

The library is found through ``$CW_LIBRARY`` (a path), else the repository's
``build/libcw.so``, else the system's ``libcw.so.1``.
"""

import asyncio
import ctypes
import itertools
import math
import os
import pathlib

__all__ = [
    "CL_COMPLETE", "CwError", "InvalidArgument", "InvalidEvent", "Timeout", "CommandFailed",
    "OpenCLError", "NoMemory", "Unsupported", "NoResources", "wait", "wait_async", "Notifier", "strategies",
    "strerror", "library_path",
]

CL_COMPLETE = 0

# cw_error (include/cw/common.h)
_OK, _INVALID_ARGUMENT, _INVALID_EVENT, _TIMEOUT = 0, -1, -2, -3
_COMMAND_FAILED, _OPENCL, _NO_MEMORY, _UNSUPPORTED, _NO_RESOURCES = -4, -5, -6, -7, -8
_CHECK_INTERVAL_US_MAX = 1000000


class CwError(Exception):
    """A cw_error code; ``status`` is the OpenCL status or error that came with it."""

    def __init__(self, code, status=None):
        self.code = code
        self.status = status
        msg = strerror(code)
        if status is not None:
            msg += " (OpenCL status %d)" % status
        super().__init__(msg)


class InvalidArgument(CwError, ValueError):
    pass


class InvalidEvent(CwError):
    pass


class Timeout(CwError, TimeoutError):
    pass


class CommandFailed(CwError):
    """The command ended with a negative execution status (``status``)."""


class OpenCLError(CwError):
    pass


class NoMemory(CwError, MemoryError):
    pass


class Unsupported(CwError):
    pass


class NoResources(CwError, OSError):
    """Out of file descriptors, epoll watches or another system limit."""


_CLASSES = {
    _INVALID_ARGUMENT: InvalidArgument, _INVALID_EVENT: InvalidEvent, _TIMEOUT: Timeout,
    _COMMAND_FAILED: CommandFailed, _OPENCL: OpenCLError, _NO_MEMORY: NoMemory,
    _UNSUPPORTED: Unsupported, _NO_RESOURCES: NoResources,
}


def _error(code, status=None):
    return _CLASSES.get(code, CwError)(code, status)


class _WaitOptions(ctypes.Structure):  # cw_wait_options (include/cw/wait.h)
    _fields_ = [
        ("strategy", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("timeout_us", ctypes.c_int64),
        ("check_interval_us", ctypes.c_uint32),
        ("parker", ctypes.c_void_p),
        ("spin_us", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32 * 8),
    ]


class _Result(ctypes.Structure):  # cw_notifier_result (include/cw/notify.h)
    _fields_ = [("tag", ctypes.c_uint64), ("rc", ctypes.c_int), ("status", ctypes.c_int32)]


def _find_library():
    env = os.environ.get("CW_LIBRARY")
    if env:
        return env
    build = pathlib.Path(__file__).resolve().parents[3] / "build" / "libcw.so"
    if build.exists():
        return str(build)
    return "libcw.so.1"


def _load():
    lib = ctypes.CDLL(_find_library())
    c_int, c_void_p, c_size_t = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
    sigs = {
        "cw_wait": (c_int, [c_void_p, ctypes.POINTER(_WaitOptions), ctypes.POINTER(ctypes.c_int32)]),
        "cw_strerror": (ctypes.c_char_p, [c_int]),
        "cw_strategy_name": (ctypes.c_char_p, [c_int]),
        "cw_strategy_from_name": (c_int, [ctypes.c_char_p, ctypes.POINTER(c_int)]),
        "cw_notifier_create": (c_int, [ctypes.c_uint32, ctypes.POINTER(c_void_p)]),
        "cw_notifier_destroy": (None, [c_void_p]),
        "cw_notifier_fd": (c_int, [c_void_p]),
        "cw_notifier_watch": (c_int, [c_void_p, c_void_p, ctypes.c_uint64,
                                      ctypes.POINTER(ctypes.c_int32)]),
        "cw_notifier_cancel": (c_int, [c_void_p, ctypes.c_uint64]),
        "cw_notifier_drain": (c_size_t, [c_void_p, ctypes.POINTER(_Result), c_size_t]),
        "cw_notifier_pending": (c_size_t, [c_void_p]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_lib = _load()


def library_path():
    """The path libcw was loaded from."""
    return _lib._name


def strerror(code):
    return _lib.cw_strerror(code).decode()


def strategies():
    """The strategy names cw_wait accepts, "default" first."""
    names, i = [], 0
    while True:
        name = _lib.cw_strategy_name(i)
        if name is None:
            return names
        names.append(name.decode())
        i += 1


def _handle(event):
    if isinstance(event, int) and not isinstance(event, bool):
        return event
    ptr = getattr(event, "int_ptr", None)
    if not isinstance(ptr, int) or ptr == 0:
        raise TypeError("expected a pyopencl event or a cl_event handle, got %r" % (event,))
    return ptr


def _microseconds(seconds):
    # cw reads 0 as "none" or "the default": a requested 0 s becomes 1 µs.
    if seconds < 0:
        raise InvalidArgument(_INVALID_ARGUMENT)
    return max(int(math.ceil(seconds * 1e6)), 1)


def wait(event, strategy="default", timeout=None, check_interval=None, flush=True):
    """Wait for ``event`` in libcw (the GIL is released meanwhile).

    strategy: a name from ``strategies()``; timeout, check_interval: seconds
    (None: none / cw's default); flush=False passes CW_WAIT_NO_FLUSH.
    Returns the execution status (CL_COMPLETE).
    """
    opts = _WaitOptions()
    code = ctypes.c_int()
    if _lib.cw_strategy_from_name(str(strategy).encode(), ctypes.byref(code)) != _OK:
        raise InvalidArgument(_INVALID_ARGUMENT)
    opts.strategy = code.value
    opts.flags = 0 if flush else 1
    if timeout is not None:
        opts.timeout_us = _microseconds(timeout)
    if check_interval is not None:
        opts.check_interval_us = _microseconds(check_interval)
    status = ctypes.c_int32(0)
    rc = _lib.cw_wait(_handle(event), ctypes.byref(opts), ctypes.byref(status))
    if rc != _OK:
        raise _error(rc, status.value)
    return status.value


class Notifier:
    """A cw_notifier on an asyncio loop: awaits any number of events on one
    file descriptor, with no thread per wait. Use it from the loop's thread.

    check_interval: seconds before the first status check (failed commands
    fire no callback on PoCL; see include/cw/notify.h). None: cw's default.
    """

    _BATCH = 64

    def __init__(self, loop=None, check_interval=None):
        self._loop = loop or asyncio.get_running_loop()
        us = 0 if check_interval is None else _microseconds(check_interval)
        if us > _CHECK_INTERVAL_US_MAX:
            raise InvalidArgument(_INVALID_ARGUMENT)
        ptr = ctypes.c_void_p()
        rc = _lib.cw_notifier_create(us, ctypes.byref(ptr))
        if rc != _OK:
            raise _error(rc)
        self._ptr = ptr
        self._fd = _lib.cw_notifier_fd(ptr)
        self._tags = itertools.count(1)
        self._waiting = {}  # tag -> (future, event): the event object stays alive too
        self._results = (_Result * self._BATCH)()
        self._reading = False

    @property
    def fd(self):
        return self._fd

    @property
    def pending(self):
        """Watches not yet finished or cancelled."""
        return _lib.cw_notifier_pending(self._ptr) if self._ptr else 0

    def watch(self, event):
        """Start watching ``event``: returns (tag, future of its status)."""
        if not self._ptr:
            raise InvalidArgument(_INVALID_ARGUMENT)
        handle = _handle(event)
        tag = next(self._tags)
        err = ctypes.c_int32(0)
        rc = _lib.cw_notifier_watch(self._ptr, handle, tag, ctypes.byref(err))
        if rc != _OK:
            raise _error(rc, err.value)
        fut = self._loop.create_future()
        self._waiting[tag] = (fut, event)
        if not self._reading:
            self._loop.add_reader(self._fd, self._on_readable)
            self._reading = True
        return tag, fut

    def cancel(self, tag):
        """Stop watching: no result will be delivered for ``tag``."""
        if self._waiting.pop(tag, None) is not None and self._ptr:
            _lib.cw_notifier_cancel(self._ptr, tag)
        self._idle()

    async def wait(self, event, timeout=None):
        """Await ``event``; returns its status or raises like ``wait``."""
        tag, fut = self.watch(event)
        try:
            if timeout is None:
                return await fut
            try:
                return await asyncio.wait_for(fut, timeout)
            except asyncio.TimeoutError:
                raise Timeout(_TIMEOUT) from None
        finally:
            if not fut.done() or fut.cancelled():
                self.cancel(tag)

    def _on_readable(self):
        # Level-triggered: drain until a batch comes back short.
        while self._ptr:
            k = _lib.cw_notifier_drain(self._ptr, self._results, self._BATCH)
            for r in self._results[:k]:
                fut, _ = self._waiting.pop(r.tag, (None, None))
                if fut is None or fut.done():
                    continue
                if r.rc == _OK:
                    fut.set_result(r.status)
                else:
                    fut.set_exception(_error(r.rc, r.status))
            if k < self._BATCH:
                break
        self._idle()

    def _idle(self):
        if self._reading and not self._waiting:
            self._loop.remove_reader(self._fd)
            self._reading = False

    def close(self):
        """Destroy the notifier; pending awaits are cancelled."""
        if not self._ptr:
            return
        if self._reading:
            self._loop.remove_reader(self._fd)
            self._reading = False
        for fut, _ in self._waiting.values():
            fut.cancel()
        self._waiting.clear()
        _lib.cw_notifier_destroy(self._ptr)
        self._ptr = None

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.cw_notifier_destroy(self._ptr)
            self._ptr = None


# One notifier per running loop, kept only while awaits are pending: the
# loop is not referenced once its last await finished.
_loop_notifiers = {}


async def wait_async(event, timeout=None):
    """Await ``event`` on the running asyncio loop, through a shared cw_notifier.

    timeout: seconds, None for none. Returns the execution status (CL_COMPLETE)
    or raises CommandFailed, Timeout or another CwError.
    """
    loop = asyncio.get_running_loop()
    n = _loop_notifiers.get(loop)
    if n is None:
        n = _loop_notifiers[loop] = Notifier(loop)
    try:
        return await n.wait(event, timeout)
    finally:
        if not n._waiting and _loop_notifiers.get(loop) is n:
            del _loop_notifiers[loop]
            n.close()
