#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A library must export exactly the functions listed (libcw-opencl.so: the public
# API in exports.txt; libcw_preload.so: tests/preload/exports.txt):
# nothing internal leaks out, nothing public goes missing.
# Usage: tests/abi/check-exports.sh LIBRARY_SO EXPORTS_TXT
set -euo pipefail
lib=$1
list=$2
actual=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
expected=$(grep -v '^#' "$list" | sed '/^$/d' | sort -u)
if [ "$actual" != "$expected" ]; then
    echo "exports of $lib differ from $list (< expected only, > exported only):" >&2
    diff <(echo "$expected") <(echo "$actual") >&2 || true
    echo "If the public API changed on purpose, update $list in the same commit." >&2
    exit 1
fi
echo "exports: $(echo "$actual" | wc -l) symbols, as listed in $(basename "$list")"
