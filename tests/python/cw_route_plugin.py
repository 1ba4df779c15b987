# SPDX-License-Identifier: MIT
"""A pytest plugin (-p cw_route_plugin) that runs a test session with
cw.pyopencl installed, and writes how many waits cw made to the file
$CW_ROUTE_WAITS, so that a run can show its waits really went through cw."""

import os

import cw
import cw.pyopencl


def pytest_configure(config):
    cw.pyopencl.install()
    cw.reset_stats()


def pytest_unconfigure(config):
    out = os.environ.get("CW_ROUTE_WAITS")
    if out:
        with open(out, "w") as f:
            f.write("%d\n" % cw.stats().waits)
    cw.pyopencl.uninstall()
