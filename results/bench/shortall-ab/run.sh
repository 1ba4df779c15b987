#!/bin/bash
# SPDX-License-Identifier: MIT
# The comparison as run: OLD and NEW are two Release build folders of
# cw-bench (git 1de99a2, and the same with change.diff), alternated.
# usage: run.sh OLD_BUILD NEW_BUILD OUTDIR
set -u
old=$1 new=$2 out=$3
mkdir -p "$out/latency" "$out/short-cells" "$out/sweep"
bin() { if [ "$1" = old ]; then echo "$old/bench/cw-bench"; else echo "$new/bench/cw-bench"; fi; }
# 1. The latency kernel: two sweep models and the pocl3 preset, 6 rounds.
models=("pocl3,callback_delay_us=0,jitter_us=10,wait=yield,failed=drop,seed=1006224384 --configs all"
        "pocl3,callback_delay_us=2,jitter_us=10,wait=spinblock:704,failed=drop,stall_us=230,stall_every=5,seed=1728084839 --configs all"
        "pocl3 --configs 1,all"
        "neo --configs 1,all"
        "rocm --configs 1,all")
for r in 1 2 3 4 5 6; do
  for i in "${!models[@]}"; do
    for b in old new; do
      f="$out/latency/m$((i + 1))-$b-$r.txt"
      # shellcheck disable=SC2086
      "$(bin $b)" --kernels latency --max-time 8 --stats --driver-model ${models[$i]} > "$f" 2>&1
      echo "latency m$((i + 1)) $b $r: $(grep -A1 '^goal c:' "$f" | tail -1)"
    done
  done
done
# 2. The default run's short kernels, 2 rounds.
for r in 1 2; do
  for b in old new; do
    f="$out/short-cells/$b-$r"
    "$(bin $b)" --kernels saxpy,busy-100us,latency --stats --json "$f.json" > "$f.txt" 2>&1
    /usr/bin/python3 bench/goals.py "$f.json" > "$f-goals.txt" 2>&1
    gzip -f "$f.json"
    echo "short-cells $b $r: $(grep -E '^goal [ac]:' "$f-goals.txt" | sed -E 's/^(goal .): [A-Z]+: .*\((.*)\)$/\1 \2;/' | tr '\n' ' ')"
  done
done
# 3. The sweep on the kept sweep's seed, 2 rounds.
for r in 1 2; do
  for b in old new; do
    f="$out/sweep/$b-$r"
    "$(bin $b)" --sweep 40 --seed 1369551125 --stats --json "$f.json" > "$f.txt" 2>&1
    /usr/bin/python3 bench/goals.py "$f.json" --sweep "$f.json" > "$f-goals.txt" 2>&1
    gzip -f "$f.json"
    echo "sweep $b $r: $(grep '^goal d' "$f-goals.txt")"
  done
done
