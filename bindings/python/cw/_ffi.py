# SPDX-License-Identifier: MIT
"""The C side: constants and structures mirrored from cw's headers, finding
and loading cw's library (libcw-opencl.so.<major>), and the function
signatures.

Everything here that copies a header (CONSTANTS, CL_STATUS_NAMES, the
structures) is compared with the headers by tests/test_drift.py, which
compiles a small C program against them; keep the names identical to C.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from typing import List, Optional, Tuple

from ._version import __version__

# Values of cw's headers the binding relies on, under their C names.
CONSTANTS = {
    # cw_error (cw/common.h)
    "CW_OK": 0,
    "CW_ERR_INVALID_ARGUMENT": -1,
    "CW_ERR_INVALID_EVENT": -2,
    "CW_ERR_TIMEOUT": -3,
    "CW_ERR_COMMAND_FAILED": -4,
    "CW_ERR_OPENCL": -5,
    "CW_ERR_NO_MEMORY": -6,
    "CW_ERR_UNSUPPORTED": -7,
    "CW_ERR_NO_RESOURCES": -8,
    "CW_ERR_INTERRUPTED": -9,
    # cw/wait.h
    "CW_WAIT_NO_FLUSH": 1,
    "CW_WAIT_POLL": 4,
    "CW_WAIT_LATENCY": 8,
    "CW_WAIT_INTERRUPT_FD": 16,
    "CW_SPIN_US_MAX": 1000000,
    "CW_CHECK_INTERVAL_US_MAX": 1000000,
    # cw/waitmany.h
    "CW_WAIT_MANY_MAX": 65536,
    # cw/stats.h
    "CW_STATS_LATENCY_BUCKETS": 16,
}

# cw_wait_options.timeout_us is an int64_t.
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

# OpenCL execution statuses and error codes by value (CL/cl.h, OpenCL 3.0),
# so that errors can say CL_OUT_OF_RESOURCES instead of -5. 0 is named
# CL_COMPLETE: cw hands back execution statuses, where CL_SUCCESS never occurs.
CL_STATUS_NAMES = {
    3: "CL_QUEUED", 2: "CL_SUBMITTED", 1: "CL_RUNNING", 0: "CL_COMPLETE",
    -1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE",
    -3: "CL_COMPILER_NOT_AVAILABLE", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
    -5: "CL_OUT_OF_RESOURCES", -6: "CL_OUT_OF_HOST_MEMORY",
    -7: "CL_PROFILING_INFO_NOT_AVAILABLE", -8: "CL_MEM_COPY_OVERLAP",
    -9: "CL_IMAGE_FORMAT_MISMATCH", -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED",
    -11: "CL_BUILD_PROGRAM_FAILURE", -12: "CL_MAP_FAILURE",
    -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
    -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
    -15: "CL_COMPILE_PROGRAM_FAILURE", -16: "CL_LINKER_NOT_AVAILABLE",
    -17: "CL_LINK_PROGRAM_FAILURE", -18: "CL_DEVICE_PARTITION_FAILED",
    -19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
    -30: "CL_INVALID_VALUE", -31: "CL_INVALID_DEVICE_TYPE", -32: "CL_INVALID_PLATFORM",
    -33: "CL_INVALID_DEVICE", -34: "CL_INVALID_CONTEXT", -35: "CL_INVALID_QUEUE_PROPERTIES",
    -36: "CL_INVALID_COMMAND_QUEUE", -37: "CL_INVALID_HOST_PTR",
    -38: "CL_INVALID_MEM_OBJECT", -39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
    -40: "CL_INVALID_IMAGE_SIZE", -41: "CL_INVALID_SAMPLER", -42: "CL_INVALID_BINARY",
    -43: "CL_INVALID_BUILD_OPTIONS", -44: "CL_INVALID_PROGRAM",
    -45: "CL_INVALID_PROGRAM_EXECUTABLE", -46: "CL_INVALID_KERNEL_NAME",
    -47: "CL_INVALID_KERNEL_DEFINITION", -48: "CL_INVALID_KERNEL",
    -49: "CL_INVALID_ARG_INDEX", -50: "CL_INVALID_ARG_VALUE", -51: "CL_INVALID_ARG_SIZE",
    -52: "CL_INVALID_KERNEL_ARGS", -53: "CL_INVALID_WORK_DIMENSION",
    -54: "CL_INVALID_WORK_GROUP_SIZE", -55: "CL_INVALID_WORK_ITEM_SIZE",
    -56: "CL_INVALID_GLOBAL_OFFSET", -57: "CL_INVALID_EVENT_WAIT_LIST",
    -58: "CL_INVALID_EVENT", -59: "CL_INVALID_OPERATION", -60: "CL_INVALID_GL_OBJECT",
    -61: "CL_INVALID_BUFFER_SIZE", -62: "CL_INVALID_MIP_LEVEL",
    -63: "CL_INVALID_GLOBAL_WORK_SIZE", -64: "CL_INVALID_PROPERTY",
    -65: "CL_INVALID_IMAGE_DESCRIPTOR", -66: "CL_INVALID_COMPILER_OPTIONS",
    -67: "CL_INVALID_LINKER_OPTIONS", -68: "CL_INVALID_DEVICE_PARTITION_COUNT",
    -69: "CL_INVALID_PIPE_SIZE", -70: "CL_INVALID_DEVICE_QUEUE", -71: "CL_INVALID_SPEC_ID",
    -72: "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
}


class WaitOptions(ctypes.Structure):
    """cw_wait_options (cw/wait.h)."""

    _fields_ = [
        # cw_strategy: an enum without negative values, which gcc and clang
        # lay out as an unsigned int.
        ("strategy", ctypes.c_uint),
        ("flags", ctypes.c_uint),
        ("timeout_us", ctypes.c_int64),
        ("check_interval_us", ctypes.c_uint32),
        ("parker", ctypes.c_void_p),
        ("spin_us", ctypes.c_uint32),
        ("interrupt_fd", ctypes.c_int32),
        ("reserved", ctypes.c_uint32 * 7),
    ]


class NotifierResult(ctypes.Structure):
    """cw_notifier_result (cw/notify.h)."""

    _fields_ = [("tag", ctypes.c_uint64), ("rc", ctypes.c_int), ("status", ctypes.c_int32)]


class Stats(ctypes.Structure):
    """cw_stats (cw/stats.h)."""

    _fields_ = [
        ("waits", ctypes.c_uint64),
        ("spins", ctypes.c_uint64),
        ("yields", ctypes.c_uint64),
        ("parks", ctypes.c_uint64),
        ("sleeps", ctypes.c_uint64),
        ("polls", ctypes.c_uint64),
        ("timeouts", ctypes.c_uint64),
        ("latency_count", ctypes.c_uint64),
        ("latency_us", ctypes.c_uint64 * 16),  # CW_STATS_LATENCY_BUCKETS
    ]


class StatsAuto(ctypes.Structure):
    """cw_stats_auto (cw/stats.h)."""

    _fields_ = [(name, ctypes.c_uint64) for name in (
        "platforms_probed", "platforms_failed_fire", "platforms_failed_silent", "platforms_late",
        "lateness_ns", "lateness_samples", "unchecked_waits", "deferred_checks", "checks",
        "hybrid_waits", "hybrid_callback_first", "late_callbacks", "driver_waits",
        "platforms_driver_wait")]


# The C types mirrored above, for the drift test.
STRUCTS = {"cw_wait_options": WaitOptions, "cw_notifier_result": NotifierResult,
           "cw_stats": Stats, "cw_stats_auto": StatsAuto}


class LibraryNotFound(ImportError):
    """No usable libcw-opencl: not found, not cw's library (another library
    of that name, such as unixcw's Morse-code libcw), or a version this
    binding cannot use. The message says what each place tried held."""


# cw's library file: its soname, libcw-opencl.so.<major>, and its
# pkg-config module. Not "libcw": Debian's libcw-dev (unixcw, Morse code)
# installs libcw.so, libcw.so.7 and libcw.pc, with cw_* functions of its own.
PKG_CONFIG_MODULE = "cw-opencl"

# Functions only cw's library exports (unixcw's libcw has neither): a
# library without them is another one, whatever its file is called, and is
# not called into at all (its cw_version would be a different function).
IDENTITY_SYMBOLS = ("cw_notifier_watch", "cw_strategy_from_name")


def _major() -> int:
    return int(__version__.split(".")[0])


def soname() -> str:
    """The file name the binding loads: libcw-opencl.so.<its major version>."""
    return "libcw-opencl.so.%d" % _major()


def _pkg_config_libdir() -> Tuple[Optional[str], str]:
    """(libdir or None, what happened), from `pkg-config --variable=libdir cw-opencl`."""
    exe = shutil.which(os.environ.get("PKG_CONFIG") or "pkg-config")
    if exe is None:
        return None, "pkg-config is not installed"
    try:
        out = subprocess.run([exe, "--variable=libdir", PKG_CONFIG_MODULE], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "pkg-config failed: %s" % e
    libdir = out.stdout.strip()
    if out.returncode != 0 or not libdir:
        return None, "pkg-config knows no module %r (PKG_CONFIG_PATH=%s)" % (
            PKG_CONFIG_MODULE, os.environ.get("PKG_CONFIG_PATH", ""))
    return libdir, "libdir %s" % libdir


def usable(lib: ctypes.CDLL) -> None:
    """Raise LibraryNotFound unless ``lib`` is cw's library in a version
    this binding can use; then give its functions their signatures.

    The identity comes first, looked up without calling anything: only then
    is cw_version called, and the version checked before declare() (an
    incompatible libcw may lack functions declare() needs)."""
    missing = [name for name in IDENTITY_SYMBOLS if not hasattr(lib, name)]
    if missing:
        hint = ""
        if hasattr(lib, "cw_version"):
            hint = " (it has a cw_version: unixcw's Morse-code libcw has one too)"
        raise LibraryNotFound("%s is not cw's library %s: it has no %s%s"
                              % (lib._name, soname(), " or ".join(missing), hint))
    check_version(lib)
    declare(lib)


def _try(path: str, tried: List[str], how: str) -> Optional[ctypes.CDLL]:
    """Load ``path`` and check it is usable, or note in ``tried`` why not."""
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        tried.append("%s: %s" % (how, e))
        return None
    try:
        usable(lib)
    except ImportError as e:
        # Left loaded: unloading a library whose constructors ran is not
        # safe in general, and ctypes offers no dlclose.
        tried.append("%s: skipped: %s" % (how, e))
        return None
    return lib


def load() -> Tuple[ctypes.CDLL, str]:
    """Load cw's library and declare its functions: $CW_LIBRARY, else the
    loader's search for libcw-opencl.so.<major>, else that file in
    pkg-config's libdir of cw-opencl. Returns the library and how it was
    found. A file of the right name that is not cw's library, or not a
    compatible version, is skipped (the next place is tried); $CW_LIBRARY
    is never skipped: it is used, or the import fails."""
    tried: List[str] = []
    env = os.environ.get("CW_LIBRARY")
    if env:
        # An explicit path is never replaced by another copy found elsewhere:
        # silently loading a different library would hide the mistake.
        try:
            lib = ctypes.CDLL(env)
        except OSError as e:
            raise LibraryNotFound("cannot load cw's library from CW_LIBRARY=%s: %s. Set "
                                  "CW_LIBRARY to the path of %s, or unset it to search the "
                                  "system." % (env, e, soname())) from None
        try:
            usable(lib)
        except ImportError as e:
            raise LibraryNotFound("CW_LIBRARY=%s cannot be used: %s. Set CW_LIBRARY to the "
                                  "path of %s (e.g. build/libcw-opencl.so in a cw build "
                                  "folder), or unset it to search the system."
                                  % (env, e, soname())) from None
        return lib, "CW_LIBRARY"
    tried.append("CW_LIBRARY: not set")

    # The exact soname, which is what a program linked with -lcw-opencl
    # loads: the loader's search (LD_LIBRARY_PATH, the ldconfig cache, the
    # default directories).
    lib = _try(soname(), tried, "the loader (%s)" % soname())
    if lib is not None:
        return lib, "loader"

    libdir, what = _pkg_config_libdir()
    if libdir is None:
        tried.append("pkg-config --variable=libdir %s: %s" % (PKG_CONFIG_MODULE, what))
    else:
        path = os.path.join(libdir, soname())
        lib = _try(path, tried, "pkg-config (%s) -> %s" % (what, path))
        if lib is not None:
            return lib, "pkg-config"

    raise LibraryNotFound(
        "cw's library %s was not found. Tried, in order:\n  - " % soname()
        + "\n  - ".join(tried)
        + "\nTo fix: set CW_LIBRARY to the path of %s (e.g. build/libcw-opencl.so in a cw "
        "build folder); or install cw (cmake --install BUILD --prefix PREFIX) and either run "
        "ldconfig / set LD_LIBRARY_PATH=PREFIX/lib, or add PREFIX/lib/pkgconfig (where "
        "%s.pc is) to PKG_CONFIG_PATH." % (soname(), PKG_CONFIG_MODULE))


def declare(lib: ctypes.CDLL) -> None:
    """Give every function the binding calls its C signature."""
    c_int, c_void_p, c_size_t = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
    p_int32 = ctypes.POINTER(ctypes.c_int32)
    p_opts = ctypes.POINTER(WaitOptions)
    sigs = {
        "cw_version": (ctypes.c_uint, []),
        "cw_version_string": (ctypes.c_char_p, []),
        "cw_strerror": (ctypes.c_char_p, [c_int]),
        "cw_wait": (c_int, [c_void_p, p_opts, p_int32]),
        "cw_wait_all": (c_int, [ctypes.POINTER(c_void_p), c_size_t, p_opts, p_int32]),
        "cw_wait_any": (c_int, [ctypes.POINTER(c_void_p), c_size_t, p_opts,
                                ctypes.POINTER(c_size_t), p_int32]),
        "cw_strategy_name": (ctypes.c_char_p, [c_int]),
        "cw_strategy_from_name": (c_int, [ctypes.c_char_p, ctypes.POINTER(c_int)]),
        "cw_notifier_create": (c_int, [ctypes.c_uint32, ctypes.POINTER(c_void_p)]),
        "cw_notifier_destroy": (None, [c_void_p]),
        "cw_notifier_fd": (c_int, [c_void_p]),
        "cw_notifier_watch": (c_int, [c_void_p, c_void_p, ctypes.c_uint64, p_int32]),
        "cw_notifier_cancel": (c_int, [c_void_p, ctypes.c_uint64]),
        "cw_notifier_drain": (c_size_t, [c_void_p, ctypes.POINTER(NotifierResult), c_size_t]),
        "cw_notifier_pending": (c_size_t, [c_void_p]),
        "cw_stats_get": (c_int, [ctypes.POINTER(Stats)]),
        "cw_stats_reset": (None, []),
        "cw_stats_auto_get": (c_int, [ctypes.POINTER(StatsAuto), c_size_t]),
    }
    for name, (res, args) in sigs.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise LibraryNotFound("%s has no %s: it is older than this binding (%s)"
                                  % (lib._name, name, __version__)) from None
        fn.restype, fn.argtypes = res, args


def check_version(lib: ctypes.CDLL) -> Tuple[int, int, int]:
    """The library's (major, minor, patch); LibraryNotFound unless this binding
    can use it: the same major version (ABI) and at least the minor version
    the binding was written for (the functions it calls)."""
    fn = lib.cw_version
    fn.restype, fn.argtypes = ctypes.c_uint, []
    v = fn()
    have = (v // 10000, v // 100 % 100, v % 100)
    want = tuple(int(x) for x in __version__.split(".")[:2])
    if have[0] != want[0] or have[1] < want[1]:
        raise LibraryNotFound("cw's library %d.%d.%d at %s is not compatible with the cw "
                              "binding %s: it needs %d.x with x >= %d"
                              % (have + (lib._name, __version__) + want))
    return have
