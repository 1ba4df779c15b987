# SPDX-License-Identifier: MIT
"""Run by test_types.py in a child interpreter, so that a crash is a failed
test: hands one kind of object (argv[1]) to every entry point that takes
events and checks that pyopencl events are waited on and everything else
raises TypeError naming what was passed. Prints one line per check, then
"all checked"; exits non-zero on the first wrong answer."""

import asyncio
import sys

import cw

# Objects that need no pyopencl: the binding must not import it either.
PLAIN = {
    "str": ("x", "str 'x'"),
    "float": (1.0, "float 1.0"),
    "None": (None, "NoneType None"),
    "True": (True, "bool True"),
    "False": (False, "bool False"),
    "object": (object(), "object <object object"),
    "int": (0x1234, "int 4660"),
    "bytes": (b"\x01", "bytes b'\\x01'"),
}


def cl_objects(kind):
    """(the object, the name the TypeError must give, a completed event)."""
    import numpy as np
    import pyopencl as cl

    from clhelpers import AXPY, platform_name

    want = platform_name().lower()
    platform = next(p for p in cl.get_platforms() if want in p.name.lower())
    device = platform.get_devices()[0]
    ctx = cl.Context(devices=[device])
    queue = cl.CommandQueue(ctx)
    done = cl.UserEvent(ctx)
    done.set_status(cl.command_execution_status.COMPLETE)
    mf = cl.mem_flags
    host = np.zeros(16, dtype=np.float32)
    make = {
        "Platform": lambda: platform,
        "Device": lambda: device,
        "Context": lambda: ctx,
        "CommandQueue": lambda: queue,
        "Program": lambda: cl.Program(ctx, AXPY).build(),
        "Kernel": lambda: cl.Kernel(cl.Program(ctx, AXPY).build(), "axpy"),
        "Buffer": lambda: cl.Buffer(ctx, mf.READ_WRITE, 64),
        "Image": lambda: cl.Image(ctx, mf.READ_ONLY, cl.ImageFormat(
            cl.channel_order.RGBA, cl.channel_type.UNSIGNED_INT8), shape=(4, 4)),
        "Sampler": lambda: cl.Sampler(ctx, False, cl.addressing_mode.CLAMP,
                                      cl.filter_mode.NEAREST),
        # The hole this closes: anything with an int_ptr was taken for an event.
        "int_ptr of a Context": lambda: type("HasIntPtr", (), {"int_ptr": ctx.int_ptr})(),
        "Event": lambda: cl.enqueue_marker(queue),
        "UserEvent": lambda: done,
        "NannyEvent": lambda: cl.enqueue_copy(
            queue, host, cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host),
            is_blocking=False),
        "RawEvent": lambda: cw.RawEvent(done.int_ptr),
    }
    obj = make[kind]()
    if kind in ("Event", "UserEvent", "NannyEvent"):
        # Exactly that class, not only an Event: the check is isinstance.
        assert type(obj).__name__ == kind, type(obj)
    names = {"int_ptr of a Context": "__main__.HasIntPtr"}
    return obj, names.get(kind, "pyopencl." + kind), done


def entry_points(obj, done):
    """(name, a call that hands obj to cw) for every entry point taking events."""
    def notifier(method):
        async def run():
            with cw.Notifier() as n:
                try:
                    if method == "watch":
                        tag, fut = n.watch(obj)
                        return await fut
                    return await n.wait(obj)
                finally:
                    assert n.pending == 0, n.pending
        return lambda: asyncio.run(run())

    calls = [
        ("wait", lambda: cw.wait(obj)),
        ("wait_all", lambda: cw.wait_all([obj])),
        ("wait_any", lambda: cw.wait_any([obj])),
        ("wait_async", lambda: asyncio.run(cw.wait_async(obj))),
        ("wait_all_async", lambda: asyncio.run(cw.wait_all_async([obj]))),
        ("wait_any_async", lambda: asyncio.run(cw.wait_any_async([obj]))),
        ("Notifier.watch", notifier("watch")),
        ("Notifier.wait", notifier("wait")),
    ]
    if done is not None:
        # After a good event: nothing is waited on or watched before the check.
        calls += [
            ("wait_all after an event", lambda: cw.wait_all([done, obj])),
            ("wait_any after an event", lambda: cw.wait_any([done, obj])),
            ("wait_all_async after an event",
             lambda: asyncio.run(cw.wait_all_async([done, obj]))),
        ]
    return calls


def main(kind):
    if kind in PLAIN:
        obj, name = PLAIN[kind]
        done = None
        assert "pyopencl" not in sys.modules, "cw imported pyopencl"
    else:
        obj, name, done = cl_objects(kind)
    accepted = kind in ("Event", "UserEvent", "NannyEvent", "RawEvent")
    for what, call in entry_points(obj, done):
        print("%s(%s): " % (what, kind), end="", flush=True)  # before a crash, if any
        try:
            result = call()
        except TypeError as e:
            print("TypeError:", e, flush=True)
            assert not accepted, "refused an event"
            assert type(e) is TypeError, type(e)
            assert str(e).split("got ", 1)[1].startswith(name), "it does not name %r" % name
            continue
        print("returned", result, flush=True)
        assert accepted, "accepted a %s" % kind
        assert result in (0, [0], (0, 0), [0, 0], (0, 0)), result
    print("all checked")


if __name__ == "__main__":
    main(sys.argv[1])
