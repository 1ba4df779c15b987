#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed programs and man pages, used from a prefix that has moved
# since the install: cmake --install into a scratch prefix, then move it.
#  - cw-bench --help, cw-example and a short cw-bench run work from there,
#    with CW_KERNEL_DIR and LD_LIBRARY_PATH unset: the kernels come from the
#    prefix's share/cw/kernels and libcw from its lib, both found from bin/;
#  - the kernels really are read from there (one removed: the error names
#    the moved prefix), and CW_KERNEL_DIR still overrides;
#  - where user namespaces are allowed, cw-example also runs with the source
#    and build trees hidden (a tmpfs over each), from a copy of the prefix;
#  - every installed man page renders with man -l and carries "cw VERSION";
#    every alias is a link to a page beside it, and man -M opens it.
# Usage: tests/consumer/programs.sh BUILD_DIR WORK_DIR VERSION CW_SONAME
set -euo pipefail

build=$(cd "$1" && pwd)
work=$2
version=$3
soname=$4
src=$(cd "$(dirname "$0")/../.." && pwd)

fail() {
    echo "programs: $*" >&2
    exit 1
}

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
cmake --install "$build" --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/moved"
prefix=$work/moved
unset CW_KERNEL_DIR LD_LIBRARY_PATH

for f in bin/cw-bench bin/cw-example share/cw/kernels/saxpy.cl share/cw/kernels/busy.cl \
    share/cw/kernels/latency.cl share/man/man1/cw-bench.1; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done

# libcw from the moved prefix, through the programs' relative RPATH.
for exe in cw-bench cw-example; do
    deps=$(ldd "$prefix/bin/$exe")
    lib=$(awk -v so="$soname" '$1 == so { print $3 }' <<<"$deps")
    case "$lib" in
    "$prefix"/*) ;;
    *) fail "$exe resolves $soname to '${lib:-nothing}', not from $prefix: $deps" ;;
    esac
done

help=$("$prefix/bin/cw-bench" --help) || fail "cw-bench --help failed"
grep -q -- '--json FILE' <<<"$help" || fail "cw-bench --help does not list --json"

out=$("$prefix/bin/cw-example" --launches 2 2>&1) || fail "cw-example failed: $out"
ok=$(grep -c 'result ok' <<<"$out" || true)
[ "$ok" -ge 2 ] || fail "cw-example verified $ok strategies: $out"
echo "cw-example from $prefix: $ok strategies, result ok"

"$prefix/bin/cw-bench" --kernels latency --configs 1 --strategies blocking,cooperative \
    --launches 2 --warmup 0 --floor-trips 10 --json "$work/bench.json" >"$work/bench.txt" \
    2>"$work/bench.err" || fail "cw-bench run failed: $(cat "$work/bench.err")"
grep -q '"kernel": "latency"' "$work/bench.json" || fail "cw-bench wrote no latency record"
echo "cw-bench from $prefix: latency cell run, JSON written"

# The installed kernels are the ones read: without one of them the program
# fails and names the file it looked for in the moved prefix.
mv "$prefix/share/cw/kernels/busy.cl" "$work/busy.cl"
if out=$("$prefix/bin/cw-example" --launches 1 2>&1); then
    fail "cw-example ran without the installed busy.cl (kernels read from elsewhere): $out"
fi
grep -qF "$prefix/share/cw/kernels/busy.cl" <<<"$out" ||
    fail "cw-example did not look for busy.cl in $prefix: $out"
mv "$work/busy.cl" "$prefix/share/cw/kernels/busy.cl"
if out=$(CW_KERNEL_DIR="$work/no-kernels" "$prefix/bin/cw-example" --launches 1 2>&1); then
    fail "cw-example ignored CW_KERNEL_DIR: $out"
fi
grep -qF "$work/no-kernels/" <<<"$out" || fail "CW_KERNEL_DIR did not override: $out"
echo "kernels: read from $prefix/share/cw/kernels, CW_KERNEL_DIR overrides"

# The source and build trees out of sight. The copy lives outside both, as
# a tmpfs over the build tree would hide $work too.
if unshare -rm true 2>/dev/null; then
    copy=$(mktemp -d)
    trap 'rm -rf "$copy"' EXIT
    cp -a "$prefix/." "$copy/"
    # The build tree first: when it lies inside the source tree, hiding the
    # source tree first would take its mount point away.
    out=$(unshare -rm sh -c 'for d in "$1" "$2"; do
              if [ -d "$d" ]; then mount -t tmpfs none "$d" || exit; fi; done
              test ! -e "$2/CMakeLists.txt" && exec "$3/bin/cw-example" --launches 2' \
              sh "$build" "$src" "$copy" 2>&1) ||
        fail "cw-example with the source and build trees hidden failed: $out"
    grep -q 'result ok' <<<"$out" || fail "cw-example with the trees hidden: $out"
    echo "cw-example from a copy with $src and $build hidden: result ok"
else
    echo "user namespaces not allowed here: the run with the trees hidden is skipped"
fi

# The man pages of the moved prefix.
man=$prefix/share/man
npages=0 nlinks=0
for page in "$man"/man1/* "$man"/man3/*; do
    name=${page#"$man"/}
    if [ -L "$page" ]; then
        target=$(readlink "$page")
        case "$target" in */*) fail "$name: a link out of its directory: $target" ;; esac
        [ -f "$page" ] && [ ! -L "$(dirname "$page")/$target" ] || fail "$name -> $target: not a page"
        nlinks=$((nlinks + 1))
        continue
    fi
    grep -q '^\.so' "$page" && fail "$name: an alias page (.so), not a link"
    grep -q "^\.TH [^ ]* [0-9] [0-9-]* \"cw $version\" " "$page" ||
        fail "$name: .TH does not carry cw $version: $(grep -m1 '^\.TH' "$page")"
    rendered=$(MANWIDTH=80 MANPAGER=cat LC_ALL=C.UTF-8 man -l "$page" 2>"$work/man.err") ||
        fail "$name: man -l failed: $(cat "$work/man.err")"
    [ ! -s "$work/man.err" ] || fail "$name: man -l: $(cat "$work/man.err")"
    tail -n 1 <<<"$rendered" | grep -q "cw $version" || fail "$name: its footer does not say cw $version"
    npages=$((npages + 1))
done
[ "$npages" -ge 7 ] || fail "$npages man pages installed"
[ "$nlinks" -ge 1 ] || fail "no alias links installed"
opened=$(MANWIDTH=80 MANPAGER=cat LC_ALL=C.UTF-8 man -M "$man" 3 cw_now_ns 2>&1) ||
    fail "man -M $man cw_now_ns: $opened"
head -n 1 <<<"$opened" | grep -q 'CW_WAIT(3)' || fail "man cw_now_ns does not open cw_wait(3)"
echo "man: $npages pages with cw $version, $nlinks links, man cw_now_ns opens cw_wait(3)"
