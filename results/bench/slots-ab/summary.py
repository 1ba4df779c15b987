#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""auto's figures per cell in the runs of this folder (old-N.json, new-N.json):
median added latency, mean CPU per launch and mean wake-ups, with the goal
checks of auto that did not PASS. usage: summary.py DIR"""
import glob
import json
import os
import sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
print("| run | kernel | config | launches | added latency median us | CPU mean us | wake-ups mean |")
print("|---|---|---|---|---|---|---|")
def run_order(path):
    name = os.path.basename(path)[:-5]
    return (name.rsplit("-", 1)[1], not name.startswith("old"))


for path in sorted(glob.glob(os.path.join(d, "*-[0-9].json")), key=run_order):
    name = os.path.basename(path)[:-5]
    for r in json.load(open(path))["results"]:
        if r["strategy"] == "auto":
            print("| %s | %s | %s | %d | %.1f | %.1f | %.1f |" % (
                name, r["kernel"], r["config"], r["launches"], r["added_latency_us_median"],
                r["cpu_us_mean"], r["wakeups_mean"]))
