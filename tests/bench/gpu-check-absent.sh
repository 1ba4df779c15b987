#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/gpu-check.sh where no libnvidia-opencl.so.1 exists: exit 1 at once
# with a message naming it, before building anything. Usage: gpu-check-absent.sh SCRIPT OUT
set -u
script=$1 out=$2
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl\.so\.1 '; then
    echo "skipped: this machine has NVIDIA's OpenCL library"
    exit 0
fi
rm -rf "$out"
start=$(date +%s)
text=$(bash "$script" --out "$out" --build "$out/build" 2>&1)
rc=$?
echo "$text"
took=$(($(date +%s) - start))
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc, not 1"; exit 1; }
grep -q 'no libnvidia-opencl\.so\.1' <<<"$text" || { echo "FAIL: no message naming libnvidia-opencl.so.1"; exit 1; }
[ ! -e "$out/build" ] || { echo "FAIL: it built cw before finding the driver absent"; exit 1; }
echo "PASS: gpu-check.sh stopped in $took s: no driver"
