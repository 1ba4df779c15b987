#!/bin/sh
# SPDX-License-Identifier: MIT
# How docs/design.md counts the file crossings of one default cw_wait:
# build src/ of TREE with -finstrument-functions (no optimisation, so
# every call, static inline ones included, is seen), trace one wait
# (drive.c) and count (count.py). TREE needs a configured build/ for
# cw/version.h. Usage: run.sh TREE ROOMS (e.g. wait,table,status,...)
set -eu
tree=$1
rooms=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
gcc -std=c11 -D_GNU_SOURCE -DCL_TARGET_OPENCL_VERSION=300 -O0 -g -no-pie -fno-pie \
    -finstrument-functions -I"$tree/include" -I"$tree/build/include" -I"$tree/src" \
    "$tree"/src/*.c "$here/drive.c" "$here/hook.c" -o "$work/wait" -lOpenCL -lpthread
"$work/wait" "$work/calls.txt"
python3 "$here/count.py" "$work/wait" "$work/calls.txt" "$rooms"
rm -rf "$work"
