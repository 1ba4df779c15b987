#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare clpeak natively and under cw-run, interleaved in one session.

Each round runs `clpeak --kernel-latency` and `clpeak --global-bandwidth`
natively and under `cw-run --strategy S` for every strategy S, in an order
that rotates from round to round, so that drift of a shared machine falls on
all of them alike. It prints, per clpeak figure, the median of each variant
and its ratio to the native median; the median CPU time of the whole process
(user + system, from wait4) against native; the waiting thread's CPU per
interposed wait from cw-run's profile (blocking makes the program's own
calls, so its figure is the native one); and the profile (--stats JSON) of
every strategy's last run, as cw-run wrote it.

Only the standard library; run it with any Python 3.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

FIGURE = re.compile(r"^\s*(Kernel launch latency|float\d*)\s*:\s*([0-9.]+)", re.M)


def run(cmd, env):
    """Run cmd; return (stdout, exit status, CPU seconds of the child)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    # communicate() reaped the child; its rusage was folded into RUSAGE_CHILDREN.
    return out, err, p.returncode, time.monotonic() - t0


def children_cpu():
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def figures(test, out):
    found = {}
    for name, value in FIGURE.findall(out):
        key = "latency us" if name.startswith("Kernel") else f"bandwidth {name} GB/s"
        found[key] = float(value)
    if not found:
        raise SystemExit(f"compare.py: no figure in clpeak's {test} output:\n{out}")
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--cw-run", default=os.path.join(here, "../../build/tools/cw-run/cw-run"),
                    help="the cw-run to use (default: build/tools/cw-run/cw-run)")
    ap.add_argument("--clpeak", default="clpeak")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--strategies", default="blocking,cooperative,auto")
    ap.add_argument("--tests", default="kernel-latency,global-bandwidth")
    ap.add_argument("--platform", choices=["pocl", "rusticl"], default="pocl")
    ap.add_argument("--out", help="also write everything printed to this file")
    args = ap.parse_args()

    env = dict(os.environ)
    if args.platform == "pocl":
        env["OCL_ICD_VENDORS"] = "pocl.icd"
    else:
        env["OCL_ICD_VENDORS"] = "rusticl.icd"
        env["RUSTICL_ENABLE"] = "llvmpipe"
    variants = ["native"] + args.strategies.split(",")
    tests = args.tests.split(",")
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    tmp = tempfile.mkdtemp(prefix="cw-compare-")
    results = {t: {v: [] for v in variants} for t in tests}  # figures per run
    cpu = {t: {v: [] for v in variants} for t in tests}      # process CPU s per run
    # CPU us per wait of each interposed call, per run: {call: [..]}
    wait_cpu = {t: {v: {} for v in variants} for t in tests}
    last_profile = {t: {} for t in tests}
    native_out = {}
    say(f"clpeak {' and '.join('--' + t for t in tests)} on {args.platform}, {args.rounds} rounds, "
        f"variants in rotating order: {', '.join(variants)}")
    say("made with: tests/preload/compare.py " + " ".join(sys.argv[1:]))
    say(f"host: {os.uname().nodename}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f} at start")
    for r in range(args.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for t in tests:
            for v in order:
                cmd = [args.clpeak, "-p", "0", "-d", "0", "--" + t]
                prof = os.path.join(tmp, f"{t}-{v}.json")
                if v != "native":
                    cmd = [args.cw_run, "--strategy", v, f"--stats={prof}", "--"] + cmd
                before = children_cpu()
                out, err, rc, wall = run(cmd, env)
                used = children_cpu() - before
                if rc != 0:
                    raise SystemExit(f"compare.py: {' '.join(cmd)} exited {rc}:\n{out}{err}")
                masked = re.sub(r"[0-9]+([.][0-9]+)?", "N", out)
                if v == "native":
                    native_out[t] = masked
                elif t in native_out and masked != native_out[t]:
                    raise SystemExit(f"compare.py: {v}'s output differs from native:\n{out}")
                results[t][v].append(figures(t, out))
                cpu[t][v].append(used)
                if v != "native":
                    with open(prof) as f:
                        p = json.load(f)
                    for call, c in p["calls"].items():
                        wait_cpu[t][v].setdefault(call, []).append(c["cpu_per_wait_us"])
                    last_profile[t][v] = p
            print(f"  round {r + 1}/{args.rounds} {t} done", file=sys.stderr, flush=True)

    say()
    say("Medians over the rounds; ratio = variant median / native median "
        "(latency: lower is better; bandwidth: higher is better).")
    for t in tests:
        say()
        keys = list(results[t]["native"][0].keys())
        head = f"{'figure':<26}" + "".join(f"{v:>13}" for v in variants)
        say(f"clpeak --{t}")
        say(head)
        for k in keys:
            med = {v: statistics.median(run[k] for run in results[t][v]) for v in variants}
            say(f"{k:<26}" + "".join(f"{med[v]:>13.2f}" for v in variants))
            base = med["native"]
            say(f"{'  ratio to native':<26}" + "".join(
                f"{(med[v] / base if base else float('nan')):>13.3f}" for v in variants))
            # The same round's native run as reference: drift between rounds
            # cancels out.
            paired = {v: statistics.median(
                (a[k] / b[k]) if b[k] else float("nan")
                for a, b in zip(results[t][v], results[t]["native"])) for v in variants}
            say(f"{'  per-round ratio, median':<26}" + "".join(
                f"{paired[v]:>13.3f}" for v in variants))
        medcpu = {v: statistics.median(cpu[t][v]) for v in variants}
        say(f"{'process CPU s':<26}" + "".join(f"{medcpu[v]:>13.2f}" for v in variants))
        say(f"{'  ratio to native':<26}" + "".join(
            f"{medcpu[v] / medcpu['native']:>13.3f}" for v in variants))
        calls = sorted({c for v in variants[1:] for c in wait_cpu[t][v]})
        if calls:
            say("waiting thread CPU/wait us, per interposed call (median of the runs):")
        for call in calls:
            say(f"{'  ' + call:<26}{'-':>13}" + "".join(
                f"{statistics.median(wait_cpu[t][v][call]):>13.2f}" if call in wait_cpu[t][v]
                else f"{'-':>13}" for v in variants[1:]))
            # Paired with the same round's blocking run, as for the figures.
            # A call a run did not make (a missing entry) leaves no pair.
            ref = wait_cpu[t].get("blocking", {}).get(call)
            if ref and len(ref) == args.rounds:
                say(f"{'    per-round ratio, median':<26}{'-':>13}" + "".join(
                    f"{statistics.median(a / b for a, b in zip(wait_cpu[t][v][call], ref)):>13.3f}"
                    if len(wait_cpu[t][v].get(call, [])) == args.rounds else f"{'-':>13}"
                    for v in variants[1:]))
        if calls:
            say("  (blocking = the program's own calls, measured: the native figure;")
            say("  per-round ratio = each run over the same round's blocking run)")
    say()
    say("Every run's figures, in round order:")
    for t in tests:
        for k in results[t]["native"][0].keys():
            for v in variants:
                say(f"  {t} {k} {v}: " + " ".join(f"{run[k]:.2f}" for run in results[t][v]))
        for v in variants[1:]:
            for call, per_run in sorted(wait_cpu[t][v].items()):
                say(f"  {t} {call} CPU/wait us {v}: " + " ".join(f"{x:.2f}" for x in per_run))
    say()
    say("The profile (cw-run --stats=FILE) of each strategy's last run:")
    for t in tests:
        for v in variants[1:]:
            say(f"--- clpeak --{t}, cw-run --strategy {v}")
            say(json.dumps(last_profile[t][v], indent=1))
    say(f"load average {os.getloadavg()[0]:.2f} at the end")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
