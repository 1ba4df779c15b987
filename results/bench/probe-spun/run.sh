#!/bin/sh
# SPDX-License-Identifier: MIT
# Ten interleaved runs of one driver model of the sweep (callbacks 0-12 us
# late, a driver wait that spins 1.9 ms before it blocks, a timer device,
# 1 ms commands, 1 CPU), with two builds of cw-bench: before ("main": the
# probe never made again once a lateness was known, and a class's driver
# trials ran their 8 whatever they cost) and after ("cand": a probed
# lateness near the late floor probed again, the least kept; a driver trial
# that spun throughout decides its class). This is the loop as it was run
# for ab-10-runs.txt, from /work with the two builds at main/ and wt/cand/.
# Its output per run: the builder; auto's launches, mean and median CPU per
# launch, p99 CPU (a spinning driver trial costs about 1.9 ms); "lat_med="
# and the first "late=" are a grep slip (empty, then the floor line's
# figures); the second "late=" line: the lateness learned (us) and its
# samples; goal c's verdict for the cell.
M='pocl3,callback_delay_us=0,jitter_us=12,wait=spinblock:1919,failed=fire,device=timer,kernel_us=11'; for i in $(seq 1 10); do for b in main wt/cand; do r=$(/work/$b/build-bench/bench/cw-bench --driver-model $M --kernels busy-1ms --configs 1 --strategies cooperative,auto --max-time 10 --stats --json /tmp/ab.json 2>&1); echo "$(basename $b) $(echo "$r" | grep -E '^auto  ' | head -1| awk '{print "n="$2, "cpu_mean="$4, "cpu_med="$5, "p99="$7, "lat_med="$10}') $(echo "$r" | grep -E '^pocl3.*\| +1 ' | awk -F'|' '{print "late="$(NF-1)}') $(/usr/bin/python3 /work/main/bench/goals.py /tmp/ab.json 2>/dev/null | grep -E '^goal c' | cut -c1-12)"; done; done
