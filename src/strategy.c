/* SPDX-License-Identifier: MIT */
/* Layer 6.2: the strategy table, names, the plan of each wait, and the polling waits' steps. */
#include "strategy.h"
#include "relax.h"
#include "stats_internal.h"

#include <string.h>

_Static_assert(CW__INTERRUPT_LOOK_NS == CW_INTERRUPT_LOOK_US * 1000ull,
               "the interrupt parker looks as often as cw/wait.h says");

/* The strategy CW_STRATEGY_DEFAULT stands for in this release. */
#define DEFAULT_IS CW_STRATEGY_AUTO

static const cw__strategy_row rows[CW_STRATEGY_COUNT] = {
    [CW_STRATEGY_BLOCKING] = {"blocking", CW__BLOCK, CW__COMPLETION_PTHREAD, CW__SPIN_NONE, false},
    [CW_STRATEGY_COOPERATIVE] = {"cooperative", CW__CALLBACK, CW__COMPLETION_YIELD, CW__SPIN_NONE,
                                 true},
    [CW_STRATEGY_POLL] = {"poll", CW__POLL, CW__COMPLETION_YIELD, CW__SPIN_NONE, false},
    [CW_STRATEGY_COOPERATIVE_WAKE_LOCKED] = {"cooperative-wake-locked", CW__CALLBACK,
                                             CW__COMPLETION_YIELD_WAKE_LOCKED, CW__SPIN_NONE, true},
    [CW_STRATEGY_COOPERATIVE_NOYIELD] = {"cooperative-noyield", CW__CALLBACK,
                                         CW__COMPLETION_NOYIELD_WAKE_LOCKED, CW__SPIN_NONE, true},
    [CW_STRATEGY_PTHREAD] = {"pthread", CW__CALLBACK, CW__COMPLETION_PTHREAD, CW__SPIN_NONE, true},
    [CW_STRATEGY_SPIN_PARK] = {"spin-park", CW__CALLBACK, CW__COMPLETION_YIELD, CW__SPIN_BUDGET,
                               true},
    [CW_STRATEGY_BACKOFF_POLL] = {"backoff-poll", CW__BACKOFF, CW__COMPLETION_YIELD, CW__SPIN_NONE,
                                  true},
    [CW_STRATEGY_AUTO] = {"auto", CW__CALLBACK, CW__COMPLETION_YIELD, CW__SPIN_AUTO, true},
};

const cw__strategy_row *cw__strategy_row_of(cw_strategy s) {
    return &rows[s == CW_STRATEGY_DEFAULT ? DEFAULT_IS : s];
}

const char *cw_strategy_name(cw_strategy strategy) {
    if ((unsigned)strategy >= CW_STRATEGY_COUNT)
        return NULL;
    return strategy == CW_STRATEGY_DEFAULT ? "default" : rows[strategy].name;
}

int cw_strategy_from_name(const char *name, cw_strategy *out) {
    if (!name || !out)
        return CW_ERR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < CW_STRATEGY_COUNT; ++i)
        if (strcmp(name, cw_strategy_name((cw_strategy)i)) == 0) {
            *out = (cw_strategy)i;
            return CW_OK;
        }
    return CW_ERR_INVALID_ARGUMENT;
}

static int validate(const cw_wait_options *o) {
    if ((unsigned)o->strategy >= CW_STRATEGY_COUNT || (o->flags & ~(unsigned)CW_WAIT_FLAGS_ALL_) ||
        o->timeout_us < 0 || o->check_interval_us > CW_CHECK_INTERVAL_US_MAX ||
        o->spin_us > CW_SPIN_US_MAX)
        return CW_ERR_INVALID_ARGUMENT;
    /* Reserved fields must be zero, so that a later release can give them a
     * meaning whose zero value is today's behaviour. */
    for (unsigned i = 0; i < sizeof o->reserved / sizeof o->reserved[0]; ++i)
        if (o->reserved[i] != 0)
            return CW_ERR_INVALID_ARGUMENT;
    if (o->flags & CW_WAIT_INTERRUPT_FD ? o->interrupt_fd < 0 : o->interrupt_fd != 0)
        return CW_ERR_INVALID_ARGUMENT;
    /* A caller's parker sleeps as the caller made it: cw cannot make it
     * look at a descriptor. */
    if ((o->flags & (CW_WAIT_INTERRUPT_FD | CW_WAIT_POLL)) == CW_WAIT_INTERRUPT_FD && o->parker)
        return CW_ERR_UNSUPPORTED;
    return CW_OK;
}

cw__check_schedule cw__plan_checks(uint32_t check_interval_us) {
    uint64_t first =
        (uint64_t)(check_interval_us ? check_interval_us : CW_CHECK_INTERVAL_US_DEFAULT) * 1000u;
    cw__check_schedule s = {first, first, check_interval_us == 0};
    return s;
}

uint64_t cw__plan_first_check_ns(const cw__check_schedule *s, uint64_t expected_ns, bool fire) {
    if (fire) {
        cw__stat_add(CW__STAT_UNCHECKED, 1);
        return CW_DEADLINE_NONE;
    }
    if (!s->by_expected || expected_ns <= s->first_ns / CW__CHECK_EXPECTED_FACTOR)
        return s->first_ns;
    cw__stat_add(CW__STAT_DEFERRED, 1);
    uint64_t later = expected_ns < CW__CHECK_EXPECTED_MAX_NS / CW__CHECK_EXPECTED_FACTOR
                         ? expected_ns * CW__CHECK_EXPECTED_FACTOR
                         : CW__CHECK_EXPECTED_MAX_NS;
    return later > s->first_ns ? later : s->first_ns;
}

