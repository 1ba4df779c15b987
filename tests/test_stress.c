/* SPDX-License-Identifier: MIT */
/*
 * Stress: completions signalled from foreign threads while their waiters
 * sometimes time out and abandon them, on one CPU and on all CPUs. Nothing is
 * timed; the books must balance exactly:
 *   every successful signal is observed once by its waiter (by the wait, or
 *   by the release that follows a timeout), every refused signal belongs to a
 *   completion abandoned before anyone signalled it, no second signal of a
 *   token ever succeeds, and the pool ends empty.
 * Build with -DCW_INJECT_DELAYS=ON to widen every window of the protocol
 * (tests/run-tests.sh does, under the sanitizers).
 *
 * CW_STRESS_COMPLETIONS sets the completions per configuration (default
 * 1,000,000); set it higher for a long local run.
 */
#include "harness.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "clfixture.h"
#include "clshim.h"
#include "completion.h"
#include "cw.h"
#include "relax.h"

enum { WAITERS = 4, SIGNALLERS = 2, BATCH = 8 };

static unsigned long completions_per_config(void) {
    const char *s = getenv("CW_STRESS_COMPLETIONS");
    unsigned long n = s ? strtoul(s, NULL, 10) : 0;
    return n ? n : 1000000ul;
}

/* A bounded MPMC queue of tokens; test plumbing, not the protocol under test. */
struct queue {
    pthread_mutex_t m;
    pthread_cond_t not_empty;
    uintptr_t buf[1024];
    size_t head, count;
    bool closed;
};

static void queue_push(struct queue *q, uintptr_t token) {
    pthread_mutex_lock(&q->m);
    while (q->count == sizeof q->buf / sizeof q->buf[0]) {
        /* Full: signallers are behind. Let them run (one CPU). */
        pthread_mutex_unlock(&q->m);
        sched_yield();
        pthread_mutex_lock(&q->m);
    }
    q->buf[(q->head + q->count++) % (sizeof q->buf / sizeof q->buf[0])] = token;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->m);
}

static bool queue_pop(struct queue *q, uintptr_t *token) {
    pthread_mutex_lock(&q->m);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->m);
    bool ok = q->count > 0;
    if (ok) {
        *token = q->buf[q->head];
        q->head = (q->head + 1) % (sizeof q->buf / sizeof q->buf[0]);
        q->count--;
    }
    pthread_mutex_unlock(&q->m);
    return ok;
}

static int32_t status_of(uintptr_t token) {
    return (int32_t)(token & 0x3fffffff);
}

struct books {
    struct queue q;
    unsigned long per_waiter;
    atomic_ulong signalled, refused, duplicates;       /* by signallers */
    atomic_ulong woken, landed_late, abandoned, wrong; /* by waiters */
};

