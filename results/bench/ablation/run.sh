#!/bin/bash
# SPDX-License-Identifier: MIT
# The ablation runs of bench/README.md ("What each mechanism of auto buys"):
# one round = the group's baseline (A) then each switch (B) on its cells;
# two rounds, so every switch ran A/B/A/B. Usage: run.sh GROUP ROUND, GROUP
# one of T, L, X, or S with SWITCHES="base late ..." in the environment.
set -u
cd "$(dirname "$0")/../../.."
out=results/bench/ablation
B=build/bench/cw-bench
common=(--strategies auto,blocking,cooperative,backoff-poll,spin-park --max-time 5
        --floor-trips 500 --busy-us 100,1000,20000,100000 --busy-iters 91,709,14260,71301 --stats)
one() { # name off args...
    local name=$1 off=$2; shift 2
    local f=$out/$name-$round
    { echo "# $(date -u +%FT%TZ) CW_AUTO_OFF='$off' $B ${common[*]} $* --json $f.json"
      echo "# uptime before: $(uptime)"; } >"$f.txt"
    CW_AUTO_OFF=$off $B "${common[@]}" "$@" --json "$f.json" >>"$f.txt" 2>&1
    echo "# rc $? uptime after: $(uptime)" >>"$f.txt"
    echo "$name-$round done $(date -u +%T)"
}
group=$1 round=$2
case $group in
T) # timely platforms: spin, the classes, rise, settled
    T=(--driver-model pocl3,pocl7,rocm --configs 1,all)
    one T-base "" "${T[@]}" --kernels busy-100us,busy-1ms,busy-20ms,latency
    one T-spin spin --driver-model rocm --configs all --kernels busy-100us,latency
    one T-short short "${T[@]}" --kernels busy-100us,latency
    one T-near near "${T[@]}" --kernels busy-1ms
    one T-far far "${T[@]}" --kernels busy-20ms
    one T-rise rise "${T[@]}" --kernels busy-1ms,busy-20ms
    one T-settled settled "${T[@]}" --kernels busy-100us,busy-1ms,busy-20ms,latency
    ;;
L) # late callbacks: late, vote, peek
    one L-base "" --driver-model nvidia,nvidia,wait=block --configs 1,all --kernels busy-100us,busy-1ms,busy-20ms,busy-100ms,latency
    one L-late late --driver-model nvidia --configs 1,all --kernels busy-100us,busy-1ms,busy-20ms,busy-100ms,latency
    one L-vote vote --driver-model nvidia,wait=block --configs 1,all --kernels busy-100us,busy-1ms,latency
    one L-peek peek --driver-model nvidia,nvidia,wait=block --configs 1,all --kernels busy-100us,busy-1ms,latency
    ;;
X) # pocl7 (callbacks 100 us late: the late rules and the vote decide there)
   # and the parked waits of pocl3 and rocm (peek)
    X=(--configs 1,all --kernels busy-100us,busy-1ms,latency)
    one X-base "" --driver-model pocl3,pocl7,rocm "${X[@]}"
    one X-vote vote --driver-model pocl7 "${X[@]}"
    one X-late late --driver-model pocl7 "${X[@]}"
    one X-peek peek --driver-model pocl3,rocm "${X[@]}"
    ;;
S) # the sweep of drivers, one seed, without and with the switches that
   # decide on the late and timely models drawn there
    S=(--sweep 20 --seed 1364917691 --max-time 8 --floor-trips 500 --stats)
    for sw in $SWITCHES; do
        [ "$sw" = base ] && off="" || off=$sw
        f=$out/S-$sw-$round
        { echo "# $(date -u +%FT%TZ) CW_AUTO_OFF='$off' $B ${S[*]} --json $f.json"
          echo "# uptime before: $(uptime)"; } >"$f.txt"
        CW_AUTO_OFF=$off $B "${S[@]}" --json "$f.json" >>"$f.txt" 2>&1
        echo "# rc $? uptime after: $(uptime)" >>"$f.txt"
        echo "S-$sw-$round done $(date -u +%T)"
    done
    ;;
esac
