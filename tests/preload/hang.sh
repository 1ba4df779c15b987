#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cw-run --hang-ms: a wait longer than the threshold is reported once (call,
# command type, queue, device, execution status, and the unset user event a
# gated command waits for), then the program goes on and ends normally, and
# a last line says when and how the wait ended; with --on-hang=abort it
# aborts after the report.
# Usage: hang.sh CW_RUN PRELOAD_CODES
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '3,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
cw_run=$1
prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/  stderr: /' "$tmp/err"; exit 1; }

# $1 strategy, $2 mode, $3 call, $4 command type
check_report() {
    grep -q "^cw-run: hang: $3 (pid [0-9]*) has waited 100 ms, on 1 event:" "$tmp/err" ||
        fail "$1 $2: no report line for $3"
    grep -Eq "^  event 0 \\(0x[0-9a-f]+\\): command $4, queue [^,]+, device \"[^\"]+\", execution status CL_[A-Z]+ \\([0-9]\\)" "$tmp/err" ||
        fail "$1 $2: no event line with $4"
    [ "$(grep -c '^cw-run: hang:' "$tmp/err")" = 1 ] || fail "$1 $2: reported more than once"
}

# $1 strategy, $2 mode: the gated command's line names its unset user event
check_gate() {
    grep -Eq "^    which waits for the user event \(0x[0-9a-f]+\): command CL_COMMAND_USER, .*execution status CL_SUBMITTED \(2\)" "$tmp/err" ||
        fail "$1 $2: the user event the command waits for is not named"
}

# $1 strategy, $2 mode, $3 call, $4 how: the wait's end is said, after the report
check_end() {
    grep -q '^cw-run: still waiting (a line follows when the wait ends)$' "$tmp/err" ||
        fail "$1 $2: no 'still waiting'"
    grep -Eq "^cw-run: hang over: $3 \(pid [0-9]+\) ended after [0-9]+ ms: $4\$" "$tmp/err" ||
        fail "$1 $2: no line saying the wait ended ($4)"
    [ "$(tail -n 1 "$tmp/err" | cut -c1-19)" = "cw-run: hang over: " ] ||
        fail "$1 $2: the end line is not the last"
}

for s in auto cooperative blocking; do
    for mode in hang hang-finish; do
        if [ "$mode" = hang ]; then call=clWaitForEvents type=CL_COMMAND_USER; else call=clFinish type=CL_COMMAND_MARKER; fi
        rc=0
        "$cw_run" --strategy "$s" --hang-ms 100 -- "$prog" "$mode" >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" = 0 ] || fail "$s $mode: exit $rc"
        grep -q "^$mode.* 0$" <(sed 's/hang\.wait/hang/; s/hang\.finish/hang-finish/' "$tmp/out") ||
            fail "$s $mode: the call did not return CL_SUCCESS: $(cat "$tmp/out")"
        check_report "$s" "$mode" "$call" "$type"
        [ "$mode" = hang-finish ] && check_gate "$s" "$mode"
        check_end "$s" "$mode" "$call" complete
        echo "ok: --strategy $s --hang-ms 100, $call reported once, then CL_SUCCESS, its end said"
    done
done

rc=0
"$cw_run" --hang-ms 100 --on-hang=abort -- "$prog" hang-finish >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" != 0 ] || fail "--on-hang=abort: exit 0"
check_report auto abort clFinish CL_COMMAND_MARKER
grep -q '^cw-run: aborting (--on-hang=abort)$' "$tmp/err" || fail "abort: no 'aborting' line"
grep -q '^cw-run: hang over' "$tmp/err" && fail "abort: an end line"
[ -s "$tmp/out" ] && fail "abort: the call returned: $(cat "$tmp/out")"
echo "ok: --on-hang=abort: reported, then aborted (exit $rc)"

# A command that fails while waited on (no callback on PoCL 3.1 or rusticl):
# reported, then the failure is returned as natively, within the test's
# timeout (cw's status checks), not never.
native=$("$prog" hang-fail)
for s in auto cooperative blocking; do
    "$cw_run" --strategy "$s" --hang-ms 100 -- "$prog" hang-fail >"$tmp/out" 2>"$tmp/err" ||
        fail "$s hang-fail: exit $?"
    [ "$(cat "$tmp/out")" = "$native" ] || fail "$s hang-fail: '$(cat "$tmp/out")', natively '$native'"
    check_report "$s" hang-fail clWaitForEvents CL_COMMAND_NDRANGE_KERNEL
    check_gate "$s" hang-fail
    check_end "$s" hang-fail clWaitForEvents "a command failed"
    echo "ok: --strategy $s, a failing command: reported with its gate, then '$native' as natively, its end said"
done

# Without --hang-ms nothing is reported.
"$cw_run" -- "$prog" hang >"$tmp/out" 2>"$tmp/err" || fail "no --hang-ms: exit $?"
grep -q 'hang:' "$tmp/err" && fail "no --hang-ms: a report"
echo "ok: no report without --hang-ms"
