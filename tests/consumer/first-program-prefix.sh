#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/first-program.md's install into a folder of one's own, as a user
# meets it: the blocks after "<!-- readme-test: prefix-install -->",
# "... prefix-build -->" and "... prefix-tools -->" run as written, the
# first in a copy of the source tree (its tracked files, as a clone has
# them), the others in a folder holding the page's app.c, with HOME a
# scratch folder (the page installs under $HOME/opt/cw) and nothing else
# set. The program must print the page's output block; cw-run must run it
# and print its profile; man must open cw_wait(3) from the prefix.
# Usage: tests/consumer/first-program-prefix.sh [WORK_DIR]   (from anywhere)
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
src=$(cd "$(dirname "$0")/../.." && pwd)
page=$src/examples/first-program.md
work=${1:-$(mktemp -d)}
[ -n "${1:-}" ] || trap 'rm -rf "$work"' EXIT
fail() {
    echo "first-program (prefix): $*" >&2
    exit 1
}

# The fenced block that follows the marker line for NAME.
. "$(dirname "$0")/page-block.sh"
block() {
    page_block "$page" "$1"
}

rm -rf "$work/home" "$work/src" "$work/app"
mkdir -p "$work/home" "$work/src" "$work/app"
for b in app.c output prefix-install prefix-build prefix-tools; do
    block "$b" >"$work/$b"
    [ -s "$work/$b" ] || fail "the page has no block for $b"
done
# The tracked files (a CI clone may belong to another user than the one
# running this: safe.directory); without git, the tree less its builds.
if git -c safe.directory="$src" -C "$src" ls-files -z >"$work/files" 2>/dev/null &&
    [ -s "$work/files" ]; then
    (cd "$src" && tar --null -T "$work/files" -cf -) | tar -xf - -C "$work/src"
else
    (cd "$src" && tar --exclude=.git --exclude='./build*' -cf - .) | tar -xf - -C "$work/src"
fi
cp "$work/app.c" "$work/app/app.c"

start=$(date +%s)
# As a user's shell has it: HOME is where the page installs; the build's
# parallelism is the machine's (cmake --build reads it from the
# environment).
(cd "$work/src" && env -i PATH="$PATH" HOME="$work/home" LANG=C.UTF-8 \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" bash -e "$work/prefix-install") >"$work/install.log" 2>&1 ||
    { tail -n 30 "$work/install.log"; fail "the install block failed"; }
echo "first-program (prefix): installed into \$HOME/opt/cw in $(($(date +%s) - start)) s"
dir=$work/home/opt/cw
[ -f "$dir/include/cw.h" ] && [ -x "$dir/bin/cw-run" ] || fail "nothing installed under \$HOME/opt/cw"

# The build and the tools blocks, one shell as a user types them.
cat "$work/prefix-build" "$work/prefix-tools" >"$work/app/user.sh"
(cd "$work/app" && env -i PATH="$PATH" HOME="$work/home" LANG=C.UTF-8 MANPAGER=cat MANWIDTH=80 \
    ${OCL_ICD_VENDORS:+OCL_ICD_VENDORS=$OCL_ICD_VENDORS} \
    bash -e user.sh >"$work/user.out" 2>"$work/user.err") ||
    { cat "$work/user.err" >&2; fail "the build or tools block failed"; }
expected=$(cat "$work/output")
# ./app, then cw-run's run of it: the page's line twice.
[ "$(grep -cxF "$expected" "$work/user.out")" = 2 ] ||
    { cat "$work/user.out"; fail "the program did not print '$expected' twice (./app, cw-run)"; }
grep -q '^cw-run: wait profile of pid [0-9]*' "$work/user.err" ||
    { cat "$work/user.err"; fail "cw-run printed no profile"; }
grep -q '^CW_WAIT(3) ' "$work/user.out" || fail "man cw_wait did not open cw_wait(3)"
got=$(cd "$work/app" && env -i PATH="$dir/bin:$PATH" MANPATH="$dir/share/man:" man -w cw_wait)
[ "$got" = "$dir/share/man/man3/cw_wait.3" ] || fail "man cw_wait opened $got, not the prefix's page"
# The program needs no LD_LIBRARY_PATH: its rpath names the prefix.
ldd "$work/app/app" | grep -q "=> $dir/lib/libcw-opencl.so.1 " ||
    fail "app does not find libcw-opencl.so.1 in the prefix: $(ldd "$work/app/app" | grep cw)"
echo "first-program (prefix): the page's commands built app against \$HOME/opt/cw; it printed '$expected', under cw-run too, and man cw_wait opened the prefix's page"
