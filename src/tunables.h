/* SPDX-License-Identifier: MIT */
/*
 * cw (internal): every figure the auto strategy decides or learns by, in one
 * table. One line per tunable: its name, its value, then in the comment its
 * unit, why it has that value, and where the figure comes from ("bench":
 * the benchmark's cells, bench/README.md; "design": chosen, argued in
 * docs/design.md; "derived": from the tunables it names). No other file
 * defines a figure auto decides by; docs/tunables.md is this table for
 * readers, and the tree.tunables test keeps the two the same.
 *
 * Each tunable has one job. Changing one changes what auto does, never
 * whether a wait is right: every way of waiting ends only once the status
 * says the command finished, failed, or the deadline passed.
 */
#ifndef CW_TUNABLES_H
#define CW_TUNABLES_H

/* name value unit | why | source: one line each, kept unwrapped for the docs check */
/* clang-format off */

/* Late callbacks (policy.c: cw__policy_late). */
#define CW__LATE_FLOOR_NS 50000u /* ns | callbacks later than this cost more than polling would | bench: PoCL's come within a few us, the nvidia model's 20 ms */
#define CW__LATE_SHARE_SHIFT 8u /* shift | late also needs lateness >= E >> this (1/256 of the expected wait E): waiting for it would add over 0.4%, and the goal is 0.5% | bench: goal b, nvidia 1 s commands */
#define CW__LATE_PROBE_GRACE_NS 1000000000u /* ns | trials start only once lateness was measured or this long after the probe, whose callback a late driver has delivered by then | design */
#define CW__LATE_MEASURE_STALE_NS 1000000000u /* ns | a lateness measurement whose callback never came stops blocking new ones after this | design */
#define CW__LATE_POLL_SHIFT 4u /* shift | a late wait polls for at least lateness << this, and past the expected end each poll's delay is at most the time waited >> this | design: polls finer than the lateness */
#define CW__LATE_FIRST_DELAY_NS 11000u /* ns | a late wait's first and shortest delay past the expected end: the shortest delay that is slept (microdelay spin bound + 1 us) | derived: CW__MICRODELAY_SPIN_NS */
#define CW__LATE_SAMPLE_EVERY 256u /* waits | one late wait in this many registers its callback, so lateness stays measured | design */
#define CW__LATE_EARLY_SHIFT 4u /* shift | the hybrid wakes expected >> this before the expected end | design */
#define CW__LATE_LEAST_SHIFT 3u /* shift | a late wait's first sleep may last expected >> this, not only the time waited | bench: nvidia model, 30-40 us of CPU a poll */
#define CW__LATE_FINE_SHIFT 8u /* shift | a late wait polls no further apart than expected >> this near the expected end | bench: 0.4% of the command, under the 0.5% goal at half the polls of 1/512 (nvidia model, 100 ms) */
#define CW__LATE_FINE_WINDOW_SHIFT 4u /* shift | the fine spacing lasts until E + E >> this has been waited: it bounds what a wrong estimate costs (about 40 polls, once) | design */
#define CW__LATE_POLL_PLANS 2u /* plans | a late wait polls through at least this many times its longer estimate before it parks on the callback | design: a wait twice as long as planned has outgrown it */
#define CW__LATE_EARLY_STEPS 2u /* steps | the fine polls begin at least this many fine steps before the expected end | design */
#define CW__LATE_EARLY_SPREADS 2u /* spreads | and at least this many times the told ends' mean deviation before it | design: most ends fall within two */
#define CW__LATE_FINE_LEAST_NS 50000u /* ns | no finer spacing than this near the end (a wake-up costs 20-40 us of CPU) | bench: nvidia model */

/* The probe (driver.c). */
#define CW__PROBE_TRIES 3u /* probes | the probe's lateness marker is made at most this many times, again at the end of a wait while no lateness is known or it is near the floor (CW__PROBE_AGAIN_BELOW_NS): at most (this - 1) x CW__PROBE_SPIN_NS added to a process's waits | design */
#define CW__PROBE_AGAIN_BELOW_NS 100000u /* ns | a probed lateness from CW__LATE_FLOOR_NS up to this is probed again (within CW__PROBE_TRIES), the least kept: one marker's callback preempted on a shared CPU reads tens of us late | bench: sweep model, callbacks 0-12 us late, probed 69 us on 1 CPU */
#define CW__PROBE_SPIN_NS 2000000u /* ns | the probe's longest wait to see its marker finished | bench: on PoCL it finished within 0.2 ms */

