// SPDX-License-Identifier: MIT
//! Wait options: strategy, flags, timeout, check interval, spin budget.

use crate::Error;
use cw_opencl_sys as sys;
use std::ffi::{CStr, CString};
use std::fmt;
use std::ops::BitOr;
use std::str::FromStr;
use std::time::Duration;

/// How a wait sleeps (`cw_strategy`; what each does: `cw/wait.h`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// cw's recommendation (`auto` in this release).
    #[default]
    Default,
    /// The driver's `clWaitForEvents`.
    Blocking,
    /// CL_COMPLETE callback, yielding spin lock condition and parker.
    Cooperative,
    /// Busy poll of the status: burns a core.
    Poll,
    /// As cooperative, woken while the lock is held.
    CooperativeWakeLocked,
    /// As cooperative on a never-yielding lock: a comparison baseline only.
    CooperativeNoyield,
    /// CL_COMPLETE callback, mutex and condition variable.
    Pthread,
    /// Spin, then yield, then park.
    SpinPark,
    /// Status polls with growing sleeps, no callback.
    BackoffPoll,
    /// Chooses per wait from what cw learned of the driver.
    Auto,
}

const STRATEGIES: [(Strategy, sys::cw_strategy); 10] = [
    (Strategy::Default, sys::CW_STRATEGY_DEFAULT),
    (Strategy::Blocking, sys::CW_STRATEGY_BLOCKING),
    (Strategy::Cooperative, sys::CW_STRATEGY_COOPERATIVE),
    (Strategy::Poll, sys::CW_STRATEGY_POLL),
    (
        Strategy::CooperativeWakeLocked,
        sys::CW_STRATEGY_COOPERATIVE_WAKE_LOCKED,
    ),
    (
        Strategy::CooperativeNoyield,
        sys::CW_STRATEGY_COOPERATIVE_NOYIELD,
    ),
    (Strategy::Pthread, sys::CW_STRATEGY_PTHREAD),
    (Strategy::SpinPark, sys::CW_STRATEGY_SPIN_PARK),
    (Strategy::BackoffPoll, sys::CW_STRATEGY_BACKOFF_POLL),
    (Strategy::Auto, sys::CW_STRATEGY_AUTO),
];

impl Strategy {
    /// Every strategy this binding knows, in the C enum's order.
    pub fn all() -> impl Iterator<Item = Strategy> {
        STRATEGIES.iter().map(|&(s, _)| s)
    }

    /// The C value.
    pub fn to_raw(self) -> sys::cw_strategy {
        STRATEGIES
            .iter()
            .find(|&&(s, _)| s == self)
            .map(|&(_, v)| v)
            .unwrap_or(0)
    }

    /// The strategy of a C value, `None` outside this binding's enum.
    pub fn from_raw(raw: sys::cw_strategy) -> Option<Strategy> {
        STRATEGIES.iter().find(|&&(_, v)| v == raw).map(|&(s, _)| s)
    }

    /// The library's stable name ("default", "blocking", "spin-park", ...).
    pub fn name(self) -> &'static str {
        // SAFETY: cw returns a static string or NULL for a value outside the enum.
        let p = unsafe { sys::cw_strategy_name(self.to_raw()) };
        if p.is_null() {
            return "?";
        }
        unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("?")
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = Error;

    /// The strategy of one of the library's names; `InvalidArgument` otherwise.
    fn from_str(name: &str) -> Result<Strategy, Error> {
        let c = CString::new(name).map_err(|_| Error::InvalidArgument)?;
        let mut raw: sys::cw_strategy = 0;
        // SAFETY: c is NUL-terminated; raw is live.
        let rc = unsafe { sys::cw_strategy_from_name(c.as_ptr(), &mut raw) };
        Error::check(rc, sys::CL_SUCCESS)?;
        Strategy::from_raw(raw).ok_or(Error::InvalidArgument)
    }
}

/// Wait flags (`CW_WAIT_*`), combined with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u32);

impl Flags {
    /// No flag.
    pub const NONE: Flags = Flags(0);
    /// Do not flush the event's queue before waiting.
    pub const NO_FLUSH: Flags = Flags(sys::CW_WAIT_NO_FLUSH);
    /// A wait without a timeout registers a callback of its own when no other
    /// cw wait is on the event (`cw/wait.h`).
    pub const OWN_CALLBACK: Flags = Flags(sys::CW_WAIT_OWN_CALLBACK);
    /// Do not wait: look at the event once and return, with
    /// [`Error::Timeout`] while it is unfinished (`cw/wait.h`). A zero
    /// [`WaitOptions::timeout`] sets it.
    pub const POLL: Flags = Flags(sys::CW_WAIT_POLL);
    /// The default and [`Strategy::Auto`] strategies prefer a short time from
    /// the command's end to the wait's return over a small CPU cost; the
    /// results and errors are the same as without it, and the other
    /// strategies ignore it (`cw/wait.h`).
    pub const LATENCY: Flags = Flags(sys::CW_WAIT_LATENCY);

    /// The C bits.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

/// Options of [`wait`](crate::wait), [`wait_all`](crate::wait_all) and
/// [`wait_any`](crate::wait_any). `WaitOptions::new()` (or `default()`) is
/// cw's default: default strategy, flush the queue, no timeout, default
/// check interval and spin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaitOptions {
    strategy: Strategy,
    flags: Flags,
    timeout: Option<Duration>,
    check_interval: Option<Duration>,
    spin: Option<Duration>,
}

/// Whole microseconds, rounded up, at least 1 (0 means "default" in C).
fn micros_up(d: Duration) -> u128 {
    let us = (d.as_nanos() + 999) / 1000;
    us.max(1)
}

impl WaitOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The strategy.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The flags.
    pub fn flags(mut self, flags: Flags) -> Self {
        self.flags = flags;
        self
    }

    /// Give up after `timeout` (rounded up to whole microseconds) with
    /// [`Error::Timeout`]; zero looks once and returns ([`Flags::POLL`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// First interval of the failed-command status checks (1 us to 1 s;
    /// `cw/wait.h`, `check_interval_us`).
    pub fn check_interval(mut self, interval: Duration) -> Self {
        self.check_interval = Some(interval);
        self
    }

    /// Spin budget of spin-park, and of auto the longest expected wait it
    /// spins for (1 us to 1 s).
    pub fn spin(mut self, spin: Duration) -> Self {
        self.spin = Some(spin);
        self
    }

    /// The C struct; `InvalidArgument` for a value out of range (the library
    /// checks the ranges, this only the conversions).
    pub fn to_c(&self) -> Result<sys::cw_wait_options, Error> {
        let mut o = sys::cw_wait_options {
            strategy: self.strategy.to_raw(),
            flags: self.flags.bits(),
            ..Default::default()
        };
        match self.timeout {
            Some(t) if t.is_zero() => o.flags |= sys::CW_WAIT_POLL,
            Some(t) => {
                o.timeout_us = i64::try_from(micros_up(t)).map_err(|_| Error::InvalidArgument)?
            }
            None => {}
        }
        // u32::MAX is out of both ranges: the library rejects it.
        if let Some(c) = self.check_interval {
            o.check_interval_us = u32::try_from(micros_up(c)).unwrap_or(u32::MAX);
        }
        if let Some(s) = self.spin {
            o.spin_us = u32::try_from(micros_up(s)).unwrap_or(u32::MAX);
        }
        Ok(o)
    }
}