int cw__plan_make(const cw_wait_options *options, cw__plan *p) {
    static const cw_wait_options defaults = {0};
    const cw_wait_options *o = options ? options : &defaults;
    int rc = validate(o);
    if (rc != CW_OK)
        return rc;
    const cw__strategy_row *row = cw__strategy_row_of(o->strategy);
    p->row = row;
    p->flags = o->flags;
    /* A poll looks once and never reaches the strategy's wait. */
    p->bare_block = row->method == CW__BLOCK && o->timeout_us == 0 && !(o->flags & CW_WAIT_POLL);
    /* Only backoff-poll and the strategies that keep estimates time the wait. */
    p->start_ns = row->estimates || row->method == CW__BACKOFF ? cw_now_ns() : 0;
    p->deadline_ns = o->timeout_us > 0 && (uint64_t)o->timeout_us < CW_DEADLINE_NONE / 1000u
                         ? cw_deadline_after_ns((uint64_t)o->timeout_us * 1000u)
                         : CW_DEADLINE_NONE;
    p->checks = cw__plan_checks(o->check_interval_us);
    p->spin_ns = row->spin == CW__SPIN_BUDGET
                     ? (uint64_t)(o->spin_us ? o->spin_us : CW_SPIN_US_DEFAULT) * 1000u
                     : 0;
    p->spin_cap_ns = (uint64_t)(o->spin_us ? o->spin_us : CW_AUTO_SPIN_US_CAP) * 1000u;
    p->queue_key = 0;
    p->expected_ns = 0;
    p->driver = NULL;
    bool interruptible = (o->flags & (CW_WAIT_INTERRUPT_FD | CW_WAIT_POLL)) == CW_WAIT_INTERRUPT_FD;
    cw__interrupt_parker_init(&p->sleeper, interruptible ? o->interrupt_fd : -1);
    p->parker = o->parker ? o->parker : &p->sleeper.futex.parker;
    return CW_OK;
}

cw__poll_steps cw__poll_steps_of(const cw__plan *p, uint64_t early, unsigned overshoot_shift) {
    cw__poll_steps s = {.start = p->start_ns,
                        .expected = p->expected_ns,
                        .longest = p->checks.first_ns,
                        .early = early,
                        .least = CW__BACKOFF_FLOOR_NS,
                        .overshoot_shift = overshoot_shift,
                        .step = 1000,
                        .shortest = 1000};
    return s;
}

uint64_t cw__poll_steps_next(cw__poll_steps *s, uint64_t now, uint64_t deadline) {
    uint64_t elapsed = now - s->start, d;
    s->past_expected = !(s->expected > elapsed + s->early + CW__MICRODELAY_SPIN_NS);
    if (!s->past_expected) {
        /* Sleep through the expected rest, waking `early` before it, but
         * never longer than the time waited so far (or `least`): an
         * estimate that is far too long (a first launch that compiled the
         * kernel) then costs a few extra polls, not a late answer. */
        d = s->expected - elapsed - s->early;
        uint64_t cap = elapsed > s->least ? elapsed : s->least;
        if (d > cap)
            d = cap;
    } else {
        /* Past the estimate (or none): poll at growing intervals. */
        uint64_t cap = elapsed >> s->overshoot_shift;
        if (s->fine && elapsed < s->fine_until && cap > s->fine)
            cap = s->fine;
        if (cap < s->shortest)
            cap = s->shortest;
        d = s->step < cap ? s->step : cap;
        s->step = d * 2u;
    }
    /* With the default check interval the hybrid spaces its polls past
     * the interval as the callback waits space their checks: by at most
     * the time waited so far (cw__plan_checks_grow), so a 1 s wait makes a
     * few polls there, not one every 16 ms. */
    uint64_t longest = s->longest;
    if (s->grow_longest) {
        uint64_t w = elapsed < CW__CHECK_EXPECTED_MAX_NS ? elapsed : CW__CHECK_EXPECTED_MAX_NS;
        if (w > longest)
            longest = w;
    }
    if (d > longest)
        d = longest;
    if (d > deadline - now)
        d = deadline - now;
    return d;
}

void cw__poll_steps_hybrid(const cw__plan *p, cw__poll_steps *s) {
    uint64_t least = s->expected >> CW__LATE_LEAST_SHIFT;
    if (least > s->least)
        s->least = least;
    s->grow_longest = p->checks.by_expected;
}

void cw__poll_steps_fine(cw__poll_steps *s, uint64_t fine_ns, uint64_t early_ns) {
    if (!fine_ns || !s->expected)
        return;
    s->fine = fine_ns;
    s->fine_until = s->expected + (s->expected >> CW__LATE_FINE_WINDOW_SHIFT);
    /* The fine polls begin where the sleep toward the end wakes: early
     * enough that the ends' spread and the sleep's own overshoot do not
     * outrun it, and at the fine step at once, not doubling from 1 us. */
    if (s->early < early_ns)
        s->early = early_ns;
    s->step = fine_ns;
    if (s->shortest > fine_ns)
        s->shortest = fine_ns;
}
