#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What auto learned, kept across runs (cw-run --learned, docs/cw-run-internals.md):
# PROGRAM (long_finishes: long clFinish waits only) under cw-run with files
# this script writes. The first run writes a line for the platform; a line
# saying the driver's own wait serves long waits makes the next run's
# clFinish calls the driver's, and the run keeps the line's time; a line a
# day old, or a file of garbage, seeds nothing and is dropped; none,
# the blocking strategy and a file that cannot be written leave no file and
# the program's result as it was; without the variable the file is the
# user's cache. Every run must print the program's "ok" and exit 0.
# Usage: learned.sh CW_RUN PROGRAM
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 2 ] || { sed -n '12p' "$0" >&2; exit 2; }
cw_run=$1 prog=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "learned.sh: FAILED: $*" >&2; exit 1; }
checks=0
ok() { checks=$((checks + 1)); }

# The busy kernel's iterations: its clFinish waits must lie where auto
# decides between the driver's wait and the callback (25 us to 4 ms,
# docs/design.md) on a loaded machine too: 20000 take about 1 ms on PoCL,
# 12 ms on rusticl's llvmpipe (where every wait parks), 2000 there about
# 1.2 ms. (3000 everywhere: PoCL's waits, 0.2 ms, were too short to be
# timed under two CPU-bound loops.)
case "${CW_PLATFORM:-}" in
*rusticl*) iters=2000 ;;
*) iters=20000 ;;
esac

