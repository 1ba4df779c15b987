#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Write tests/abi/libcw.abi from a build's libcw-opencl.so (gcc, RelWithDebInfo: the
# build the CI compares). Run it only with a change of the public ABI, and say
# so in CHANGELOG.md.
# Usage: tests/abi/update-baseline.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lib=$(readlink -f "$build/libcw-opencl.so")
abidw --no-corpus-path --no-comp-dir-path --no-show-locs --drop-private-types \
    --headers-dir "$root/include" "$lib" >"$here/libcw.abi"
echo "wrote $here/libcw.abi from $lib"
