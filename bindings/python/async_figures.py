#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The asyncio benchmark's figures in the binding's README, made from the
kept runs of bench_async.py (their --json files), never typed.

Prints a Markdown block: per run, its conditions (CPU-bound loops beside it,
load average) and the goals at the largest N (cw's CPU beyond finish
against the executor's, p50 latencies) for cw's default hold, then for each
hold the run measured beside it (--holds); then the whole table of the
first run. --update DOC puts the block between the markers
`<!-- async_figures.py begin -->` and `<!-- async_figures.py end -->` of DOC;
--check DOC exits 1 when DOC's block is not what the runs give.

usage: async_figures.py JSON... [--update DOC | --check DOC]
"""

import argparse
import json
import os
import sys

BEGIN = "<!-- async_figures.py begin -->"
END = "<!-- async_figures.py end -->"


def rel(path):
    """A path as the README's command gives it: from the source tree's root."""
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    return os.path.relpath(os.path.abspath(path), root)


def goal(goals, name):
    g = next((g for g in goals if g["goal"].startswith(name)), None)
    if g is None:
        return "-"
    return "%s %s" % ("met" if g["met"] else "**missed**", g["value"])


def rows(run):
    """(hold µs, goals) of cw's default hold, then of each --holds method."""
    out = [(run.get("hold_us", 0), run["goals"])]
    for m in dict.fromkeys(h["method"] for h in run.get("holds", [])):
        hs = [h for h in run["holds"] if h["method"] == m]
        out.append((hs[0]["hold_us"], hs))
    return out


def block(paths):
    runs = [(p, json.load(open(p))) for p in paths]
    cmd = "bindings/python/async_figures.py %s --update bindings/python/README.md" % " ".join(
        rel(p) for p in paths)
    lines = ["<!-- made by %s: do not edit -->" % cmd, "",
             "| run | CPU-bound loops beside it | load average before, after | hold µs "
             "| cw CPU beyond finish, against the executor's (goal <= 0.5x) "
             "| cw p50, against the executor's (goal <= 1.0x) |",
             "|---|---|---|---|---|---|"]
    for p, r in runs:
        for i, (hold, goals) in enumerate(rows(r)):
            run = ("[%s](../../%s)" % (os.path.basename(p), rel(p)),
                   "%d" % r.get("busy_loops", 0),
                   "%.2f, %.2f" % (r["loadavg_before"][0], r["loadavg_after"][0]))
            lines.append("| %s | %s | %s | %.0f%s | %s | %s |" % (
                (run if i == 0 else ("", "", "")) + (
                    hold, "" if i else " (default)", goal(goals, "cw CPU"),
                    goal(goals, "cw p50"))))
    p, first = runs[0]
    lines += ["", "All of %s (cw %s, libcw %s, Python %s; %s; %d CPUs; kernel about %.0f µs; "
              "%d rounds):" % (os.path.basename(p), first["cw"], first["libcw"], first["python"],
                               first["device"], first["cpus"], first["kernel_us"],
                               first["rounds"]), "",
              "| N | method | CPU ms | CPU-kernels ms | wall ms | threads | p50 µs | p99 µs |",
              "|---|---|---|---|---|---|---|---|"]
    for x in first["results"]:
        lat = ("%.1f | %.1f" % (x["p50_us"], x["p99_us"]) if x["p50_us"] is not None
               else "- | -")
        lines.append("| %d | %s | %.1f | %.1f | %.1f | %g | %s |" % (
            x["n"], x["method"], x["cpu_ms"], x["wait_cpu_ms"], x["wall_ms"], x["threads"], lat))
    return "\n".join(lines) + "\n"


def splice(doc, text):
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        raise SystemExit("async_figures: want one %s and one %s" % (BEGIN, END))
    head, rest = doc.split(BEGIN)
    _, tail = rest.split(END)
    return head + BEGIN + "\n" + text + END + tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="JSON")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--update", metavar="DOC")
    g.add_argument("--check", metavar="DOC")
    a = ap.parse_args()
    text = block(a.runs)
    if a.update:
        doc = open(a.update).read()
        with open(a.update, "w") as f:
            f.write(splice(doc, text))
    elif a.check:
        doc = open(a.check).read()
        if splice(doc, text) != doc:
            print("async_figures: %s's figures are not what %s give: run\n  %s"
                  % (a.check, ", ".join(a.runs), text.split("made by ")[1].split(":")[0]))
            return 1
        print("async_figures: %s's figures are the kept runs'" % a.check)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
