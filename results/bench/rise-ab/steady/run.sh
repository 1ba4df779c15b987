#!/bin/bash
# SPDX-License-Identifier: MIT
# The comparison as run: OLD and NEW are two Release build folders of
# cw-bench (git 69d7ecc, and the same with change.diff), alternated.
# usage: run.sh OLD_BUILD NEW_BUILD OUTDIR
set -u
old=$1 new=$2 out=$3
mkdir -p "$out"
for r in 1 2; do
  for b in old new; do
    if [ "$b" = old ]; then bin=$old/bench/cw-bench; else bin=$new/bench/cw-bench; fi
    f="$out/$b-$r"
    uptime > "$f.txt"
    "$bin" --driver-model nvidia --kernels busy-1ms,busy-20ms,busy-100ms --max-time 45 \
      --stats --json "$f.json" >> "$f.txt" 2>&1
    uptime >> "$f.txt"
    /usr/bin/python3 bench/goals.py "$f.json" > "$f-goals.txt" 2>&1
    echo "$b $r: $(grep -E '^goal [bcf]:' "$f-goals.txt" | sed -E 's/^(goal .): [A-Z]+: .*\((.*)\)$/\1 \2;/' | tr '\n' ' ')"
  done
done
