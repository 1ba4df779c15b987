#!/bin/sh
# SPDX-License-Identifier: MIT
# Build cw in Release and run cw-bench with its default settings, writing
#   out/bench.txt (the tables), out/bench.json, out/bench.csv, out/bench.png,
#   out/goals.txt (bench/goals.py: the goals' verdicts, the figures against
#   blocking's),
# and out/timerslack.txt from cw-timerslack; with --sweep N, out/sweep.* and
# out/sweep-goals.txt (goal c per drawn model, goal d) instead of out/bench.*.
# On Debian/Ubuntu it first installs whatever build or run dependency is
# missing (as root, or through sudo). Extra arguments go to cw-bench.
set -eu

usage() {
    cat <<USAGE
usage: bench/run-bench.sh [--help] [cw-bench options...]

Installs missing Debian packages (pocl-opencl-icd ocl-icd-opencl-dev
opencl-c-headers cmake make gcc gnuplot-nox python3) with apt-get,
configures and builds cw in Release into build-bench/ (tests off), runs
cw-bench with default settings and writes:
  out/bench.txt   the table printed on stdout
  out/bench.json  header + one record per (kernel, config, strategy)
  out/bench.csv   the same as CSV
  out/bench.png   mean CPU and wall per launch (gnuplot)
  out/goals.txt   auto's and cooperative's ratios to blocking and the goals
                  (bench/goals.py out/bench.json)
  out/timerslack.txt  requested sleeps against their real length (cw-timerslack)
Arguments after the options are passed to cw-bench unchanged, for example
  bench/run-bench.sh --launches 2000 --configs 1
  bench/run-bench.sh --quick
Run cw-bench --help (build-bench/bench/cw-bench --help) for its options.
Environment: BUILD_DIR (default build-bench), OUT_DIR (default out),
SKIP_APT=1 to skip the package check.
USAGE
}

case "${1:-}" in
-h | --help)
    usage
    exit 0
    ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build_dir=${BUILD_DIR:-build-bench}
out_dir=${OUT_DIR:-out}

packages="pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers cmake make gcc gnuplot-nox python3"
if [ "${SKIP_APT:-0}" != 1 ]; then
    if command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
        missing=""
        for p in $packages; do
            # "install ok installed" only: a removed package leaves its config behind.
            if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
                missing="$missing $p"
            fi
        done
        if [ -n "$missing" ]; then
            if [ "$(id -u)" -eq 0 ]; then
                sudo=""
            elif command -v sudo >/dev/null 2>&1; then
                sudo="sudo"
            else
                echo "run-bench.sh: missing packages:$missing; run as root or install sudo" >&2
                exit 1
            fi
            echo "run-bench.sh: installing:$missing" >&2
            $sudo env DEBIAN_FRONTEND=noninteractive apt-get update
            # shellcheck disable=SC2086
            $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
        fi
    else
        echo "run-bench.sh: not a Debian system: make sure these are installed: $packages" >&2
    fi
fi

echo "run-bench.sh: building into $build_dir/" >&2
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCW_BUILD_TESTS=OFF -DCW_BUILD_BENCH=ON
# cw-bench depends on the driver model layer (cw_drivermodel), so it is built too.
cmake --build "$build_dir" --target cw-bench cw-timerslack -j "$(nproc 2>/dev/null || echo 2)"

mkdir -p "$out_dir"
# A sweep (--sweep N) writes sweep.*, beside a default run's bench.*.
name=bench
case " $* " in
*" --sweep "* | *" --sweep="*) name=sweep ;;
esac
echo "run-bench.sh: running cw-bench; results in $out_dir/$name.*" >&2
set +e
"$build_dir/bench/cw-bench" --json "$out_dir/$name.json" --csv "$out_dir/$name.csv" \
    --plot "$out_dir/$name.png" "$@" >"$out_dir/$name.txt"
status=$?
set -e
cat "$out_dir/$name.txt"
# The goals, from the JSON just written: a goal that misses is a finding,
# not a failure of the run.
if [ -s "$out_dir/$name.json" ]; then
    goals_rc=0
    if [ "$name" = sweep ]; then
        python3 "$root/bench/goals.py" "$out_dir/sweep.json" --sweep "$out_dir/sweep.json" \
            >"$out_dir/sweep-goals.txt" || goals_rc=$?
        cat "$out_dir/sweep-goals.txt"
    else
        python3 "$root/bench/goals.py" "$out_dir/bench.json" >"$out_dir/goals.txt" || goals_rc=$?
        cat "$out_dir/goals.txt"
    fi
    if [ "$goals_rc" -gt 1 ]; then
        echo "run-bench.sh: bench/goals.py could not read $out_dir/$name.json" >&2
        [ "$status" -ne 0 ] || status=1
    fi
fi
case " $* " in
*" --quick "*) slack_args=--quick ;;
*) slack_args= ;;
esac
# shellcheck disable=SC2086
if ! "$build_dir/bench/cw-timerslack" $slack_args >"$out_dir/timerslack.txt"; then
    echo "run-bench.sh: cw-timerslack failed" >&2
    [ "$status" -ne 0 ] || status=1
fi
if [ "$status" -ne 0 ]; then
    echo "run-bench.sh: cw-bench failed (exit status $status)" >&2
fi
exit "$status"
