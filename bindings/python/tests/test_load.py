# SPDX-License-Identifier: MIT
"""How cw's library is found (cw/_ffi.py): $CW_LIBRARY, else
libcw-opencl.so.<major> through the loader, else that file in pkg-config's
libdir of cw-opencl; a file there that is not cw's library or not a usable
version is skipped, and one named by $CW_LIBRARY fails the import instead.
Each case imports cw in a child interpreter with its own environment, among
fake libraries built here: one exporting only cw_version (as unixcw's
Morse-code libcw does, among its own cw_* functions), one of another major
version, one lacking a function the binding calls; and Debian's libcw.so.7
itself when libcw-dev is installed."""

import ctypes
import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import cw
from cw import _ffi

MAJOR, MINOR = (int(x) for x in cw.__version__.split(".")[:2])
SONAME = "libcw-opencl.so.%d" % MAJOR

CHILD = """
import json, sys
try:
    import cw
except ImportError as e:
    print("ImportError %s: %s" % (type(e).__name__, e))
    sys.exit(3)
print(json.dumps([cw.library_found_by(), cw.library_path(), list(cw.library_version())]))
"""

FAKES = {
    # As unixcw's libcw: a cw_version, with a compatible number even.
    "version-only": "unsigned cw_version(void) { return %d; }" % (MAJOR * 10000 + MINOR * 100),
    "other-major": "unsigned cw_version(void) { return %d; }\n"
                   "int cw_notifier_watch(void) { return 0; }\n"
                   "int cw_strategy_from_name(void) { return 0; }\n" % ((MAJOR + 1) * 10000),
    "incomplete": "unsigned cw_version(void) { return %d; }\n"
                  "int cw_notifier_watch(void) { return 0; }\n"
                  "int cw_strategy_from_name(void) { return 0; }\n" % (MAJOR * 10000 + MINOR * 100),
}
WHY_SKIPPED = {
    "version-only": "is not cw's library %s: it has no cw_notifier_watch or "
                    "cw_strategy_from_name (it has a cw_version" % SONAME,
    "other-major": "is not compatible with the cw binding",
    "incomplete": "has no cw_version_string: it is older than this binding",
    "morse": "is not cw's library %s: it has no cw_notifier_watch or cw_strategy_from_name "
             "(it has a cw_version: unixcw's Morse-code libcw has one too)" % SONAME,
}


class DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def real_library():
    """The file of the cw library this process runs (however it was found)."""
    libc = ctypes.CDLL(None)
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    info = DlInfo()
    assert libc.dladdr(ctypes.cast(cw._lib.cw_notifier_watch, ctypes.c_void_p),
                       ctypes.byref(info))
    return os.path.realpath(info.dli_fname.decode())


def morse_library():
    found = sorted(glob.glob("/usr/lib/*/libcw.so.7") + glob.glob("/usr/lib/libcw.so.7"))
    return found[0] if found else None


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """{name: directory holding SONAME}: the real library, with a cw-opencl.pc
    in its pkgconfig/, and each fake."""
    root = tmp_path_factory.mktemp("libs")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler (set CC) to build the fake libraries"
    dirs = {}
    for name, source in FAKES.items():
        d = root / name
        d.mkdir()
        (d / "fake.c").write_text(source)
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(d / SONAME), "-Wl,-soname," + SONAME,
                        str(d / "fake.c")], check=True)
        dirs[name] = d
    real = root / "real"
    (real / "pkgconfig").mkdir(parents=True)
    (real / SONAME).symlink_to(real_library())
    (real / "pkgconfig" / "cw-opencl.pc").write_text(
        "libdir=%s\n\nName: cw-opencl\nDescription: test\nVersion: %s\nLibs: -L${libdir} "
        "-lcw-opencl\n" % (real, cw.__version__))
    dirs["real"] = real
    morse = morse_library()
    if morse:
        (root / "morse").mkdir()
        (root / "morse" / SONAME).symlink_to(morse)
        dirs["morse"] = root / "morse"
    return dirs


def import_cw(ld_path=None, pc_dir=None, cw_library=None):
    """Import cw in a fresh interpreter: (returncode, output); returncode 3
    is an ImportError, whose class and message the output holds."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CW_LIBRARY", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH")}
    env["PKG_CONFIG_LIBDIR"] = "/nonexistent"  # not the system's .pc files
    env["PYTHONPATH"] = str(pathlib.Path(cw.__file__).resolve().parents[1])
    if ld_path:
        env["LD_LIBRARY_PATH"] = str(ld_path)
    if pc_dir:
        env["PKG_CONFIG_PATH"] = str(pc_dir)
    if cw_library:
        env["CW_LIBRARY"] = str(cw_library)
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                       timeout=60, cwd="/")
    return p.returncode, p.stdout + p.stderr


def loaded(out):
    found_by, path, version = json.loads(out.strip().splitlines()[-1])
    return found_by, path, tuple(version)


@pytest.fixture(scope="module")
def system_soname():
    """Whether the loader finds a SONAME without LD_LIBRARY_PATH (a system
    install): then the cases that need it not to are skipped."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    p = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                        SONAME], env=env, capture_output=True)
    return p.returncode == 0


