#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The C++ binding as a user gets it: install a built cw into a scratch
# prefix; every installed .hpp compiles alone (first in its unit, -Wpedantic
# -Werror); then the example (bindings/cpp/example) is built with
# find_package(cw) as its CMakeLists.txt says, and the README's program
# (the block after "<!-- readme-test: app.cpp -->") with the README's
# pkg-config line; each runs, and the README's prints 42.
# Usage: consumer.sh BUILD_DIR WORK_DIR EXAMPLE_DIR CXX_COMPILER README
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
example=$(cd "$3" && pwd)
cxx=$4
readme=$5
fail() {
    echo "cpp consumer: $*" >&2
    exit 1
}

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for h in cw.hpp cw/asio.hpp cw/fiber.hpp; do
    [ -f "$prefix/include/$h" ] || fail "$h is not installed"
done

# Each header alone: cw.hpp with g++ and clang++ in both standards; the
# Asio and Boost.Fiber parts, slower to compile, once (the test programs
# build them with both compilers and standards, after other includes).
n=0
check() { # compiler, standard, header
    printf '#include <%s>\n#include <%s>\nint cw_check_unit;\n' "$3" "$3" >"$work/tu.cpp"
    "$1" -std="$2" -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$prefix/include" \
        "$work/tu.cpp" || fail "$3 does not compile alone ($1 -std=$2)"
    n=$((n + 1))
}
for c in g++ clang++; do
    for std in c++17 c++20; do check "$c" "$std" cw.hpp; done
done
check g++ c++17 cw/asio.hpp
check g++ c++17 cw/fiber.hpp
echo "headers: $n standalone compiles"

libdir=$(dirname "$(dirname "$(find "$prefix" -name cw-opencl.pc -path '*/pkgconfig/*' -print -quit)")")
run() { # name, binary
    out=$(LD_LIBRARY_PATH="$libdir" "$2") || fail "$1: the example failed: $out"
    echo "$1: $out" | tr '\n' ' '
    echo
}

cmake -S "$example" -B "$work/cmake" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/cmake" >/dev/null
run "find_package(cw)" "$work/cmake/example"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
awk '$0 == "<!-- readme-test: app.cpp -->" { found = 1; next }
     found == 1 && /^```/ { found = 2; next }
     found == 2 && /^```/ { exit }
     found == 2 { print }' "$readme" >"$work/app.cpp"
[ -s "$work/app.cpp" ] || fail "$readme has no block after <!-- readme-test: app.cpp -->"
# shellcheck disable=SC2046
"$cxx" -std=c++17 -Wall -Wextra -Werror -o "$work/app" "$work/app.cpp" \
    $(pkg-config --cflags --libs cw-opencl) -pthread
out=$(LD_LIBRARY_PATH="$libdir" "$work/app") || fail "the README's program failed: $out"
[ "$out" = 42 ] || fail "the README's program printed '$out', not 42"
echo "README program: $out"