/* Peeks: a parked wait reads the status once to see a late callback. */
#define CW__PEEK_EVERY 64u /* waits | once lateness is known, one parked wait in this many peeks half way | design */
#define CW__PEEK_SHIFT 1u /* shift | a peek reads the status at expected >> this into the wait (half way) | design */
#define CW__PEEK_MAX_NS 10000000u /* ns | longer waits do not peek: their spin or checks see lateness | design */

/* Spinning (policy.c: cw__policy_spin_ns; estimate.c: the spare-CPU view). */
#define CW__SPIN_MARGIN_SHIFT 2u /* shift | auto spins the expected wait plus expected >> this, so a typical wait ends inside the spin | design */
#define CW__SPARE_SAMPLE_NS 50000000u /* ns | the spare-CPU view (affinity, /proc/loadavg) is re-read at most this often | design: its read costs ten times the affinity call */

/* The driver-wait vote: does clWaitForEvents sleep? (late platforms) */
#define CW__VOTE_TRIALS 4u /* waits | timed clWaitForEvents calls that vote | design */
#define CW__VOTE_MIN_NS 200000u /* ns | shortest trial whose vote counts either way | design: 8 x the fixed cost */
#define CW__VOTE_FIXED_NS 25000u /* ns | a sleeping wait's fixed CPU cost, taken off before judging | bench: 20-25 us for PoCL's on a 2-CPU VM */
#define CW__VOTE_CPU_SHARE 8u /* ratio | a trial slept where its CPU, less the fixed cost, is under 1/this of its wall | design: a preempted spin still counts as a spin */
#define CW__VOTE_SPUN_MIN_NS 100000u /* ns | shorter trials from here count only where they spun | design */
#define CW__VOTE_SPUN_SHARE 2u /* ratio | a short trial spun where its CPU is at least 1/this of its wall | bench: a spin sharing its CPU takes about 3/4 */
#define CW__VOTE_THROUGH 7u /* ratio, over CW__VOTE_THROUGH_OF | a trial whose CPU is this share of its wall spun throughout: a majority alone | bench: sleeping waits' costliest took a half */
#define CW__VOTE_THROUGH_OF 8u /* ratio | denominator of CW__VOTE_THROUGH | design */
#define CW__VOTE_TRIAL_MAX_NS 25000000u /* ns | longer expected waits are not trials: a spinning driver spins that long, once (a trial that spun throughout decides the vote alone) | bench: sweep models with late callbacks and a sleeping driver's wait polled their 20 ms commands at 3-15x blocking's CPU while no wait was short enough to vote */

/* Parked waits on timely platforms: callback or driver wait, by class. */
#define CW__CLASS_NEAR_END_NS 4000000u /* ns | expected waits from here are of no class: they park on the callback, without trials | bench: PoCL 3.1, the ways cost alike for 1 ms kernels; the ablation found no verdict that trials of longer waits changed */
#define CW__CLASS_TRIALS 8u /* waits | counted trials per way and class | design */
#define CW__CLASS_TICKETS 64u /* waits | tickets per class: the trials end with them | design */
#define CW__CLASS_DRIVER_EDGE 9u /* eighths | the driver wait wins up to this many eighths of the callback wait's CPU: the callback's delivery on the driver's thread is not counted | design */

/* The per-queue estimates (estimate.c). */
#define CW__EST_WEIGHT_SHIFT 2u /* shift | a wait moves the estimate by 1/4 of the difference | design */
#define CW__EST_DROP 4u /* ratio | a wait under half the estimate brings it down by up to this factor at once | design: within 2x after log4(ratio) waits */
#define CW__EST_RISE_MIN_NS 8000000u /* ns | from here one wait over twice the estimate raises it by up to CW__EST_DROP at once | derived: half the default check interval */
#define CW__EST_SETTLED_DONE_NS 10000ull /* ns | a driver wait shorter than this found its command done and feeds no estimate | design: a microdelay's spin bound */

/* clang-format on */

#endif
