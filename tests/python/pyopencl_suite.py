#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pyopencl's own test suite with and without cw.pyopencl installed: the
same tests must pass, fail and skip either way.

pyopencl's tests are not in Debian's python3-pyopencl; they are the test/
folder of pyopencl's sources at the installed version's tag (for Debian 12's
2022.3.1: `git archive v2022.3.1 test` of github.com/inducer/pyopencl).

Each test file runs twice, in alternating order (plain, then routed, for the
first file; routed, then plain, for the next; ...), each run a fresh pytest
process with a JUnit report; the routed runs load cw_route_plugin.py, which
installs cw.pyopencl and counts cw's waits. Prints, per file and in total,
the outcome counts of both and every test whose outcome differs, and exits 1
when any does or when a routed run made no wait through cw.

Usage: pyopencl_suite.py [--out DIR] [--pytest-args "..."] TESTDIR [FILE ...]
  CW_LIBRARY and PYTHONPATH (to the binding) as for the binding's tests;
  PYOPENCL_TEST picks the platform (e.g. portable for PoCL).
"""

import argparse
import collections
import os
import pathlib
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
OUTCOMES = ("passed", "failed", "error", "skipped")


def outcomes(junit):
    """{test id: outcome} from a JUnit XML report."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        tid = "%s::%s" % (case.get("classname"), case.get("name"))
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                kind = {"failure": "failed"}.get(child.tag, child.tag)
                break
        out[tid] = kind
    return out


def run(testdir, name, routed, out, extra):
    tag = "%s.%s" % (pathlib.Path(name).stem, "cw" if routed else "plain")
    junit = out / (tag + ".xml")
    waits = out / (tag + ".waits")
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml",
           str(junit), "-o", "junit_family=xunit1", name] + extra
    if routed:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
        env["CW_ROUTE_WAITS"] = str(waits)
        cmd[3:3] = ["-p", "cw_route_plugin"]
    start = time.monotonic()
    with open(out / (tag + ".log"), "w") as log:
        subprocess.run(cmd, cwd=testdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                       check=False)
    took = time.monotonic() - start
    res = outcomes(junit)
    n = int(waits.read_text()) if routed and waits.exists() else None
    counts = collections.Counter(res.values())
    print("  %-6s %s in %.0f s%s" % ("cw" if routed else "plain",
                                     " ".join("%s %d" % (k, counts[k]) for k in OUTCOMES), took,
                                     "" if n is None else ", %d waits through cw" % n),
          flush=True)
    return res, counts, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="pyopencl-suite", help="folder for reports and logs")
    ap.add_argument("--pytest-args", default="", help="more arguments for pytest")
    ap.add_argument("testdir", help="pyopencl's test/ folder")
    ap.add_argument("files", nargs="*", help="test files in it (default: every test_*.py)")
    a = ap.parse_args()
    testdir = pathlib.Path(a.testdir).resolve()
    files = a.files or sorted(p.name for p in testdir.glob("test_*.py"))
    out = pathlib.Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    extra = shlex.split(a.pytest_args)
    import cw
    import pyopencl
    print("pyopencl %s from %s; cw %s (libcw %s at %s); PYOPENCL_TEST=%s"
          % (pyopencl.VERSION_TEXT, pathlib.Path(pyopencl.__file__).parent, cw.__version__,
             cw.library_version_string(), cw.library_path(), os.environ.get("PYOPENCL_TEST")))
    print("load average before: %.2f %.2f %.2f; %d CPUs"
          % (os.getloadavg() + (os.cpu_count(),)), flush=True)
    total = {False: collections.Counter(), True: collections.Counter()}
    differ = []
    no_waits = []
    for i, name in enumerate(files):
        print(name, flush=True)
        res = {}
        for routed in ((False, True) if i % 2 == 0 else (True, False)):
            res[routed], counts, n = run(testdir, name, routed, out, extra)
            total[routed] += counts
            if routed and not n:
                no_waits.append(name)
        for tid in sorted(set(res[False]) | set(res[True])):
            plain, routed = res[False].get(tid, "absent"), res[True].get(tid, "absent")
            if plain != routed:
                differ.append((tid, plain, routed))
                print("  DIFFERS %s: plain %s, cw %s" % (tid, plain, routed), flush=True)
    print("total")
    for routed in (False, True):
        print("  %-6s %s" % ("cw" if routed else "plain",
                             " ".join("%s %d" % (k, total[routed][k]) for k in OUTCOMES)))
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    print("tests whose outcome differs: %d" % len(differ))
    for name in no_waits:
        print("NO WAITS through cw in %s's routed run" % name)
    same = not differ and total[False] == total[True]
    print("same outcomes with and without cw.pyopencl: %s" % ("yes" if same else "NO"))
    return 0 if same and not no_waits else 1


if __name__ == "__main__":
    sys.exit(main())