# run NAME [cw-run options...] [-- LAUNCHES]: the program under cw-run
# (LAUNCHES launches, default 12, of $iters iterations) with its profile
# in $work/NAME.json; its output must be "ok" and its status 0.
run() {
    local name=$1
    shift
    local opts=() args=(12 "$iters") out
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    [ $# -eq 0 ] || { shift; args=("$1" "$iters"); }
    out=$("$cw_run" "${opts[@]}" --stats="$work/$name.json" -- "$prog" "${args[@]}") ||
        fail "$name: exit $?"
    [ "$out" = ok ] || fail "$name: printed '$out'"
    ok
}
# field NAME KEY: the number KEY has in NAME's profile.
field() {
    sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$work/$1.json" | head -1
}

file=$work/cache/sub/learned
export CW_RUN_LEARNED=$file

# 1. No file: the run learns, and writes one line for the platform, the
#    time first, then cw's key (four fields) and the values. What it learns
#    on PoCL is the probe's lateness, which a probe kept off the CPU (a
#    loaded machine, a kernel build) may not measure: a run that learned
#    nothing writes nothing, and the next one tries again.
for try in 1 2 3 4 5; do
    run first
    [ -f "$file" ] && break
    echo "learned.sh: run $try learned nothing; again"
done
[ -f "$file" ] || fail "first: no file written in 5 runs"
[ "$(stat -c %a "$work/cache/sub")" = 700 ] || fail "the file's folder is not private"
[ "$(wc -l <"$file")" -eq 1 ] || fail "first: $(wc -l <"$file") lines, not 1"
line=$(cat "$file")
awk -F'\t' 'NF == 6 && $1 ~ /^[0-9]+$/ && $2 ~ /^cw [0-9]/ && $6 ~ /^lateness=/ { ok = 1 }
            END { exit !ok }' "$file" || fail "first: not a line of the format: $line"
[ "$(field first learned_platforms_seeded)" = 0 ] || fail "first: seeded from no file"
ok
key=$(printf '%s\n' "$line" | cut -f2-5)

# 2. A line saying the driver's own wait took half a callback wait's CPU
#    (8 trials each way, for the waits of 200 us to 4 ms and for those of
#    25 us to 200 us: the program's lie in one or the other),
#    as cw 1.1 wrote it, with a far= part for a class auto no longer has:
#    still read, that part read past and not written back. Under auto a
#    clFinish expected to be long is the driver's. On a quiet machine that
#    is every one but the queue's first, whose length is not known yet (11
#    or more of 13); on a loaded one the program may be kept off the CPU
#    until its kernel is done: that clFinish finds the queue idle (the
#    real call alone) or waits for nothing and teaches a short command
#    time, and the next ones wait with cw until the time has grown again.
#    So: at least one, and none where nothing was seeded (steps 3 and 4).
then=$(($(date +%s) - 100))
printf '%s\t%s\tlateness=- own=- long=16/8/80000/8/160000 far=8/4/40000/4/80000 short=16/8/80000/8/160000\n' \
    "$then" "$key" >"$file"
run seeded --strategy auto
[ "$(field seeded learned_platforms_seeded)" = 1 ] || fail "seeded: no platform seeded"
by_driver=$(field seeded finish_by_driver)
cw_waits=$(($(field seeded finish_on_last_command) + $(field seeded finish_on_marker)))
[ "$by_driver" -ge 1 ] || fail "seeded: no clFinish call by the driver"
echo "learned.sh: seeded run: $by_driver clFinish calls by the driver, $cw_waits with cw"
# The values are this run's (the probe's lateness added), the time the line's.
[ "$(cut -f1 "$file")" = "$then" ] || fail "seeded: the line's time changed"
grep -q 'long=16/8/80000/8/160000 short=16/8/80000/8/160000$' "$file" ||
    fail "seeded: the seeded decisions were not kept"
! grep -q 'far=' "$file" || fail "seeded: a far= part was written back"
ok

# 3. The same file under cooperative: nothing to hand to the driver.
run cooperative --strategy cooperative
[ "$(field cooperative finish_by_driver)" = 0 ] || fail "cooperative: clFinish by the driver"
ok

# 4. A day old: not trusted, and dropped (written afresh with a new time
#    when the run learned something). The run makes 5 launches (6 clFinish
#    calls with the first): fewer than the 16 trials (8 each way) in which
#    a run that learns afresh can decide the near or the short class
#    itself, so that a clFinish by the driver can only come from the old
#    line.
old=$(($(date +%s) - 86400 - 10))
printf '%s\t%s\tlateness=- own=- long=16/8/80000/8/160000\n' "$old" "$key" >"$file"
run old -- 5
[ "$(field old learned_platforms_seeded)" = 0 ] || fail "old: seeded from a line a day old"
[ "$(field old finish_by_driver)" = 0 ] || fail "old: clFinish by the driver from an old line"
! grep -q "^$old" "$file" || fail "old: the old line is still in the file"
ok

# 5. Garbage: skipped, and the program runs as ever; what is not a line of
#    the file (no time, or a day old) is dropped. A line of the platform's
#    key with values out of shape seeds nothing, and stays until the run
#    writes the platform's line or its day ends: the run may have learned
#    nothing to write (step 1).
printf 'garbage\n12\tnot\ta\tline\n\n%s\t%s\tlateness=x own=- long=-\n' "$then" "$key" >"$file"
run garbage
[ "$(field garbage learned_platforms_seeded)" = 0 ] || fail "garbage: seeded"
[ "$(wc -l <"$file")" -le 1 ] && ! grep -q -e garbage -e $'^12\t' "$file" ||
    fail "garbage: still in the file"
ok

# 6. none, and the blocking strategy: no file; a file that cannot be
#    written: the program's result all the same.
rm -f "$file"
CW_RUN_LEARNED=none run none_env
run none_option --learned=none
run blocking --strategy blocking
[ ! -e "$file" ] || fail "none or blocking wrote the file"
run unwritable --learned=/proc/no/such/learned
ok

# 7. Without the variable: the user's cache, $XDG_CACHE_HOME, else
#    ~/.cache (the line of step 2 there seeds the run). PoCL keeps its
#    kernel cache where the runs above had it: a kernel build on an empty
#    cache is LLVM's work, whose leaks LeakSanitizer reports in the ASan
#    build.
unset CW_RUN_LEARNED
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl/kcache}
for cache in "$work/home/.cache" "$work/xdg"; do
    mkdir -p "$cache/cw-run"
    printf '%s\t%s\tlateness=- own=- long=16/8/80000/8/160000 short=-\n' "$then" "$key" \
        >"$cache/cw-run/learned"
done
HOME=$work/home XDG_CACHE_HOME= run home
[ "$(field home learned_platforms_seeded)" = 1 ] || fail "home: not seeded from ~/.cache"
rm "$work/home/.cache/cw-run/learned"
HOME=$work/home XDG_CACHE_HOME=$work/xdg run xdg
[ "$(field xdg learned_platforms_seeded)" = 1 ] || fail "xdg: not seeded from \$XDG_CACHE_HOME"
ok

echo "learned.sh: $checks checks passed"
