/* SPDX-License-Identifier: MIT */
/*
 * A model of cw's wake-up protocol (src/parker.c, src/cond.c,
 * src/completion.c), checked exhaustively with Spin:
 *
 *   one waiter:     cw__completion_wait with or without a deadline that may
 *                   fire at any moment, then cw__completion_release, then the
 *                   slot is recycled and the waiter's parker (on its stack)
 *                   is gone;
 *   one signaller:  cw__completion_signal_token (claim the ticket by CAS, take
 *                   the lock, publish, notify) arriving at any moment, or
 *                   twice (the second must be refused);
 *   two notify orders: wake after unlock (cw's default) and wake under the
 *                   lock (the comparison strategies).
 *
 * Checked: the signaller never touches the slot after it was recycled nor
 * the parker after the waiter returned (no use after free); a claimed signal
 * is always observed by the waiter, through the wait or the release (no lost
 * wake-up); the waiter always returns (no deadlock: Spin reports invalid end
 * states); at most one signal succeeds per generation.
 *
 * The spin lock is modelled as an atomic test-and-set that blocks while held
 * (spinning and yielding only change how long that takes, not what can
 * happen), and a futex wait as blocking until the word changes.
 */

#ifndef WAKE_LOCKED
#define WAKE_LOCKED 0
#endif

#define EMPTY  0
#define PARKED 1
#define TOKEN  2

#define OK      0
#define TIMEOUT 1

/* slot */
bit  armed = 1;       /* ticket's armed bit for the current generation */
bit  lock = 0;
bit  signalled = 0;
bit  recycled = 0;    /* given back to the pool: the signaller must not touch it */
/* the waiter's condition node and parker */
bit  queued = 0;
bit  notified = 0;
byte pstate = EMPTY;
bit  parker_gone = 0; /* the waiter returned: its stack parker no longer exists */
/* books */
byte claims = 0;      /* successful signals */
bit  observed = 0;    /* the waiter saw the signal (wait returned OK or release said so) */
bit  waiter_done = 0;
bit  signaller_done = 0;

inline spin_lock()   { atomic { lock == 0 -> lock = 1 } }
inline spin_unlock() { lock = 0 }

/* park(timed): returns OK once the token is consumed, TIMEOUT otherwise */
inline park(timed, rc) {
    atomic {
        if
        :: pstate == TOKEN -> pstate = EMPTY; rc = OK
        :: else -> pstate = PARKED; rc = 3
        fi
    }
    if
    :: rc == 3 ->
        if
        :: atomic { pstate == TOKEN -> pstate = EMPTY; rc = OK }
        :: timed -> atomic {
               /* the deadline passed: leave PARKED; a token that raced in is ours */
               if
               :: pstate == TOKEN -> rc = OK
               :: else -> rc = TIMEOUT
               fi;
               pstate = EMPTY
           }
        fi
    :: else -> skip
    fi
}

inline unpark() {
    atomic {
        assert(!parker_gone); /* the exchange writes the parker's word */
        pstate = TOKEN
    }
}

/* cw__cond_wait: called and returning with the lock held */
inline cond_wait(timed, rc) {
    queued = 1; notified = 0;
    spin_unlock();
    park(timed, rc);
    spin_lock();
    if
    :: !notified -> queued = 0          /* timed out: dequeue ourselves */
    :: notified && rc == TIMEOUT ->
        /* the notifier's unpark is on its way: take the token first */
        spin_unlock();
        park(0, rc);
        assert(rc == OK);
        spin_lock()
    :: notified && rc == OK -> skip
    fi
}

/* cw__completion_wait */
inline completion_wait(timed, rc) {
    if
    :: signalled -> rc = OK
    :: else ->
        spin_lock();
        rc = OK;
        do
        :: signalled -> break
        :: !signalled ->
            cond_wait(timed, rc);
            if
            :: rc == TIMEOUT && !signalled -> break
            :: else -> rc = OK
            fi
        od;
        spin_unlock()
    fi
}

proctype Waiter(bit timed) {
    byte rc;
    bit disarmed = 0;
    completion_wait(timed, rc);
    if
    :: rc == OK -> assert(signalled); observed = 1
    :: else -> skip
    fi;
    /* cw__completion_release */
    atomic { if :: armed -> armed = 0; disarmed = 1 :: else -> skip fi }
    if
    :: !disarmed ->
        /* a signaller claimed it: wait for the landing, then pass its lock */
        completion_wait(0, rc);
        assert(rc == OK && signalled);
        observed = 1;
        spin_lock();
        spin_unlock()
    :: else -> skip
    fi;
    recycled = 1;
    parker_gone = 1;
    waiter_done = 1
}

inline signal() {
    won = 0;
    wake = 0;
    atomic { if :: armed -> armed = 0; won = 1; claims++ :: else -> skip fi }
    if
    :: won ->
        assert(!recycled);
        spin_lock();
        assert(!recycled);
        signalled = 1;
        if
        :: queued -> queued = 0; notified = 1; wake = 1
        :: else -> skip
        fi;
        if
        :: WAKE_LOCKED ->
            if :: wake -> unpark() :: else -> skip fi;
            assert(!recycled);
            spin_unlock()
        :: else ->
            assert(!recycled);
            spin_unlock();
            /* after the unlock only the waiter's parker is touched */
            if :: wake -> unpark() :: else -> skip fi
        fi
    :: else -> skip
    fi
}

proctype Signaller(bit twice) {
    bit won, wake;
    signal();
    if
    :: twice -> signal()
    :: else -> skip
    fi;
    signaller_done = 1
}

init {
    bit timed, twice;
    if :: timed = 0 :: timed = 1 fi;
    if :: twice = 0 :: twice = 1 fi;
    atomic {
        run Waiter(timed);
        run Signaller(twice)
    }
    (waiter_done && signaller_done);
    assert(claims <= 1);            /* exactly once */
    assert(observed == claims);     /* a claimed signal is never lost */
    assert(timed || claims == 1)   /* an untimed wait returns only once signalled */
}
