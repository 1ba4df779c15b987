// SPDX-License-Identifier: MIT
//! The executor-agnostic futures: completion, failure status, wait-all and
//! wait-any, no thread per wait, and a future dropped before completion
//! cancels its watch and is never woken. The tests of this file share one
//! notifier, so they take turns (its pending count is checked).

use crate::cl::{block_on, counting_waker, threads, Host};
use cw_opencl::{future, Error};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn completes_and_fails_with_status() {
    let _s = serial();
    let host = Host::new();
    let gate = host.user_event();
    let marker = host.marker_after(&gate);
    let fut = future::wait(marker.as_ref());
    drop(marker); // cw holds its own reference while it watches
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(5));
            gate.set(0);
        });
        assert_eq!(block_on(fut), Ok(()));
    });
    let ev = host.user_event();
    let fut = future::wait(ev.as_ref());
    ev.set(-11);
    // No callback fires for a failed command on PoCL: cw's status check
    // (16 ms by default) finds it.
    assert_eq!(block_on(fut), Err(Error::CommandFailed { status: -11 }));
    let null = unsafe { cw_opencl::EventRef::from_raw(std::ptr::null_mut()) };
    assert_eq!(block_on(future::wait(null)), Err(Error::InvalidArgument));
}

#[test]
fn many_waits_one_thread() {
    let _s = serial();
    let host = Host::new();
    // Start the helper thread first.
    let warm = host.user_event();
    warm.set(0);
    block_on(future::wait(warm.as_ref())).unwrap();
    let before = threads();
    let events: Vec<_> = (0..300).map(|_| host.user_event()).collect();
    let futs: Vec<_> = events.iter().map(|e| future::wait(e.as_ref())).collect();
    assert_eq!(futs[0].notifier_pending(), 300);
    // The other tests of this binary start and end threads meanwhile; a
    // thread per wait would add 300.
    let now = threads();
    assert!(
        now <= before + 4,
        "{} threads, {} before the waits",
        now,
        before
    );
    let all = future::wait_all(&events.iter().map(|e| e.as_ref()).collect::<Vec<_>>());
    thread::scope(|s| {
        s.spawn(|| {
            for e in &events {
                e.set(0);
            }
        });
        for f in futs {
            assert_eq!(block_on(f), Ok(()));
        }
        assert_eq!(block_on(all), Ok(()));
    });
}

#[test]
fn wait_all_and_any() {
    let _s = serial();
    let host = Host::new();
    let evs: Vec<_> = (0..3).map(|_| host.user_event()).collect();
    let refs: Vec<_> = evs.iter().map(|e| e.as_ref()).collect();
    let any = future::wait_any(&refs);
    let all = future::wait_all(&refs);
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(5));
            evs[2].set(0);
        });
        assert_eq!(block_on(any), Ok(2));
    });
    evs[0].set(0);
    evs[1].set(-4);
    let e = block_on(all).unwrap_err();
    assert_eq!(e.error, Error::CommandFailed { status: -4 });
    assert_eq!(e.statuses, vec![0, -4, 0]);
    let e = block_on(future::wait_any(&refs[1..2])).unwrap_err();
    assert_eq!(
        (e.index, e.error),
        (Some(0), Error::CommandFailed { status: -4 })
    );
    assert_eq!(
        block_on(future::wait_any(&[])).unwrap_err().error,
        Error::InvalidArgument
    );
}

#[test]
fn dropped_future_cancels_and_is_never_woken() {
    let _s = serial();
    let host = Host::new();
    let ev = host.user_event();
    let (count, waker) = counting_waker();
    let mut dropped = future::wait(ev.as_ref());
    let base = dropped.notifier_pending() - 1;
    assert!(Pin::new(&mut dropped)
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let mut kept = future::wait(ev.as_ref());
    let (kept_count, kept_waker) = counting_waker();
    assert!(Pin::new(&mut kept)
        .poll(&mut Context::from_waker(&kept_waker))
        .is_pending());
    assert_eq!(kept.notifier_pending(), base + 2);
    drop(dropped);
    assert_eq!(
        kept.notifier_pending(),
        base + 1,
        "the dropped future's watch is pending"
    );
    ev.set(0);
    // The kept future on the same event is woken: the drain happened.
    for _ in 0..500 {
        if kept_count.0.load(Ordering::SeqCst) > 0 {
            break;
        }
        thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(kept_count.0.load(Ordering::SeqCst), 1);
    assert_eq!(
        Pin::new(&mut kept).poll(&mut Context::from_waker(&kept_waker)),
        Poll::Ready(Ok(()))
    );
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        0,
        "a dropped future was woken"
    );
    assert_eq!(kept.notifier_pending(), base);
}
