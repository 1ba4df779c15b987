// SPDX-License-Identifier: MIT
//! The blocking API on a real OpenCL platform (PoCL in CI): completion,
//! timeouts, failed commands with their status, every strategy, wait-all
//! and wait-any, bad input.

use crate::cl::Host;
use cw_opencl::{wait, wait_all, wait_any, Error, EventRef, Flags, Strategy, WaitOptions};
use std::thread;
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn completed_event() {
    let host = Host::new();
    let ev = host.user_event();
    ev.set(0);
    assert_eq!(wait(ev.as_ref(), &WaitOptions::new()), Ok(()));
}

#[test]
fn timeout_then_completion() {
    let host = Host::new();
    let ev = host.user_event();
    let t = Instant::now();
    let r = wait(ev.as_ref(), &WaitOptions::new().timeout(ms(20)));
    assert!(t.elapsed() >= ms(20), "returned after {:?}", t.elapsed());
    match r {
        Err(Error::Timeout { status }) => assert!(status > 0, "status {}", status),
        other => panic!("expected a timeout, got {:?}", other),
    }
    ev.set(0);
    assert_eq!(
        wait(ev.as_ref(), &WaitOptions::new().timeout(ms(1000))),
        Ok(())
    );
}

#[test]
fn failed_command_keeps_its_status() {
    let host = Host::new();
    let ev = host.user_event();
    let e = ev.as_ref();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(ms(10));
            ev.set(-42);
        });
        let r = wait(e, &WaitOptions::new().check_interval(ms(2)));
        assert_eq!(r, Err(Error::CommandFailed { status: -42 }));
        let err = r.unwrap_err();
        assert_eq!(err.code(), cw_opencl_sys::CW_ERR_COMMAND_FAILED);
        assert_eq!(err.status(), Some(-42));
        assert!(err.to_string().contains("-42"), "{}", err);
    });
}

#[test]
fn every_strategy_waits_for_a_real_command() {
    let host = Host::new();
    for strategy in Strategy::all() {
        assert_eq!(strategy.name().parse::<Strategy>(), Ok(strategy));
        let gate = host.user_event();
        let marker = host.marker_after(&gate);
        let m = marker.as_ref();
        thread::scope(|s| {
            s.spawn(|| {
                thread::sleep(ms(5));
                gate.set(0);
            });
            let opts = WaitOptions::new().strategy(strategy);
            assert_eq!(wait(m, &opts), Ok(()), "strategy {}", strategy);
        });
    }
    assert_eq!(
        Strategy::all().count(),
        cw_opencl_sys::CW_STRATEGY_COUNT as usize
    );
}

#[test]
fn flags_and_options() {
    let host = Host::new();
    let ev = host.user_event();
    ev.set(0);
    let flags = Flags::NO_FLUSH | Flags::OWN_CALLBACK;
    assert!(flags.contains(Flags::NO_FLUSH));
    let opts = WaitOptions::new()
        .strategy(Strategy::SpinPark)
        .flags(flags)
        .spin(Duration::from_micros(50))
        .check_interval(ms(1));
    assert_eq!(wait(ev.as_ref(), &opts), Ok(()));
    let c = opts.to_c().unwrap();
    assert_eq!((c.flags, c.spin_us, c.check_interval_us), (3, 50, 1000));
    // A zero timeout, or POLL, looks once: an unset event times out at once.
    let unset = host.user_event();
    let look = WaitOptions::new().timeout(Duration::ZERO);
    assert_eq!(look.to_c().unwrap().flags, cw_opencl_sys::CW_WAIT_POLL);
    assert!(matches!(
        wait(unset.as_ref(), &look),
        Err(Error::Timeout { .. })
    ));
    let poll = WaitOptions::new().flags(Flags::POLL);
    assert!(matches!(
        wait(unset.as_ref(), &poll),
        Err(Error::Timeout { .. })
    ));
    unset.set(0);
    assert_eq!(wait(unset.as_ref(), &look), Ok(()));
    // Out of the library's ranges.
    let bad = WaitOptions::new().check_interval(Duration::from_secs(2));
    assert_eq!(wait(ev.as_ref(), &bad), Err(Error::InvalidArgument));
    let bad = WaitOptions::new().spin(Duration::from_secs(2));
    assert_eq!(wait(ev.as_ref(), &bad), Err(Error::InvalidArgument));
    assert_eq!("no-such".parse::<Strategy>(), Err(Error::InvalidArgument));
    // A NULL handle is refused before OpenCL sees it.
    let null = unsafe { EventRef::from_raw(std::ptr::null_mut()) };
    assert_eq!(wait(null, &WaitOptions::new()), Err(Error::InvalidArgument));
}

