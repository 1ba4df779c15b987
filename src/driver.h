/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.0 (internal): what the OpenCL driver does, learned per
 * platform while a program waits: whether failed commands fire their
 * CL_COMPLETE callbacks, and how late callbacks come. What is learned only
 * steers how a wait spends its time; the one fact a wait's correctness
 * rests on (skipping the failed-command checks) is only ever believed once
 * a failed command's callback was seen.
 */
#ifndef CW_DRIVER_H
#define CW_DRIVER_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>

/* A platform's callbacks are late, for a wait expected to last E ns, when
 * they come at least CW__LATE_FLOOR_NS after their command and at least
 * E >> CW__LATE_SHARE_SHIFT (1/32 of E): then waiting for the callback
 * would add more than about 3% to the wait. Below the floor a wake-up by
 * the callback costs less than polling would (PoCL's own come within a few
 * µs). */
#define CW__LATE_FLOOR_NS 50000u
#define CW__LATE_SHARE_SHIFT 5u

/* What is known of one platform. Static storage, never freed: a callback
 * of the probe may touch it at any time. */
typedef struct cw__driver cw__driver;

/*
 * The record of the platform of `event`; NULL when it cannot be told (a
 * failed query, more platforms than records), and then nothing learned
 * applies. With one platform in the process (clGetPlatformIDs, asked
 * once) every event is on it and this makes no OpenCL call; with more it
 * tells it by the event's first word, the ICD dispatch table's pointer,
 * where that is its platform's alone and once one event confirmed it, else
 * asks the event for its context, devices and platform (platform handles
 * live as long as the process, so the key cannot be reused).
 */
cw__driver *cw__driver_of(cl_event event);
/* How many platforms' events are told by their first word (driver.c says
 * when; 0 with one platform, which needs no telling). */
unsigned cw__driver_dispatch_trusted(void);

/*
 * Probe the platform of `event` once (later calls return at once): a
 * marker on a queue of cw's own, gated on a user event set to a negative
 * status, with a CL_COMPLETE callback, answers whether failed commands
 * fire; a second marker, gated on a user event set complete, measures how
 * late its callback comes. The answers arrive asynchronously, when the
 * driver runs the callbacks. Not for a thread inside an OpenCL callback
 * (it creates a queue and spins up to CW__PROBE_SPIN_NS): only the waits
 * that may block call it. Makes no clFlush call (releasing the queue
 * flushes it) and takes no cw lock.
 */
void cw__driver_probe(cw__driver *d, cl_event event);

/* Whether a failed command's CL_COMPLETE callback was seen on it (NULL:
 * false). Once true, true for good. */
bool cw__driver_failed_fire(const cw__driver *d);

/* The learned callback lateness, ns (NULL: 0), and whether it is late for
 * a wait expected to last `expected_ns` (0: unknown, the floor alone). */
uint64_t cw__driver_lateness_ns(const cw__driver *d);
bool cw__driver_late(const cw__driver *d, uint64_t expected_ns);
/* Whether any lateness sample was taken (NULL: false). */
bool cw__driver_lateness_known(const cw__driver *d);

/* One measured lateness: a callback landed `ns` after its command was seen
 * finished (0: before, or with, the status read that saw it). */
void cw__driver_lateness_sample(cw__driver *d, uint64_t ns);
/*
 * A callback that landed `at_least_ns` after a status read saw its command
 * finished, where the read before it saw it running `uncertain_ns` earlier:
 * the lateness is between at_least_ns and at_least_ns + uncertain_ns. Within
 * a quarter of it, a sample (of the middle); otherwise a lower bound only
 * (a check 16 ms into the wait on a 100 µs command sees little of a 20 ms
 * lateness): it raises the estimate to at_least_ns and never lowers it.
 */
void cw__driver_lateness_seen(cw__driver *d, uint64_t at_least_ns, uint64_t uncertain_ns);
/* The same from the times: a callback that landed at `landed_ns` for a
 * command a status read saw finished at `seen_ns`, the read before it
 * having seen it running at `running_ns`. */
