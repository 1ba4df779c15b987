#!/bin/sh
# SPDX-License-Identifier: MIT
# Check tests/model/completion.pml exhaustively with Spin for one notify order.
# usage: check.sh MODEL WAKE_LOCKED(0|1) WORKDIR
# Exits non-zero unless the verifier explored the model and reported 0 errors.
set -eu
model=$1 wake_locked=$2 dir=$3
mkdir -p "$dir"
cp "$model" "$dir/model.pml"
cd "$dir"
spin -DWAKE_LOCKED="$wake_locked" -a model.pml >/dev/null
cc -O2 -DSAFETY -o pan pan.c
./pan -m100000 >pan.out
cat pan.out
grep -q "errors: 0" pan.out
grep -q "states, stored" pan.out
