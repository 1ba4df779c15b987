/* SPDX-License-Identifier: MIT */
// One work-item with next to no work, so launching and waiting are nearly the
// whole cost. It counts its launches, so the host can check that each one ran.
kernel void latency(global uint *count)
{
    count[0] += 1u;
}