#[test]
fn latency_flag_is_accepted() {
    use cw_opencl_sys as sys;
    let host = Host::new();
    assert_eq!(Flags::LATENCY.bits(), sys::CW_WAIT_LATENCY);
    // It changes how auto waits, never what a wait returns: with the default
    // and auto strategies, and with one that ignores it, a completion is
    // Ok, a timeout a timeout, as without it.
    for strategy in [Strategy::Default, Strategy::Auto, Strategy::Blocking] {
        let ev = host.user_event();
        let opts = WaitOptions::new().strategy(strategy).flags(Flags::LATENCY);
        thread::scope(|s| {
            s.spawn(|| {
                thread::sleep(ms(2));
                ev.set(0);
            });
            assert_eq!(wait(ev.as_ref(), &opts), Ok(()), "{:?}", strategy);
        });
        let both = opts.flags(Flags::LATENCY | Flags::NO_FLUSH);
        assert_eq!(wait(ev.as_ref(), &both), Ok(()), "{:?}", strategy);
        let unset = host.user_event();
        assert!(matches!(
            wait(unset.as_ref(), &opts.timeout(ms(1))),
            Err(Error::Timeout { .. })
        ));
        unset.set(0);
    }
    // A bit cw does not know is still refused: the safe API cannot set one,
    // so it goes through the C options the binding builds.
    let ev = host.user_event();
    ev.set(0);
    let mut c = WaitOptions::new().flags(Flags::LATENCY).to_c().unwrap();
    assert_eq!(c.flags, sys::CW_WAIT_LATENCY);
    let mut status = 0;
    // SAFETY: the event is live, c is a valid cw_wait_options.
    assert_eq!(unsafe { sys::cw_wait(ev.0, &c, &mut status) }, sys::CW_OK);
    // The lowest bit above the ones cw knows.
    c.flags |= sys::CW_WAIT_FLAGS_ALL_ + 1;
    // SAFETY: as above.
    let rc = unsafe { sys::cw_wait(ev.0, &c, &mut status) };
    assert_eq!(rc, sys::CW_ERR_INVALID_ARGUMENT);
}

#[test]
fn wait_all_reports_every_status() {
    let host = Host::new();
    let (a, b) = (host.user_event(), host.user_event());
    let events = [a.as_ref(), b.as_ref()];
    let opts = WaitOptions::new().timeout(ms(10));
    let e = wait_all(&events, &opts).unwrap_err();
    assert!(
        matches!(e.error, Error::Timeout { status } if status > 0),
        "{:?}",
        e
    );
    assert_eq!(e.statuses.len(), 2);
    a.set(0);
    b.set(-5);
    let opts = WaitOptions::new().check_interval(ms(2)).timeout(ms(5000));
    let e = wait_all(&events, &opts).unwrap_err();
    assert_eq!(e.error, Error::CommandFailed { status: -5 });
    assert_eq!(e.statuses, vec![0, -5]);
    assert!(std::error::Error::source(&e).is_some());
    let c = host.user_event();
    c.set(0);
    assert_eq!(
        wait_all(&[a.as_ref(), c.as_ref()], &WaitOptions::new()),
        Ok(())
    );
    assert_eq!(
        wait_all(&[], &WaitOptions::new()).unwrap_err().error,
        Error::InvalidArgument
    );
}

#[test]
fn wait_any_finds_the_finished_one() {
    let host = Host::new();
    let evs = [host.user_event(), host.user_event(), host.user_event()];
    let refs: Vec<_> = evs.iter().map(|e| e.as_ref()).collect();
    let e = wait_any(&refs, &WaitOptions::new().timeout(ms(10))).unwrap_err();
    assert_eq!(
        (e.index, e.error.code()),
        (None, cw_opencl_sys::CW_ERR_TIMEOUT)
    );
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(ms(5));
            evs[1].set(0);
        });
        assert_eq!(wait_any(&refs, &WaitOptions::new()), Ok(1));
    });
    evs[2].set(-3);
    let e = wait_any(
        &[refs[0], refs[2]],
        &WaitOptions::new().check_interval(ms(2)),
    )
    .unwrap_err();
    assert_eq!(
        (e.index, e.error),
        (Some(1), Error::CommandFailed { status: -3 })
    );
    evs[0].set(0);
}

#[test]
fn version_and_stats() {
    let (major, _, _) = cw_opencl::version();
    assert_eq!(major, 1);
    assert!(cw_opencl::version_string().starts_with("1."));
    let host = Host::new();
    let ev = host.user_event();
    ev.set(0);
    let before = cw_opencl::stats().waits;
    wait(ev.as_ref(), &WaitOptions::new()).unwrap();
    assert!(cw_opencl::stats().waits > before);
}