static uint32_t next_random(uint32_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static void *signaller(void *arg) {
    struct books *b = arg;
    uintptr_t token;
    unsigned long ok = 0, refused = 0, dup = 0;
    uint32_t rnd = (uint32_t)(uintptr_t)&token | 1u;
    while (queue_pop(&b->q, &token)) {
        /* A random pause of up to ~10 µs lands the signal anywhere inside
         * the waiters' 0-20 µs deadlines. */
        for (uint32_t i = 0, n = next_random(&rnd) % 512; i < n; ++i)
            cw__relax();
        if (cw__completion_signal_token(token, status_of(token)))
            ++ok;
        else
            ++refused;
        /* Exactly once: a second signal of the same token never succeeds. */
        dup += cw__completion_signal_token(token, 1);
    }
    atomic_fetch_add(&b->signalled, ok);
    atomic_fetch_add(&b->refused, refused);
    atomic_fetch_add(&b->duplicates, dup);
    return NULL;
}

static void *waiter(void *arg) {
    struct books *b = arg;
    static atomic_uint seed = 1;
    uint32_t rnd = atomic_fetch_add(&seed, 0x9e3779b9u) | 1u;
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    unsigned long woken = 0, late = 0, abandoned = 0, wrong = 0;
    for (unsigned long done = 0; done < b->per_waiter; done += BATCH) {
        cw__completion *c[BATCH];
        uintptr_t token[BATCH];
        for (int i = 0; i < BATCH; ++i) {
            if (cw__completion_acquire((cw__completion_kind)(next_random(&rnd) % 4), &c[i]) !=
                CW_OK)
                abort(); /* the pool cannot run dry here: a few dozen are out */
            token[i] = cw__completion_token(c[i]);
            queue_push(&b->q, token[i]);
        }
        for (int i = 0; i < BATCH; ++i) {
            /* One wait in four has a deadline of 0 to 20 µs and is likely
             * to give up, racing the signaller for the slot. */
            uint32_t r = next_random(&rnd);
            uint64_t deadline =
                r % 4 == 0 ? cw_deadline_after_ns((r >> 8) % 20000) : CW_DEADLINE_NONE;
            int rc = cw__completion_wait(c[i], &fp.parker, deadline);
            /* The status comes from the release: a signal may land as the
             * waiter gives up, and after the release the slot may already
             * serve another waiter. */
            int32_t status = -1;
            bool landed = cw__completion_release(c[i], &status);
            if (landed && status != status_of(token[i]))
                ++wrong;
            if (rc == CW_OK) {
                ++woken;
                wrong += !landed;
            } else if (landed) {
                ++late; /* signalled as we gave up: still observed, once */
            } else {
                ++abandoned;
            }
        }
    }
    atomic_fetch_add(&b->woken, woken);
    atomic_fetch_add(&b->landed_late, late);
    atomic_fetch_add(&b->abandoned, abandoned);
    atomic_fetch_add(&b->wrong, wrong);
    return NULL;
}

static void run_books(const char *name) {
    struct books *b = calloc(1, sizeof *b);
    assert_non_null(b);
    pthread_mutex_init(&b->q.m, NULL);
    pthread_cond_init(&b->q.not_empty, NULL);
    unsigned long total = completions_per_config();
    b->per_waiter = (total + WAITERS * BATCH - 1) / (WAITERS * BATCH) * BATCH;
    total = b->per_waiter * WAITERS;

    pthread_t s[SIGNALLERS], w[WAITERS];
    for (int i = 0; i < SIGNALLERS; ++i)
        s[i] = cw_test_spawn(signaller, b);
    for (int i = 0; i < WAITERS; ++i)
        w[i] = cw_test_spawn(waiter, b);
    for (int i = 0; i < WAITERS; ++i)
        cw_test_join(w[i]);
    pthread_mutex_lock(&b->q.m);
    b->q.closed = true;
    pthread_cond_broadcast(&b->q.not_empty);
    pthread_mutex_unlock(&b->q.m);
    for (int i = 0; i < SIGNALLERS; ++i)
        cw_test_join(s[i]);

    unsigned long signalled = atomic_load(&b->signalled), refused = atomic_load(&b->refused);
    unsigned long woken = atomic_load(&b->woken), late = atomic_load(&b->landed_late);
    unsigned long abandoned = atomic_load(&b->abandoned);
    print_message("%s: %lu completions: %lu signalled (%lu woke the waiter, %lu landed as it "
                  "gave up), %lu abandoned unsignalled, %lu late signals refused\n",
                  name, total, signalled, woken, late, abandoned, refused);
    assert_int_equal(signalled + refused, total);
    assert_int_equal(signalled, woken + late);
    assert_int_equal(refused, abandoned);
    assert_int_equal(atomic_load(&b->duplicates), 0);
    assert_int_equal(atomic_load(&b->wrong), 0);
    assert_int_equal(wait_completions(), 0);
    pthread_cond_destroy(&b->q.not_empty);
    pthread_mutex_destroy(&b->q.m);
    free(b);
}

static void foreign_signals_all_cpus(void **state) {
    (void)state;
    run_books("all CPUs");
}

static void foreign_signals_one_cpu(void **state) {
    (void)state;
    cpu_set_t old = cw_test_pin_one_cpu(); /* inherited by every thread it spawns */
    run_books("one CPU");
    cw_test_unpin(old);
}

/* The same race through OpenCL: cw_wait with a short timeout on user events
 * that another thread completes at a random moment, so the driver's callback
 * often runs after the waiter gave up and its slot went to the next wait.
 * One wait in four instead has no timeout and a callback of its own
 * (CW_WAIT_OWN_CALLBACK): its callback races the wait's own status reads.
 * Three in sixteen have no timeout but an interrupt descriptor
 * (CW_WAIT_INTERRUPT_FD), which the completer writes, then signals the
 * waiter (as a runtime's signal handler writes its descriptor), just before
 * or just after it completes the event: the interrupt races the callback's
 * wake-up (an interrupted wait whose notification is on its way takes it
 * first). One such wait in eight is completed only once it has returned,
 * which it must do interrupted: however loaded the machine, the interrupt
 * is seen. */
struct completer {
    struct queue q;
    int interrupt_fd; /* the pipe's write end; an event pushed with bit 0 set writes it */
    pthread_t waiter;
    atomic_bool returned; /* bit 1 set: the event is completed after the wait returned */
};

static void interrupt(const struct completer *c) {
    assert_int_equal(write(c->interrupt_fd, "x", 1), 1);
    assert_int_equal(pthread_kill(c->waiter, SIGUSR1), 0);
}

static void *complete_events(void *arg) {
    struct completer *c = arg;
    uintptr_t e;
    uint32_t rnd = 12345;
    while (queue_pop(&c->q, &e)) {
        bool interrupt_it = e & 1u, after = e & 2u, first = after || (next_random(&rnd) & 1u);
        cl_event ev = (cl_event)(e & ~(uintptr_t)3);
        /* 0 to ~50 µs: the same range as the waiter's timeouts. */
        for (uint32_t i = 0, n = next_random(&rnd) % 2000; i < n; ++i)
            cw__relax();
        if (interrupt_it && first) {
            interrupt(c);
            for (uint32_t i = 0, n = next_random(&rnd) % 2000; i < n; ++i)
                cw__relax();
            while (after && !atomic_load(&c->returned))
                sched_yield();
        }
        clSetUserEventStatus(ev, CL_COMPLETE);
        if (interrupt_it && !first)
            interrupt(c);
        clReleaseEvent(ev);
    }
    return NULL;
}

static void opencl_timeouts_race_callbacks(void **state) {
    (void)state;
    unsigned long n = completions_per_config() / 50;
    struct completer c = {0};
    int fds[2];
    assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    c.interrupt_fd = fds[1];
    c.waiter = pthread_self();
    /* No SA_RESTART: the waiter's futex wait returns EINTR. */
    struct sigaction sa = {.sa_handler = cw_test_on_signal}, old_sa;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old_sa), 0);
    pthread_mutex_init(&c.q.m, NULL);
    pthread_cond_init(&c.q.not_empty, NULL);
    pthread_t t = cw_test_spawn(complete_events, &c);
    unsigned long timeouts = 0, errors = 0, own = 0, interrupted = 0;
    uint32_t rnd = 777;
    for (unsigned long i = 0; i < n; ++i) {
        cl_int err;
        cl_event ev = clCreateUserEvent(host.context, &err);
        assert_int_equal(err, CL_SUCCESS);
        clRetainEvent(ev); /* the completer's reference */
        cw_strategy s = (next_random(&rnd) & 1) ? CW_STRATEGY_COOPERATIVE : CW_STRATEGY_PTHREAD;
        cw_wait_options o = {.strategy = s, .timeout_us = 1 + next_random(&rnd) % 50};
        uint32_t kind = next_random(&rnd) % 16;
        if (kind < 4) {
            o.timeout_us = 0;
            o.flags = CW_WAIT_OWN_CALLBACK;
            ++own;
        } else if (kind < 7) {
            o.strategy = CW_STRATEGY_COOPERATIVE;
            o.timeout_us = 0;
            o.flags = CW_WAIT_INTERRUPT_FD;
            o.interrupt_fd = fds[0];
        }
        bool after = (o.flags & CW_WAIT_INTERRUPT_FD) && next_random(&rnd) % 8 == 0;
        atomic_store(&c.returned, false);
        assert_int_equal((uintptr_t)ev & 3u, 0); /* the two low bits carry the flags */
        queue_push(&c.q,
                   (uintptr_t)ev | (o.flags & CW_WAIT_INTERRUPT_FD ? 1u : 0u) | (after ? 2u : 0u));
        int rc = cw_wait(ev, &o, NULL);
        atomic_store(&c.returned, true);
        if (after)
            assert_int_equal(rc, CW_ERR_INTERRUPTED);
        if (o.flags & CW_WAIT_INTERRUPT_FD) {
            /* The byte comes before or after the completion: wait for it,
             * so that it cannot interrupt the next such wait. */
            char b;
            while (read(fds[0], &b, 1) != 1)
                sched_yield();
        }
        if (rc == CW_ERR_TIMEOUT || rc == CW_ERR_INTERRUPTED) {
            timeouts += rc == CW_ERR_TIMEOUT;
            interrupted += rc == CW_ERR_INTERRUPTED;
            o.timeout_us = 0;
            o.flags = 0;
            o.interrupt_fd = 0;
            rc = cw_wait(ev, &o, NULL); /* the abandoned wait left nothing behind */
        }
        errors += rc != CW_OK;
        clReleaseEvent(ev);
    }
    pthread_mutex_lock(&c.q.m);
    c.q.closed = true;
    pthread_cond_broadcast(&c.q.not_empty);
    pthread_mutex_unlock(&c.q.m);
    cw_test_join(t);
    print_message("%lu user events, %lu waits timed out and were abandoned, %lu waited with a "
                  "callback of their own, %lu were interrupted\n",
                  n, timeouts, own, interrupted);
    close(fds[0]);
    close(fds[1]);
    assert_int_equal(sigaction(SIGUSR1, &old_sa, NULL), 0);
    assert_int_equal(errors, 0);
    assert_true(timeouts > 0); /* the race was exercised */
    assert_true(own > 0);
    assert_true(interrupted > 0);
    assert_int_equal(wait_completions(), 0);
}

