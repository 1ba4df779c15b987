#!/usr/bin/env bash
# Install a built cw into a scratch prefix and use it from outside the tree:
# the installed files, the soname, the exported symbols (only cw_*), then the
# consumer built four ways, each run: find_package with cw::cw and with
# cw::cw_static, pkg-config shared and pkg-config --static.
# Usage: tests/consumer/run.sh BUILD_DIR WORK_DIR [C_COMPILER]
set -euo pipefail

build=$(cd "$1" && pwd)
work=$2
cc=${3:-cc}
here=$(cd "$(dirname "$0")" && pwd)

fail() {
    echo "consumer: $*" >&2
    exit 1
}

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

# Where GNUInstallDirs put the libraries: lib, or lib/<multiarch> under /usr.
libdir=$(dirname "$(find "$prefix" -name cw.pc -path '*/pkgconfig/*' -print -quit)")
libdir=$(dirname "$libdir")
for f in "$prefix/include/cw.h" "$prefix/include/cw/notify.h" "$libdir/libcw.a" \
    "$libdir/libcw.so" "$libdir/cmake/cw/cwConfig.cmake" \
    "$libdir/cmake/cw/cwConfigVersion.cmake" "$libdir/cmake/cw/cwTargets.cmake"; do
    [ -e "$f" ] || fail "missing $f"
done
real=$(readlink -f "$libdir/libcw.so")
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libcw.so.0" ] || fail "soname is '$soname', expected libcw.so.0"
[ -e "$libdir/$soname" ] || fail "no $soname link"
case "$real" in *libcw.so.0.*.*) ;; *) fail "libcw.so points at $real, not a versioned file" ;; esac
others=$(nm -D --defined-only "$real" | awk '{print $NF}' | grep -v '^cw_' || true)
[ -z "$others" ] || fail "symbols exported without the cw_ prefix: $others"
echo "installed: $soname -> $(basename "$real"), $(nm -D --defined-only "$real" | wc -l) symbols, all cw_"

run() { # name, binary, expect static?
    local name=$1 bin=$2 static=$3
    dyn=$(readelf -d "$bin")
    if grep -q 'NEEDED.*libcw\.so' <<<"$dyn"; then
        [ "$static" = no ] || fail "$name: links libcw.so, expected libcw.a"
        # Captured first: grep -q closing the pipe early would fail it under pipefail.
        deps=$(LD_LIBRARY_PATH="$libdir" ldd "$bin")
        grep -q "$libdir/libcw.so.0" <<<"$deps" ||
            fail "$name: does not resolve libcw.so.0 from the install"
    else
        [ "$static" = yes ] || fail "$name: does not link libcw.so"
    fi
    out=$(LD_LIBRARY_PATH="$libdir" "$bin") || fail "$name: consumer failed"
    echo "$name: $out"
}

for link in shared static; do
    cmake -S "$here" -B "$work/cmake-$link" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCW_CONSUMER_LINK="$link" >/dev/null
    cmake --build "$work/cmake-$link" >/dev/null
    run "find_package($link)" "$work/cmake-$link/consumer" "$([ $link = static ] && echo yes || echo no)"
done

export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion cw)" = "$(sed -n 's/^Version: //p' "$libdir/pkgconfig/cw.pc")" ]
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/pc-shared" "$here/consumer.c" $(pkg-config --cflags --libs cw)
run "pkg-config" "$work/pc-shared" no
# --static: libcw.a by name (-l:libcw.a), since libcw.so sits beside it.
libs=$(pkg-config --static --libs cw)
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/pc-static" "$here/consumer.c" $(pkg-config --cflags cw) ${libs//-lcw /-l:libcw.a }
run "pkg-config --static" "$work/pc-static" yes
echo "consumer: all four builds ran"
