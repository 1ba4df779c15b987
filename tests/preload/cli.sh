#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What cw-run checks and where its profile goes: an unwritable --stats file
# stops it before the program runs, with the reason; every %p becomes the
# pid; a relative file is where cw-run was started, whatever the program's
# directory at exit; CW_RUN_STATS=1 is the table, not a file named 1; a
# missing or non-library CW_RUN_PRELOAD is named, exit 127; only the program
# cw-run started is profiled unless --stats-children, whose files do not
# overwrite the program's; a program that closes stderr before exit still
# gets its table; a hang report on clFinish's marker says it is cw-run's
# and names the program's last command.
# Usage: cli.sh CW_RUN PRELOAD_CODES
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
cw_run=$1
prog=$2
# The programs here (bash, ls) use no OpenCL, so the layer would never be
# loaded into them; the preload is, and its files are the same code.
export CW_RUN_MECHANISM=preload
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/  stderr: /' "$tmp/err" | tail -n 20; exit 1; }
profiles() { grep -c '^cw-run: wait profile of pid' "$tmp/err" || true; }

# An unwritable --stats or --trace file: the reason, exit 2, the program not run.
for opt in --stats --trace; do
    rc=0
    "$cw_run" "$opt=/nonexistent/dir/f.json" -- bash -c "touch '$tmp/ran'" 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] || fail "$opt=/nonexistent/dir/f.json: exit $rc"
    [ -e "$tmp/ran" ] && fail "$opt=/nonexistent/dir/f.json: the program ran"
    grep -q "/nonexistent/dir/f.json: cannot write it: No such file or directory" "$tmp/err" ||
        fail "$opt: no reason given"
done
echo "ok: an unwritable --stats or --trace file stops cw-run first, with the reason"

# Every %p; a relative name is resolved where cw-run started.
mkdir "$tmp/start"
(cd "$tmp/start" && "$cw_run" --stats=x-%p-%p.json -- bash -c 'cd /; echo $$ >"$0"; true' "$tmp/pid") 2>"$tmp/err" ||
    fail "--stats=x-%p-%p.json: exit $?"
pid=$(cat "$tmp/pid")
[ -f "$tmp/start/x-$pid-$pid.json" ] || fail "no x-$pid-$pid.json in the start directory: $(ls "$tmp/start")"
echo "ok: --stats=x-%p-%p.json relative, program in /: $tmp/start/x-$pid-$pid.json"

# CW_RUN_STATS: 1 the table, 0 nothing; never a file named 1 or 0.
for v in 1 0; do
    (cd "$tmp/start" && CW_RUN_STATS=$v "$cw_run" -- "$prog" --exit 0 2>"$tmp/err") || fail "CW_RUN_STATS=$v: exit $?"
    [ -e "$tmp/start/$v" ] && fail "CW_RUN_STATS=$v wrote a file named $v"
    want=$([ "$v" = 1 ] && echo 1 || echo 0)
    [ "$(profiles)" = "$want" ] || fail "CW_RUN_STATS=$v: $(profiles) tables"
done
echo "ok: CW_RUN_STATS=1 is the table on stderr, CW_RUN_STATS=0 none, no file named 1 or 0"

# The preload: missing, or not a library.
rc=0
CW_RUN_PRELOAD=/nonexistent.so "$cw_run" -- bash -c "touch '$tmp/ran'" 2>"$tmp/err" || rc=$?
[ "$rc" = 127 ] || fail "CW_RUN_PRELOAD=/nonexistent.so: exit $rc"
grep -qx 'cw-run: CW_RUN_PRELOAD=/nonexistent.so: No such file or directory' "$tmp/err" ||
    fail "CW_RUN_PRELOAD=/nonexistent.so: not named"
echo "not a library" >"$tmp/text.so"
for lib in "$tmp/text.so" "$(command -v bash)"; do
    rc=0
    CW_RUN_PRELOAD=$lib "$cw_run" -- bash -c "touch '$tmp/ran'" 2>"$tmp/err" || rc=$?
    [ "$rc" = 127 ] || fail "CW_RUN_PRELOAD=$lib: exit $rc"
    grep -Eq "^cw-run: the preload $lib is not (an ELF file|a shared library)$" "$tmp/err" ||
        fail "CW_RUN_PRELOAD=$lib: no clear message"
done
[ -e "$tmp/ran" ] && fail "a bad preload: the program ran"
echo "ok: a missing preload and one that is not a library are named, exit 127, nothing run"

# The program cw-run started, not its children, unless --stats-children.
kids="echo \$\$ >'$tmp/pid'; '$prog' --exit 0; '$prog' --exit 0; true"
"$cw_run" --stats -- bash -c "$kids" 2>"$tmp/err" || fail "children: exit $?"
[ "$(profiles)" = 1 ] || fail "children: $(profiles) tables, not 1"
grep -q "^cw-run: wait profile of pid $(cat "$tmp/pid")," "$tmp/err" || fail "children: not the program's table"
"$cw_run" --stats --stats-children -- bash -c "$kids" 2>"$tmp/err" || fail "--stats-children: exit $?"
[ "$(profiles)" = 3 ] || fail "--stats-children: $(profiles) tables, not 3"
rm -f "$tmp"/c.json*
"$cw_run" --stats="$tmp/c.json" --stats-children -- bash -c "$kids" 2>"$tmp/err" || fail "--stats-children FILE: exit $?"
grep -q "\"pid\": $(cat "$tmp/pid")," "$tmp/c.json" || fail "--stats-children: c.json is not the program's"
[ "$(find "$tmp" -name 'c.json.*' | wc -l)" = 2 ] || fail "--stats-children: $(ls "$tmp")"
echo "ok: only the started program is profiled; --stats-children adds one per child, FILE.PID"

# A program that closes stderr before exit (coreutils): still the table.
"$cw_run" --stats -- ls "$tmp" >/dev/null 2>"$tmp/err" || fail "ls: exit $?"
[ "$(profiles)" = 1 ] || fail "ls: no table"
echo "ok: cw-run --stats -- ls: the table, although ls closes stderr at exit"

# A hang in clFinish on cw-run's marker: said so, and the program's own
# last command named.
"$cw_run" --hang-ms 100 -- "$prog" hang-finish >/dev/null 2>"$tmp/err" || fail "hang-finish: exit $?"
if grep -q 'command CL_COMMAND_MARKER' "$tmp/err"; then
    grep -q "^    (cw-run's marker for clFinish: it completes once every command enqueued before it on the queue has)$" "$tmp/err" ||
        fail "hang-finish: the marker is not said to be cw-run's"
    grep -Eq "^  the program's last command \\(0x[0-9a-f]+\\): command CL_COMMAND_NDRANGE_KERNEL, " "$tmp/err" ||
        fail "hang-finish: the program's last command is not named"
else
    grep -q 'command CL_COMMAND_NDRANGE_KERNEL' "$tmp/err" || fail "hang-finish: the kernel is not named"
fi
echo "ok: a clFinish hang names the program's last command"
