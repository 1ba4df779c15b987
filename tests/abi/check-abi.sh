#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compare the ABI of a built libcw-opencl.so (with debug info) with the baseline kept
# in the repository (libabigail's abidiff). Any difference fails: a change of
# the public ABI must update tests/abi/libcw.abi in the same commit
# (tests/abi/update-baseline.sh BUILD_DIR), and an incompatible one must also
# bump the major version (see CHANGELOG.md).
# Every type abidiff compares is reachable from an exported function, and
# only public functions are exported (exports.txt), so no header filter is
# needed (and libabigail's filter hid real changes in a trial).
# Usage: tests/abi/check-abi.sh LIBCW_SO BASELINE
set -euo pipefail
lib=$1
baseline=$2
command -v abidiff >/dev/null || {
    echo "abidiff not found (Debian: apt-get install abigail-tools)" >&2
    exit 1
}
set +e
out=$(abidiff "$baseline" "$lib" 2>&1)
rc=$?
set -e
# Added functions count too: "add, don't change" still records every
# addition in the baseline and in CHANGELOG.md.
if [ $rc -ne 0 ]; then
    echo "$out" >&2
    echo "abidiff: the ABI of $lib differs from $baseline (exit $rc)." >&2
    exit 1
fi
echo "abi: $(basename "$lib") matches $(basename "$baseline")"
