// SPDX-License-Identifier: MIT
//! The tokio futures: completion and failure on both runtimes, 1,000
//! concurrent waits with no thread per wait, dropping before completion,
//! and a runtime shut down under a pending wait. The tests of this file
//! share one notifier, so they take turns.

use crate::cl::{counting_waker, threads, Host};
use cw_opencl::Error;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::task::Context;
use std::thread;
use std::time::Duration;
use tokio::runtime::{Builder, Runtime};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn current() -> Runtime {
    Builder::new_current_thread().enable_io().build().unwrap()
}

fn multi() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .build()
        .unwrap()
}

#[test]
fn completes_and_fails_on_both_runtimes() {
    let _s = serial();
    let host = Host::new();
    for rt in [current(), multi()] {
        let gate = host.user_event();
        let marker = host.marker_after(&gate);
        let fut = cw_opencl::tokio::wait(marker.as_ref());
        thread::scope(|s| {
            s.spawn(|| {
                thread::sleep(Duration::from_millis(5));
                gate.set(0);
            });
            assert_eq!(rt.block_on(fut), Ok(()));
        });
        let ev = host.user_event();
        let fut = cw_opencl::tokio::wait(ev.as_ref());
        ev.set(-21);
        assert_eq!(rt.block_on(fut), Err(Error::CommandFailed { status: -21 }));
    }
}

#[test]
fn a_thousand_waits_without_a_thread_each() {
    let _s = serial();
    let host = Host::new();
    let rt = multi();
    let events: Vec<_> = (0..1000).map(|_| host.user_event()).collect();
    let before = threads();
    let tasks: Vec<_> = events
        .iter()
        .map(|e| rt.spawn(cw_opencl::tokio::wait(e.as_ref())))
        .collect();
    // Let every task poll once (and the draining task start).
    thread::sleep(Duration::from_millis(100));
    // The other tests of this binary start and end threads meanwhile; a
    // thread per wait would add 1,000.
    let now = threads();
    assert!(
        now <= before + 4,
        "{} threads, {} before the waits",
        now,
        before
    );
    let refs: Vec<_> = events.iter().map(|e| e.as_ref()).collect();
    let any = cw_opencl::tokio::wait_any(&refs);
    let all = cw_opencl::tokio::wait_all(&refs);
    for e in &events {
        e.set(0);
    }
    rt.block_on(async {
        for t in tasks {
            assert_eq!(t.await.unwrap(), Ok(()));
        }
        assert_eq!(any.await, Ok(0));
        assert_eq!(all.await, Ok(()));
    });
}

#[test]
fn dropped_future_cancels_and_is_never_woken() {
    let _s = serial();
    let host = Host::new();
    let rt = current();
    let _in_rt = rt.enter();
    let ev = host.user_event();
    let (count, waker) = counting_waker();
    let mut dropped = cw_opencl::tokio::wait(ev.as_ref());
    let base = dropped.notifier_pending() - 1;
    assert!(Pin::new(&mut dropped)
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let kept = cw_opencl::tokio::wait(ev.as_ref());
    drop(dropped);
    assert_eq!(
        kept.notifier_pending(),
        base + 1,
        "the dropped future's watch is pending"
    );
    ev.set(0);
    assert_eq!(rt.block_on(kept), Ok(()));
    // The draining task ran and ended; nothing woke the dropped future.
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        0,
        "a dropped future was woken"
    );
    let probe = cw_opencl::tokio::wait(ev.as_ref());
    assert_eq!(probe.notifier_pending(), base + 1);
    assert_eq!(rt.block_on(probe), Ok(()));
}

#[test]
fn survives_its_runtime_shutting_down() {
    let _s = serial();
    let host = Host::new();
    let ev = host.user_event();
    let mut fut = cw_opencl::tokio::wait(ev.as_ref());
    let first = current();
    let (count, waker) = counting_waker();
    {
        let _g = first.enter();
        assert!(Pin::new(&mut fut)
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        // Let the draining task start on `first`.
        first.block_on(async {
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
        });
    }
    drop(first); // drops the draining task: the pending future is woken
    assert_eq!(count.0.load(Ordering::SeqCst), 1);
    ev.set(0);
    let second = current();
    assert_eq!(second.block_on(fut), Ok(()));
}

#[test]
fn a_runtime_without_io_ends_the_wait_with_an_error() {
    let _s = serial();
    let host = Host::new();
    let ev = host.user_event();
    let rt = Builder::new_current_thread().build().unwrap();
    let r = rt.block_on(cw_opencl::tokio::wait(ev.as_ref()));
    assert_eq!(r, Err(Error::NoResources));
    // The next wait, on a runtime with I/O, is served.
    ev.set(0);
    assert_eq!(
        current().block_on(cw_opencl::tokio::wait(ev.as_ref())),
        Ok(())
    );
}
