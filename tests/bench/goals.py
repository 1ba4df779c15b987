#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/goals.py on made-up results: each ratio's standard error, and which
misses it counts as within two standard errors of their bound.

The rows are built so the figures can be worked by hand: a mean of 110
against 100, each with a deviation of 20 over 4 launches, is 1.100 with a
standard error of 1.1 * sqrt(0.2^2/4 + (20/110)^2/4) = 0.149. A verdict
never changes: a miss stays a miss, however near its bound.

usage: goals.py PATH_TO_BENCH_GOALS_PY
"""
import json
import os
import subprocess
import sys
import tempfile


def row(kernel, strategy, cpu, cpu_sd, wall, wall_sd, launches, model="pocl3", sd=True):
    r = {"kernel": kernel, "driver_model": model, "config": "1", "strategy": strategy,
         "launches": launches, "cpu_us_mean": cpu, "wall_us_mean": wall,
         "kernel_us_median": wall}
    if sd:
        r.update(cpu_us_sd=cpu_sd, wall_us_sd=wall_sd)
    return r


def run(goals, results):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"header": {}, "results": results}, f)
        p = subprocess.run([sys.executable, goals, path], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(cond, what, out):
    if not cond:
        print(f"FAIL: {what}\n--- output ---\n{out}")
        sys.exit(1)
    print(f"ok: {what}")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    goals = sys.argv[1]
    results = [
        # near: CPU 1.100 +-0.149 against 1.05; wall equal, no deviation.
        row("busy-20ms", "blocking", 100, 20, 1000, 0, 4),
        row("busy-20ms", "cooperative", 110, 20, 1000, 0, 4),
        row("busy-20ms", "auto", 100, 20, 1000, 0, 4),
        # far: CPU 2.000 with tiny errors.
        row("busy-1ms", "blocking", 100, 1, 1000, 0, 100),
        row("busy-1ms", "cooperative", 200, 1, 1000, 0, 100),
        row("busy-1ms", "auto", 100, 1, 1000, 0, 100),
    ]
    rc, out = run(goals, results)
    expect(rc == 1, "a goal with misses exits 1", out)
    expect("busy-20ms, config 1, cooperative: CPU 1.100x \u00b10.149, wall 1.000x \u00b10.000 "
           "(within two standard errors)" in out,
           "the near miss carries its error and is counted as within two of them", out)
    expect("MISS busy-20ms, config 1, cooperative" in out, "the near miss stays a MISS", out)
    line = next(l for l in out.splitlines() if "busy-1ms, config 1, cooperative" in l)
    expect(line.startswith("  MISS") and "within two" not in line,
           "a miss far beyond its bound is not counted", out)
    line = next(l for l in out.splitlines() if "busy-20ms, config 1, auto" in l)
    expect(line.startswith("  ok") and "within two" not in line, "a pass is not annotated", out)
    expect("(2 of 4 checks met; 1 of the 2 misses within two standard errors of their bound)"
           in out, "the goal counts its near misses", out)

    # A single launch has no deviation: no error, and no count of near misses.
    one = [dict(r, launches=1, cpu_us_sd=None, wall_us_sd=None) for r in results]
    rc, out = run(goals, one)
    expect("\u00b1" not in out and "within two" not in out,
           "rows of one launch carry no error and no count", out)

    # Results from before the deviations were recorded read as they did.
    old = [row(r["kernel"], r["strategy"], r["cpu_us_mean"], 0, r["wall_us_mean"], 0,
               r["launches"], sd=False) for r in results]
    rc, out = run(goals, old)
    expect(rc == 1 and "CPU 1.100x, wall 1.000x" in out and "\u00b1" not in out,
           "a file without deviations gives the plain ratios", out)
    print("goals: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
