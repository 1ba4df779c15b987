#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The default run's comparison and its goals, from a cw-bench JSON file.

Reads a cw-bench --json file (python3 standard library only) and prints:

1. For every driver model, kernel and config: auto's and cooperative's mean
   wall and mean CPU per launch as ratios to blocking's in the same cell,
   cooperative's added wall (its mean wall minus blocking's, in us) and
   each one's CPU per second of waiting.
2. The goals, each a PASS or MISS line with the figures behind it:
   a. on pocl3 (the real driver, unchanged), for every kernel: cooperative
      and auto mean CPU at most 1.05x blocking's, mean wall at most 1.02x;
   b. under nvidia, for commands of 100 us and longer: auto mean wall at
      most 1.05x blocking's and mean CPU at most 0.10x; for the latency
      kernel: wall at most 1.05x and CPU at most 1.0x;
   c. under every model: auto mean wall within 5% of the best fixed
      strategy's, and mean CPU at most 1.2x the lowest CPU among the fixed
      strategies within 5% of that best wall.
   A goal whose model or kernels the run lacks says so (SKIP).
   Where the JSON has each mean's standard deviation (`*_us_sd`), every
   ratio comes with its standard error (the two means' relative errors
   combined: sqrt((sd_a/mean_a)^2/n_a + (sd_b/mean_b)^2/n_b) of the ratio),
   and each goal counts its misses that lie within two standard errors of
   their bound: a cell of few launches cannot tell those from a pass. That
   is said beside the verdict and changes none.

