# SPDX-License-Identifier: MIT
"""The binding's copies of the C headers (constants, error codes, OpenCL
status names, structure layouts) against the headers themselves: a small C
program generated from the ctypes definitions is compiled against cw's
headers and prints what the compiler sees; every difference fails.

Headers: $CW_INCLUDE_DIRS (os.pathsep-separated; CI passes the source
tree's include/ and the build's include/, or an install's include/), else
the source tree's include/ and the include/ next to the loaded libcw.
Compiler: $CC, else cc."""

import ctypes
import os
import pathlib
import shutil
import subprocess

import pytest

import cw
from cw import _ffi

SOURCE_TREE = pathlib.Path(__file__).resolve().parents[3]


def include_dirs():
    env = os.environ.get("CW_INCLUDE_DIRS")
    if env:
        return [d for d in env.split(os.pathsep) if d]
    return include_dirs_of(cw.library_path())


def include_dirs_of(library):
    """The headers that belong with the library at ``library``: a build
    folder's (build/libcw-opencl.so, whose generated headers are in
    build/include, the rest in the source tree), or an install prefix's
    (PREFIX/lib/libcw-opencl.so.1, or PREFIX/lib/<multiarch>/..., headers in
    PREFIX/include); else the source tree's."""
    libdir = pathlib.Path(library).resolve().parent if os.sep in library else None
    if libdir is not None:
        if (libdir / "include").is_dir():
            return [str(SOURCE_TREE / "include"), str(libdir / "include")]
        for prefix in (libdir.parent, libdir.parent.parent):
            if (prefix / "include" / "cw.h").is_file():
                return [str(prefix / "include")]
    return [str(SOURCE_TREE / "include")]


def test_include_dirs_of_an_installed_library(tmp_path):
    # CW_LIBRARY=PREFIX/lib/libcw-opencl.so.1: the headers are PREFIX/include.
    for libdir in ("lib", "lib64", "lib/x86_64-linux-gnu"):
        prefix = tmp_path / libdir.replace("/", "-")
        (prefix / libdir).mkdir(parents=True)
        (prefix / "include").mkdir()
        (prefix / "include" / "cw.h").write_text("")
        lib = prefix / libdir / "libcw-opencl.so.1"
        lib.write_text("")
        assert include_dirs_of(str(lib)) == [str(prefix / "include")]
    # A build folder: its generated headers beside the source tree's.
    build = tmp_path / "build"
    (build / "include").mkdir(parents=True)
    assert include_dirs_of(str(build / "libcw-opencl.so")) == [
        str(SOURCE_TREE / "include"), str(build / "include")]
    # Found by the loader (a bare soname): the source tree's.
    assert include_dirs_of("libcw-opencl.so.1") == [str(SOURCE_TREE / "include")]


def ctype_signed(t):
    while hasattr(t, "_length_"):  # arrays: their element
        t = t._type_
    if t is ctypes.c_void_p:
        return None
    return t(-1).value < 0


def expected(structs, constants, statuses):
    """What the C program must print for these mirrors, line by line."""
    out = {}
    for cname, st in structs.items():
        out["sizeof %s" % cname] = ctypes.sizeof(st)
        for fname, ftype in st._fields_:
            out["offsetof %s.%s" % (cname, fname)] = getattr(st, fname).offset
            out["sizeof %s.%s" % (cname, fname)] = ctypes.sizeof(ftype)
            signed = ctype_signed(ftype)
            if signed is not None:
                out["signed %s.%s" % (cname, fname)] = int(signed)
    for name, value in constants.items():
        out["value %s" % name] = value
    for value, name in statuses.items():
        out["value %s" % name] = value
    out["version %s" % cw.__version__] = 1
    return out


