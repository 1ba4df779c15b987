#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install a built cw into a scratch prefix and use it from outside the tree:
# the installed files, the soname, the exported symbols (only cw_*), then the
# consumer built four ways, each run: find_package with cw::cw and with
# cw::cw_static (each also building and running the C++ consumer),
# pkg-config shared and pkg-config --static.
# Usage: tests/consumer/run.sh BUILD_DIR WORK_DIR [C_COMPILER [CXX_COMPILER]]
set -euo pipefail

build=$(cd "$1" && pwd)
work=$2
cc=${3:-cc}
cxx=${4:-c++}
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
libdir=$(dirname "$(find "$prefix" -name cw-opencl.pc -path '*/pkgconfig/*' -print -quit)")
libdir=$(dirname "$libdir")
for f in "$prefix/include/cw.h" "$prefix/include/cw/notify.h" "$prefix/include/cw/version.h" \
    "$libdir/libcw-opencl.a" "$libdir/libcw-opencl.so" "$libdir/cmake/cw/cwConfig.cmake" \
    "$libdir/cmake/cw/cwConfigVersion.cmake" "$libdir/cmake/cw/cwTargets.cmake" \
    "$prefix/share/man/man3/cw_wait.3" "$prefix/share/man/man1/cw-bench.1" \
    "$prefix/share/man/man1/cw-run.1" "$prefix/bin/cw-run" "$libdir/cw/libcw_preload.so"; do
    [ -e "$f" ] || fail "missing $f"
done
# Only the public headers: the internal layers are not installed.
for f in relax spinlock cond completion opencl; do
    [ ! -e "$prefix/include/cw/$f.h" ] || fail "internal header cw/$f.h is installed"
done
real=$(readlink -f "$libdir/libcw-opencl.so")
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
major=$(sed -n 's/^#define CW_VERSION_MAJOR \([0-9]*\)$/\1/p' "$prefix/include/cw/version.h")
[ "$soname" = "libcw-opencl.so.$major" ] || fail "soname is '$soname', expected libcw-opencl.so.$major"
[ -e "$libdir/$soname" ] || fail "no $soname link"
case "$real" in *libcw-opencl.so.$major.*.*) ;; *) fail "libcw-opencl.so points at $real, not a versioned file" ;; esac
others=$(nm -D --defined-only "$real" | awk '{print $NF}' | grep -v '^cw_' || true)
[ -z "$others" ] || fail "symbols exported without the cw_ prefix: $others"
echo "installed: $soname -> $(basename "$real"), $(nm -D --defined-only "$real" | wc -l) symbols, all cw_"

run() { # name, binary, expect static?
    local name=$1 bin=$2 static=$3
    dyn=$(readelf -d "$bin")
    if grep -q 'NEEDED.*libcw-opencl\.so' <<<"$dyn"; then
        [ "$static" = no ] || fail "$name: links libcw-opencl.so, expected libcw-opencl.a"
        # Captured first: grep -q closing the pipe early would fail it under pipefail.
        deps=$(LD_LIBRARY_PATH="$libdir" ldd "$bin")
        grep -q "$libdir/$soname" <<<"$deps" ||
            fail "$name: does not resolve $soname from the install"
    else
        [ "$static" = yes ] || fail "$name: does not link libcw-opencl.so"
    fi
    out=$(LD_LIBRARY_PATH="$libdir" "$bin") || fail "$name: consumer failed"
    echo "$name: $out"
}

for link in shared static; do
    cmake -S "$here" -B "$work/cmake-$link" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCW_CONSUMER_LINK="$link" >/dev/null
    cmake --build "$work/cmake-$link" >/dev/null
    static=$([ $link = static ] && echo yes || echo no)
    run "find_package($link)" "$work/cmake-$link/consumer" "$static"
    run "find_package($link), C++" "$work/cmake-$link/consumer_cxx" "$static"
done

export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion cw-opencl)" = "$(sed -n 's/^Version: //p' "$libdir/pkgconfig/cw-opencl.pc")" ]
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/pc-shared" "$here/consumer.c" $(pkg-config --cflags --libs cw-opencl)
run "pkg-config" "$work/pc-shared" no
# --static: libcw-opencl.a by name (-l:libcw-opencl.a), since the .so sits beside it.
libs=$(pkg-config --static --libs cw-opencl)
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/pc-static" "$here/consumer.c" $(pkg-config --cflags cw-opencl) ${libs//-lcw-opencl /-l:libcw-opencl.a }
run "pkg-config --static" "$work/pc-static" yes
echo "consumer: all four builds ran (and the C++ consumer in two)"
