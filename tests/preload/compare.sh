#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cw-run --compare: a small OpenCL program run natively and under two
# strategies, three times each, gives a table on stdout, progress on stderr
# and valid JSON with every strategy and every run; the cheapest is named
# only where every round agrees, and never from fewer than 3 runs; a program
# whose output differs from run to run (it prints its pid) is flagged, with
# exit status 1; bad lists and option mixes exit 2 before anything runs.
# Usage: compare.sh CW_RUN PRELOAD_CODES TRACE_CALLS PYTHON
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
cw_run=$1
prog=$2
pid_prog=$3
py=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/  stdout: /' "$tmp/out"; sed 's/^/  stderr: /' "$tmp/err" | tail -n 20; exit 1; }

# $1 JSON file, $2 expected names (comma-separated), $3 runs, $4 outputs_differ
check_json() {
    "$py" - "$@" <<'PY'
import json, math, sys
path, names, runs, differ = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4] == "true"
d = json.load(open(path))
got = [c["name"] for c in d["configs"]]
assert got == names, f"configs {got}, expected {names}"
assert d["runs"] == runs, d["runs"]
for c in d["configs"]:
    for key in ("wall_s", "cpu_s", "wait_cpu_s", "waits", "exit_status", "stdout_fnv1a64"):
        assert len(c[key]) == runs, (c["name"], key, c[key])
    assert all(w > 0 for w in c["wall_s"]), c
    for key in ("wall", "cpu"):
        r = c["ratio_to_native"][key]
        assert isinstance(r, float) and r > 0 and math.isfinite(r), (c["name"], key, r)
assert d["configs"][0]["ratio_to_native"]["wall"] == 1.0
assert d["cheapest_by_medians"] in names, d["cheapest_by_medians"]
if runs < 3:
    assert d["decided"] is False and d["cheapest"] is None, d
    assert "--runs 3 or more" in d["undecided_because"], d["undecided_because"]
elif d["decided"]:
    # Named only when its CPU was below each other equal-wall way's in every round.
    best = min(c["median"]["wall_s"] for c in d["configs"])
    win = next(c for c in d["configs"] if c["name"] == d["cheapest"])
    for c in d["configs"]:
        if c is not win and c["median"]["wall_s"] <= best * 1.05:
            assert all(a < b for a, b in zip(win["cpu_s"], c["cpu_s"])), (win, c)
else:
    assert d["cheapest"] is None and "rounds only" in d["undecided_because"], d
assert d["outputs_differ"] is differ, d["outputs_differ"]
print(f"json ok: {got}, {runs} runs each, cheapest {d['cheapest']} ({d['undecided_because'] or 'decided'}), outputs_differ {differ}")
PY
}

# A program whose output is the same every run: flagged nowhere, exit 0.
rc=0
"$cw_run" --compare cooperative,auto --runs 3 --stats="$tmp/same.json" -- "$prog" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || fail "same output: exit $rc"
for name in native cooperative auto; do
    grep -Eq "^$name( \(own calls\))? +[0-9.]+ +[0-9.]+ .* same$" "$tmp/out" || fail "no table line for $name"
done
grep -Eq '^cheapest at equal wall time \(median wall within 5% of the best, [0-9.]* s): ([a-z-]+ \(the least CPU in each of the 3 rounds\)|[a-z-]+ \(the only way within it\)|undecided \([a-z-]+.s CPU was below [a-z-]+.s in [0-2] of 3 rounds only\))$' "$tmp/out" ||
    fail "no cheapest line"
grep -q '^cw-run: compare: run 9 of 9: ' "$tmp/err" || fail "no progress on stderr"
grep -q 'differed' "$tmp/out" && fail "same output flagged as different"
# The OpenCL program's waits were measured under every way.
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert all(min(c["waits"]) > 0 and None not in c["wait_cpu_s"] for c in d["configs"]), d' "$tmp/same.json" ||
    fail "a run without waits or waiting CPU"
check_json "$tmp/same.json" native,cooperative,auto 3 false || fail "same output: JSON"
echo "ok: --compare cooperative,auto --runs 3: table, progress, JSON, $(grep '^cheapest' "$tmp/out" | sed 's/.*s): //')"

# A program that prints its pid: flagged, exit 1.
rc=0
"$cw_run" --compare blocking,auto --runs 2 --stats="$tmp/differ.json" -- "$pid_prog" --pid >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "output that differs: exit $rc, not 1"
grep -q 'VARIES (2 different)' "$tmp/out" || fail "the runs' outputs are not flagged"
grep -q "^cw-run --compare: the program's output differed between runs" "$tmp/out" || fail "no 'differed' line"
grep -q '^cheapest at equal wall time (.*): undecided (2 runs of each decide nothing; --runs 3 or more)$' "$tmp/out" ||
    fail "2 runs named a cheapest"
check_json "$tmp/differ.json" native,blocking,auto 2 true || fail "differing output: JSON"
echo "ok: a program printing its pid is flagged (exit 1)"

# Bad lists and option mixes: exit 2, nothing run.
for args in "--compare nope" "--compare auto,auto" "--compare auto," "--compare auto --runs 0" \
    "--runs 2" "--compare auto --strategy auto" "--compare auto --trace=$tmp/t.json"; do
    rc=0
    # shellcheck disable=SC2086
    "$cw_run" $args -- bash -c "touch '$tmp/ran'" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] || fail "'$args': exit $rc, not 2"
    [ -e "$tmp/ran" ] && fail "'$args': the program ran"
    [ -s "$tmp/err" ] || fail "'$args': no message"
done
echo "ok: bad --compare lists and option mixes exit 2 before running anything"

# A program that cannot be run: said after its first run, exit 2.
rc=0
"$cw_run" --compare auto --runs 3 -- "$tmp/no-such-program" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "a missing program: exit $rc, not 2"
grep -q 'run 2 of' "$tmp/err" && fail "a missing program: run more than once"
grep -q 'could not be run (exit status 127)' "$tmp/err" || fail "a missing program: not said"
echo "ok: a program that cannot be run stops --compare after one run, exit 2"
