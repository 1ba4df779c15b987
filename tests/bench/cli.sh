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
#              A --driver-model that names no preset, or a parameter before
#              any model, or a layer that is not there stops it the same
#              way, naming what is wrong.
#   plan       --dry-run prints the plan and runs nothing; the plan follows
#              the options: its launch count is the options' arithmetic
#              (every driver model runs every config; a long kernel has
#              its own launches), its estimate grows with --launches, stays
#              under the worst case, and says when a cell reaches --max-time.
#   models     a tiny run under the nvidia model (the cw_drivermodel layer)
#              with a short and a long kernel: exit 0, the model in the
#              table and in every JSON record, and the JSON passes
#              bench/check_bench_json.py; a library that is no layer in its
#              place fails the run, saying the layer is not loaded.
# Usage: tests/bench/cli.sh preflight|plan CW_BENCH WORK_DIR
#        tests/bench/cli.sh models CW_BENCH WORK_DIR PYTHON NOT_A_LAYER.so
set -euo pipefail
mode=$1
bench=$2
work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
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

    for args in "--driver-model bogus" "--driver-model pocl3,bogus" "--driver-model x=1"; do
        # shellcheck disable=SC2086
        run --quick $args
        [ "$rc" = 2 ] || fail "$args: exit status $rc, expected 2: $err"
        grep -q -- '--driver-model' <<<"$err" || fail "$args: the message does not name the option: $err"
        grep -q '^\[plan\]' <<<"$err" && fail "$args: the plan was printed: $err"
        ran_nothing "$args"
        echo "$args: exit 2, $(head -n 1 <<<"$err")"
    done
    grep -q "parameter before any model" <<<"$err" || fail "x=1: not called a misplaced parameter: $err"
    run --quick --driver-model pocl3,bogus
    grep -q "unknown driver model 'bogus'" <<<"$err" || fail "bogus: not named: $err"
    CW_DRIVER_MODEL_LAYER=$work/no-such-layer.so run --quick --driver-model nvidia
    [ "$rc" = 2 ] && grep -q 'driver model layer is not there' <<<"$err" ||
        fail "a missing layer: exit status $rc: $err"
    ran_nothing "a missing layer"
    echo "a missing layer: exit 2, $(head -n 1 <<<"$err")"
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
    lat=(--kernels latency --configs 1 --strategies blocking,cooperative --warmup 2
        --driver-model pocl3)
    plan_for 25 "${lat[@]}" --launches 10
    grep -q '^\[plan\] 1 cell (1 kernel x 1 config) of 2 strategies, 10 launches and 2 warm-up' \
        <<<"$err" || fail "the plan does not state the cell, strategies and launches: $err"
    plan_for 205 "${lat[@]}" --launches 100
    plan_for 410 "${lat[@]}" --launches 100 --configs 1,1
    echo "launch counts follow --launches and --configs"

    busy=(--kernels busy --busy-us 1000 --configs 1 --strategies blocking --warmup 0
        --driver-model pocl3)
    plan_for 1001 "${busy[@]}" --launches 1000
    e1=$(estimate)
    plan_for 4001 "${busy[@]}" --launches 4000
    e2=$(estimate)
    awk -v a="$e1" -v b="$e2" 'BEGIN { exit !(b > 2 * a) }' ||
        fail "4000 launches of a 1 ms kernel estimated at $e2 s, 1000 at $e1 s"
    echo "the estimate grows with --launches: $e1 s, then $e2 s"

    plan_for 1768 --quick
    e=$(estimate)
    awk -v e="$e" 'BEGIN { exit !(e > 0 && e < 8 * 120) }' ||
        fail "--quick estimated at $e s, not under the 8 cells x 120 s worst case"
    grep -q 'reach.* --max-time' <<<"$err" && fail "--quick: a cell said to reach --max-time: $err"
    plan_for 100001 "${lat[@]}" --strategies blocking --warmup 0 --launches 100000 --max-time 1
    grep -q '1 cell reaches --max-time 1 s' <<<"$err" || fail "--max-time 1: not said: $err"
    echo "--quick estimated at $e s; a cell that reaches --max-time is said to"

    # Every driver model runs every config. The dry run loads nothing, so
    # any readable file stands in for the layer.
    CW_DRIVER_MODEL_LAYER=$bench plan_for 50 "${lat[@]}" --launches 10 --driver-model pocl3,nvidia
    grep -q '^\[plan\] 2 cells (1 kernel x 2 configs)' <<<"$err" || fail "two models, one config: $err"
    grep -q '^\[plan\] driver models: pocl3 (the real driver, no layer), nvidia; layer ' <<<"$err" ||
        fail "the plan does not name the models and the layer: $err"
    # A parameter belongs to the model before it.
    CW_DRIVER_MODEL_LAYER=$bench plan_for 75 "${lat[@]}" --launches 10 \
        --driver-model pocl3,nvidia,callback_delay_us=5000,pocl7
    grep -q 'driver models: pocl3 (the real driver, no layer), nvidia,callback_delay_us=5000, pocl7;' \
        <<<"$err" || fail "a parameter not kept with its model: $err"
    echo "driver models: each one runs every config; parameters stay with their model"

    # Long kernels: about --long-time of run time per strategy, at least 2,
    # one warm-up launch where all strategies' take at most 10 s.
    long=(--kernels busy --configs 1 --strategies blocking,auto --driver-model pocl3 --warmup 10)
    plan_for 13 "${long[@]}" --busy-us 20000 --long-time 0.1
    grep -q '^\[plan\] long kernels, launches per strategy: busy-20ms 5 (+1 warm-up)' <<<"$err" ||
        fail "busy-20ms: not 5 launches and 1 warm-up: $err"
    plan_for 7 "${long[@]}" --busy-us 1000000
    grep -q 'busy-1s 2 (+1 warm-up);' <<<"$err" || fail "busy-1s: not 2 launches and 1 warm-up: $err"
    plan_for 7 "${long[@]}" --busy-us 1000000 --long-time 0
    plan_for 5 "${long[@]}" --busy-us 1000000 --launches 1
    grep -q 'busy-1s 1 (+1 warm-up);' <<<"$err" || fail "busy-1s: --launches 1 does not cap it: $err"
    # Two strategies' 6 s warm-ups would take 12 s: none.
    plan_for 5 "${long[@]}" --busy-us 6000000
    grep -q 'busy-6s 2;' <<<"$err" || fail "busy-6s: a warm-up past 10 s: $err"
    echo "long kernels: their own launch counts, at least 2, at most --launches"
    ;;
