#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How cw-run reaches a program (docs/cw-run-internals.md, "How cw-run reaches the
# program"): the OpenCL layer by default, the user's layers kept; the
# preload where the loader has no layer support (a stand-in libOpenCL.so.1
# first on LD_LIBRARY_PATH) or when CW_RUN_MECHANISM=preload asks; a bad
# CW_RUN_MECHANISM refused. A program that dlopens libOpenCL is interposed
# by the layer and not by the preload, which says so at exit; a linked
# program is interposed exactly once per call by the layer, the preload, and
# both at once (the same counts in each profile).
# Usage: mechanism.sh CW_RUN PRELOAD_SO FAKE_LOADER_DIR DLOPEN_PROG LINKED_PROG
set -euo pipefail
[ $# -eq 5 ] || { sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
cw_run=$1 object=$(realpath "$2") fake=$3 dlopen_prog=$4 linked_prog=$5
work=$(mktemp -d)
work=$(realpath "$work")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
show='printf "%s|%s\n" "${OPENCL_LAYERS-}" "${LD_PRELOAD-}"'
# The choice alone is checked with a stand-in object: the preload, built
# with a sanitizer, cannot load into sh. cw-run accepts only an ELF shared
# library, so the stand-in is a copy of the C library sh already loads,
# which adds nothing when preloaded.
stand_in=$work/stand-in.so
libc=$(ldd "$(command -v sh)" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -f "$libc" ] || fail "no C library found for sh's stand-in (ldd: '$libc')"
cp "$libc" "$stand_in"
choose() { CW_RUN_PRELOAD="$stand_in" "$@" "$cw_run" -- sh -c "$show" 2>/dev/null; }
preload0=${LD_PRELOAD-}
with_preload=${preload0:+$preload0:}$stand_in

got=$(choose env -u OPENCL_LAYERS -u CW_RUN_MECHANISM)
[ "$got" = "$stand_in|$preload0" ] || fail "default: '$got', not the layer alone"
got=$(choose env -u CW_RUN_MECHANISM OPENCL_LAYERS=/opt/other.so)
[ "$got" = "$stand_in:/opt/other.so|$preload0" ] || fail "user's layer: '$got'"
got=$(choose env -u CW_RUN_MECHANISM OPENCL_LAYERS="$stand_in")
[ "$got" = "$stand_in|$preload0" ] || fail "layer listed twice: '$got'"
got=$(choose env -u OPENCL_LAYERS CW_RUN_MECHANISM=preload)
[ "$got" = "|$with_preload" ] || fail "CW_RUN_MECHANISM=preload: '$got'"
got=$(choose env -u OPENCL_LAYERS CW_RUN_MECHANISM=layer LD_LIBRARY_PATH="$fake")
[ "$got" = "$stand_in|$preload0" ] || fail "CW_RUN_MECHANISM=layer: '$got'"
got=$(choose env -u OPENCL_LAYERS -u CW_RUN_MECHANISM LD_LIBRARY_PATH="$fake")
[ "$got" = "|$with_preload" ] || fail "a loader without layers: '$got', not the preload"
rc=0
CW_RUN_MECHANISM=bogus "$cw_run" -- true 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q "CW_RUN_MECHANISM='bogus'" "$work/err" || fail "bogus mechanism: exit $rc"
echo "ok: the layer by default, the preload without layer support or on request"

# counts FILE: the profile's "call count" pairs, one a line.
counts() { { grep -o '"cl[A-Za-z]*": {"count": [0-9]*' "$1" || true; } | sort; }
native=$("$dlopen_prog")
for m in layer preload both; do
    for p in dlopen linked; do
        prog=$dlopen_prog
        [ $p = linked ] && prog=$linked_prog
        env=(-u OPENCL_LAYERS CW_RUN_MECHANISM="$m")
        [ $m = both ] && env=(OPENCL_LAYERS="$object" CW_RUN_MECHANISM=preload)
        out=$(env "${env[@]}" "$cw_run" --stats="$work/$m-$p.json" -- "$prog" 2>"$work/$m-$p.err") ||
            fail "$m, $p: exit $?: $(cat "$work/$m-$p.err")"
        [ "$out" = "$native" ] || fail "$m, $p: '$out', natively '$native'"
        counts "$work/$m-$p.json" >"$work/$m-$p.counts"
    done
done
for p in dlopen linked; do
    grep -q '"mechanism": "layer"' "$work/layer-$p.json" || fail "layer, $p: not through the layer"
    [ -s "$work/layer-$p.counts" ] || fail "layer, $p: no call counted"
    ! grep -q 'no call went through cw' "$work/layer-$p.err" || fail "layer, $p: the notice"
done
cmp -s "$work/layer-dlopen.counts" "$work/layer-linked.counts" ||
    fail "the layer counts the dlopen program differently: $(diff "$work/layer-dlopen.counts" "$work/layer-linked.counts")"
for m in preload both; do
    grep -q '"mechanism": "preload"' "$work/$m-linked.json" || fail "$m: not through the preload"
    cmp -s "$work/layer-linked.counts" "$work/$m-linked.counts" ||
        fail "$m counts differ from the layer's: $(diff "$work/layer-linked.counts" "$work/$m-linked.counts")"
    [ ! -s "$work/$m-dlopen.counts" ] || fail "$m: the preload saw the dlopen program's calls"
    grep -q 'no call went through cw' "$work/$m-dlopen.err" || fail "$m: no notice for the dlopen program"
done
echo "ok: $(wc -l <"$work/layer-linked.counts") calls counted alike by the layer, the preload and both"
