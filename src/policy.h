/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.2 (internal): the auto strategy's policy. A pure function from
 * what is known when a wait begins (the facts) to a way of waiting (the
 * choice), and beside it the pure arithmetic of what auto learns: the
 * driver-wait vote, the classes' trials, their order and verdicts. No
 * OpenCL call, no atomic, no clock: the caller gathers the facts
 * (wait.c, from driver.c's and estimate.c's records) and feeds what the
 * wait saw back to the learners after it (learn.c).
 *
 * Every figure it decides by is in tunables.h.
 */
#ifndef CW_POLICY_H
#define CW_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "tunables.h"

/* The classes of parked waits on a timely platform, which decide apart
 * between the callback wait and the driver's wait (by expected length).
 * Waits expected to last CW__CLASS_NEAR_END_NS or longer are of none
 * (CW__CLASS_NONE): they park on the callback. */
enum { CW__CLASS_NEAR, CW__CLASS_SHORT, CW__CLASSES, CW__CLASS_NONE = CW__CLASSES };

/* A platform's learned record, as one snapshot (driver.c fills it). */
typedef struct cw__class_view {
    uint32_t tickets;
    uint32_t n[2];      /* counted trials, [0] callback wait, [1] driver wait */
    uint64_t sum_ns[2]; /* their thread CPU time */
    uint64_t max_ns[2]; /* the largest of them; 0: not known (a seeded record) */
    bool driver_spun;   /* a driver's wait of the class spun throughout */
} cw__class_view;

typedef struct cw__driver_view {
    bool known;           /* there is a record (else nothing learned applies) */
    bool fire;            /* failed commands fire their callbacks */
    bool lateness_known;  /* lateness_ns holds at least one sample */
    uint64_t lateness_ns; /* how late callbacks come */
    uint64_t probed_ns;   /* when the platform's probe began; 0: not yet */
    uint32_t vote_trials; /* the driver-wait vote */
    uint32_t vote_asleep;
    cw__class_view cls[CW__CLASSES];
} cw__driver_view;

/*
 * Mechanisms of auto switched off, for the benchmark's ablation only (the
 * environment variable CW_AUTO_OFF, bench/README.md): each bit makes the
 * policy decide as if that mechanism were not there.
 */
enum {
    CW__OFF_SPIN = 1u << 0,  /* no spin planned (but with CW_WAIT_LATENCY) */
    CW__OFF_VOTE = 1u << 1,  /* late platforms: no driver-wait vote, no driver wait */
    CW__OFF_NEAR = 1u << 2,  /* the near class: no trials, the callback wait */
    CW__OFF_SHORT = 1u << 3, /* the short class: likewise */
    CW__OFF_LATE = 1u << 4,  /* callbacks never judged late: no late or hybrid polls */
    CW__OFF_RISE = 1u << 5,  /* the estimates follow a longer wait by a quarter only */
    CW__OFF_PEEK = 1u << 6,  /* parked waits never peek */
};

/* What auto knows when a wait begins. */
typedef struct cw__facts {
    bool driver_wait_allowed; /* no timeout, no CW_WAIT_NO_FLUSH, no caller's parker */
    bool callers_parker;      /* a parker of the caller's, or an interrupt descriptor:
                               * only parking ways serve it */
    bool latency;             /* CW_WAIT_LATENCY */
    uint64_t spin_cap_ns;     /* the longest expected wait worth a spin */
    uint64_t expected_ns;     /* how long the queue's waits take; 0: unknown */
    uint64_t end_ns;          /* when the queue's commands end, told by polls; 0: none */
    uint64_t end_dev_ns;      /* how far told ends lie from end_ns, on average */
    bool spare_cpu;           /* a CPU this thread may spin on (only read where it matters) */
    uint64_t now_ns;          /* when the wait began */
    unsigned turn;            /* this thread's count of auto waits: sampling turns */
    unsigned off;             /* CW__OFF_* (the benchmark's ablation); 0 */
    cw__driver_view driver;
} cw__facts;

/* The ways of waiting. */
typedef enum cw__way {
    CW__WAY_DRIVER,     /* the driver's clWaitForEvents */
    CW__WAY_PARK,       /* park on the callback, with the failed-command checks */
    CW__WAY_SPIN_PARK,  /* spin on the callback for spin_ns, then park */
    CW__WAY_SLEEP_POLL, /* no callback: sleep toward the end, then poll (late callbacks) */
    CW__WAY_POLL_STEPS, /* the callback registered, the status polled on steps */
    CW__WAY_POLL,       /* the status read in a busy loop (the latency preference) */
} cw__way;

