#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The benchmark's goals and their verdicts, from cw-bench JSON files.

The goals (bench/README.md#goals); cw-bench decides every check of them in
the cell it belongs to (bench/verdict.c), on paired, interleaved rounds, and
writes each check's verdict and 95% interval into its JSON ("checks"):

  a. pocl3 unchanged (the real driver, no layer), every kernel and CPU
     configuration: auto's and cooperative's added latency at most
     blocking's x 1.05 + 2 us; CPU per launch at most 1.05x blocking's for
     commands under 20 ms; from 20 ms on, CPU per second waited at most
     blocking's + 0.5 ms per second.
  b. nvidia: for commands of 100 us and longer, auto's CPU at most 0.10x
     blocking's and its added latency at most max(100 us, 0.5% of the
     command); on the 1-work-item kernel (latency), added latency at most
     blocking's x 1.05 at a CPU at most blocking's.
  c. every driver model: auto is not beaten with a margin by any fixed
     strategy: none has both added latency at most auto's / 1.05 and CPU at
     most auto's, and none has both CPU at most auto's / 1.2 and added
     latency at most auto's.
  d. goal c under the sweep (cw-bench --sweep N): it holds, decided, for at
     least 38 of 40 drawn driver models.
  e. every driver model: auto-latency (auto with CW_WAIT_LATENCY) has an
     added latency at most the best fixed strategy's x 1.05 + 2 us, at a CPU
     per launch at most 1.2x that strategy's.
  f. nvidia, commands of 100 ms and longer, from the first launch on a
     queue whose earlier command had that length: auto's added latency at
     most max(100 us, 0.5% of the command), its CPU at most 0.5% of the
     time waited.

A condition whose bound is another strategy's figure with no margin
("CPU <= auto's") counts as met within its resolution
(bench/README.md#verdicts: differences within 2% of its bound plus 0.5 us,
or 0.05 ms/s, are equal).

A goal PASSes when every check of it passed, MISSes when one missed, and is
UNDECIDED otherwise. This script only reports: it decides nothing itself.
Under each UNDECIDED check it says what cw-bench projected deciding it
would take (bench/README.md#verdicts), where the run says.

Prints the goals with their verdict counts and every check that did not
pass (goal a's and b's passes too), and, per driver model, each strategy's
added latency and CPU against blocking's. --sweep FILE adds goal d from a
sweep's JSON. --update DOC... rewrites the blocks between
"<!-- goals.py begin KIND -->" and "<!-- goals.py end -->" in each DOC
(KIND: goals, sweep or figures), so that the figures in bench/README.md
come from the kept runs and are never typed; --check DOC... says
whether they still do (the docs.bench_goals test). Exit status: 0 when
every goal passes (--check: every DOC is up to date), 1 otherwise, 2 on bad
input.

usage: goals.py BENCH.json [--sweep SWEEP.json] [--update DOC...] [--check DOC...]
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

BEGIN = re.compile(r"^<!-- goals\.py begin (goals|sweep|figures) -->$", re.M)
END = "<!-- goals.py end -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERDICTS = ("PASS", "MISS", "UNDECIDED")
GOALS = {
    "a": "pocl3 unchanged: auto's and cooperative's added latency <= blocking's x 1.05 + 2 us; "
         "CPU per launch <= 1.05x blocking's under 20 ms, from 20 ms CPU per second waited <= "
         "blocking's + 0.5 ms/s",
    "b": "nvidia: from 100 us, auto's CPU <= 0.10x blocking's and added latency <= "
         "max(100 us, 0.5% of the command); latency kernel: added latency <= blocking's x 1.05 "
         "at a CPU <= blocking's",
    "c": "every driver model: no fixed strategy has both added latency <= auto's / 1.05 and "
         "CPU <= auto's, nor both CPU <= auto's / 1.2 and added latency <= auto's",
    "d": "goal c under the sweep: it holds, decided, for at least 38 of 40 drawn driver models",
    "e": "every driver model: auto-latency's added latency <= the best fixed strategy's x 1.05 + "
         "2 us, at a CPU per launch <= 1.2x that strategy's",
    "f": "nvidia, from 100 ms, from the first launch: auto's added latency <= max(100 us, 0.5% "
         "of the command), CPU <= 0.5% of the time waited",
}
# The goals decided in a run's cells (d is c over a sweep's models); c's
# and e's passes are many and alike, and only their other checks are listed.
CELL_GOALS = "abcef"
LIST_PASSES = "abf"
# Goal d's share: 38 of 40.
D_SHARE = 38 / 40


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc.get("results"), list) or not isinstance(doc.get("checks"), list):
        raise ValueError("no results and checks (a cw-bench --json file with verdicts?)")
    return doc


def ident(doc):
    h = doc.get("header", {})
    return (f"cw {h.get('cw_version', '?')} (git {h.get('git_commit', '?')}), "
            f"{h.get('platform_name', '?')} {h.get('driver_version', '?')}, {h.get('date', '?')}, "
            f"{h.get('elapsed_s', float('nan')):.0f} s")


