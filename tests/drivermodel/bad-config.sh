#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A driver model that cannot be parsed: for each bad CW_DRIVER_MODEL the
# layer prints a message naming the bad item and does not load (its banner,
# printed under CW_DRIVER_MODEL_VERBOSE when it loads, never appears). Then
# a good one, to show the banner does appear when it loads.
# Usage: bad-config.sh DMCHECK   (OPENCL_LAYERS and OCL_ICD_VENDORS set)
set -uo pipefail
dmcheck=$1
fail=0
check() { # model expected-text
    out=$(CW_DRIVER_MODEL_VERBOSE=1 CW_DRIVER_MODEL="$1" "$dmcheck" callback 0 2>&1)
    if ! grep -qF "cw driver model: CW_DRIVER_MODEL=$1: $2" <<<"$out"; then
        echo "CW_DRIVER_MODEL=$1: no message '$2' in: $out" >&2
        fail=1
    fi
    if grep -q "cw driver model: preset=" <<<"$out"; then
        echo "CW_DRIVER_MODEL=$1: the layer loaded anyway: $out" >&2
        fail=1
    fi
}
check "nvidai" "unknown preset 'nvidai'"
check "pocl7,callback_delay_us=abc" "callback_delay_us=abc: not a whole number in range"
check "callback_delay_us=-1" "callback_delay_us=-1: not a whole number in range"
check "wait=spinblock" "wait=spinblock: must be block, spin, yield or spinblock:N"
check "wait=spinblock:0" "wait=spinblock:0: must be block"
check "failed=maybe" "failed=maybe: must be real, fire, fire_complete or drop"
check "device=fpga" "device=fpga: must be real or timer"
check "nvidia,spin=1" "unknown parameter 'spin'"
check "nvidia,pocl7" "'pocl7': expected name=value"
check "stall_every=0" "stall_every=0: not a whole number in range"
out=$(CW_DRIVER_MODEL_VERBOSE=1 CW_DRIVER_MODEL="neo,jitter_us=7" "$dmcheck" callback 0 2>&1)
if ! grep -q "cw driver model: preset=neo callback_delay_us=0 jitter_us=7 failed=real wait=yield" <<<"$out"; then
    echo "a good model did not load: $out" >&2
    fail=1
fi
[ $fail = 0 ] && echo "bad-config: every bad model rejected"
exit $fail
