#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What cw-bench checks and says before it runs anything (never timing).
#   preflight  an output file that cannot be opened (--json, --csv, --plot)
#              stops the run before any child starts: exit 2, the path and
#              the reason on stderr, no plan, calibration, config or cell
#              line, nothing on stdout, and no kernel read (CW_KERNEL_DIR
#              points at an empty folder, which any child would complain
#              of). The check truncates no existing file and leaves no new
#              one behind.
#   plan       --dry-run prints the plan and runs nothing; the plan follows
#              the options: its launch count is the options' arithmetic,
#              its estimate grows with --launches, stays under the worst
#              case, and says when a cell reaches --max-time.
# Usage: tests/bench/cli.sh preflight|plan CW_BENCH WORK_DIR
set -euo pipefail
mode=$1
bench=$2
work=$3
rm -rf "$work"
mkdir -p "$work/empty"
work=$(cd "$work" && pwd)
export CW_KERNEL_DIR="$work/empty"

fail() {
    echo "$mode: $*" >&2
    exit 1
}

# Runs cw-bench with the arguments; sets rc, out (stdout) and err (stderr).
run() {
    rc=0
    "$bench" "$@" >"$work/out" 2>"$work/err" || rc=$?
    out=$(cat "$work/out")
    err=$(cat "$work/err")
}

# Nothing ran: no child, no kernel.
ran_nothing() { # what
    if grep -E '^\[(calibration|config|cell)' <<<"$err" || grep -q 'cannot open the kernel' <<<"$err"; then
        fail "$1: work started: $err"
    fi
}

case "$mode" in
preflight)
    for args in "--json /nonexistent/dir/x.json" "--csv /nonexistent/dir/x.csv" \
        "--plot /nonexistent/dir/x.png"; do
        path=${args#* }
        # shellcheck disable=SC2086
        run --quick $args
        [ "$rc" = 2 ] || fail "$args: exit status $rc, expected 2: $err"
        grep -qF "$path" <<<"$err" || fail "$args: the message does not name $path: $err"
        grep -q 'No such file or directory' <<<"$err" || fail "$args: no reason given: $err"
        grep -q '^\[plan\]' <<<"$err" && fail "$args: the plan was printed: $err"
        ran_nothing "$args"
        [ -z "$out" ] || fail "$args: printed on stdout: $out"
        echo "$args: exit 2, $(head -n 1 <<<"$err")"
    done
    run --quick --json "$work"
    [ "$rc" = 2 ] && grep -q 'Is a directory' <<<"$err" || fail "--json DIR: $rc: $err"
    ran_nothing "--json DIR"

    # An existing file is not truncated by the check; a new one is not left behind.
    echo old >"$work/kept.json"
    run --quick --json "$work/kept.json" --csv "$work/new.csv" --plot /nonexistent/dir/x.png
    [ "$rc" = 2 ] || fail "a bad --plot after good --json and --csv: exit status $rc"
    [ "$(cat "$work/kept.json")" = old ] || fail "the check changed an existing --json file"
    [ ! -e "$work/new.csv" ] || fail "the check left $work/new.csv behind"
    run --dry-run --quick --json "$work/new.json"
    [ "$rc" = 0 ] || fail "--dry-run with a good --json: exit status $rc: $err"
    [ ! -e "$work/new.json" ] || fail "--dry-run left $work/new.json behind"
    echo "existing output kept, no new file left behind"
    ;;
plan)
    estimate() { sed -n 's/^\[plan\] .* estimated about \([0-9.]*\) s.*/\1/p' <<<"$err"; }
    plan_for() { # expected launches, then cw-bench's arguments
        local want=$1
        shift
        run --dry-run "$@"
        [ "$rc" = 0 ] || fail "--dry-run $*: exit status $rc: $err"
        ran_nothing "--dry-run $*"
        grep -q '^\[plan\] ' <<<"$err" || fail "--dry-run $*: no plan line: $err"
        grep -q "^\[plan\] .*: $want launches;" <<<"$err" ||
            fail "--dry-run $*: expected $want launches in the plan: $err"
        [ -n "$(estimate)" ] || fail "--dry-run $*: no estimate in the plan: $err"
    }
    # Per cell: one first launch, then (warm-up + launches) per strategy.
    lat=(--kernels latency --configs 1 --strategies blocking,cooperative --warmup 2)
    plan_for 25 "${lat[@]}" --launches 10
    grep -q '^\[plan\] 1 cell (1 kernel x 1 config) of 2 strategies, 10 launches and 2 warm-up' \
        <<<"$err" || fail "the plan does not state the cell, strategies and launches: $err"
    plan_for 205 "${lat[@]}" --launches 100
    plan_for 410 "${lat[@]}" --launches 100 --configs 1,1
    echo "launch counts follow --launches and --configs"

    busy=(--kernels busy --busy-us 1000 --configs 1 --strategies blocking --warmup 0)
    plan_for 1001 "${busy[@]}" --launches 1000
    e1=$(estimate)
    plan_for 4001 "${busy[@]}" --launches 4000
    e2=$(estimate)
    awk -v a="$e1" -v b="$e2" 'BEGIN { exit !(b > 2 * a) }' ||
        fail "4000 launches of a 1 ms kernel estimated at $e2 s, 1000 at $e1 s"
    echo "the estimate grows with --launches: $e1 s, then $e2 s"

    plan_for 1592 --quick
    e=$(estimate)
    awk -v e="$e" 'BEGIN { exit !(e > 0 && e < 8 * 120) }' ||
        fail "--quick estimated at $e s, not under the 8 cells x 120 s worst case"
    grep -q 'reach.* --max-time' <<<"$err" && fail "--quick: a cell said to reach --max-time: $err"
    plan_for 100001 "${lat[@]}" --strategies blocking --warmup 0 --launches 100000 --max-time 1
    grep -q '1 cell reaches --max-time 1 s' <<<"$err" || fail "--max-time 1: not said: $err"
    echo "--quick estimated at $e s; a cell that reaches --max-time is said to"
    ;;
*)
    echo "usage: $0 preflight|plan CW_BENCH WORK_DIR" >&2
    exit 2
    ;;
esac
