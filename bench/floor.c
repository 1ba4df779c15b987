/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: the floor under any wait that sleeps, measured in the child so it
 * shares the config's pinning. Two threads pass one wake-up back and forth
 * through cw's own futex parkers: A unparks B and parks; B, woken, unparks A
 * and parks again. A round trip is two wake-to-run latencies, so half of it
 * is the one-way figure a sleeping waiter cannot beat.
 *
 * The child takes the floor in slices, one before each cell and one after
 * the last, so that it sees the same moments of a shared machine's load as
 * the waits it is compared with.
 */
#include <pthread.h>
#include <time.h>

#include "bench.h"

typedef struct pingpong {
    cw_futex_parker a, b;
    unsigned trips;
} pingpong;

static void *partner(void *arg) {
    pingpong *pp = arg;
    for (unsigned i = 0; i < pp->trips; ++i) {
        cw_park(&pp->b.parker, CW_DEADLINE_NONE);
        cw_unpark(&pp->a.parker);
    }
    return NULL;
}

int floor_sample(unsigned trips, double *one_way_us) {
    /* Both parkers outlive the partner thread (joined below), so an unpark
     * can never touch a parker that is gone. */
    pingpong pp;
    cw_futex_parker_init(&pp.a);
    cw_futex_parker_init(&pp.b);
    pp.trips = FLOOR_WARMUP_TRIPS + trips;
    pthread_t t;
    if (pthread_create(&t, NULL, partner, &pp) != 0)
        return -1;
    for (unsigned i = 0; i < pp.trips; ++i) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cw_unpark(&pp.b.parker);
        cw_park(&pp.a.parker, CW_DEADLINE_NONE);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (i >= FLOOR_WARMUP_TRIPS)
            one_way_us[i - FLOOR_WARMUP_TRIPS] = (double)(ts_ns(&t1) - ts_ns(&t0)) / 2e3;
    }
    pthread_join(t, NULL);
    return 0;
}
