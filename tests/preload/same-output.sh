#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run a program natively and under cw-run with each strategy; its standard
# output and exit status must be the same every time, and the preload must
# have seen the calls named with --expect (from the --stats JSON).
# Usage: same-output.sh CW_RUN [--mask-numbers] [--strategies "A B"]
#                       [--also "OPTIONS"] [--expect CALL]... [--expect-cw KEY]...
#                       [--expect-json REGEX]... [--work DIR] [--sed EXPR]
#                       -- PROGRAM [ARGS...]
#   --mask-numbers  compare with every number replaced by N (timings),
#                   runs of blanks squeezed
#   --sed EXPR      also apply this sed -E expression before comparing
#   --strategies    default: "blocking cooperative auto"
#   --also OPTIONS  run every strategy a second time with these cw-run
#                   options too (e.g. "--hang-ms 1000")
#   --expect CALL   the profile must count CALL (e.g. clFinish) in every run
#   --expect-cw KEY the profile's counter KEY must be positive under every
#                   strategy but blocking (e.g. finish_on_last_command)
#   --expect-json REGEX  the profile must match this extended regex in
#                   every run (e.g. '"finish_on_marker": [01],')
# Under every strategy but blocking, the profile's clFinish paths must sum
# to its clFinish calls.
set -euo pipefail
usage() { sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h | --help) usage; exit 0 ;; esac
cw_run=$1
shift
mask=0
strategies="blocking cooperative auto"
expect=()
expect_cw=()
expect_json=()
also=""
work=""
extra=""
while [ $# -gt 0 ]; do
    case "$1" in
    --mask-numbers) mask=1 ;;
    --strategies) strategies=$2; shift ;;
    --expect) expect+=("$2"); shift ;;
    --expect-cw) expect_cw+=("$2"); shift ;;
    --expect-json) expect_json+=("$2"); shift ;;
    --also) also=$2; shift ;;
    --work) work=$2; shift ;;
    --sed) extra=$2; shift ;;
    --) shift; break ;;
    *) echo "same-output.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

filter() {
    # Numbers become N, and runs of blanks one blank (figures are padded).
    if [ "$mask" = 1 ]; then sed -E 's/[0-9]+([.][0-9]+)?/N/g; s/[[:blank:]]+/ /g'; else cat; fi |
        if [ -n "$extra" ]; then sed -E "$extra"; else cat; fi
}

# The number after KEY (an extended regex ending before the colon) in a
# profile; nothing when absent.
json_field() {
    sed -nE "s/.*$1: ([0-9]+).*/\\1/p" "$2" | head -n 1
}

set +e
"$@" >"$work/native.out" 2>"$work/native.err"
native_rc=$?
set -e
filter <"$work/native.out" >"$work/native.cmp"
echo "native: exit $native_rc, $(wc -l <"$work/native.out") lines"
bad=0
runs=()
for s in $strategies; do
    runs+=("$s")
    [ -n "$also" ] && runs+=("$s+")
done
for run in "${runs[@]}"; do
    s=${run%+}
    opts=()
    # shellcheck disable=SC2206 # the options are words
    [ "$run" != "$s" ] && opts=($also)
    set +e
    "$cw_run" --strategy "$s" "${opts[@]}" --stats="$work/$run.json" -- "$@" >"$work/$run.out" \
        2>"$work/$run.err"
    rc=$?
    set -e
    filter <"$work/$run.out" >"$work/$run.cmp"
    verdict=ok
    if [ "$rc" != "$native_rc" ]; then
        verdict="exit $rc, native $native_rc"
    elif ! diff -u "$work/native.cmp" "$work/$run.cmp" >"$work/$run.diff"; then
        verdict="output differs"
    else
        for call in "${expect[@]}"; do
            if ! grep -Eq "\"$call\": \\{\"count\": [1-9]" "$work/$run.json" 2>/dev/null; then
                verdict="no $call in the profile"
                break
            fi
        done
        for re in "${expect_json[@]}"; do
            if ! grep -Eq "$re" "$work/$run.json" 2>/dev/null; then
                verdict="the profile does not match $re"
                break
            fi
        done
        if [ "$s" != blocking ] && [ "$verdict" = ok ] && [ -f "$work/$run.json" ]; then
            finishes=$(json_field '"clFinish": \{"count"' "$work/$run.json")
            paths=0
            for key in finish_on_last_command finish_on_marker finish_by_driver finish_idle; do
                n=$(json_field "\"$key\"" "$work/$run.json")
                paths=$((paths + ${n:-0}))
            done
            [ "${finishes:-0}" = "$paths" ] ||
                verdict="clFinish counted ${finishes:-0} times, its paths $paths"
        fi
        if [ "$s" != blocking ] && [ "$verdict" = ok ]; then
            for key in "${expect_cw[@]}"; do
                if ! grep -Eq "\"$key\": [1-9]" "$work/$run.json" 2>/dev/null; then
                    verdict="$key not positive in the profile"
                    break
                fi
            done
        fi
    fi
    echo "cw-run --strategy $s${opts[*]:+ ${opts[*]}}: exit $rc, $verdict"
    if [ "$verdict" != ok ]; then
        bad=1
        [ -s "$work/$run.diff" ] && cat "$work/$run.diff"
        sed 's/^/  stderr: /' "$work/$run.err" | tail -n 20
        [ -f "$work/$run.json" ] && cat "$work/$run.json"
    fi
done
if [ "$bad" != 0 ]; then
    sed 's/^/  native stderr: /' "$work/native.err" | tail -n 20
    exit 1
fi