def program(structs, constants, statuses):
    lines = ["#define CL_TARGET_OPENCL_VERSION 300", "#include <stddef.h>",
             "#include <stdio.h>", "#include <string.h>", "#include <cw.h>",
             "int main(void) {"]
    for cname, st in structs.items():
        lines.append('printf("sizeof %s %%zu\\n", sizeof(%s));' % (cname, cname))
        lines.append("{ %s v; memset(&v, 0, sizeof v);" % cname)
        for fname, ftype in st._fields_:
            key = "%s.%s" % (cname, fname)
            lines.append('printf("offsetof %s %%zu\\n", offsetof(%s, %s));' % (key, cname, fname))
            lines.append('printf("sizeof %s %%zu\\n", sizeof v.%s);' % (key, fname))
            if ctype_signed(ftype) is not None:
                elem = "v.%s%s" % (fname, "[0]" if hasattr(ftype, "_length_") else "")
                # Signedness as the compiler has it: store -1, read it back.
                lines.append('%s = -1; printf("signed %s %%d\\n", %s < 0);' % (elem, key, elem))
        lines.append("}")
    for name in list(constants) + list(statuses.values()):
        lines.append('printf("value %s %%lld\\n", (long long)(%s));' % (name, name))
    lines.append('printf("version %s 1\\n", CW_VERSION_STRING);')
    lines.append("return 0; }")
    return "\n".join(lines) + "\n"


def compile_and_run(tmp_path, source):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler to check the binding against the headers (set CC)"
    dirs = include_dirs()
    for header in ("cw.h", "cw/version.h"):
        assert any((pathlib.Path(d) / header).exists() for d in dirs), \
            "%s not found in %s (set CW_INCLUDE_DIRS)" % (header, dirs)
    c = tmp_path / "mirror.c"
    exe = tmp_path / "mirror"
    c.write_text(source)
    build = subprocess.run([cc, "-std=c11", "-w", "-o", str(exe), str(c)]
                           + ["-I" + d for d in dirs], capture_output=True, text=True)
    assert build.returncode == 0, "the mirrors name something the headers lack:\n" + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    got = {}
    for line in run.stdout.splitlines():
        key, _, value = line.rpartition(" ")
        got[key] = int(value)
    return got


def differences(tmp_path, structs, constants, statuses):
    want = expected(structs, constants, statuses)
    got = compile_and_run(tmp_path, program(structs, constants, statuses))
    return {k: (want.get(k), got.get(k)) for k in set(want) | set(got) if want.get(k) != got.get(k)}


def test_binding_matches_headers(tmp_path):
    diff = differences(tmp_path, _ffi.STRUCTS, _ffi.CONSTANTS, _ffi.CL_STATUS_NAMES)
    assert not diff, "binding (first) and headers (second) differ: %s" % diff


def test_a_changed_mirror_is_caught(tmp_path):
    # The check itself: a field of the wrong width, a wrong constant, a
    # field the C structure does not have.
    class Narrow(ctypes.Structure):
        _fields_ = [(n, ctypes.c_uint16 if n == "spin_us" else t)
                    for n, t in _ffi.WaitOptions._fields_]

    diff = differences(tmp_path, {"cw_wait_options": Narrow}, {"CW_SPIN_US_MAX": 1000}, {})
    assert "sizeof cw_wait_options.spin_us" in diff
    assert diff["value CW_SPIN_US_MAX"] == (1000, 1000000)

    class Missing(ctypes.Structure):  # a field left out: the others move
        _fields_ = _ffi.WaitOptions._fields_[1:]

    diff = differences(tmp_path, {"cw_wait_options": Missing}, {}, {})
    assert diff["offsetof cw_wait_options.flags"] == (0, 4)

    class Unsigned(ctypes.Structure):
        _fields_ = [("tag", ctypes.c_uint64), ("rc", ctypes.c_uint32), ("status", ctypes.c_int32)]

    assert "signed cw_notifier_result.rc" in differences(
        tmp_path, {"cw_notifier_result": Unsigned}, {}, {})

    class Renamed(ctypes.Structure):
        _fields_ = [("tag", ctypes.c_uint64), ("code", ctypes.c_int), ("status", ctypes.c_int32)]

    with pytest.raises(AssertionError, match="headers lack"):
        differences(tmp_path, {"cw_notifier_result": Renamed}, {}, {})


def test_every_error_code_has_a_class():
    # A code libcw describes must be one the binding mirrors and maps to a
    # class of its own (a later libcw may add codes; this says so).
    for code in range(-1, -64, -1):
        if cw.strerror(code) != "unknown error":
            assert code in _ffi.CONSTANTS.values() and code in cw._CLASSES, code
