#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare cw's auto strategy with the best fixed strategy in every cell.

Reads a cw-bench JSON file (python3 standard library only) and prints, per
(kernel, driver model, config), auto's mean wall and mean CPU per launch against the
lowest mean wall and the lowest mean CPU among the fixed strategies (every
strategy but "auto" and "default"; each metric's best may be a different
strategy), and whether auto meets its goal: wall within 5% and
CPU within 10% of the best. Prints a Markdown table; exits 0 when every cell
meets the goal, 1 when one does not, 2 on bad input.

usage: compare_auto.py FILE [--wall-tol 0.05] [--cpu-tol 0.10]
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json_file")
    ap.add_argument("--wall-tol", type=float, default=0.05)
    ap.add_argument("--cpu-tol", type=float, default=0.10)
    args = ap.parse_args()
    try:
        with open(args.json_file, encoding="utf-8") as f:
            results = json.load(f)["results"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"{args.json_file}: cannot read cw-bench results: {e}", file=sys.stderr)
        return 2

    cells = []
    for r in results:
        cell = (r["kernel"], r.get("driver_model", "pocl3"), r["config"])
        if cell not in cells:
            cells.append(cell)
    print("| kernel | driver model | config | auto wall | best wall (strategy) | ratio | auto CPU "
          "| best CPU (strategy) | ratio | goal met |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    met = 0
    for kernel, model, config in cells:
        rows = [r for r in results if r["kernel"] == kernel and r["config"] == config
                and r.get("driver_model", "pocl3") == model]
        auto = [r for r in rows if r["strategy"] == "auto"]
        fixed = [r for r in rows if r["strategy"] not in ("auto", "default")]
        if not auto or not fixed:
            print(f"{args.json_file}: no auto or no fixed strategy for {kernel}, {model}, {config}",
                  file=sys.stderr)
            return 2
        a = auto[0]
        bw = min(fixed, key=lambda r: r["wall_us_mean"])
        bc = min(fixed, key=lambda r: r["cpu_us_mean"])
        rw = a["wall_us_mean"] / bw["wall_us_mean"]
        rc = a["cpu_us_mean"] / bc["cpu_us_mean"]
        ok = rw <= 1 + args.wall_tol and rc <= 1 + args.cpu_tol
        met += ok
        print(f"| {kernel} | {model} | {config} ({a['cpus']} CPU) | {a['wall_us_mean']:.1f} "
              f"| {bw['wall_us_mean']:.1f} ({bw['strategy']}) | {rw:.3f} "
              f"| {a['cpu_us_mean']:.1f} | {bc['cpu_us_mean']:.1f} ({bc['strategy']}) "
              f"| {rc:.3f} | {'yes' if ok else 'no'} |")
    print(f"\ngoal (wall <= {1 + args.wall_tol:.2f}x, CPU <= {1 + args.cpu_tol:.2f}x the best "
          f"fixed strategy, means per launch) met in {met} of {len(cells)} cells")
    return 0 if met == len(cells) else 1


if __name__ == "__main__":
    sys.exit(main())