/* What a wait's cost teaches. */
typedef enum cw__trial {
    CW__TRIAL_NONE,
    CW__TRIAL_VOTE,  /* a timed driver wait votes: does it sleep? */
    CW__TRIAL_CLASS, /* a timed wait of its class (the way comes from a ticket) */
} cw__trial;

typedef struct cw__choice {
    cw__way way;
    cw__trial trial;
    unsigned cls;         /* CW__TRIAL_CLASS: the class */
    bool settled;         /* CW__WAY_DRIVER for good (no trial; what cw_advice_get tells) */
    uint64_t spin_ns;     /* CW__WAY_SPIN_PARK */
    bool peek_after_spin; /* read the status once when the spin ran out */
    uint64_t peek_ns;     /* park: read the status this far into the wait; 0: none */
    uint64_t plan_ns;     /* the expected wait the way plans with */
    uint64_t poll_for_ns; /* CW__WAY_SLEEP_POLL: poll this long, then park on the callback */
    bool rise;            /* the estimates may rise at once after this wait */
    uint64_t fine_ns;     /* polling ways: no delay longer than this around the expected
                           * end (from fine_early_ns before it to CW__LATE_FINE_WINDOW_SHIFT
                           * past it); 0: the usual steps */
    uint64_t fine_early_ns;
    bool sleep_to_end; /* polling ways: the first sleep may reach the fine polls at once */
    const char *why;   /* the rule, in a few words (tests, --trace) */
} cw__choice;

/* Whether callbacks on a platform are late for a wait expected to last
 * `expected_ns` (0: unknown, the floor alone). */
bool cw__policy_late(const cw__driver_view *d, uint64_t expected_ns);

/* Whether the spare-CPU fact can change the choice (it costs a read of
 * /proc/loadavg now and then): the caller fills it only then. */
bool cw__policy_needs_spare(const cw__facts *f);

/* A timely platform's class `cls` where it needs no ticket: true with
 * *driver set where its parked waits are the callback wait for now, or
 * decided (false: a trial is due). */
bool cw__policy_class_known(const cw__facts *f, unsigned cls, bool *driver);

/* The way auto waits, and why. Pure. */
void cw__policy_choose(const cw__facts *f, cw__choice *c);

/* The driver-wait vote. */
bool cw__policy_vote_decided(uint32_t trials, uint32_t asleep);
bool cw__policy_vote_sleeps(uint32_t trials, uint32_t asleep);
/* Whether a driver's wait that took `cpu_ns` of thread CPU over `wall_ns`
 * spun throughout a wait long enough to tell (CW__VOTE_MIN_NS). */
bool cw__policy_spun_through(uint64_t cpu_ns, uint64_t wall_ns);
/* What one timed driver wait adds to the vote's trials and sleeps. */
void cw__policy_vote_of(uint64_t cpu_ns, uint64_t wall_ns, uint32_t *trials, uint32_t *asleep);

/* Whether the probe's marker should be made again: no lateness known, or
 * one near the late floor, which one preempted callback can make. */
bool cw__policy_probe_again(bool lateness_known, uint64_t lateness_ns);

/* The classes; CW__CLASS_NONE for a wait of none. */
unsigned cw__policy_class_of(uint64_t expected_ns);
uint32_t cw__policy_class_trials(unsigned cls);
uint32_t cw__policy_class_tickets(unsigned cls);
/* The shortest wait that counts as a trial of the class. */
uint64_t cw__policy_class_least_ns(unsigned cls);
/* Decided: both ways' trials counted, the tickets spent, or a driver's
 * wait that spun throughout (the callback wait then, at once). */
bool cw__policy_class_decided(const cw__class_view *v, unsigned cls);
/* A way's cost per wait as *sum / *n: its mean with its dearest trial left
 * out (with two or more, where the largest is known). */
void cw__policy_class_cost(const cw__class_view *v, bool driver, uint64_t *sum, uint64_t *n);
/* Both ways timed, the driver wait's cost at most the edge's eighths of
 * the callback wait's, and no driver's wait of the class spun throughout. */
bool cw__policy_class_driver_won(const cw__class_view *v);
/* The way of the wait holding `ticket` (counted from 0): true for the
 * driver wait; *trial: it is a trial, to be timed. Past the tickets, the
 * verdict, and no trial. */
bool cw__policy_trial_driver(const cw__class_view *v, unsigned cls, uint32_t ticket, bool *trial);

#endif
