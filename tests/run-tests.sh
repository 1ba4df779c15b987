#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cw's test command: installs what it needs on Debian (bookworm), builds cw
# four ways and runs ctest in each:
#   1. gcc: every test, the program runs and the public surface included;
#      then the first program's install under a prefix, as its page says
#   2. clang with AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer on)
#   3. clang with ThreadSanitizer
#   4. gcc again, the OpenCL tests on Mesa's rusticl (llvmpipe) instead of PoCL
# and, after build 1 (also with --quick), the Rust binding's cargo test and
# doc on PoCL against build 1 installed (Debian's rustc and crates, offline).
# Which suite runs which tests, and why: tests/README.md, "The test command".
# Usage: tests/run-tests.sh [--quick]   (--quick: only build 1)
set -euo pipefail

usage() {
    sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'
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
          hashcat clblast-tests clfft-client ffmpeg python3-opencv
          cargo rustc librust-tokio-dev librust-libc-dev
          opencl-clhpp-headers libasio-dev libboost-fiber-dev)
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
# the tests to a ctest label (the stress cases are labelled opencl),
# CW_CTEST_LABEL_EXCLUDE leaves out those with a label matching a regex and
# CW_CTEST_EXCLUDE those whose name matches one.
run_suite() {
    local name=$1
    shift
    local select=()
    [ -z "${CW_CTEST_EXCLUDE:-}" ] || select+=(-E "$CW_CTEST_EXCLUDE")
    [ -z "${CW_CTEST_LABEL:-}" ] || select+=(-L "$CW_CTEST_LABEL")
    [ -z "${CW_CTEST_LABEL_EXCLUDE:-}" ] || select+=(-LE "$CW_CTEST_LABEL_EXCLUDE")
    local dir="build-test-$name"
    echo "== [$name] configure and build"
    cmake -S . -B "$dir" -DCW_WERROR=ON "$@" >/dev/null
    cmake --build "$dir" -j"$(nproc)" >/dev/null
    echo "== [$name] ctest"
    # --no-tests=error: a build that registered no test fails instead of passing.
    # Two slots a CPU: the tests that keep a CPU busy take two each
    # (tests/CMakeLists.txt, the end), and those that wait on a clock fill
    # the rest.
    local rc=0
    (cd "$dir" && ctest --no-tests=error --output-on-failure -j"$(($(nproc) * 2))" "${select[@]}") ||
        rc=$?
    # The stress cases' books (completions signalled, abandoned), from
    # ctest's log of this run, so that a CI log keeps the figures.
    echo "== [$name] stress books"
    awk -v suite="$name" '/^[0-9]+\/[0-9]+ Testing: stress\./ { name = $3 }
         name && /^<end of output>/ { name = "" }
         name && started && !/^\[/ { print "[" suite "] " name ": " $0 }
         { started = name && (started || /^-+$/) }' \
        "$dir/Testing/Temporary/LastTest.log"
    return "$rc"
}

# tests/test_stress.c signals CW_STRESS_COMPLETIONS completions per CPU
# configuration (1,000,000 by default); the sizes here are per suite
# (tests/README.md says why). The sanitizer builds also inject random yields
# and spins into the lock, condition and completion protocols
# (CW_INJECT_DELAYS).
# The C++ binding's tests (bindings/cpp/tests) build with each suite's C++
# compiler, which must match its C compiler (the sanitizer runtimes); the
# rusticl suite leaves them out: their waits are the notifier's and
# cw_wait's, which it runs case by case.
CW_STRESS_COMPLETIONS=500000 run_suite gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
# examples/first-program.md's install into a folder of one's own, its
# commands run as written (a build without tests, about 40 s on 2 CPUs).
echo "== first program, installed under a prefix"
tests/consumer/first-program-prefix.sh

# The Rust binding (bindings/rust/README.md), against build 1 installed in a
# prefix that pkg-config finds. Debian's cargo and rustc (not a rustup one
# earlier on PATH), Debian's crate folder for the dependencies (no network),
# one target directory, no debug info: compiling tokio is most of the time.
echo "== [rust] cargo test, doc and example (bindings/rust, PoCL)"
rust_started=$(date +%s)
rust_prefix="$here/build-test-gcc/prefix"
cmake --install build-test-gcc --prefix "$rust_prefix" >/dev/null
(
    cd bindings/rust
    export PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
    export CARGO_HOME="$here/build-test-rust/cargo-home" CARGO_TARGET_DIR="$here/build-test-rust/target"
    export CARGO_PROFILE_DEV_DEBUG=false RUSTDOCFLAGS="-D warnings" CARGO_TERM_COLOR=never
    export PKG_CONFIG_PATH="$rust_prefix/lib/pkgconfig" LD_LIBRARY_PATH="$rust_prefix/lib"
    export OCL_ICD_VENDORS=pocl.icd
    cargo="/usr/bin/cargo --config debian-offline.toml"
    # --tests and --doc: the measuring example is left out (a build less).
    $cargo test --features tokio --tests -j"$(nproc)"
    $cargo test --features tokio --doc -j"$(nproc)"
    $cargo doc --no-deps --features tokio -j"$(nproc)"
    $cargo run --features tokio --example wait
)
echo "== [rust] passed in $(($(date +%s) - rust_started)) s"
if [ "$quick" -eq 0 ]; then
    # Not the program runs, the Spin model or the package checks; each
    # driver model under one sanitizer.
    CW_STRESS_COMPLETIONS=120000 CW_CTEST_LABEL_EXCLUDE='^(program|model|package)$' \
        CW_CTEST_EXCLUDE='^model\.(nvidia|rocm)\.|^learn\.nvidia\.' \
        run_suite asan -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
        -DCW_SANITIZE=address,undefined -DCW_INJECT_DELAYS=ON -DCW_BUILD_BENCH=OFF
    CW_STRESS_COMPLETIONS=100000 TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
        CW_CTEST_LABEL_EXCLUDE='^(program|model|package)$' \
        CW_CTEST_EXCLUDE='^model\.(pocl7|neo)\.|^learn\.pocl7\.|^model\.nvidia\.(notify|waitmany)\.|^drivermodel\.|^fork\.|^preload\.(dlopen|mechanism|adversarial_(blocking_flag|dlsym_release|wait_bad_input))$' \
        run_suite tsan -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
        -DCW_SANITIZE=thread -DCW_INJECT_DELAYS=ON -DCW_BUILD_BENCH=OFF
    CW_STRESS_COMPLETIONS=100000 CW_CTEST_LABEL=opencl CW_CTEST_LABEL_EXCLUDE='^(program|package)$' \
        CW_CTEST_EXCLUDE='^drivermodel\.|^preload\.(codes_via_preload|dlopen|mechanism|trace)$' \
        run_suite rusticl -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCW_TEST_PLATFORM=rusticl -DCW_BUILD_BENCH=OFF -DCW_CPP_TESTS=OFF
fi
echo "== all test suites passed"
