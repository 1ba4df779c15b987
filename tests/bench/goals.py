#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/goals.py on made-up cw-bench JSON: a goal's verdict from its
checks' (MISS if one missed, PASS if all passed, else UNDECIDED), an
undecided check's projection as the run states it, goal d's
from a sweep's models (38 of 40), the figures against blocking's, and the
blocks it writes into a document and then finds up to date.

usage: goals.py PATH_TO_BENCH_GOALS_PY
"""
import json
import os
import subprocess
import sys
import tempfile


def check(goal, verdict, model="pocl3", kernel="latency", strategy="auto"):
    return {"kernel": kernel, "driver_model": model, "config": "1", "goal": goal,
            "strategy": strategy, "check": f"{strategy} made-up check", "verdict": verdict,
            "pairs": 12, "rounds": 12,
            "conditions": [{"difference": -1.0, "lo": -2.0, "hi": -0.5}]}


def row(model, strategy, lat, cpu, kernel="latency"):
    return {"kernel": kernel, "driver_model": model, "config": "1", "strategy": strategy,
            "launches": 10, "added_latency_us_median": lat, "cpu_us_mean": cpu}


def doc(checks, results=None, sweep=None):
    d = {"header": {"cw_version": "1.1.0", "git_commit": "abc", "platform_name": "PoCL",
                    "driver_version": "3.1", "date": "2026-01-01T00:00:00Z", "elapsed_s": 60.0},
         "results": results or [row("pocl3", "blocking", 10, 20), row("pocl3", "auto", 12, 10)],
         "checks": checks}
    if sweep is not None:
        d["sweep"] = sweep
    return d


def run(goals, work, name, d, *args):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(d, f)
    p = subprocess.run([sys.executable, goals, path, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(cond, what, out):
    if not cond:
        print(f"FAIL: {what}\n{out}")
        sys.exit(1)
    print(f"ok: {what}")


def sweep_doc(verdicts):
    models = [{"index": i + 1, "driver_model": f"pocl3,seed={i}", "kernel": "latency",
               "config": "1", "goal_c": v, "checks_pass": 1, "checks_miss": int(v == "MISS"),
               "checks_undecided": int(v == "UNDECIDED")} for i, v in enumerate(verdicts)]
    checks = [check("c", "MISS", model=m["driver_model"]) for m in models if m["goal_c"] == "MISS"]
    return doc(checks, sweep={"seed": 99, "models": models})


def main():
    goals = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        rc, out = run(goals, work, "all.json", doc(
            [check("a", "PASS"), check("b", "PASS", model="nvidia"), check("c", "PASS")]))
        expect(rc == 0 and "goal a: PASS" in out and "goal c: PASS" in out,
               "every check passed: every goal PASS, exit 0", out)
        rc, out = run(goals, work, "miss.json", doc(
            [check("a", "PASS"), check("a", "MISS"), check("a", "UNDECIDED"), check("c", "PASS"),
             check("c", "UNDECIDED", strategy="poll")]))
        expect(rc == 1 and "goal a: MISS" in out and "(1 of 3 checks PASS, 1 MISS, 1 UNDECIDED)"
               in out, "one miss makes the goal MISS, counted", out)
        expect("goal c: UNDECIDED" in out and "UNDECIDED pocl3, latency, config 1: poll made-up"
               in out, "an undecided check, none missed: UNDECIDED, listed", out)
        expect("goal b: SKIP" in out, "a goal with no cell in the run says so", out)
        # An undecided check's projection, as the run states it, under it.
        far = check("a", "UNDECIDED", strategy="cooperative")
        far["to_decide"] = {"verdict": "PASS", "pairs": 4321.0, "seconds": 250.4}
        on = check("a", "UNDECIDED", strategy="pthread")
        on["to_decide"] = {"verdict": "none", "pairs": None, "seconds": None}
        rc, out = run(goals, work, "undecided.json", doc([far, on, check("a", "UNDECIDED")]))
        lines = out.splitlines()
        at = [i for i, l in enumerate(lines) if "cooperative made-up" in l]
        expect(at and lines[at[0] + 1] == "      at this spread: PASS after about 4300 pairs "
               "(360.1x these), about 250 s more at the cell's pace",
               "an undecided check's projection under it", out)
        at = [i for i, l in enumerate(lines) if "pthread made-up" in l]
        expect(at and "sits on its bound" in lines[at[0] + 1],
               "a median on its bound: no number of pairs", out)
        expect(out.count("at this spread") == 2, "no projection where the run states none", out)
        # auto: latency 12 / 10, CPU 10 / 20.
        expect(any(l.startswith("auto") and "1.20 (1.20-1.20)" in l and "0.50 (0.50-0.50)" in l
                   for l in out.splitlines()), "auto's figures over blocking's", out)

        sw = os.path.join(work, "sweep.json")
        for verdicts, want in ((["PASS"] * 38 + ["MISS"] * 2, "PASS"),
                               (["PASS"] * 37 + ["MISS"] * 3, "MISS"),
                               (["PASS"] * 37 + ["UNDECIDED"] * 2 + ["MISS"], "UNDECIDED")):
            with open(sw, "w") as f:
                json.dump(sweep_doc(verdicts), f)
            rc, out = run(goals, work, "all.json", doc([check("c", "PASS")]), "--sweep", sw)
            expect(f"goal d: {want}: goal c held, decided, in {verdicts.count('PASS')} of 40"
                   in out and "seed 99" in out, f"goal d {want} from its models", out)
        expect("       MISS auto made-up check" in out, "a sweep model's miss is listed", out)

        # The blocks: written, then found up to date, then stale on other figures.
        md = os.path.join(work, "doc.md")
        with open(md, "w") as f:
            f.write("# x\n\n<!-- goals.py begin goals -->\nold\n<!-- goals.py end -->\n\ntext\n\n"
                    "<!-- goals.py begin figures -->\n<!-- goals.py end -->\n"
                    "<!-- goals.py begin sweep -->\n<!-- goals.py end -->\n")
        rc, out = run(goals, work, "all.json", doc([check("a", "PASS")]), "--sweep", sw,
                      "--update", md)
        text = open(md).read()
        expect(rc == 0 and "old" not in text and "goal a: PASS" in text and "goal d:" in text
               and "**pocl3**" in text and text.count("do not edit") == 3 and "\ntext\n" in text,
               "--update fills every block and keeps the text between", text + out)
        rc, out = run(goals, work, "all.json", doc([check("a", "PASS")]), "--sweep", sw,
                      "--check", md)
        expect(rc == 0, "--check: up to date", out)
        rc, out = run(goals, work, "all.json", doc([check("a", "MISS")]), "--sweep", sw,
                      "--check", md)
        expect(rc == 1 and "not what the kept runs give" in out, "--check: stale", out)
        rc, out = run(goals, work, "all.json", doc([check("a", "PASS")]), "--check", md)
        expect(rc == 2 and "no --sweep FILE" in out, "--check: a sweep block needs --sweep", out)


if __name__ == "__main__":
    main()
