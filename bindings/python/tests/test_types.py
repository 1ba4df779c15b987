# SPDX-License-Identifier: MIT
"""The waits take pyopencl events and cw.RawEvent, and raise TypeError for
every other object: pyopencl's other objects (which have an int_ptr too, and
used to crash the interpreter or "succeed"), plain ints, other values. Each
kind runs in a child interpreter (types_child.py), so that a crash fails its
test instead of ending the run."""

import os
import pathlib
import subprocess
import sys

import pytest

import cw

HERE = pathlib.Path(__file__).resolve().parent

REFUSED_CL = ["Platform", "Device", "Context", "CommandQueue", "Program", "Kernel", "Buffer",
              "Image", "Sampler", "int_ptr of a Context"]
ACCEPTED = ["Event", "UserEvent", "NannyEvent", "RawEvent"]
REFUSED_PLAIN = ["str", "float", "None", "True", "False", "object", "int", "bytes"]


def run_child(kind):
    env = dict(os.environ)
    # The same cw as this test imported (the installed one in CI), and clhelpers.
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(cw.__file__).resolve().parents[1]),
                                         str(HERE)])
    p = subprocess.run([sys.executable, str(HERE / "types_child.py"), kind], env=env,
                       capture_output=True, text=True, timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 0, "child exited with %d (a negative one is a signal):\n%s" % (
        p.returncode, out)
    assert out.rstrip().endswith("all checked"), out
    return p.stdout


@pytest.mark.parametrize("kind", REFUSED_CL)
def test_other_pyopencl_objects_raise_type_error(kind):
    out = run_child(kind)
    assert out.count("TypeError: expected a pyopencl event") == 11, out


@pytest.mark.parametrize("kind", ACCEPTED)
def test_events_are_waited_on(kind):
    out = run_child(kind)
    assert out.count("returned") == 11 and "TypeError" not in out, out


@pytest.mark.parametrize("kind", REFUSED_PLAIN)
def test_other_values_raise_type_error(kind):
    out = run_child(kind)
    assert out.count("TypeError: expected a pyopencl event") == 8, out
    if kind == "int":
        assert "cw.RawEvent(handle)" in out, out
