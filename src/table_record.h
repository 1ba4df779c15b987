/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.1 (internal): the event table's record, shared by table.c (the
 * table, subscriptions, looks) and table_record.c (spares and teardown)
 * only.
 */
#ifndef CW_TABLE_RECORD_H
#define CW_TABLE_RECORD_H

#include <CL/cl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base.h"
#include "completion.h"
#include "driver.h"

/*
 * One record per event that cw has registered a CL_COMPLETE callback on.
 * OpenCL cannot unregister a callback, so registering one per wait would
 * grow the driver's list with every timed-out wait; instead every wait,
 * wait-any and notifier watch on the event subscribes its own completion's
 * token to the record, and the record's one callback signals them all.
 *
 * The callback holds the token of the record's completion (`fired`), never a
 * pointer: it lands through the completion pool, whose watcher is the
 * record's, and the watcher's wake fans the signal out. A record that was
 * torn down before its callback came (docs/design.md, "Failed commands")
 * leaves a stale token behind, which touches nothing.
 *
 * Lifetime: a record is in the table from its first subscription until
 * - a status read sees the command finished: any wait or watch on the event
 *   (cw__table_forget; the callback makes every subscriber read), or a
 *   sweep, which reads the status of records nobody waits on whenever their
 *   number has doubled, so a failed command's record goes even when no wait
 *   is left to see the failure (docs/design.md, "Failed commands").
 *   Only the blocking waits sweep: they cannot run inside an OpenCL callback
 *   (blocking there is undefined), and a sweep there could read the status
 *   of the very event whose callback is running ("Locks and OpenCL" in
 *   docs/design.md); the notifier, which callbacks may call, never sweeps,
 * - or the user drops it (cw_event_forget): the only way for an event that
 *   will never finish.
 * A record whose callback ran stays until then (`done`), so that a wait that
 * comes after the callback and before the status read joins it instead of
 * registering a second callback.
 * It holds a reference on the event meanwhile, so the event's address cannot
 * be reused by a new event while the record is keyed on it. Whoever takes it
 * out of the table owns its teardown, unless a sweep is reading it (`pins`,
 * base.h): then the last sweep to let go does it. Teardown never runs inside the
 * driver's callback: releasing `fired` there would wait for that very
 * callback.
 *
 * Locks: `table_lock` guards the table and every record's fields but
 * `event`, `fired` and `watcher`, which are set before it is published. No
 * OpenCL call and no completion lock is ever taken under it (docs/design.md,
 * "Locks and OpenCL").
 */
/* Subscribers a record holds without an allocation: most events have one
 * waiter, and a wait-any round or a notifier watch adds one more. */
#define CW__RECORD_INLINE_SUBS 2u

typedef struct cw__record {
    cw__watcher watcher; /* of `fired`: fans the callback's signal out */
    cl_event event;      /* retained while the record lives */
    cw__completion *fired;
    uintptr_t *subs; /* subscribed completion tokens: `one` while they fit */
    uint32_t nsubs, cap;
    uintptr_t one[CW__RECORD_INLINE_SUBS];
    cw__pins pins;       /* sweeps reading the event's status outside the lock */
    bool done;           /* the callback ran: later subscribers are signalled at once */
    cw__driver *measure; /* seen finished at seen_ns before the callback: give it the lateness */
    uint64_t seen_ns, running_ns;
    struct cw__record *next; /* table chain, then a teardown list */
    cw__linger linger;       /* put off for teardown until `fired` settles */
} cw__record;

/* A torn-down record for the next first subscriber, or NULL (under the
 * table's lock: pops never race). */
cw__record *cw__record_spare_pop(void);
/* Tear a record down, or a list of them (linked by `next`): outside every
 * lock, on a thread that is not inside the event's callback. */
void cw__record_tear_down(cw__record *r);
void cw__record_tear_down_all(cw__record *r);
/* Put a list of finished records (linked by `next`) off for a later call. */
void cw__record_defer_all(cw__record *first);
/* Tear down the records put off whose callback's thread is done with them
 * (all of them, waiting, with `wait`). */
void cw__record_run_deferred(bool wait);

#endif
