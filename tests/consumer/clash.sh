#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cw beside Debian's libcw-dev (unixcw, a Morse-code library whose libcw.so,
# libcw.a, libcw.pc and libcw.h would collide with a plain "libcw"). Both go
# into one prefix, cw installed and the Morse library's files copied next to
# it, and with the Morse library also in the system's own directories:
#  - `cc app.c -lcw-opencl`, pkg-config cw-opencl and find_package(cw) all
#    link cw's library, and the programs run;
#  - `-lcw` links the Morse library (so the clash this guards against is
#    really there, and the test would notice it gone);
#  - the Python binding loads cw's library, not libcw.so.7.
# Needs libcw-dev installed (tests/run-tests.sh installs it).
# Usage: tests/consumer/clash.sh BUILD_DIR WORK_DIR C_COMPILER PYTHON SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
cc=$3
py=$4
src=$(cd "$5" && pwd)
here=$(cd "$(dirname "$0")" && pwd)

fail() {
    echo "clash: $*" >&2
    exit 1
}

morse_pc=$(pkg-config --variable=pcfiledir libcw 2>/dev/null || true)
morse_lib=$(pkg-config --variable=libdir libcw 2>/dev/null || true)
[ -n "$morse_pc" ] && [ -e "$morse_lib/libcw.so" ] ||
    fail "Debian's libcw-dev is not installed (apt-get install libcw-dev)"
morse_inc=$(pkg-config --variable=includedir libcw)

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(dirname "$(find "$prefix" -name cw-opencl.pc -path '*/pkgconfig/*' -print -quit)")")
cp -P "$morse_lib"/libcw.so* "$morse_lib"/libcw.a "$libdir/"
cp "$morse_pc/libcw.pc" "$libdir/pkgconfig/"
cp "$morse_inc/libcw.h" "$prefix/include/"
echo "beside cw in $libdir: $(cd "$libdir" && ls -d libcw.* | tr '\n' ' ')"

links_cw() { # binary: NEEDED must name cw's soname and not the Morse library
    local dyn
    dyn=$(readelf -d "$1")
    grep -q 'NEEDED.*\[libcw-opencl\.so\.[0-9]*\]' <<<"$dyn" || fail "$1 does not link libcw-opencl"
    ! grep -q 'NEEDED.*\[libcw\.so' <<<"$dyn" || fail "$1 links the Morse library"
    LD_LIBRARY_PATH="$libdir" "$1" >/dev/null || fail "$1 failed to run"
}

# The README's command.
"$cc" -std=c11 -DCL_TARGET_OPENCL_VERSION=120 -o "$work/plain" "$here/consumer.c" -I"$prefix/include" \
    -L"$libdir" -lcw-opencl -lOpenCL -pthread
links_cw "$work/plain"
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/pc" "$here/consumer.c" \
    $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs cw-opencl)
links_cw "$work/pc"
cmake -S "$here" -B "$work/cmake" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCW_CONSUMER_LINK=shared >/dev/null
cmake --build "$work/cmake" --target consumer >/dev/null
links_cw "$work/cmake/consumer"
echo "clash: -lcw-opencl, pkg-config cw-opencl and find_package(cw) link and run cw's library"

# The old name really is the other library.
if out=$("$cc" -std=c11 -DCL_TARGET_OPENCL_VERSION=120 -o "$work/old" "$here/consumer.c" \
    -I"$prefix/include" -L"$libdir" -lcw -lOpenCL -pthread 2>&1); then
    fail "-lcw linked a program that calls cw_wait: is the Morse library really there?"
fi
grep -q "undefined reference to .cw_wait" <<<"$out" || fail "-lcw failed for another reason: $out"
echo "clash: -lcw is the Morse library (undefined reference to cw_wait)"

# The binding, from the source tree, with both libraries on the loader's path
# and pkg-config knowing both.
got=$(cd "$work" && env -u CW_LIBRARY LD_LIBRARY_PATH="$libdir" PKG_CONFIG_PATH="$libdir/pkgconfig" \
    PYTHONPATH="$src/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
    "$py" -c 'import cw; print(cw.library_path()); print(cw.library_version_string())') ||
    fail "import cw failed beside the Morse library"
echo "python: $(tr '\n' ' ' <<<"$got")"
case "$(head -1 <<<"$got")" in
*libcw-opencl.so*) ;;
*) fail "the binding loaded $(head -1 <<<"$got")" ;;
esac
echo "clash: all consumers use cw's library beside Debian's libcw-dev"