def test_the_loader_finds_the_soname(libs):
    rc, out = import_cw(ld_path=libs["real"])
    assert rc == 0, out
    assert loaded(out) == ("loader", SONAME, cw.library_version())


def test_pkg_config_finds_the_soname_in_its_libdir(libs, system_soname):
    if system_soname:
        pytest.skip("the loader finds a %s installed on this system first" % SONAME)
    rc, out = import_cw(pc_dir=libs["real"] / "pkgconfig")
    assert rc == 0, out
    assert loaded(out) == ("pkg-config", str(libs["real"] / SONAME), cw.library_version())


@pytest.mark.parametrize("fake", ["version-only", "other-major", "incomplete", "morse"])
def test_another_library_of_that_name_is_skipped(libs, system_soname, fake):
    if fake not in libs:
        pytest.skip("Debian's libcw-dev (unixcw) is not installed")
    # Through the loader: it is skipped and pkg-config's copy used ...
    rc, out = import_cw(ld_path=libs[fake], pc_dir=libs["real"] / "pkgconfig")
    assert rc == 0, out
    assert loaded(out)[:2] == ("pkg-config", str(libs["real"] / SONAME))
    if system_soname:
        return
    # ... and what it was: with nothing after it, the import says so.
    rc, out = import_cw(ld_path=libs[fake])
    assert rc == 3 and "ImportError LibraryNotFound" in out, out
    assert "the loader (%s): skipped: " % SONAME in out and WHY_SKIPPED[fake] in out, out
    # Through pkg-config: skipped too.
    shutil.copytree(libs["real"] / "pkgconfig", libs[fake] / "pkgconfig", dirs_exist_ok=True)
    (libs[fake] / "pkgconfig" / "cw-opencl.pc").write_text(
        (libs["real"] / "pkgconfig" / "cw-opencl.pc").read_text().replace(
            str(libs["real"]), str(libs[fake])))
    rc, out = import_cw(pc_dir=libs[fake] / "pkgconfig")
    assert rc == 3 and "ImportError LibraryNotFound" in out, out
    assert "-> %s: skipped: " % (libs[fake] / SONAME) in out and WHY_SKIPPED[fake] in out, out


@pytest.mark.parametrize("fake", ["version-only", "other-major", "incomplete", "morse"])
def test_cw_library_is_never_replaced(libs, fake):
    if fake not in libs:
        pytest.skip("Debian's libcw-dev (unixcw) is not installed")
    path = libs[fake] / SONAME
    if fake == "morse":
        path = morse_library()
    # The real library is where the loader and pkg-config would find it.
    rc, out = import_cw(ld_path=libs["real"], pc_dir=libs["real"] / "pkgconfig",
                        cw_library=path)
    assert rc == 3 and "ImportError LibraryNotFound" in out, out
    assert "CW_LIBRARY=%s cannot be used: " % path in out and WHY_SKIPPED[fake] in out, out
    assert "Set CW_LIBRARY to the path of %s" % SONAME in out, out


def test_cw_library_that_cannot_be_loaded():
    rc, out = import_cw(cw_library="/nonexistent/" + SONAME)
    assert rc == 3 and "ImportError LibraryNotFound" in out, out
    assert "cannot load cw's library from CW_LIBRARY=/nonexistent/%s" % SONAME in out, out


def test_nothing_found_says_what_was_tried(system_soname):
    if system_soname:
        pytest.skip("the loader finds a %s installed on this system" % SONAME)
    rc, out = import_cw()
    assert rc == 3 and "ImportError LibraryNotFound" in out, out
    for part in ("cw's library %s was not found" % SONAME, "CW_LIBRARY: not set",
                 "the loader (%s): " % SONAME, "pkg-config --variable=libdir cw-opencl: ",
                 "To fix: set CW_LIBRARY to the path of %s" % SONAME, "cw-opencl.pc"):
        assert part in out, out
    # Not the Morse-code library's names: no libcw.so, no pkg-config module cw.
    assert "libcw.so" not in out and "variable=libdir cw:" not in out, out


def test_usable_checks_identity_before_calling_anything():
    class Lib:
        _name = "fake"

        def __getattr__(self, name):
            raise AttributeError(name)  # no symbols at all: cw_version is not called

    with pytest.raises(_ffi.LibraryNotFound, match="has no cw_notifier_watch"):
        _ffi.usable(Lib())