models)
    python=$4
    notlayer=$5
    unset CW_KERNEL_DIR # this one runs kernels
    tiny=(--quick --driver-model nvidia --configs 1 --kernels latency,busy-20ms --busy-us 100,20000
        --strategies blocking,cooperative,auto --long-time 0.04 --launches 5 --floor-trips 20)
    run "${tiny[@]}" --json "$work/nvidia.json"
    [ "$rc" = 0 ] || fail "the nvidia run: exit status $rc: $err"
    grep -q '^== busy-20ms .* | config 1/1: nvidia | 1 CPU' <<<"$out" ||
        fail "no busy-20ms table under nvidia: $out"
    grep -q '^driver models *nvidia$' <<<"$out" || fail "the header does not name the model: $out"
    "$python" "$src/bench/check_bench_json.py" "$work/nvidia.json" --driver-models nvidia \
        --configs 1 --kernels latency,busy-20ms --strategies blocking,cooperative,auto ||
        fail "the nvidia run's JSON does not pass check_bench_json.py"
    "$python" - "$work/nvidia.json" <<'PY' || fail "the JSON does not record the model"
import json, sys
doc = json.load(open(sys.argv[1]))
assert [m["name"] for m in doc["header"]["driver_models"]] == ["nvidia"], doc["header"]
assert doc["header"]["driver_model_layer"], doc["header"]
rec = doc["results"]
assert rec and all(r["driver_model"] == "nvidia" for r in rec), rec
long = [r for r in rec if r["kernel"] == "busy-20ms"]
# A long cell keeps its first 2 launches; its checks may ask for more, up
# to --launches.
assert long and all(r["long"] and 2 <= r["launches"] <= 5 for r in long), long
assert all(f["driver_model"] == "nvidia" for f in doc["floor"]), doc["floor"]
PY
    echo "nvidia: $(grep -c '"driver_model": "nvidia"' "$work/nvidia.json") JSON lines name the model, check_bench_json.py passes"

    # auto-latency as a strategy of its own (goal e), and goal f's first
    # launches on new queues, of 100 ms and of 1 s commands, in the 100 ms
    # cell: 2 rounds (a long cell's least), about 5 s.
    run --driver-model nvidia --configs 1 --kernels busy --busy-us 100000 --warmup 0 \
        --strategies blocking,auto,auto-latency --max-time 0.1 --floor-trips 20 \
        --json "$work/first.json"
    [ "$rc" = 0 ] || fail "the goal f run: exit status $rc: $err"
    "$python" - "$work/first.json" <<'PY' || fail "goals e and f are not in the JSON as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
assert sorted(r["strategy"] for r in doc["results"]) == ["auto", "auto-latency", "blocking"], \
    doc["results"]
e = [c for c in doc["checks"] if c["goal"] == "e"]
# Latency and CPU against the best fixed strategy: blocking, the only one.
assert len(e) == 2 and all(c["strategy"] == "auto-latency" for c in e), e
assert any("blocking's" in c["check"] and "CPU" in c["check"] for c in e), e
f = [c for c in doc["checks"] if c["goal"] == "f"]
assert len(f) == 4 and sum("(1 s commands)" in c["check"] for c in f) == 2, f
for c in f:
    assert c["pairs"] == c["rounds"] >= 2, c
    assert c["verdict"] == "UNDECIDED", c  # fewer than 6 pairs: no interval
    assert c["conditions"][0]["resolution"] == 0, c  # bounds with a margin: none
