#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The AddressSanitizer + UBSan build of libcw_preload.so, with --stats, under
# programs built without sanitizers: clpeak, the pyopencl program, and the plain build's
# cw-example, preload_codes and the cases of preload_adversarial. The ASan runtime must be first in the
# process, so it is preloaded ahead of the preload. Each run must exit and
# print as the native run does, and its standard error must hold no
# sanitizer report. Each run writes its profile (--stats) too.
# Usage: asan.sh PLAIN_BUILD ASAN_BUILD [pocl|rusticl]
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
plain=$(cd "$1" && pwd)
asan=$(cd "$2" && pwd)
platform=${3:-pocl}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$platform" = rusticl ]; then
    export OCL_ICD_VENDORS=rusticl.icd RUSTICL_ENABLE=llvmpipe CW_PLATFORM=rusticl
else
    export OCL_ICD_VENDORS=pocl.icd
fi
runtime=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
[ -f "$runtime" ] || { echo "no ASan runtime (apt-get install libclang-rt-14-dev)" >&2; exit 1; }
preload="$asan/tools/cw-run/libcw_preload.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "ASan runtime: $runtime"
echo "preload:      $preload"
echo "platform:     $platform"
bad=0
check() { # name, then the command
    local name=$1
    shift
    local mask='s/[0-9]+([.][0-9]+)?/N/g; s/[[:blank:]]+/ /g'
    local nrc=0 rc
    "$@" >"$tmp/native" 2>/dev/null || nrc=$?
    for s in auto cooperative blocking; do
        rc=0
        rm -f "$tmp/profile.json"
        LD_PRELOAD="$runtime" CW_RUN_PRELOAD="$preload" ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
            "$plain/tools/cw-run/cw-run" --strategy "$s" --stats="$tmp/profile.json" -- "$@" \
            >"$tmp/out" 2>"$tmp/err" || rc=$?
        local verdict=ok
        if [ ! -s "$tmp/profile.json" ]; then
            verdict="no profile written"
        elif grep -Eq 'libcw_preload|ERROR: AddressSanitizer|runtime error:' "$tmp/err"; then
            verdict="sanitizer report"
            sed 's/^/    /' "$tmp/err" | head -40
        elif [ "$rc" != "$nrc" ] && ! grep -q 'LeakSanitizer: detected memory leaks' "$tmp/err"; then
            verdict="exit $rc, native $nrc"
        elif ! diff <(sed -E "$mask" "$tmp/native") <(sed -E "$mask" "$tmp/out") >/dev/null; then
            verdict="output differs"
        fi
        local leaks=""
        if grep -q 'LeakSanitizer: detected memory leaks' "$tmp/err"; then
            leaks=", $(grep -c '^Direct leak\|^Indirect leak' "$tmp/err") leak reports, none in the preload"
        fi
        echo "$name, --strategy $s: exit $rc (native $nrc), $verdict$leaks"
        [ "$verdict" = ok ] || bad=1
    done
}
py=/usr/bin/python3
check "preload_codes" "$plain/tests/preload_codes"
check "cw-example" "$plain/examples/cw-example" --launches 5
for c in user-release map-failed-gate blocking-failed-gate blocking-flag event-refs \
    dlsym-release wait-bad-input finish-idle; do
    check "adversarial $c" "$plain/tests/preload_adversarial" "$c"
done
# Python leaks at exit by design, and LeakSanitizer then ends the process
# (_exit) before the preload writes its profile. So first one run with the
# leak check, whose reports must not name the preload, then the full check
# without it.
LD_PRELOAD="$runtime" CW_RUN_PRELOAD="$preload" "$plain/tools/cw-run/cw-run" -- \
    "$py" "$here/pyopencl_demo.py" >/dev/null 2>"$tmp/err" || true
if grep -q 'libcw_preload' "$tmp/err"; then
    echo "pyopencl_demo.py, leak check: a report names the preload"
    grep -B2 -A12 'libcw_preload' "$tmp/err" | head -40
    bad=1
else
    echo "pyopencl_demo.py, leak check: $(grep -c '^Direct leak\|^Indirect leak' "$tmp/err") leak reports (the interpreter's), none naming the preload"
fi
ASAN_OPTIONS=detect_leaks=0 check "pyopencl_demo.py (detect_leaks=0)" "$py" "$here/pyopencl_demo.py"
check "clpeak --kernel-latency" clpeak -p 0 -d 0 --kernel-latency
if [ "${CW_ASAN_QUICK:-0}" != 1 ]; then
    check "clpeak --global-bandwidth" clpeak -p 0 -d 0 --global-bandwidth
fi
[ "$bad" = 0 ] && echo "all clean" || { echo "FAILED"; exit 1; }
