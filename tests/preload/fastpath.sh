#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cost of clWaitForEvents on an already complete event, natively and
# under cw-run (docs/cw-run-internals.md, "Already complete"): the waiting thread's CPU
# per call (complete_waits' own measure, ROUNDS rounds, the ways in an order
# that rotates from round to round; medians and their ratio to native), and
# with --callgrind the instructions per call that valgrind counts (the same
# for the same binary and input, whatever else the machine does): the
# difference between CALLS calls and none, divided by CALLS.
# Usage: fastpath.sh CW_RUN COMPLETE_WAITS [--rounds R] [--calls N] [--callgrind]
#                    [--strategies "A B"]
set -euo pipefail
usage() { sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
[ $# -ge 2 ] || { usage >&2; exit 2; }
cw_run=$1 prog=$2
shift 2
rounds=5 calls=200000 callgrind=0 strategies="blocking cooperative auto"
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=$2; shift ;;
    --calls) calls=$2; shift ;;
    --callgrind) callgrind=1 ;;
    --strategies) strategies=$2; shift ;;
    *) echo "fastpath.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
ways=(native $strategies)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run WAY CMD...: the command natively or under cw-run --strategy WAY.
run() {
    local way=$1
    shift
    if [ "$way" = native ]; then "$@"; else "$cw_run" --strategy "$way" -- "$@"; fi
}

echo "clWaitForEvents on a complete event, $calls calls a run, $rounds rounds; ways: ${ways[*]}"
echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at start"
for ((r = 0; r < rounds; ++r)); do
    for ((i = 0; i < ${#ways[@]}; ++i)); do
        way=${ways[$(((i + r) % ${#ways[@]}))]}
        out=$(run "$way" "$prog" "$calls")
        case "$out" in
        *" failed 0 "*) ;;
        *) echo "FAIL: $way: $out" >&2; exit 1 ;;
        esac
        echo "${out##* }" >>"$work/$way.cpu"
    done
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
native_cpu=$(median "$work/native.cpu")
printf '\n%-12s %18s %14s\n' way "CPU ns/call, median" "ratio to native"
for way in "${ways[@]}"; do
    m=$(median "$work/$way.cpu")
    printf '%-12s %18s %14s\n' "$way" "$m" "$(awk -v a="$m" -v b="$native_cpu" 'BEGIN { printf "%.3f", a / b }')"
done

[ "$callgrind" = 1 ] || exit 0
command -v valgrind >/dev/null || { echo "FAIL: --callgrind needs valgrind" >&2; exit 1; }
# instructions N: valgrind's total for a run of N calls (the last image of
# the process, after cw-run's exec).
instructions() {
    local way=$1 n=$2
    run "$way" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$prog" "$n" \
        >/dev/null 2>"$work/vg.err"
    grep -o 'Collected : [0-9]*' "$work/vg.err" | tail -n 1 | grep -o '[0-9]*$'
}
cg_calls=$((calls < 20000 ? calls : 20000))
printf '\ncallgrind, %d calls minus none:\n%-12s %18s %14s\n' "$cg_calls" way "instructions/call" "ratio to native"
native_ins=""
for way in "${ways[@]}"; do
    full=$(instructions "$way" "$cg_calls")
    none=$(instructions "$way" 0)
    per=$(awk -v a="$full" -v b="$none" -v n="$cg_calls" 'BEGIN { printf "%.1f", (a - b) / n }')
    [ -n "$native_ins" ] || native_ins=$per
    printf '%-12s %18s %14s\n' "$way" "$per" "$(awk -v a="$per" -v b="$native_ins" 'BEGIN { printf "%.3f", a / b }')"
done
