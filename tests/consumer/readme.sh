#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The first program (examples/first-program.md, which README.md points to),
# as a user meets it: the blocks after the
# markers "<!-- readme-test: app.c -->", "... build -->" and "... output -->"
# are extracted, the build commands run as written (in a scratch folder,
# against cw installed into a scratch prefix, which CPATH, LIBRARY_PATH and
# LD_LIBRARY_PATH make as visible as /usr/local is), and what the program
# prints must be the page's output block.
# Usage: tests/consumer/readme.sh PAGE BUILD_DIR WORK_DIR [C_COMPILER]
set -euo pipefail
readme=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
build=$(cd "$2" && pwd)
work=$3
cc=${4:-cc}

fail() {
    echo "readme: $*" >&2
    exit 1
}

# The fenced block that follows the marker line for NAME.
. "$(dirname "$0")/page-block.sh"
block() {
    page_block "$readme" "$1"
}

rm -rf "$work"
mkdir -p "$work/app"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(dirname "$(dirname "$(find "$work/prefix" -name cw-opencl.pc -path '*/pkgconfig/*' -print -quit)")")

block app.c >"$work/app/app.c"
block build >"$work/app/build.sh"
block output >"$work/expected.txt"
for f in app/app.c app/build.sh expected.txt; do
    [ -s "$work/$f" ] || fail "$(basename "$readme") has no block for $(basename "$f" .sh)"
done
# `cc` in the page is the C compiler under test.
mkdir -p "$work/bin"
ln -s "$(command -v "$cc")" "$work/bin/cc"
out=$(cd "$work/app" && PATH="$work/bin:$PATH" CPATH="$work/prefix/include" \
    LIBRARY_PATH="$libdir" LD_LIBRARY_PATH="$libdir" bash -e build.sh 2>&1) ||
    fail "the page's commands failed:
$out"
if ! diff -u "$work/expected.txt" - <<<"$out"; then
    fail "the program's output differs from the page's (above: - page, + program)"
fi
echo "readme: app.c ($(wc -l <"$work/app/app.c") lines) built with the page's command and printed: $out"
