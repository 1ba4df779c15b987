# SPDX-License-Identifier: MIT
"""pyopencl's own waits through cw.

``install()`` replaces, in the imported pyopencl, the calls that make the
caller wait on the device, so that unmodified pyopencl code waits in cw::

    import pyopencl as cl
    import cw.pyopencl

    cw.pyopencl.install()                  # or: with cw.pyopencl.installed(): ...
    queue.finish()                         # now cw's wait, Ctrl-C ends it

Routed, while installed:

- ``Event.wait()`` (every event: ``UserEvent``, ``NannyEvent``, the ones
  ``enqueue_*`` return): ``cw.wait``;
- ``pyopencl.wait_for_events(events)``: ``cw.wait_all``;
- ``CommandQueue.finish()``: a marker enqueued on the queue (it completes
  once every command enqueued before it has), waited on with ``cw.wait``,
  then the driver's ``clFinish``, which then has nothing left to wait for
  unless other threads enqueued more meanwhile; it answers as before;
- the blocking transfers: ``enqueue_copy`` and the other reads and writes
  of buffers, rectangles and images, and ``enqueue_map_buffer`` and
  ``enqueue_map_image``, with ``is_blocking=True`` (their default), are
  enqueued non-blocking and then waited on with ``cw.wait``: the same data
  and the same returned objects, once the wait returns. (Ctrl-C there ends
  cw's wait; the transfer's NannyEvent, dropped with the exception, still
  waits for the transfer in pyopencl's destructor, which keeps the host
  buffer valid until the device is done with it.)

Each such wait is cw's (the strategy and options given to ``install``), with
the GIL released; in the main thread Ctrl-C ends it with
``KeyboardInterrupt``. A failed command raises pyopencl's own error, as
pyopencl's wait would (``pyopencl.RuntimeError`` with code
``EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST`` and the routine pyopencl
names), its message giving the command's execution status, which is also
its ``status`` attribute. Anything cw cannot take (no events, an object
that is not an event, more than ``cw.WAIT_MANY_MAX`` events) or fails on
otherwise (an invalid event) goes to pyopencl's original call, which
answers as it always did.

Only calls made through pyopencl's classes and module attributes are
routed: a name bound before ``install()`` (``from pyopencl import
wait_for_events``) keeps the original. pyopencl's own modules (``array``,
``algorithm``, ...) call through the module, so their waits are routed.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import pyopencl as _cl_module

import cw as _cw

__all__ = ["install", "uninstall", "installed", "is_installed", "options"]

_cl = _cl_module._cl

# CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: what clWaitForEvents returns
# for a failed command, and so what pyopencl raises with.
_EXEC_STATUS_ERROR = -14

_lock = threading.Lock()
# (owner, attribute name) -> the original, while installed.
_originals: Dict[Tuple[Any, str], Any] = {}
# The options of the routed waits: replaced whole, never changed in place, so
# that a wait in another thread reads one consistent set.
_opts: Dict[str, Any] = {}


def _failed(routine: str, err: _cw.CommandFailed) -> Exception:
    """pyopencl's error for a failed command, as its own wait raises it,
    with the command's execution status in the message and ``status``."""
    exc = _cl_module.RuntimeError(_cl._ErrorRecord(
        routine=routine, code=_EXEC_STATUS_ERROR,
        msg="the command ended with %s (waited by cw)" % _cw._status_text(err.status)))
    exc.status = err.status  # type: ignore[attr-defined]
    return exc


def _wait_one(event: Any, routine: str, original: Callable[[Any], Any]) -> None:
    try:
        _cw.wait(event, **_opts)
    except _cw.CommandFailed as err:
        raise _failed(routine, err) from err
    except (_cw.CwError, TypeError):
        # Not cw's to answer (an invalid event, no memory, ...): pyopencl's own
        # wait says what it always said.
        original(event)
        return
    if isinstance(event, _cl.NannyEvent):
        # A NannyEvent's wait also lets go of the host buffer it guards: the
        # original does that now, at once (the command has finished).
        original(event)


def _event_wait(original: Callable[[Any], Any]) -> Callable[[Any], None]:
    def wait(self: Any) -> None:
        _wait_one(self, "clWaitForEvents", original)

    wait.__doc__ = original.__doc__
    return wait


def _wait_for_events(original: Callable[[Any], Any]) -> Callable[[Any], None]:
    def wait_for_events(events: Any) -> None:
        try:
            evs: Union[List[Any], Any] = list(events)
        except TypeError:
            evs = events  # not iterable: pyopencl's TypeError
        if not isinstance(evs, list) or not 1 <= len(evs) <= _cw.WAIT_MANY_MAX or not all(
                isinstance(e, _cl.Event) for e in evs):
            return original(evs)
        try:
            _cw.wait_all(evs, **_opts)
        except _cw.CommandFailed as err:
            raise _failed("clWaitForEvents", err) from err
        except _cw.CwError:
            return original(evs)
        if any(isinstance(e, _cl.NannyEvent) for e in evs):
            original(evs)  # releases the nannies' host buffers at once
        return None

    wait_for_events.__doc__ = original.__doc__
    return wait_for_events