def goal_verdict(checks):
    n = {v: sum(c["verdict"] == v for c in checks) for v in VERDICTS}
    v = "MISS" if n["MISS"] else "PASS" if checks and not n["UNDECIDED"] else "UNDECIDED"
    return v, n


def check_line(c):
    conds = " and ".join(
        f"{fmt(d['difference'], '.4g')} [{fmt(d['lo'], '.4g')}, {fmt(d['hi'], '.4g')}]"
        + (f" res {fmt(d['resolution'], '.2g')}" if "resolution" in d else "")
        for d in c["conditions"])
    return (f"  {c['verdict']:<9} {c['driver_model']}, {c['kernel']}, config {c['config']}: "
            f"{c['check']} ({c['pairs']} pairs; difference {conds})")


def decide_line(c):
    """What deciding an UNDECIDED check would take, as cw-bench projected it
    (bench/verdict.c, check_to_decide), in the words of its text output;
    None where the run did not project it."""
    t = c.get("to_decide")
    if not t:
        return None
    pairs = t.get("pairs")
    if pairs is None or t.get("verdict") not in VERDICTS or not c["pairs"]:
        return "      at this spread: a median sits on its bound, and no number of pairs decides it"
    return (f"      at this spread: {t['verdict']} after about {float(f'{pairs:.2g}'):.0f} pairs "
            f"({pairs / c['pairs']:.1f}x these), about {t.get('seconds') or 0:.0f} s more at "
            "the cell's pace")


def fmt(v, spec=".2f"):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def goal_lines(doc):
    """Goals a-c, e and f: a verdict line each, then the checks that did not
    pass (and goal a's, b's and f's passes, which are few)."""
    out, verdicts = [], {}
    for g in CELL_GOALS:
        checks = [c for c in doc["checks"] if c["goal"] == g]
        if not checks:
            out.append(f"goal {g}: SKIP: the run has no cell of it: {GOALS[g]}")
            continue
        v, n = goal_verdict(checks)
        verdicts[g] = v
        out.append(f"goal {g}: {v}: {GOALS[g]} ({n['PASS']} of {len(checks)} checks PASS, "
                   f"{n['MISS']} MISS, {n['UNDECIDED']} UNDECIDED)")
        for c in checks:
            if g in LIST_PASSES or c["verdict"] != "PASS":
                out.append(check_line(c))
            line = decide_line(c) if c["verdict"] == "UNDECIDED" else None
            if line:
                out.append(line)
    return out, verdicts


def sweep_lines(sweep):
    s = sweep["sweep"]
    models = s["models"]
    held = sum(m["goal_c"] == "PASS" for m in models)
    need = math.ceil(D_SHARE * len(models))
    v = "PASS" if held >= need else "MISS" if len(models) - sum(
        m["goal_c"] == "MISS" for m in models) < need else "UNDECIDED"
    out = [f"goal d: {v}: goal c held, decided, in {held} of {len(models)} drawn driver models "
           f"(needs {need}); seed {s['seed']}"]
    for m in models:
        out.append(f"  {m['index']:>2} {m['goal_c']:<9} {m['kernel']:<10} config "
                   f"{m['config']:<3} {m['driver_model']} ({m['checks_pass']} PASS, "
                   f"{m['checks_miss']} MISS, {m['checks_undecided']} UNDECIDED)")
        for c in sweep["checks"]:
            if c["driver_model"] == m["driver_model"] and c["verdict"] == "MISS":
                out.append(f"       MISS {c['check']}")
    return out, v


def figures(doc):
    """Per driver model and strategy: the median over the model's cells of
    the strategy's added latency (medians) and CPU per launch (means) over
    blocking's in the same cell, with the lowest and highest cell."""
    cells = {}
    for r in doc["results"]:
        cells.setdefault((r["driver_model"], r["kernel"], str(r["config"])), {})[r["strategy"]] = r
    models, strategies, ratios = [], [], {}
    for (model, _, _), rows in cells.items():
        if model not in models:
            models.append(model)
        b = rows.get("blocking")
        if not b:
            continue
        for key, col in (("blat", "added_latency_us_median"), ("bcpu", "cpu_us_mean")):
            if b.get(col) is not None:
                ratios.setdefault((model, "blocking", key), []).append(b[col])
        for s, r in rows.items():
            if s not in strategies:
                strategies.append(s)
            for key, col in (("lat", "added_latency_us_median"), ("cpu", "cpu_us_mean")):
                if r.get(col) is not None and b.get(col):
                    ratios.setdefault((model, s, key), []).append(r[col] / b[col])
    return models, strategies, ratios