/* Resident set size in KiB (from /proc/self/statm), 0 when unknown. */
static unsigned long rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (unsigned long)(sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * Timed-out waits, wait-any rounds and notifier watches, all on the same
 * events at once, round after round: at most one driver callback per event,
 * and memory that stays flat. Every round's events finish (one in eight
 * fails, which fires no callback on PoCL 3.1 or rusticl) and are released.
 */
enum { MIX_EVENTS = 32 };

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CW_TEST_HAS_ASAN 1
#endif
#endif
#ifndef CW_TEST_HAS_ASAN
#define CW_TEST_HAS_ASAN 0
#endif

struct mix {
    cl_event events[MIX_EVENTS];
    atomic_ulong waits;
    atomic_int stop;
    cw_notifier *notifier;
};

static void *mix_timed_waits(void *arg) {
    struct mix *m = arg;
    uint32_t rnd = 99;
    while (!atomic_load(&m->stop)) {
        cw_strategy s = (cw_strategy)(next_random(&rnd) % CW_STRATEGY_COUNT);
        if (s == CW_STRATEGY_POLL || s == CW_STRATEGY_BACKOFF_POLL)
            s = CW_STRATEGY_COOPERATIVE; /* polling registers nothing: not the point here */
        /* CW_WAIT_OWN_CALLBACK must change nothing for a wait with a timeout. */
        cw_wait_options o = {.strategy = s,
                             .flags = next_random(&rnd) % 2 ? CW_WAIT_OWN_CALLBACK : 0,
                             .timeout_us = 1 + next_random(&rnd) % 20};
        int rc = cw_wait(m->events[next_random(&rnd) % MIX_EVENTS], &o, NULL);
        assert_int_equal(rc, CW_ERR_TIMEOUT);
        atomic_fetch_add(&m->waits, 1);
    }
    return NULL;
}

