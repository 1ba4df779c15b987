#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build tests/subproject against cw's source with add_subdirectory and with
# FetchContent; each must build only the library and the app, install
# nothing, and the app must run.
# Usage: tests/subproject/run.sh CW_SOURCE_DIR WORK_DIR [C_COMPILER]
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
cc=${3:-cc}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
for how in add_subdirectory FetchContent; do
    b="$work/$how"
    cmake -S "$here" -B "$b" -DCMAKE_C_COMPILER="$cc" -DCW_SOURCE_DIR="$src" -DCW_HOW="$how" >/dev/null
    cmake --build "$b" -j2 >/dev/null
    # What was built: the app and cw's libraries, nothing else.
    built=$(find "$b" -type f -perm -u+x \( -name 'cw-*' -o -name 'test_*' \) | sort)
    if [ -n "$built" ]; then
        echo "$how: built more than the library: $built" >&2
        exit 1
    fi
    if [ -e "$b/CTestTestfile.cmake" ] && grep -rq add_test "$b" --include=CTestTestfile.cmake; then
        echo "$how: cw's tests were registered" >&2
        exit 1
    fi
    # And installs nothing: no programs, kernels, man pages or library.
    cmake --install "$b" --prefix "$work/$how-prefix" >/dev/null
    installed=
    if [ -d "$work/$how-prefix" ]; then
        installed=$(find "$work/$how-prefix" \( -type f -o -type l \) | sort)
    fi
    if [ -n "$installed" ]; then
        echo "$how: cmake --install installed cw's files: $installed" >&2
        exit 1
    fi
    out=$("$b/app") || { echo "$how: app failed: $out" >&2; exit 1; }
    echo "$how: $out"
done
echo "subproject: add_subdirectory and FetchContent give the library alone"
