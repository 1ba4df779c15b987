#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tabulate spin-park against cooperative across spin budgets.

Each argument is a cw-bench JSON file from a run with --spin-us N (the
budget is read from the recorded command line) that includes the
cooperative and spin-park strategies. Prints a Markdown table of mean CPU
and mean wall per launch per (kernel, config) and budget, with spin-park's
difference to cooperative in the same run (python3 standard library only).

usage: compare_spin.py RUN.json [RUN.json ...]
"""
import argparse
import json
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json_files", metavar="RUN.json", nargs="+",
                    help="cw-bench JSON from a run with --spin-us N")
    args = ap.parse_args()
    print("| spin_us | kernel | config | spin-park CPU | cooperative CPU | CPU diff "
          "| spin-park wall | cooperative wall | wall diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path in args.json_files:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        m = re.search(r"--spin-us(?:=|\s+)(\d+)", doc["header"].get("command", ""))
        budget = m.group(1) if m else "default"
        res = doc["results"]
        for r in res:
            if r["strategy"] != "spin-park":
                continue
            co = [x for x in res if x["strategy"] == "cooperative"
                  and x["kernel"] == r["kernel"] and x["config"] == r["config"]
                  and x.get("driver_model", "pocl3") == r.get("driver_model", "pocl3")][0]
            print(f"| {budget} | {r['kernel']} | {r['config']} | {r['cpu_us_mean']:.1f} "
                  f"| {co['cpu_us_mean']:.1f} | {r['cpu_us_mean'] - co['cpu_us_mean']:+.1f} "
                  f"| {r['wall_us_mean']:.1f} | {co['wall_us_mean']:.1f} "
                  f"| {r['wall_us_mean'] - co['wall_us_mean']:+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
