#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The build a packager or a new user does first, with cmocka and Python
# hidden from CMake (as on a machine with only a C compiler, CMake, the
# OpenCL headers and an ICD loader): configure, build and install must work,
# and the configure step must say why the tests are not built.
# Usage: tests/consumer/minimal.sh CW_SOURCE_DIR WORK_DIR [C_COMPILER]
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
cc=${3:-cc}
rm -rf "$work"
mkdir -p "$work"
log="$work/configure.log"
cmake -S "$src" -B "$work/build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_INSTALL_PREFIX="$work/prefix" \
    -DCMAKE_DISABLE_FIND_PACKAGE_cmocka=ON -DCMAKE_DISABLE_FIND_PACKAGE_Python3=ON >"$log" 2>&1 ||
    { cat "$log" >&2; exit 1; }
grep -q "the tests are not built: cmocka was not found" "$log" ||
    { echo "configure did not say that the tests are skipped:" >&2; cat "$log" >&2; exit 1; }
grep -q "CW_WERROR:BOOL=ON" "$work/build/CMakeCache.txt" &&
    { echo "-Werror is on by default" >&2; exit 1; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
cmake --install "$work/build" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; exit 1; }
for f in include/cw.h include/cw/version.h share/man/man3/cw_wait.3; do
    [ -e "$work/prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
ls "$work/prefix"/lib*/libcw-opencl.so.* >/dev/null
echo "minimal: configured without cmocka and Python, built and installed into $work/prefix"
