#!/bin/bash
# SPDX-License-Identifier: MIT
# clFinish's failed-command checks under clpeak --global-bandwidth on PoCL,
# two builds of cw-run interleaved: `blocking` (the program's own calls,
# the native figure) and a strategy (`cooperative` unless the build's path
# is followed by :STRATEGY) with each build, ROUNDS rounds in rotating
# order. Per run it prints clFinish's waiting-thread CPU per wait
# (--stats), its ratio to the same round's blocking run, and from --trace
# the parks and checks in the clFinish waits, how many waits lasted over
# 1 s, and the checks in the others; then the parked and the unparked
# waits apart, each with its mean CPU and its places in the run. Not a
# test: a measurement (see docs/cw-run-internals.md, "Performance").
# Usage: checks-ab.sh BEFORE_CW_RUN[:STRATEGY] AFTER_CW_RUN[:STRATEGY] [ROUNDS] [LABEL_BEFORE LABEL_AFTER]
set -eu
[ $# -ge 2 ] || { sed -n 's/^# Usage: //p' "$0"; exit 2; }
before=${1%%:*} after=${2%%:*} rounds=${3:-3} lb=${4:-before} la=${5:-after}
sb=cooperative sa=cooperative
[[ $1 == *:* ]] && sb=${1#*:}
[[ $2 == *:* ]] && sa=${2#*:}
export OCL_ICD_VENDORS=pocl.icd
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ways=(blocking before after)
for ((r = 0; r < rounds; ++r)); do
    for k in 0 1 2; do
        w=${ways[$(((r + k) % 3))]}
        case $w in
        blocking) c=$after s=blocking ;;
        before) c=$before s=$sb ;;
        after) c=$after s=$sa ;;
        esac
        "$c" --strategy $s --stats="$work/$r-$w.json" --trace="$work/$r-$w-trace.json" \
            -- clpeak -p 0 -d 0 --global-bandwidth >/dev/null
        echo "checks-ab: round $((r + 1)) of $rounds: $w done" >&2
    done
done
/usr/bin/python3 - "$work" "$rounds" "$lb" "$la" "$sb" "$sa" <<'PY'
import json, os, statistics, sys
work, rounds, lb, la, sb, sa = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
ways = {"blocking": "blocking", "before": lb, "after": la}
ratios = {w: [] for w in ways}
print(f"clpeak -p 0 -d 0 --global-bandwidth on PoCL, {rounds} rounds, in rotating order: "
      f"blocking (the program's own calls), {sb} with {lb}, {sa} with {la}")
print(f"host: {os.uname().nodename}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end")
print("per run: clFinish's waiting-thread CPU per wait (--stats) and its ratio to the same round's "
      "blocking run; from --trace, in the clFinish waits: cw parks, checks, waits over 1 s, "
      "checks in the waits of at most 1 s")
for r in range(rounds):
    base = json.load(open(f"{work}/{r}-blocking.json"))["calls"]["clFinish"]["cpu_per_wait_us"]
    for w, name in ways.items():
        p = json.load(open(f"{work}/{r}-{w}.json"))
        t = json.load(open(f"{work}/{r}-{w}-trace.json"))
        sp = [e for e in t["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") == "wait" and e["name"] == "clFinish"]
        cpu = p["calls"]["clFinish"]["cpu_per_wait_us"]
        ratios[w].append(cpu / base)
        print(f"  round {r + 1} {name:10s} CPU/wait {cpu:8.2f} us  x blocking {cpu / base:6.3f}"
              f"  parks {sum(e['args']['cw_parks'] for e in sp):3d}"
              f"  checks {sum(e['args']['cw_checks'] for e in sp):3d}"
              f"  waits > 1 s {sum(1 for e in sp if e['dur'] > 1e6):2d}"
              f"  checks in waits <= 1 s {sum(e['args']['cw_checks'] for e in sp if e['dur'] <= 1e6):2d}")
        # The waits cw parked in (callback waits) and the others (the
        # driver's own wait, or the program's own call), each with its mean
        # CPU: what the per-wait figure above is made of.
        for label, part in (("parked", [e for e in sp if e["args"]["cw_parks"] > 0]),
                            ("unparked", [e for e in sp if e["args"]["cw_parks"] == 0])):
            cpus = [e["args"]["cpu_us"] for e in part if "cpu_us" in e["args"]]
            if cpus:
                print(f"      {label:8s} waits {len(part):3d}  mean CPU {statistics.mean(cpus):8.2f} us"
                      f"  in order: {' '.join(str(sp.index(e) + 1) for e in part)}")
print("per-round ratio to blocking, median: "
      + ", ".join(f"{name} {statistics.median(ratios[w]):.3f}" for w, name in ways.items()))
PY