void cw__driver_lateness_landed(cw__driver *d, uint64_t landed_ns, uint64_t seen_ns,
                                uint64_t running_ns);

/* Whether a lateness measurement may start now (one at a time per
 * platform, so at most one record lingers for it); claims it when true. A
 * measurement whose callback never came (its record was swept first) stops
 * blocking new ones after CW__MEASURE_STALE_NS; a sample ends it. */
#define CW__MEASURE_STALE_NS 1000000000u
bool cw__driver_measure_claim(cw__driver *d, uint64_t now_ns);
/* The claimed measurement could not start (nothing to measure with). */
void cw__driver_measure_cancel(cw__driver *d);

/*
 * Whether the driver's own clWaitForEvents sleeps, learned by timing the
 * first CW__OWN_WAIT_TRIALS such waits of auto on a platform whose
 * callbacks are late; only waits of at least CW__OWN_WAIT_MIN_NS count. A
 * trial slept when the CPU it took, less CW__OWN_WAIT_FIXED_NS, is under
 * 1/CW__OWN_WAIT_CPU_SHARE of its wall time, and the driver's wait sleeps
 * when at least half the trials slept. The share is small and the waits long
 * so that a spinning driver wait preempted on a loaded machine (a quarter
 * of a CPU) still counts as spinning. The allowance is a sleeping wait's
 * fixed cost (a wake-up, some system calls: 20-25 µs of thread CPU for
 * PoCL's on a 2-CPU VM, nearly an eighth of a 200 µs wait), which alone would
 * make a short one look busy; a quarter of a CPU still counts as spinning
 * with it for waits of 8 x the allowance (CW__OWN_WAIT_MIN_NS) and more.
 * A shorter trial of at least CW__OWN_WAIT_SPUN_MIN_NS counts only where
 * it spun, taking at least 1/CW__OWN_WAIT_SPUN_SHARE of its wall time in
 * thread CPU: a sleeping wait's fixed cost is at most half of that, while
 * a spin that shares its CPU with the thread that ends the command (the
 * `nvidia` model's timer on one CPU) takes about 3/4. A driver whose every
 * wait is short would otherwise hand each of them to its spin as a trial
 * that never counts. A short trial never counts as a sleep: a spin
 * preempted on a loaded machine costs no more than a sleep's fixed cost.
 * Where it sleeps, auto waits in it rather than polling: no poll costs
 * less CPU than a driver's sleep, and a late callback cannot end it late.
 * On a spinning driver a trial costs a CPU for as long as the wait, so
 * the vote ends once the trials left cannot change it (half of the trials
 * slept, or more than half spun); a trial of at least CW__OWN_WAIT_MIN_NS
 * that took CW__OWN_WAIT_THROUGH/CW__OWN_WAIT_THROUGH_OF of its wall time
 * or more in thread CPU spun throughout and is that majority alone (a
 * sleeping wait's costliest trials seen took a half, a spinning one's not
 * preempted nearly all of it; one preempted is a vote as before). Only a
 * wait expected to last at most CW__OWN_WAIT_TRIAL_MAX_NS, by a known
 * estimate, is a trial: a program whose waits are 100 ms kernels would
 * otherwise spin 100 ms for each (and a queue's first wait, with no
 * estimate yet, may be as long); until shorter waits have decided, longer
 * ones are the late wait.
 * `cw__driver_own_wait_sleeps`: decided and true (NULL: false);
 * `cw__driver_own_wait_open`: not decided, trials still to make (NULL:
 * false); `cw__driver_own_wait_trial`: open, and a wait expected to last
 * `expected_ns` (0: not known) is one to make a trial of.
 */
