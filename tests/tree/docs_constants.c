/* SPDX-License-Identifier: MIT */
/*
 * The values that docs_constants.py compares the documentation with, as the
 * code has them: the public constants, the internal ones of src/ headers (auto's
 * tunables are read from src/tunables.h by the script), and
 * what the code computes from them (the check schedule, the strategy the
 * default stands for, the timeout that means none). One "NAME VALUE" line
 * each; a name ending in _ns or _NS is in nanoseconds, one with _us or _US
 * in microseconds, any other is a plain number or a strategy name.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cw.h"
#include "driver.h"
#include "relax.h"
#include "strategy.h"

#define PRINT(name) printf("%s %" PRId64 "\n", #name, (int64_t)(name))

int main(void) {
    PRINT(CW_OK);
    PRINT(CW_ERR_INVALID_ARGUMENT);
    PRINT(CW_ERR_INVALID_EVENT);
    PRINT(CW_ERR_TIMEOUT);
    PRINT(CW_ERR_COMMAND_FAILED);
    PRINT(CW_ERR_OPENCL);
    PRINT(CW_ERR_NO_MEMORY);
    PRINT(CW_ERR_UNSUPPORTED);
    PRINT(CW_ERR_NO_RESOURCES);
    PRINT(CW_ERR_INTERRUPTED);
    PRINT(CW_STRATEGY_DEFAULT);
    PRINT(CW_STRATEGY_COUNT);
    PRINT(CW_WAIT_NO_FLUSH);
    PRINT(CW_WAIT_OWN_CALLBACK);
    PRINT(CW_WAIT_POLL);
    PRINT(CW_WAIT_LATENCY);
    PRINT(CW_WAIT_INTERRUPT_FD);
    PRINT(CW_INTERRUPT_LOOK_US);
    PRINT(CW_SPIN_US_DEFAULT);
    PRINT(CW_SPIN_US_MAX);
    PRINT(CW_SPIN_PARK_YIELDS);
    PRINT(CW_AUTO_SPIN_US_CAP);
    PRINT(CW_CHECK_INTERVAL_US_DEFAULT);
    PRINT(CW_CHECK_INTERVAL_US_MAX);
    PRINT(CW_CHECK_INTERVAL_GROWTH);
    PRINT(CW_WAIT_MANY_MAX);
    PRINT(CW_STATS_LATENCY_BUCKETS);
    PRINT(CW__MICRODELAY_SPIN_NS);
    PRINT(CW__BACKOFF_ROUNDS);
    PRINT(CW__CHECK_EXPECTED_FACTOR);
    PRINT(CW__CHECK_EXPECTED_MAX_NS);

    /* The first check of a default wait expected to be long, and of one
     * expected longer than the cap, as the plan computes them. */
    cw__check_schedule d = cw__plan_checks(0);
    printf("check_expected_100ms_ns %" PRIu64 "\n", cw__plan_first_check_ns(&d, 100000000u, false));
    printf("check_expected_cap_ns %" PRIu64 "\n",
           cw__plan_first_check_ns(&d, 1000000000000ull, false));

    /* The check schedule of a wait with the default interval: the first
     * interval, the one after the first check, and the one it settles on. */
    cw__check_schedule s = cw__plan_checks(0);
    printf("check_first_ns %" PRIu64 "\n", s.interval_ns);
    cw__plan_checks_grow(&s, 0);
    printf("check_then_ns %" PRIu64 "\n", s.interval_ns);
    for (int i = 0; i < 64; ++i)
        cw__plan_checks_grow(&s, 0);
    printf("check_settled_ns %" PRIu64 "\n", s.interval_ns);

    /* The strategy whose row CW_STRATEGY_DEFAULT has. */
    for (int i = 1; i < CW_STRATEGY_COUNT; ++i)
        if (cw__strategy_row_of((cw_strategy)i) == cw__strategy_row_of(CW_STRATEGY_DEFAULT))
            printf("default_strategy %s\n", cw_strategy_name((cw_strategy)i));

    /* The smallest timeout_us that means no timeout whatever the clock
     * reads; the ones just below it mean none only once now + timeout
     * overflows. Checked against the plan's deadline, not just computed. */
    uint64_t none_from = CW_DEADLINE_NONE / 1000u;
    cw_wait_options o = {.timeout_us = (int64_t)none_from};
    cw_wait_options half = {.timeout_us = (int64_t)(none_from / 2u)};
    cw__plan po, ph;
    if (cw__plan_make(&o, &po) != CW_OK || cw__plan_make(&half, &ph) != CW_OK ||
        po.deadline_ns != CW_DEADLINE_NONE || ph.deadline_ns == CW_DEADLINE_NONE) {
        fprintf(stderr,
                "docs_constants: the plan's deadline does not switch to none at %" PRIu64 "\n",
                none_from);
        return 1;
    }
    printf("timeout_none_from_us %" PRIu64 "\n", none_from);
    return 0;
}
