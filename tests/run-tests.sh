#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cw's test command: installs what it needs on Debian (bookworm), builds cw
# four ways and runs the whole ctest suite in each:
#   1. gcc, optimised, warnings as errors; also the public surface (exports,
#      ABI baseline, standalone headers in C and C++, installed package,
#      subproject, minimal and read-only-source builds, beside Debian's
#      libcw-dev, man pages) and the tree's habits
#      (clang-format, SPDX lines, no repeated code in src/)
#   2. clang with AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer on)
#   3. clang with ThreadSanitizer
#   4. gcc again, the OpenCL tests (ctest label opencl) on Mesa's rusticl
#      (llvmpipe) instead of PoCL; the installed-prefix Python run, which
#      tests the loader's search and not the platform, and the runs under
#      the driver models (models of other drivers, built over PoCL) only in
#      builds 1-3
# Usage: tests/run-tests.sh [--quick]   (--quick: only build 1)
set -euo pipefail

usage() {
    sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'
}
quick=0
for arg in "$@"; do
    case "$arg" in
    --quick) quick=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; usage >&2; exit 2 ;;
    esac
done

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

# Debian packages, installed only when missing. libcw-dev is unixcw's Morse-code
# libcw (libcw.so, libcw.so.7, libcw.pc): the binding's tests check that it is
# never taken for cw's library.
packages=(pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers libcmocka-dev cmake make gcc g++ clang
          libclang-rt-14-dev python3 mesa-opencl-icd spin python3-pytest python3-pyopencl python3-numpy
          python3-venv python3-pip python3-setuptools python3-wheel pkg-config
          abigail-tools clang-format groff-base man-db git clpeak libcw-dev util-linux
          hashcat clblast-tests clfft-client ffmpeg python3-opencv)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing: ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# run_suite NAME CMAKE_ARGS...; in the environment, CW_CTEST_LABEL narrows
# the non-stress tests to a ctest label and CW_CTEST_EXCLUDE leaves out
# those matching a regex.
run_suite() {
    local name=$1
    shift
    local select=(-E "^stress\\.${CW_CTEST_EXCLUDE:+|$CW_CTEST_EXCLUDE}")
    [ -z "${CW_CTEST_LABEL:-}" ] || select+=(-L "$CW_CTEST_LABEL")
    local dir="build-test-$name"
    echo "== [$name] configure and build"
    cmake -S . -B "$dir" -DCW_WERROR=ON "$@" >/dev/null
    cmake --build "$dir" -j"$(nproc)" >/dev/null
    echo "== [$name] ctest"
    # --no-tests=error: a build that registered no test fails instead of passing.
    # The stress cases print their books (completions signalled, abandoned):
    # --verbose for them, so a CI log keeps the figures.
    (cd "$dir" && ctest --no-tests=error --output-on-failure -j"$(nproc)" "${select[@]}" &&
        ctest --no-tests=error --output-on-failure --verbose -R '^stress\.')
}

# tests/test_stress.c signals CW_STRESS_COMPLETIONS completions per CPU
# configuration (1,000,000 by default). The sanitizer builds also inject random
# yields and spins into the lock, condition and completion protocols
# (CW_INJECT_DELAYS). The sanitizer builds get 300,000 to keep CI within
# minutes (a million took 80 s a case under ASan), and the rusticl pass
# 100,000: its token stress is the same as gcc's.
run_suite gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "$quick" -eq 0 ]; then
    CW_STRESS_COMPLETIONS=300000 run_suite asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
        -DCW_SANITIZE=address,undefined -DCW_INJECT_DELAYS=ON
    CW_STRESS_COMPLETIONS=300000 TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
        run_suite tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
        -DCW_SANITIZE=thread -DCW_INJECT_DELAYS=ON
    CW_STRESS_COMPLETIONS=100000 CW_CTEST_LABEL=opencl \
        CW_CTEST_EXCLUDE='^python\.prefix$|^model\.(nvidia|pocl7)\.|^learn\.|^drivermodel\.' \
        run_suite rusticl -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCW_TEST_PLATFORM=rusticl
fi
echo "== all test suites passed"