#define CW__OWN_WAIT_TRIALS 4u
#define CW__OWN_WAIT_CPU_SHARE 8u
#define CW__OWN_WAIT_MIN_NS 200000u
#define CW__OWN_WAIT_FIXED_NS (CW__OWN_WAIT_MIN_NS / 8u)
#define CW__OWN_WAIT_SPUN_MIN_NS (CW__OWN_WAIT_MIN_NS / 2u)
#define CW__OWN_WAIT_SPUN_SHARE 2u
#define CW__OWN_WAIT_TRIAL_MAX_NS (CW__OWN_WAIT_MIN_NS * 10u)
#define CW__OWN_WAIT_THROUGH 7u
#define CW__OWN_WAIT_THROUGH_OF 8u
bool cw__driver_own_wait_sleeps(const cw__driver *d);
bool cw__driver_own_wait_open(const cw__driver *d);
bool cw__driver_own_wait_trial(const cw__driver *d, uint64_t expected_ns);
/* One timed clWaitForEvents: its thread CPU time and wall time, ns. */
void cw__driver_own_wait_sample(cw__driver *d, uint64_t cpu_ns, uint64_t wall_ns);

/*
 * A wait of auto that it would park for at once (no spin planned: one
 * expected to last at least CW__OWN_WAIT_MIN_NS, or a shorter one where
 * no CPU is spare), of known expected length, on a platform whose
 * callbacks come under CW__LATE_FLOOR_NS late:
 * the callback wait, or the driver's own clWaitForEvents, whichever took the
 * waiting thread less CPU time per wait (each way's mean with its dearest
 * trial left out, so that one preempted trial does not decide). Both are
 * timed, interleaved (cw__driver_long_way says in which order), on
 * the platform's first such waits once its lateness is known, until each
 * counted its trials (or the tickets were handed out). Before the lateness
 * is known (or CW__MEASURE_STALE_NS has passed since the probe) the callback
 * wait, and where either way has no counted trial. The driver's own wait
 * saves a callback's registration, cw's record of it and its delivery; it
 * loses where it spins or polls before it sleeps. The thread CPU time is
 * what each costs the waiting thread; a callback's delivery, on the
 * driver's thread, is left out of it, which is why the driver's own wait
 * wins up to CW__LONG_OWN_EDGE eighths of the callback wait's time.
 *
 * Three classes of such waits decide apart (cw__driver_long_class): near,
 * expected from CW__OWN_WAIT_MIN_NS to under CW__LONG_FAR_NS
 * (CW__LONG_TRIALS counted waits of at least CW__OWN_WAIT_MIN_NS per way,
 * CW__LONG_TICKETS tickets); far (of at least half CW__LONG_FAR_NS,
 * CW__LONG_FAR_TRIALS per way, CW__LONG_FAR_TICKETS tickets); and short,
 * expected under CW__OWN_WAIT_MIN_NS where auto plans no spin (no CPU
 * is spare: the device's workers take every CPU, or the machine is
 * loaded), so that it would park at once all the same (CW__LONG_TRIALS of at least
 * CW__LONG_SHORT_MIN_NS per way, CW__LONG_TICKETS tickets). What the two ways cost changes with the
 * wait's length (on PoCL 3.1: about the same for 1 ms kernels, the driver's
 * own a tenth to a third less for 20 ms ones; a thread that slept for
 * milliseconds finds its caches cold, which weighs on the way that touches
 * more), so one decision made on a program's first long waits, often its
 * shortest, was a toss for the longer ones. A short wait's cost is mostly
 * the fixed cost of a sleep and a wake-up, which is what the ways differ
 * in; one shorter than CW__LONG_SHORT_MIN_NS (a command found as good as
 * done) tells little of either and counts for neither.
 * Far trials are fewer: each is a long wait, and the ways differ more.
 */