PY
    echo "auto-latency and goal f's first launches (100 ms and 1 s) ran under nvidia"

    # --run-time: a cell that would run 45 s (no checks: its launches or
    # --max-time) stops at its share of the run's budget, about 1 s here.
    run --driver-model pocl3 --configs 1 --kernels latency --strategies cooperative,poll \
        --max-time 45 --run-time 1 --floor-trips 20 --launches 1000000 --json "$work/budget.json"
    [ "$rc" = 0 ] || fail "--run-time 1: exit status $rc: $err"
    "$python" - "$work/budget.json" <<'PY' || fail "--run-time 1 did not end the cell"
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["results"]:
    assert r["stopped_by"] == "run-time" and r["cell_elapsed_s"] < 10, r
PY
    echo "--run-time 1: the cell ended by $(grep -o '"stopped_by": "[a-z-]*"' "$work/budget.json" | sort -u)"

    CW_DRIVER_MODEL_LAYER=$notlayer run "${tiny[@]}" --kernels latency
    [ "$rc" = 1 ] || fail "a library that is no layer: exit status $rc, expected 1: $err"
    grep -q 'is not loaded' <<<"$err" || fail "a library that is no layer: not said: $err"
    echo "a library that is no layer: exit 1, $(grep -m1 'is not loaded' <<<"$err")"
    ;;
sweep)
    python=$4
    # The same seed, the same models; another seed, others (--dry-run:
    # nothing runs). Any readable file stands in for the layer.
    models() { grep '^\[sweep\] model ' <<<"$err"; }
    CW_DRIVER_MODEL_LAYER=$bench run --dry-run --sweep 5 --seed 42
    [ "$rc" = 0 ] || fail "--dry-run --sweep 5: exit status $rc: $err"
    ran_nothing "--dry-run --sweep"
    grep -q '^\[sweep\] seed 42: 5 driver models' <<<"$err" || fail "the seed is not printed: $err"
    first=$(models)
    [ "$(wc -l <<<"$first")" = 5 ] || fail "not 5 models: $first"
    CW_DRIVER_MODEL_LAYER=$bench run --dry-run --sweep 5 --seed 42
    [ "$(models)" = "$first" ] || fail "the same seed drew other models: $first / $(models)"
    CW_DRIVER_MODEL_LAYER=$bench run --dry-run --sweep 5 --seed 43
    [ "$(models)" != "$first" ] || fail "seeds 42 and 43 drew the same models"
    CW_DRIVER_MODEL_LAYER=$bench run --dry-run --sweep 3
    grep -q '^\[sweep\] seed [0-9]*: 3 driver models' <<<"$err" || fail "no clock seed printed: $err"
    for args in "--seed 1" "--sweep 2 --driver-model nvidia" "--sweep 0"; do
        # shellcheck disable=SC2086
        run --dry-run $args
        [ "$rc" = 2 ] || fail "$args: exit status $rc, expected 2: $err"
    done
    echo "--sweep: the same seed draws the same models, another others; bad use: exit 2"

    # A tiny sweep that runs: 2 models, every strategy, cells of at most
    # 0.3 s; each model's line carries goal c's verdict.
    unset CW_KERNEL_DIR
    run --sweep 2 --seed 7 --max-time 0.3 --launches 40 --warmup 1 --floor-trips 20 \
        --json "$work/sweep.json"
    [ "$rc" = 0 ] || fail "the sweep: exit status $rc: $err $out"
    grep -q '^== sweep: seed 7, 2 driver models drawn' <<<"$out" || fail "no sweep table: $out"
    [ "$(grep -cE '^ [12]  (PASS|MISS|UNDECIDED) ' <<<"$out")" = 2 ] || fail "not 2 model lines: $out"
    grep -q '^goal d: goal c held in [0-2] of 2 models' <<<"$out" || fail "no goal d line: $out"
    "$python" - "$work/sweep.json" "$(models)" <<'PY' || fail "the sweep's JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
sw = doc["sweep"]
assert sw["seed"] == 7 and len(sw["models"]) == 2, sw
for m in sw["models"]:
    assert m["goal_c"] in ("PASS", "MISS", "UNDECIDED"), m
    assert m["driver_model"].startswith("pocl3,callback_delay_us="), m
    n = m["checks_pass"] + m["checks_miss"] + m["checks_undecided"]
    assert n == len([c for c in doc["checks"] if c["goal"] == "c"
                     and c["driver_model"] == m["driver_model"]]) > 0, m
for c in doc["checks"]:
    assert c["verdict"] in ("PASS", "MISS", "UNDECIDED") and c["goal"] in ("c", "e"), c
    for d in c["conditions"]:
        assert d["lo"] is None or d["lo"] <= d["difference"] <= d["hi"], c
PY
    echo "a sweep of 2 models ran: $(grep '^goal d' <<<"$out")"
    ;;
*)
    echo "usage: $0 preflight|plan CW_BENCH WORK_DIR | models CW_BENCH WORK_DIR PYTHON NOT_A_LAYER | sweep CW_BENCH WORK_DIR PYTHON" >&2
    exit 2
    ;;
esac
