#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare two builds of cw with cw-bench, run alternately (A, B, A, B, ...):
for every (kernel, configuration, strategy), the median over the runs of the
strategy's mean CPU and mean wall as a ratio to blocking in the same run and
cell. Ratios, not absolute times, so a machine whose speed drifts between
runs still compares the builds fairly.

Usage: compare_builds.py DIR [--a NAME] [--b NAME]
  DIR holds NAME-1.json, NAME-2.json, ... for both names (cw-bench --json),
  by default old-*.json and new-*.json.
"""
import argparse
import glob
import json
import os
import statistics
import sys


def ratios(paths):
    out = {}
    for p in paths:
        for r in json.load(open(p))["results"]:
            if r["strategy"] != "blocking":
                key = (r["kernel"], r.get("driver_model", "pocl3"), r["config"], r["strategy"])
                out.setdefault(key, []).append((r["cpu_ratio_mean"], r["wall_ratio_mean"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--a", default="old")
    ap.add_argument("--b", default="new")
    args = ap.parse_args()
    runs = {n: sorted(glob.glob(os.path.join(args.dir, n + "-*.json"))) for n in (args.a, args.b)}
    for n, paths in runs.items():
        if not paths:
            sys.exit("compare_builds.py: no %s-*.json in %s" % (n, args.dir))
    a, b = ratios(runs[args.a]), ratios(runs[args.b])
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    print("runs: %s %d, %s %d; each figure the median over runs of the ratio to blocking"
          % (args.a, len(runs[args.a]), args.b, len(runs[args.b])))
    print("%-9s %-8s %-4s %-12s | CPU x: %s / %s | wall x: %s / %s" % ("kernel", "model", "cfg",
          "strategy",
          args.a, args.b, args.a, args.b))
    for key in sorted(set(a) & set(b)):
        print("%-9s %-8s %-4s %-12s |   %5.2f / %5.2f   |   %5.2f / %5.2f"
              % (key + (med(a[key], 0), med(b[key], 0), med(a[key], 1), med(b[key], 1))))


if __name__ == "__main__":
    main()