#define CW__LONG_TRIALS 8u
#define CW__LONG_TICKETS 64u
#define CW__LONG_FAR_NS 4000000u
#define CW__LONG_FAR_TRIALS 4u
#define CW__LONG_FAR_TICKETS 32u
#define CW__LONG_SHORT_MIN_NS (CW__OWN_WAIT_MIN_NS / 8u)
#define CW__LONG_CLASSES 3u
#define CW__LONG_NEAR 0u
#define CW__LONG_FAR 1u
#define CW__LONG_SHORT 2u
#define CW__LONG_OWN_EDGE 9u
typedef enum cw__long_way {
    CW__LONG_CALLBACK,
    CW__LONG_OWN,
    CW__LONG_TRIAL_CALLBACK, /* a trial: time it (cw__driver_long_sample) */
    CW__LONG_TRIAL_OWN,
} cw__long_way;
/* The class of a wait auto parks for at once, expected to last
 * `expected_ns` (not 0): CW__LONG_NEAR, CW__LONG_FAR or CW__LONG_SHORT. */
unsigned cw__driver_long_class(uint64_t expected_ns);
cw__long_way cw__driver_long_way(cw__driver *d, uint64_t expected_ns, uint64_t now_ns);
/* One timed long wait of that way, planned to last `expected_ns` (its
 * class): its thread CPU time and wall time, ns. */
void cw__driver_long_sample(cw__driver *d, uint64_t expected_ns, bool own, uint64_t cpu_ns,
                            uint64_t wall_ns);

/*
 * Whether auto's wait expected to last `expected_ns` is, for good, the
 * driver's own clWaitForEvents on this platform (where own waits are
 * allowed): callbacks late for it and an own wait seen to sleep, or a wait
 * that would park at once (`parks`: no spin) whose class's trials chose
 * the driver's own. Hands out no trial and counts nothing, so a wait may ask
 * it before its first look (NULL: false).
 */
bool cw__driver_own_settled(const cw__driver *d, uint64_t expected_ns, bool parks, uint64_t now_ns);

/*
 * What a platform's record has decided, for keeping across processes
 * (learned.c): each part only once known. Never whether failed commands
 * fire: that turns checks off, and is believed only once seen here.
 */
typedef struct cw__long_learned {
    bool known; /* the class's long-wait trials are decided: the counts */
    uint32_t tickets, own_n, cb_n;
    uint64_t own_cpu_ns, cb_cpu_ns;
} cw__long_learned;
typedef struct cw__driver_learned {
    bool lateness_known; /* lateness_ns, from at least one sample */
    uint64_t lateness_ns;
    bool own_known; /* the own-wait trials are made: own_trials, own_asleep */
    uint32_t own_trials, own_asleep;
    cw__long_learned lng[CW__LONG_CLASSES]; /* by CW__LONG_NEAR, _FAR, _SHORT */
} cw__driver_learned;

/* The platform whose record is slot i (of CW__DRIVER_SLOTS), and the
 * record; NULL for a free slot. */
#define CW__DRIVER_SLOTS 8u
cl_platform_id cw__driver_slot(unsigned i, cw__driver **d);
/* The record of platform p (claiming a slot); NULL when all are taken. */
cw__driver *cw__driver_of_platform(cl_platform_id p);
void cw__driver_learned_get(const cw__driver *d, cw__driver_learned *out);
/*
 * Seed the parts of `in` that are known there and that this record has
 * nothing of yet (no lateness sample, no own-wait trial, no long-wait
 * ticket), as if learned here; true when any part was seeded. A wait
 * learning at the same moment may mix its count with the seed's: a
 * decision off for a while, never a wrong wait.
 */
bool cw__driver_seed(cw__driver *d, const cw__driver_learned *in);

/* For cw_stats_auto_get: platforms probed, and of them, those whose failed
 * commands fire and whose callbacks are late; the largest lateness; the
 * platforms whose long waits (near or far, not short) the driver's own
 * wait serves. */
void cw__driver_summary(uint64_t *probed, uint64_t *fire, uint64_t *silent, uint64_t *late,
                        uint64_t *lateness_ns, uint64_t *long_own);

#endif