def _finish(original: Callable[[Any], Any]) -> Callable[[Any], None]:
    def finish(self: Any) -> None:
        try:
            marker = _cl_module.enqueue_marker(self)
        except _cl_module.Error:
            return original(self)  # an unusable queue: clFinish's own error
        try:
            _cw.wait(marker, **_opts)
        except _cw.CwError:
            pass  # a failed command: clFinish decides, as without cw
        return original(self)

    finish.__doc__ = original.__doc__
    return finish


def _blocking(original: Callable[..., Any], position: int, routine: str,
              returns_pair: bool, event_wait: Callable[[Any], Any]) -> Callable[..., Any]:
    """An enqueue call whose ``is_blocking`` (argument ``position``, or by
    keyword; True by default) makes the driver wait: enqueued non-blocking,
    then waited on by cw."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position:
            if not args[position]:
                return original(*args, **kwargs)
            args = args[:position] + (False,) + args[position + 1:]
        elif kwargs.get("is_blocking", True):
            kwargs["is_blocking"] = False
        else:
            return original(*args, **kwargs)
        result = original(*args, **kwargs)
        event = result[1] if returns_pair else result
        _wait_one(event, routine, event_wait)
        return result

    call.__doc__ = original.__doc__
    return call


# (owner, name, how to wrap it). Every owner is looked up in pyopencl when
# installing, so a pyopencl without one of these is an error at install().
_BLOCKING = [
    # name, position of is_blocking, the OpenCL routine, returns (array, event)
    ("_enqueue_read_buffer", 5, "clEnqueueReadBuffer", False),
    ("_enqueue_write_buffer", 5, "clEnqueueWriteBuffer", False),
    ("_enqueue_read_buffer_rect", 9, "clEnqueueReadBufferRect", False),
    ("_enqueue_write_buffer_rect", 9, "clEnqueueWriteBufferRect", False),
    ("_enqueue_read_image", 8, "clEnqueueReadImage", False),
    ("_enqueue_write_image", 8, "clEnqueueWriteImage", False),
    ("enqueue_map_buffer", 9, "clEnqueueMapBuffer", True),
    ("enqueue_map_image", 9, "clEnqueueMapImage", True),
]


def _targets() -> List[Tuple[Any, str, Callable[[Any], Any]]]:
    out: List[Tuple[Any, str, Callable[[Any], Any]]] = [
        (_cl.Event, "wait", _event_wait),
        (_cl.CommandQueue, "finish", _finish),
        (_cl, "wait_for_events", _wait_for_events),
        (_cl_module, "wait_for_events", _wait_for_events),
    ]
    event_wait = _cl.Event.wait
    for name, pos, routine, pair in _BLOCKING:
        def wrap(orig: Callable[..., Any], pos: int = pos, routine: str = routine,
                 pair: bool = pair) -> Callable[..., Any]:
            return _blocking(orig, pos, routine, pair, event_wait)
        out.append((_cl, name, wrap))
        if getattr(_cl_module, name, None) is getattr(_cl, name):
            out.append((_cl_module, name, wrap))  # re-exported by pyopencl
    return out


def install(strategy: Union[str, int] = "default", *, check_interval: Optional[float] = None,
            spin_us: Optional[int] = None, latency: bool = False) -> None:
    """Route pyopencl's waits through cw (see the module's documentation),
    with these options of ``cw.wait`` (checked here: ``cw.InvalidArgument``
    or TypeError for bad ones). Installing again only changes the options:
    there is one layer, which one ``uninstall()`` removes. Thread-safe."""
    global _opts
    _cw._options(strategy, check_interval, spin_us, True, latency)  # raises for bad options
    with _lock:
        _opts = dict(strategy=strategy, check_interval=check_interval, spin_us=spin_us,
                     latency=latency)
        if _originals:
            return
        targets = _targets()
        for owner, name, wrap in targets:
            _originals[(owner, name)] = getattr(owner, name)
        for owner, name, wrap in targets:
            setattr(owner, name, wrap(_originals[(owner, name)]))


def uninstall() -> None:
    """Give pyopencl back its own waits; nothing happens when not installed."""
    global _opts
    with _lock:
        for (owner, name), original in _originals.items():
            setattr(owner, name, original)
        _originals.clear()
        _opts = {}


def is_installed() -> bool:
    """Whether pyopencl's waits go through cw now."""
    return bool(_originals)


def options() -> Dict[str, Any]:
    """The options the routed waits use (empty when not installed)."""
    return dict(_opts)


@contextlib.contextmanager
def installed(strategy: Union[str, int] = "default", *, check_interval: Optional[float] = None,
              spin_us: Optional[int] = None, latency: bool = False) -> Iterator[None]:
    """``install()`` for a ``with`` block; afterwards the state before it
    (not installed, or installed with the options it had) comes back."""
    with _lock:
        before = dict(_opts) if _originals else None
    install(strategy, check_interval=check_interval, spin_us=spin_us, latency=latency)
    try:
        yield
    finally:
        if before is None:
            uninstall()
        else:
            install(**before)
