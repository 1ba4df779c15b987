/* SPDX-License-Identifier: MIT */
/* Layer 6.2: the facts auto's policy decides a wait by (facts.h). */
#include "facts.h"
#include "driver.h"
#include "estimate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* This thread's count of auto waits: the policy's sampling turns. */
static _Thread_local unsigned auto_turn;

/* The mechanisms switched off by CW_AUTO_OFF, read once: a comma-separated
 * list of spin, vote, near, short, late, peek, rise. For the
 * benchmark's ablation only (bench/README.md); unknown names are ignored. */
static unsigned auto_off;
static void auto_off_read(void) {
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"spin", CW__OFF_SPIN},   {"vote", CW__OFF_VOTE}, {"near", CW__OFF_NEAR},
                 {"short", CW__OFF_SHORT}, {"late", CW__OFF_LATE}, {"peek", CW__OFF_PEEK},
                 {"rise", CW__OFF_RISE}};
    const char *s = getenv("CW_AUTO_OFF");
    while (s && *s) {
        size_t len = strcspn(s, ",");
        for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
            if (strlen(names[i].name) == len && strncmp(s, names[i].name, len) == 0)
                auto_off |= names[i].bit;
        s += len + (s[len] == ',');
    }
}

/*
 * The facts of an auto wait on the queue planned in `p` (cw__estimate_plan)
 * and the platform in p->driver. The spare-CPU fact is read only where the
 * policy says it can matter; with the latency preference any second CPU
 * counts, since polling on it is what the caller asked for.
 */
void cw__facts_of(const cw__plan *p, cw__facts *f) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, auto_off_read);
    /* An interrupt descriptor needs a way that parks, as a caller's parker
     * does: the driver's wait and the polls do not look at it. */
    bool plain = cw__plan_plain_parker(p);
    f->driver_wait_allowed =
        p->deadline_ns == CW_DEADLINE_NONE && !(p->flags & CW_WAIT_NO_FLUSH) && plain;
    f->callers_parker = !plain;
    f->latency = (p->flags & CW_WAIT_LATENCY) != 0;
    f->spin_cap_ns = p->spin_cap_ns;
    f->expected_ns = p->expected_ns;
    f->end_ns = cw__estimate_end_get(p->queue_key, &f->end_dev_ns);
    f->now_ns = p->start_ns ? p->start_ns : cw_now_ns();
    f->turn = auto_turn;
    f->off = auto_off;
    cw__driver_view_get(p->driver, &f->driver);
    f->spare_cpu = false;
    if (cw__policy_needs_spare(f))
        f->spare_cpu = cw__estimate_spare_cpu(p->queue_key, f->latency);
}

void cw__facts_turn(void) {
    ++auto_turn;
}
