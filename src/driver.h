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

#include "policy.h"

/* What is known of one platform. Static storage, never freed: a callback
 * of the probe may touch it at any time. */
typedef struct cw__driver cw__driver;

/*
 * The record of the platform of `event`; NULL when it cannot be told (a
 * failed query, more platforms than records), and then nothing learned
 * applies. With one platform in the process (clGetPlatformIDs, asked
 * once) every event is on it and this makes no OpenCL call; with more it
 * tells it as platform.h says (platform handles live as long as the
 * process, so the key cannot be reused).
 */
cw__driver *cw__driver_of(cl_event event);
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

/* The probe's lateness marker again, after a wait on `event` ended: where
 * no lateness is known yet or the one known is near the late floor
 * (cw__policy_probe_again), the last marker's callback has come and
 * returned, and fewer than CW__PROBE_TRIES were made. A probe that ran
 * while the device was busy (a program's first kernel, built at its first
 * launch, holds PoCL's workers for milliseconds to seconds) gave up before
 * its marker finished and learned nothing; at the end of a wait the
 * device has just finished a command. True where it ran. The same
 * threads and costs as cw__driver_probe. */
bool cw__driver_reprobe(cw__driver *d, cl_event event);

/* Whether a failed command's CL_COMPLETE callback was seen on it (NULL:
 * false). Once true, true for good. */
bool cw__driver_failed_fire(const cw__driver *d);

/* The learned callback lateness, ns (NULL: 0), and whether any sample
 * was taken (NULL: false). */
uint64_t cw__driver_lateness_ns(const cw__driver *d);
bool cw__driver_lateness_known(const cw__driver *d);

/* The record as one snapshot, for the policy (NULL: nothing known). Each
 * field is read on its own (relaxed): a snapshot taken while a wait learns
 * may mix before and after, a hint off for a while, never a wrong wait. */
void cw__driver_view_get(const cw__driver *d, cw__driver_view *v);

/* One measured lateness: a callback landed `ns` after its command was seen
 * finished (0: before, or with, the status read that saw it). */
void cw__driver_lateness_sample(cw__driver *d, uint64_t ns);
/* A probe's marker made again: the lateness becomes the lesser of the one
 * known and `ns`. */
void cw__driver_lateness_least(cw__driver *d, uint64_t ns);
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
 * blocking new ones after CW__LATE_MEASURE_STALE_NS; a sample ends it. */
bool cw__driver_measure_claim(cw__driver *d, uint64_t now_ns);
/* The claimed measurement could not start (nothing to measure with). */
void cw__driver_measure_cancel(cw__driver *d);

/* One timed driver wait of the vote (cw__policy_vote_of says what it adds). */
void cw__driver_vote_sample(cw__driver *d, uint64_t cpu_ns, uint64_t wall_ns);
/* A ticket of class `cls`'s trials (counted from 0; NULL: UINT32_MAX, past
 * every class's tickets). cw__policy_trial_driver says which way it is. */
uint32_t cw__driver_class_ticket(cw__driver *d, unsigned cls);
/* One timed trial of class `cls`, the driver's wait or the callback wait:
 * its thread CPU time and wall time, ns. */
void cw__driver_class_sample(cw__driver *d, unsigned cls, bool driver, uint64_t cpu_ns,
                             uint64_t wall_ns);

/*
 * What a platform's record has decided, for keeping across processes
 * (learned.c): each part only once known. Never whether failed commands
 * fire: that turns checks off, and is believed only once seen here.
 */
typedef struct cw__class_learned {
    bool known; /* the class's trials are decided: the counts */
    uint32_t tickets, driver_n, cb_n;
    uint64_t driver_cpu_ns, cb_cpu_ns;
} cw__class_learned;
typedef struct cw__driver_learned {
    bool lateness_known; /* lateness_ns, from at least one sample */
    uint64_t lateness_ns;
    bool vote_known; /* the driver-wait vote is decided: vote_trials, vote_asleep */
    uint32_t vote_trials, vote_asleep;
    cw__class_learned cls[CW__CLASSES]; /* by CW__CLASS_NEAR, _SHORT */
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
 * platforms whose near class decided for the driver's wait. */
void cw__driver_summary(uint64_t *probed, uint64_t *fire, uint64_t *silent, uint64_t *late,
                        uint64_t *lateness_ns, uint64_t *long_own);

#endif