static void *mix_wait_any(void *arg) {
    struct mix *m = arg;
    while (!atomic_load(&m->stop)) {
        cw_wait_options o = {.timeout_us = 30};
        size_t i;
        assert_int_equal(cw_wait_any(m->events, MIX_EVENTS, &o, &i, NULL), CW_ERR_TIMEOUT);
        atomic_fetch_add(&m->waits, 1);
    }
    return NULL;
}

static void mixed_waits_one_callback_per_event(void **state) {
    (void)state;
    unsigned long target = completions_per_config();
    struct mix m = {0};
    assert_int_equal(cw_notifier_create(1000, &m.notifier), CW_OK);
    unsigned long before = atomic_load(&clshim_callbacks_registered);
    unsigned long rss_start = 0, rss_peak = 0, events = 0, rounds = 0, results = 0;
    uint32_t rnd = 4242;
    while (atomic_load(&m.waits) < target) {
        for (unsigned i = 0; i < MIX_EVENTS; ++i)
            m.events[i] = user_event();
        events += MIX_EVENTS;
        atomic_store(&m.stop, 0);
        pthread_t a = cw_test_spawn(mix_timed_waits, &m), b = cw_test_spawn(mix_wait_any, &m);
        /* The notifier: every event watched a few times, watches cancelled
         * and drained, while the other threads time out on the same events. */
        for (unsigned k = 0; k < 4 * MIX_EVENTS; ++k) {
            uint64_t tag = next_random(&rnd) % MIX_EVENTS;
            assert_int_equal(cw_notifier_watch(m.notifier, m.events[tag], tag, NULL), CW_OK);
            atomic_fetch_add(&m.waits, 1);
            if (k % 3 == 0)
                cw_notifier_cancel(m.notifier, tag);
        }
        cw_test_sleep_us(2000);
        atomic_store(&m.stop, 1);
        cw_test_join(a);
        cw_test_join(b);
        for (unsigned i = 0; i < MIX_EVENTS; ++i)
            clSetUserEventStatus(m.events[i], i % 8 == 7 ? -5 : CL_COMPLETE);
        /* Everything watched is reported (or was cancelled). */
        cw_notifier_result r[64];
        struct pollfd p = {.fd = cw_notifier_fd(m.notifier), .events = POLLIN};
        while (cw_notifier_pending(m.notifier) > 0) {
            poll(&p, 1, 100);
            results += cw_notifier_drain(m.notifier, r, 64);
        }
        while (cw_notifier_drain(m.notifier, r, 64) > 0)
            ;
        for (unsigned i = 0; i < MIX_EVENTS; ++i)
            clReleaseEvent(m.events[i]);
        unsigned long rss = rss_kib();
        if (++rounds == 8)
            rss_start = rss; /* after the pools and the driver have warmed up */
        rss_peak = rss > rss_peak ? rss : rss_peak;
    }
    cw_notifier_destroy(m.notifier);
    unsigned long registered = atomic_load(&clshim_callbacks_registered) - before;
    size_t records = cw__table_records();
    print_message("%lu waits (timed out, wait-any, notifier) on %lu events in %lu rounds: "
                  "%lu callback registrations, %zu records left, %lu results; "
                  "RSS %lu KiB after 8 rounds, peak %lu KiB\n",
                  (unsigned long)atomic_load(&m.waits), events, rounds, registered, records,
                  results, rss_start, rss_peak);
    assert_true(registered <= events);
    assert_true(records <= 2 * MIX_EVENTS + 64); /* the failed ones wait for a sweep */
    assert_int_equal(cw__table_sweep(), 0);
#if defined(__SANITIZE_ADDRESS__) || CW_TEST_HAS_ASAN
    /* AddressSanitizer keeps freed memory in quarantine (256 MiB by default),
     * so RSS says nothing here; LeakSanitizer checks for leaks at exit. */
    (void)rss_start;
#else
    assert_true(rss_peak <= rss_start + 32 * 1024); /* flat: no growth with the waits */
#endif
    assert_int_equal(wait_completions(), 0);
}

static const struct CMUnitTest stress_tests[] = {
    cmocka_unit_test(foreign_signals_all_cpus),
    cmocka_unit_test(foreign_signals_one_cpu),
    cmocka_unit_test(opencl_timeouts_race_callbacks),
    cmocka_unit_test(mixed_waits_one_callback_per_event),
};

CW_TEST_MAIN(stress_tests, open_host, close_host)