--markdown prints the same as Markdown; --update DOC... puts that Markdown
between the lines "<!-- goals.py begin -->" and "<!-- goals.py end -->" of
each DOC (with "<!-- goals.py begin goals -->", each goal's verdict line alone), so
that the figures in bench/README.md and README.md come from a kept run's
JSON and are never typed; --check DOC... says whether they still do (the
docs.bench_goals test). Exit status: 0 when every goal passes (--check:
every DOC is up to date), 1 when one misses (or was skipped, with
--strict; --check: a DOC is not), 2 on bad input.

usage: goals.py FILE [--markdown] [--update DOC...] [--check DOC...] [--strict]
"""
import argparse
import json
import math
import os
import re
import sys

BEGIN = re.compile(r"^<!-- goals\.py begin( goals)? -->$", re.M)
END = "<!-- goals.py end -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXED_EXCLUDED = ("auto", "default")
# Commands this long or longer are goal b's first part (us).
LONG_COMMAND_US = 100.0


def model_of(r):
    return r.get("driver_model", "pocl3")


class Run:
    def __init__(self, doc):
        self.header = doc.get("header", {})
        self.results = [r for r in doc["results"] if isinstance(r, dict)]
        self.cells = []  # (model, kernel, config) in the run's order
        self.by = {}
        for r in self.results:
            key = (model_of(r), r["kernel"], str(r["config"]))
            if key not in self.by:
                self.by[key] = {}
                self.cells.append(key)
            self.by[key][r["strategy"]] = r
        self.models = []
        for m, _, _ in self.cells:
            if m not in self.models:
                self.models.append(m)
        self.targets = {c.get("kernel"): c.get("target_us")
                        for c in self.header.get("busy_calibration") or [] if isinstance(c, dict)}

    def ratio(self, cell, strategy, metric):
        rows = self.by[cell]
        if strategy not in rows or "blocking" not in rows:
            return math.nan
        b = rows["blocking"][metric + "_us_mean"]
        return rows[strategy][metric + "_us_mean"] / b if b > 0 else math.nan

    def ratio_se(self, cell, strategy, metric, base="blocking"):
        rows = self.by[cell]
        if strategy not in rows or base not in rows:
            return math.nan
        return ratio_se(rows[strategy], rows[base], metric)

    def command_us(self, cell):
        """The command's length: the busy kernel's target, else blocking's
        median kernel run time in the cell (NaN where unknown)."""
        target = self.targets.get(cell[1])
        if isinstance(target, (int, float)) and target > 0:
            return float(target)
        b = self.by[cell].get("blocking")
        return b["kernel_us_median"] if b else math.nan


def ratio_se(a, b, metric):
    """The standard error of mean(a) / mean(b) for one metric, from each
    row's mean, standard deviation and launches; NaN where a row lacks one."""
    try:
        terms = []
        for r in (a, b):
            m, sd, n = r[metric + "_us_mean"], r[metric + "_us_sd"], r["launches"]
            if not (m > 0 and n >= 2 and math.isfinite(sd)):
                return math.nan
            terms.append((sd / m) ** 2 / n)
    except (KeyError, TypeError):
        return math.nan
    return a[metric + "_us_mean"] / b[metric + "_us_mean"] * math.sqrt(sum(terms))


def pm(se):
    """' \u00b10.012' beside a ratio (its standard error), or nothing where it
    is unknown."""
    return "" if math.isnan(se) else f" \u00b1{se:.3f}"


def near(parts):
    """For a missed check: whether each failed (ratio, error, bound) lies
    within two standard errors of its bound (None where an error is
    unknown)."""
    failed = [(r, se, bound) for r, se, bound in parts if r > bound]
    if not failed or any(math.isnan(se) for _, se, _ in failed):
        return None
    return all(r - bound <= 2 * se for r, se, bound in failed)


def fmt(v, spec=".2f"):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def comparison(run):
    head = ["driver model", "kernel", "config", "auto wall x", "auto CPU x", "coop wall x",
            "coop CPU x", "coop added wall us", "blocking CPU/wait s", "auto CPU/wait s",
            "coop CPU/wait s"]
    rows = []
    for cell in run.cells:
        rs = run.by[cell]
        added = (rs["cooperative"]["wall_us_mean"] - rs["blocking"]["wall_us_mean"]
                 if "cooperative" in rs and "blocking" in rs else math.nan)
        per_s = [rs[s].get("cpu_per_wait_s") if s in rs else None
                 for s in ("blocking", "auto", "cooperative")]
        rows.append([cell[0], cell[1], cell[2], fmt(run.ratio(cell, "auto", "wall")),
                     fmt(run.ratio(cell, "auto", "cpu")),
                     fmt(run.ratio(cell, "cooperative", "wall")),
                     fmt(run.ratio(cell, "cooperative", "cpu")), fmt(added, ".1f")]
                    + [fmt(v, ".3f") for v in per_s])
    return head, rows


class Goal:
    def __init__(self, name, text):
        self.name, self.text = name, text
        self.checks = []  # (ok, description, near: see near())
        self.skip = None

    def check(self, parts, what):
        """parts: the (ratio, standard error, bound) the check holds to."""
        ok = all(r <= bound for r, _, bound in parts)
        self.checks.append((ok, what, None if ok else near(parts)))

    @property
    def status(self):
        if self.skip or not self.checks:
            return "SKIP"
        return "PASS" if all(ok for ok, _, _ in self.checks) else "MISS"

    def lines(self):
        n_ok = sum(ok for ok, _, _ in self.checks)
        misses = [n for ok, _, n in self.checks if not ok]
        counted = ""
        if misses and all(n is not None for n in misses):
            counted = (f"; {sum(misses)} of the {len(misses)} misses within two standard "
                       "errors of their bound")
        out = [f"goal {self.name}: {self.status}: {self.text}"
               + (f" ({n_ok} of {len(self.checks)} checks met{counted})" if self.checks else "")]
        if self.skip or not self.checks:
            out.append(f"  {self.skip or 'nothing in this run to check'}")
        for ok, what, n in self.checks:
            mark = "ok  " if ok else "MISS"
            out.append(f"  {mark} {what}" + (" (within two standard errors)" if n else ""))
        return out


def goal_a(run):
    g = Goal("a", "pocl3: cooperative and auto mean CPU <= 1.05x, mean wall <= 1.02x "
                  "blocking's, every kernel")
    cells = [c for c in run.cells if c[0] == "pocl3"]
    if not cells:
        g.skip = "the run has no pocl3 model"
    for cell in cells:
        for s in ("cooperative", "auto"):
            cpu, wall = run.ratio(cell, s, "cpu"), run.ratio(cell, s, "wall")
            if math.isnan(cpu) or math.isnan(wall):
                continue
            ce, we = run.ratio_se(cell, s, "cpu"), run.ratio_se(cell, s, "wall")
            g.check([(cpu, ce, 1.05), (wall, we, 1.02)],
                    f"{cell[1]}, config {cell[2]}, {s}: CPU {cpu:.3f}x{pm(ce)}, "
                    f"wall {wall:.3f}x{pm(we)}")
    return g


def goal_b(run):
    g = Goal("b", "nvidia: auto mean wall <= 1.05x and CPU <= 0.10x blocking's for commands "
                  f"of {LONG_COMMAND_US:g} us and longer; latency: wall <= 1.05x, CPU <= 1.0x")
    cells = [c for c in run.cells if c[0] == "nvidia"]
    if not cells:
        g.skip = "the run has no nvidia model"
    for cell in cells:
        wall, cpu = run.ratio(cell, "auto", "wall"), run.ratio(cell, "auto", "cpu")
        if math.isnan(cpu) or math.isnan(wall):
            continue
        we, ce = run.ratio_se(cell, "auto", "wall"), run.ratio_se(cell, "auto", "cpu")
        figures = f"auto wall {wall:.3f}x{pm(we)}, CPU {cpu:.3f}x{pm(ce)}"
        if cell[1] == "latency":
            g.check([(wall, we, 1.05), (cpu, ce, 1.0)], f"latency, config {cell[2]}: {figures}")
        elif run.command_us(cell) >= LONG_COMMAND_US:
            g.check([(wall, we, 1.05), (cpu, ce, 0.10)],
                    f"{cell[1]}, config {cell[2]}: {figures}")
    return g


def goal_c(run):
    g = Goal("c", "every model: auto mean wall <= 1.05x the best fixed strategy's, mean CPU "
                  "<= 1.2x the lowest CPU of the fixed strategies within 5% of that wall")
    for cell in run.cells:
        rs = run.by[cell]
        fixed = [r for s, r in rs.items() if s not in FIXED_EXCLUDED]
        if "auto" not in rs or not fixed:
            continue
        a = rs["auto"]
        best = min(fixed, key=lambda r: r["wall_us_mean"])
        near = [r for r in fixed if r["wall_us_mean"] <= 1.05 * best["wall_us_mean"]]
        low = min(near, key=lambda r: r["cpu_us_mean"])
        rw = a["wall_us_mean"] / best["wall_us_mean"]
        rc = a["cpu_us_mean"] / low["cpu_us_mean"] if low["cpu_us_mean"] > 0 else math.nan
        we, ce = ratio_se(a, best, "wall"), ratio_se(a, low, "cpu")
        g.check([(rw, we, 1.05), (rc, ce, 1.2)],
                f"{cell[0]}, {cell[1]}, config {cell[2]}: auto wall {rw:.3f}x{pm(we)} "
                f"{best['strategy']}'s, CPU {rc:.3f}x{pm(ce)} {low['strategy']}'s")
    if not g.checks:
        g.skip = "no cell has auto and a fixed strategy"
    return g


def text_table(head, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cols: "  ".join(str(c).ljust(w) if i < 3 else str(c).rjust(w)
                                  for i, (c, w) in enumerate(zip(cols, widths)))
    return [line(head)] + [line(r) for r in rows]


def md_table(head, rows):
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def report(run, path, markdown, doc=None, goals_only=False):
    """The lines to print, or with doc the Markdown block for that file
    (paths relative to it), and the goals."""
    head, rows = comparison(run)
    goals = [goal_a(run), goal_b(run), goal_c(run)]
    h = run.header
    ident = (f"cw {h.get('cw_version', '?')} (git {h.get('git_commit', '?')}), "
             f"{h.get('platform_name', '?')} {h.get('driver_version', '?')}, {h.get('date', '?')}, "
             f"{len(run.models)} driver models ({', '.join(run.models)})")
    out = []
    if markdown:
        where = os.path.relpath(path, os.path.dirname(os.path.abspath(doc)) if doc else None)
        out += [f"From [{where}]({where}) ({ident}) by `bench/goals.py`; means per "
                "launch, ratios to `blocking` in the same cell.", ""]
        if not goals_only:
            out += md_table(head, rows) + [""]
        else:
            out += ["Each goal's verdict (every check, with its figures: the same block in "
                    "bench/README.md):", ""]
        out += ["```"] + [l for g in goals for l in (g.lines()[:1] if goals_only else g.lines())]
        out += ["```"]
    else:
        out += [f"== comparison: {ident}; means per launch, ratios to blocking in the same "
                "cell =="]
        out += text_table(head, rows) + [""]
        out += ["== goals =="] + [l for g in goals for l in g.lines()]
    return out, goals


def blocks(doc_path, run, json_path):
    """doc_path's text, and the same text with each goals.py block made
    anew from the run."""
    with open(doc_path, encoding="utf-8") as f:
        text = f.read()
    begins = list(BEGIN.finditer(text))
    if len(begins) != 1 or text.count(END) != 1 or begins[0].end() > text.index(END):
        raise ValueError(f"{doc_path}: expected one '<!-- goals.py begin -->' line (or "
                         f"'<!-- goals.py begin goals -->') before one '{END}' line")
    m = begins[0]
    lines, _ = report(run, json_path, True, doc_path, goals_only=bool(m.group(1)))
    rel = lambda p: os.path.relpath(os.path.abspath(p), ROOT)
    cmd = f"bench/goals.py {rel(json_path)} --update {rel(doc_path)}"
    body = "\n".join([f"<!-- made by {cmd}: do not edit -->", ""] + lines + [""])
    return text, text[:m.end()] + "\n" + body + "\n" + text[text.index(END):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json_file")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--update", nargs="+", metavar="DOC")
    ap.add_argument("--check", nargs="+", metavar="DOC")
    ap.add_argument("--strict", action="store_true", help="a skipped goal fails too")
    args = ap.parse_args()
    try:
        with open(args.json_file, encoding="utf-8") as f:
            run = Run(json.load(f))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"{args.json_file}: cannot read cw-bench results: {e}", file=sys.stderr)
        return 2
    lines, goals = report(run, args.json_file, args.markdown)
    try:
        for doc in args.check or []:
            old, new = blocks(doc, run, args.json_file)
            if old != new:
                print(f"{doc}: its goals.py block is not what {args.json_file} gives: run "
                      f"bench/goals.py {args.json_file} --update {doc}")
                return 1
            print(f"{doc}: its goals.py block is {args.json_file}'s")
        if args.check:
            return 0
        for doc in args.update or []:
            _, new = blocks(doc, run, args.json_file)
            with open(doc, "w", encoding="utf-8") as f:
                f.write(new)
    except (OSError, ValueError) as e:
        print(f"goals.py: {e}", file=sys.stderr)
        return 2
    if args.update:
        return 0
    print("\n".join(lines))
    bad = [g for g in goals if g.status == "MISS" or (args.strict and g.status == "SKIP")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
