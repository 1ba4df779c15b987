#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every installed header compiles alone, first in its translation unit, as
# C11 and C17 and as C++11, C++17 and C++20, with gcc and clang, under
# -Wall -Wextra -Wpedantic -Werror. Then: a program that includes cw.h first
# and calls an OpenCL 2.0 function compiles with -Werror, because cw's headers
# leave CL_TARGET_OPENCL_VERSION to the program.
# Usage: tests/headers/check.sh INCLUDE_DIR [INCLUDE_DIR...]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 INCLUDE_DIR..." >&2; exit 2; }
incs=()
for d in "$@"; do incs+=(-I "$d"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

headers=()
for d in "$@"; do
    while IFS= read -r h; do headers+=("${h#"$d"/}"); done < <(find "$d" -name '*.h' | sort)
done
[ ${#headers[@]} -ge 8 ] || { echo "found only ${#headers[@]} headers in $*" >&2; exit 1; }

flags=(-Wall -Wextra -Wpedantic -Werror -fsyntax-only)
passed=0 failed=0
try() { # description, command...
    local what=$1
    shift
    if "$@" 2>"$work/err"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $what" >&2
        sed 's/^/    /' "$work/err" >&2
    fi
}
for cc in gcc clang; do
    command -v "$cc" >/dev/null || { echo "no $cc" >&2; exit 1; }
done
for cxx in g++ clang++; do
    command -v "$cxx" >/dev/null || { echo "no $cxx" >&2; exit 1; }
done
for h in "${headers[@]}"; do
    # Twice: the include guard works. The declaration keeps a macro-only header's
    # unit from being empty, which -Wpedantic rejects for any header.
    printf '#include <%s>\n#include <%s>\nint cw_check_unit;\n' "$h" "$h" >"$work/tu.c"
    cp "$work/tu.c" "$work/tu.cpp"
    for cc in gcc clang; do
        for std in c11 c17; do
            try "$h as $std with $cc" "$cc" -std=$std "${flags[@]}" "${incs[@]}" "$work/tu.c"
        done
    done
    for cxx in g++ clang++; do
        for std in c++11 c++17 c++20; do
            try "$h as $std with $cxx" "$cxx" -std=$std "${flags[@]}" "${incs[@]}" "$work/tu.cpp"
        done
    done
done

# The caller's OpenCL version is the caller's: with cw.h first and no
# CL_TARGET_OPENCL_VERSION anywhere, the OpenCL 3.0 default of the headers
# applies and a 2.0 call is declared; with the version set to 200 on the
# command line, likewise.
cat >"$work/cl20.c" <<'C'
#include <cw.h>
#include <CL/cl.h>
cl_command_queue make_queue(cl_context ctx, cl_device_id dev) {
    cl_int err;
    return clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
}
C
try "cw.h first, then an OpenCL 2.0 call (gcc, no version set)" \
    gcc -std=c11 -Wall -Wextra -Werror -Wno-pedantic -c -o "$work/cl20.o" "${incs[@]}" "$work/cl20.c"
try "cw.h first, then an OpenCL 2.0 call (clang, -DCL_TARGET_OPENCL_VERSION=200)" \
    clang -std=c11 -Wall -Wextra -Werror -DCL_TARGET_OPENCL_VERSION=200 -c -o "$work/cl20.o" \
    "${incs[@]}" "$work/cl20.c"
if grep -rn 'define[[:space:]]*CL_TARGET_OPENCL_VERSION' "$@" >&2; then
    failed=$((failed + 1))
    echo "FAIL: an installed header defines CL_TARGET_OPENCL_VERSION" >&2
else
    passed=$((passed + 1))
fi
echo "headers: ${#headers[@]} headers checked"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