def figure_tables(doc, markdown):
    models, strategies, ratios = figures(doc)
    layer = doc.get("header", {}).get("driver_model_layer")
    out = []
    for model in models:
        real = model == "pocl3"
        what = ("PoCL itself, the real driver (no layer)" if real else
                "a driver model over PoCL (docs/driver-models.md)")
        out.append(f"{model}: {what}" if not markdown else f"**{model}**: {what}.")
        out.append("")
        head = ["strategy", "added latency x blocking (median of cells; lowest-highest)",
                "CPU per launch x blocking (median of cells; lowest-highest)"]
        rows = []
        for s in strategies:
            row = [s]
            for key in ("lat", "cpu"):
                v = ratios.get((model, s, key))
                row.append(f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" if v else "-")
            if row[1] != "-" or row[2] != "-":
                rows.append(row)
        out += (md_table(head, rows) if markdown else text_table(head, rows)) + [""]
        lat, cpu = ratios.get((model, "blocking", "blat")), ratios.get((model, "blocking", "bcpu"))
        if lat and cpu:
            out += [f"`blocking` itself, median of cells (lowest-highest): added latency "
                    f"{statistics.median(lat):.1f} us ({min(lat):.1f}-{max(lat):.1f}), CPU per "
                    f"launch {statistics.median(cpu):.1f} us ({min(cpu):.1f}-{max(cpu):.1f}).",
                    ""]
    if layer is None and any(m != "pocl3" for m in models):
        out.append("(the JSON does not name the model layer)")
    return out


def text_table(head, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    return ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in [head] + rows]


def md_table(head, rows):
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def block(kind, doc, sweep, json_path, sweep_path, doc_path):
    rel = lambda p: os.path.relpath(os.path.abspath(p), os.path.dirname(os.path.abspath(doc_path)))
    if kind == "sweep":
        if sweep is None:
            raise ValueError(f"{doc_path}: a sweep block, but no --sweep FILE")
        lines, _ = sweep_lines(sweep)
        return [f"From [{rel(sweep_path)}]({rel(sweep_path)}) ({ident(sweep)}) by "
                "`bench/goals.py`:", "", "```"] + lines + ["```"]
    head = [f"From [{rel(json_path)}]({rel(json_path)}) ({ident(doc)}) by `bench/goals.py`"]
    if kind == "figures":
        return [head[0] + ": each strategy's added latency (the wait's return after the "
                "command's end; medians) and CPU per launch (means) over `blocking`'s (the "
                "driver's own `clWaitForEvents`) in the same cell, the median over the model's "
                "kernels and CPU configurations, with the lowest and highest cell.", ""] + \
            figure_tables(doc, True)
    lines, _ = goal_lines(doc)
    return [head[0] + "; each check's difference is its 95% interval, a PASS wholly at or "
            "below its resolution (res, where the run states one; else 0), a MISS wholly above.",
            "", "```"] + lines + ["```"]


def blocks(doc_path, doc, sweep, json_path, sweep_path):
    with open(doc_path, encoding="utf-8") as f:
        text = f.read()
    out, pos = [], 0
    found = False
    for m in BEGIN.finditer(text):
        end = text.find(END, m.end())
        if end < 0:
            raise ValueError(f"{doc_path}: '{m.group(0)}' without '{END}' after it")
        found = True
        cmd = f"bench/goals.py {os.path.relpath(os.path.abspath(json_path), ROOT)}"
        if sweep_path:
            cmd += f" --sweep {os.path.relpath(os.path.abspath(sweep_path), ROOT)}"
        cmd += f" --update {os.path.relpath(os.path.abspath(doc_path), ROOT)}"
        body = [f"<!-- made by {cmd}: do not edit -->", ""] + \
            block(m.group(1), doc, sweep, json_path, sweep_path, doc_path) + [""]
        out.append(text[pos:m.end()] + "\n" + "\n".join(body) + "\n")
        pos = end
    if not found:
        raise ValueError(f"{doc_path}: no '<!-- goals.py begin KIND -->' line")
    out.append(text[pos:])
    return text, "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json_file")
    ap.add_argument("--sweep", metavar="SWEEP_JSON")
    ap.add_argument("--update", nargs="+", metavar="DOC")
    ap.add_argument("--check", nargs="+", metavar="DOC")
    args = ap.parse_args()
    try:
        doc = load(args.json_file)
        sweep = load(args.sweep) if args.sweep else None
        if sweep is not None and "sweep" not in sweep:
            raise ValueError(f"{args.sweep}: not a cw-bench --sweep file")
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"goals.py: cannot read cw-bench results: {e}", file=sys.stderr)
        return 2
    try:
        for path in args.check or []:
            old, new = blocks(path, doc, sweep, args.json_file, args.sweep)
            if old != new:
                print(f"{path}: its goals.py blocks are not what the kept runs give: run "
                      f"bench/goals.py with --update {path}")
                return 1
            print(f"{path}: its goals.py blocks are the kept runs'")
        if args.check:
            return 0
        for path in args.update or []:
            _, new = blocks(path, doc, sweep, args.json_file, args.sweep)
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
        if args.update:
            return 0
        lines, verdicts = goal_lines(doc)
        print(f"== goals: {ident(doc)} ==")
        print("\n".join(lines))
        if sweep is not None:
            slines, verdicts["d"] = sweep_lines(sweep)
            print("\n".join(slines))
        print(f"\n== added latency and CPU over blocking's, per driver model ==")
        print("\n".join(figure_tables(doc, False)))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"goals.py: {e}", file=sys.stderr)
        return 2
    return 0 if verdicts and all(v == "PASS" for v in verdicts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
