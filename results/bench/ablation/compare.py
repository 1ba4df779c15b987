#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Compares the ablation runs kept here (run.sh): per switch, auto's goal
checks and figures without CW_AUTO_OFF (the group's base runs, rounds 1
and 2) and with it, on the cells the switch's runs covered.

A figure counts as changed when the mean of the two switched-off runs lies
further from the mean of the two base runs than both the base runs' and
the switched-off runs' own run-to-run differences. A verdict counts as a
decided change when both base runs gave one decided verdict (PASS or
MISS), both switched-off runs gave the other decided verdict.

usage: compare.py [--summary | --sweep] SWITCH... (e.g. T-spin L-late); prints
markdown: per switch a table of its cells, or with --summary one row per
switch (bench/README.md's table), or with --sweep goal c per drawn model
of the sweep runs (S-*)."""
import gzip, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, rnd):
    """A run's JSON, as cw-bench wrote it or gzipped (as kept)."""
    path = os.path.join(HERE, f"{name}-{rnd}.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    with gzip.open(path + ".gz", "rt") as f:
        return json.load(f)


def cells(d):
    out = {}
    for r in d["results"]:
        if r["strategy"] != "auto":
            continue
        st = r.get("stats", {})
        au = st.get("auto", {})
        waits = st.get("waits") or 0
        out[(r["driver_model"], r["config"], r["kernel"])] = {
            "lat": r["added_latency_us_median"],
            "cpu": r["cpu_us_mean"],
            "cps": r["cpu_per_wait_s"],
            "long": r["long"],
            "n": r["launches"],
            "ways": "%d w: %d spin %d park %d poll %d drv %d hyb" % (
                waits, st.get("spins", 0), st.get("parks", 0), st.get("polls", 0),
                au.get("driver_waits", 0), au.get("hybrid_waits", 0)),
        }
    return out


def checks(d):
    out = {}
    for c in d.get("checks", []):
        if c["strategy"] == "auto" or c["goal"] == "c":
            key = (c["driver_model"], c["config"], c["kernel"], c["goal"], c["strategy"], c["check"])
            out[key] = c["verdict"]
    return out


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def changed(a1, a2, b1, b2):
    if None in (a1, a2, b1, b2):
        return False
    move = abs((b1 + b2) / 2 - (a1 + a2) / 2)
    return move > abs(a1 - a2) and move > abs(b1 - b2)


def summary(sw):
    group = sw.split("-")[0]
    A = [load(f"{group}-base", r) for r in (1, 2)]
    Bs = [load(sw, r) for r in (1, 2)]
    ca, cb = [cells(x) for x in A], [cells(x) for x in Bs]
    keys = [k for k in sorted(cb[0]) if k in ca[0] and k in ca[1] and k in cb[1]]
    moved = []
    for k in keys:
        for m, what in (("lat", "latency"), ("cpu", "CPU")):
            v = [ca[0][k][m], ca[1][k][m], cb[0][k][m], cb[1][k][m]]
            if changed(*v):
                moved.append(f"{k[0]} {k[2]} {k[1]}: {what} {(v[0] + v[1]) / 2:.1f} -> {(v[2] + v[3]) / 2:.1f}")
    ka, kb = [checks(x) for x in A], [checks(x) for x in Bs]
    n, dec, und = 0, [], 0
    for key in sorted(kb[0]):
        vs = [k.get(key, "-") for k in (ka[0], ka[1], kb[0], kb[1])]
        if "-" in vs:
            continue
        n += 1
        if vs[0] == vs[1] and vs[2] == vs[3] and vs[0] != vs[2] and "UNDECIDED" not in (vs[0], vs[2]):
            dec.append(f"{key[0]} {key[2]} {key[1]} goal {key[3]} {key[4]}: {vs[0]} -> {vs[2]}")
        elif len(set(vs)) > 1:
            und += 1
    print(f"| `{sw.split('-', 1)[1]}` ({sw}) | {len(keys)} | {n} checks: {len(dec)} decided changes"
          f"{': ' + '; '.join(dec) if dec else ''} ({und} others moved to or from UNDECIDED or between base runs) | "
          f"{len(moved)} of {2 * len(keys)}{': ' + '; '.join(moved) if moved else ''} |")


def chance(trials=100000):
    """How often changed() flags a figure whose four runs are drawn alike."""
    import random
    rng = random.Random(1)
    hits = 0
    for _ in range(trials):
        hits += changed(*(rng.gauss(0, 1) for _ in range(4)))
    return hits / trials


def sweep_verdicts(name, rnd):
    """Goal c's verdict per drawn model and the goal d line of a sweep's text."""
    import re
    models, goal_d = {}, ""
    with open(os.path.join(HERE, f"{name}-{rnd}.txt")) as f:
        for line in f:
            m = re.match(r"^\s*(\d+)\s+(PASS|MISS|UNDECIDED)\s+(\S+)\s+config (\S+)", line)
            if m:
                models[int(m.group(1))] = (m.group(2), m.group(3), m.group(4))
            elif line.startswith("goal d:"):
                goal_d = line.strip()
    return models, goal_d


def sweep(sw):
    runs = [sweep_verdicts("S-base", 1), sweep_verdicts("S-base", 2),
            sweep_verdicts(sw, 1), sweep_verdicts(sw, 2)]
    print(f"### {sw}: CW_AUTO_OFF={sw.split('-', 1)[1]}, goal c per drawn model\n")
    for (_, d), what in zip(runs, ("base 1", "base 2", "off 1", "off 2")):
        print(f"- {what}: {d}")
    print("\nModels whose verdict differs between any of the four runs (base 1, base 2 / off 1, off 2):\n")
    for i in sorted(runs[0][0]):
        vs = [r[0].get(i, ("-",))[0] for r in runs]
        if len(set(vs)) > 1:
            dec = (vs[0] == vs[1] and vs[2] == vs[3] and vs[0] != vs[2]
                   and "UNDECIDED" not in (vs[0], vs[2]))
            k = runs[0][0][i]
            print(f"- {'**decided change** ' if dec else ''}model {i} ({k[1]}, config {k[2]}): "
                  f"{vs[0]}, {vs[1]} / {vs[2]}, {vs[3]}")
    print()


def main():
    if sys.argv[1:2] == ["--sweep"]:
        for sw in sys.argv[2:]:
            sweep(sw)
        return
    if sys.argv[1:2] == ["--summary"]:
        print(f"(a figure with no effect at all is flagged {100 * chance():.0f}% of the time: "
              "four normal draws, 100000 trials)\n")
        print("| switch (runs) | cells | auto's goal checks, base -> off | auto's figures beyond both runs' spread, base mean -> off mean (us) |")
        print("|---|---|---|---|")
        for sw in sys.argv[2:]:
            summary(sw)
        return
    for sw in sys.argv[1:]:
        group = sw.split("-")[0]
        A = [load(f"{group}-base", r) for r in (1, 2)]
        Bs = [load(sw, r) for r in (1, 2)]
        ca = [cells(x) for x in A]
        cb = [cells(x) for x in Bs]
        print(f"### {sw}: CW_AUTO_OFF={sw.split('-', 1)[1]}\n")
        print("| cell | auto added latency median us: base 1, 2 / off 1, 2 | auto CPU us per launch (mean): base / off | CPU per s waited: base / off | auto's waits (base 1 / off 1) |")
        print("|---|---|---|---|---|")
        for key in sorted(cb[0], key=lambda k: (k[0], k[1], k[2])):
            if key not in ca[0] or key not in ca[1] or key not in cb[1]:
                continue
            a1, a2, b1, b2 = ca[0][key], ca[1][key], cb[0][key], cb[1][key]
            def col(m, nd=1):
                s = f"{fmt(a1[m], nd)}, {fmt(a2[m], nd)} / {fmt(b1[m], nd)}, {fmt(b2[m], nd)}"
                return s + (" **changed**" if changed(a1[m], a2[m], b1[m], b2[m]) else "")
            cps = col("cps", 4) if a1["long"] else "-"
            print(f"| {', '.join(key)} | {col('lat')} | {col('cpu')} | {cps} | {a1['ways']} / {b1['ways']} |")
        ka = [checks(x) for x in A]
        kb = [checks(x) for x in Bs]
        print("\nChecks whose verdicts differ between any of the four runs (base 1, base 2 / off 1, off 2):\n")
        n = same = 0
        for key in sorted(kb[0]):
            vs = [k.get(key, "-") for k in (ka[0], ka[1], kb[0], kb[1])]
            if "-" in vs:
                continue
            n += 1
            if len(set(vs)) == 1:
                same += 1
                continue
            dec = (vs[0] == vs[1] and vs[2] == vs[3] and vs[0] != vs[2]
                   and "UNDECIDED" not in (vs[0], vs[2]))
            print(f"- {'**decided change** ' if dec else ''}{', '.join(key[:3])}: goal {key[3]}: "
                  f"{key[5]}: {vs[0]}, {vs[1]} / {vs[2]}, {vs[3]}")
        print(f"\n{same} of {n} checks of these cells gave one verdict in all four runs.\n")


main()
