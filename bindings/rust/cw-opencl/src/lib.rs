// SPDX-License-Identifier: MIT
//! Wait on OpenCL events without burning a core: the safe Rust binding of
//! cw (`libcw-opencl`).
//!
//! It works on the raw `cl_event` handle of whatever OpenCL crate made the
//! event (`opencl3`'s `Event::get()`, `ocl`'s `as_ptr()`, `cl3`'s
//! `cl_event`), wrapped as an [`EventRef`]:
//!
//! - [`wait`], [`wait_all`] and [`wait_any`] block the calling thread, with
//!   a timeout, a [`Strategy`] and [`Flags`] ([`WaitOptions`]);
//! - [`future::wait`] (any executor) and, with the `tokio` feature,
//!   `tokio::wait` return an [`EventFuture`]: one file descriptor (cw's
//!   notifier) serves every pending future, with no thread per wait.
//!
//! Errors are [`Error`]; a failed command's negative execution status is
//! kept in [`Error::CommandFailed`].
//!
//! ```no_run
//! use cw_opencl::{wait, EventRef, WaitOptions};
//! use std::time::Duration;
//! # let raw: cw_opencl::cl_event = std::ptr::null_mut();
//! // SAFETY: `raw` is a live cl_event while `event` is used.
//! let event = unsafe { EventRef::from_raw(raw) };
//! match wait(event, &WaitOptions::new().timeout(Duration::from_millis(100))) {
//!     Ok(()) => println!("complete"),
//!     Err(cw_opencl::Error::Timeout { status }) => println!("still {} after 100 ms", status),
//!     Err(e) => eprintln!("failed: {}", e),
//! }
//! ```
#![deny(missing_docs)]

mod error;
mod notifier;
mod options;

pub mod future;
#[cfg(feature = "tokio")]
pub mod tokio;

pub use cw_opencl_sys::{cl_event, cl_int, CL_COMPLETE, CL_QUEUED, CL_RUNNING, CL_SUBMITTED};
pub use error::{Error, WaitAllError, WaitAnyError};
pub use future::{EventFuture, WaitAll, WaitAny};
pub use options::{Flags, Strategy, WaitOptions};

use cw_opencl_sys as sys;
use std::ffi::CStr;
use std::marker::PhantomData;

/// A borrowed OpenCL event handle: a `cl_event` that stays valid for `'a`.
///
/// cw takes its own reference on the event where it keeps one beyond a
/// call (a future's watch retains the event until it finished or was
/// dropped), so a future may outlive the `EventRef` it was made from.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventRef<'a> {
    raw: cl_event,
    life: PhantomData<&'a ()>,
}

// SAFETY: OpenCL event handles may be used from any thread (OpenCL 1.1 and
// later are thread-safe for every call but clSetKernelArg).
unsafe impl Send for EventRef<'_> {}
unsafe impl Sync for EventRef<'_> {}

impl<'a> EventRef<'a> {
    /// Wraps a raw `cl_event`.
    ///
    /// # Safety
    /// `raw` must be a valid OpenCL event (one reference held by the
    /// caller) for as long as the returned value is used: cw passes it to
    /// the OpenCL implementation, which cannot check a dangling handle.
    pub unsafe fn from_raw(raw: cl_event) -> Self {
        EventRef {
            raw,
            life: PhantomData,
        }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> cl_event {
        self.raw
    }
}

/// Waits until `event` finished, by `options`.
///
/// `Ok(())` when the command completed (`CL_COMPLETE`); otherwise an
/// [`Error`]: `CommandFailed` with the negative execution status,
/// `Timeout` with the last status read, `InvalidEvent`/`OpenCl` with the
/// OpenCL error, `InvalidArgument` for options out of range.
pub fn wait(event: EventRef<'_>, options: &WaitOptions) -> Result<(), Error> {
    let opts = options.to_c()?;
    let mut status: cl_int = sys::CL_SUCCESS;
    // SAFETY: `event` is valid (EventRef's contract); opts and status are live.
    let rc = unsafe { sys::cw_wait(event.raw, &opts, &mut status) };
    Error::check(rc, status)
}

/// Waits until every event finished (complete or failed), or the timeout.
///
/// On an error, [`WaitAllError::statuses`] has every event's execution
/// status as cw read it (`CL_COMPLETE`, a negative status for a failed
/// command, a positive one for an unfinished command after a timeout).
/// An empty slice, or more than 65,536 events, is `InvalidArgument`.
pub fn wait_all(events: &[EventRef<'_>], options: &WaitOptions) -> Result<(), WaitAllError> {
    let mut statuses = vec![sys::CL_QUEUED; events.len()];
    let rc = match options.to_c() {
        // SAFETY: EventRef is repr(transparent) over cl_event, so the slice
        // is an array of events.len() valid cl_events; statuses has as many.
        Ok(opts) => unsafe {
            sys::cw_wait_all(
                events.as_ptr() as *const cl_event,
                events.len(),
                &opts,
                statuses.as_mut_ptr(),
            )
        },
        Err(e) => return Err(WaitAllError::new(e, Vec::new())),
    };
    if rc == sys::CW_OK {
        return Ok(());
    }
    // The status the error names: the first failed (or, after a timeout,
    // unfinished) event's.
    let named = match rc {
        sys::CW_ERR_TIMEOUT => statuses.iter().copied().find(|&s| s > 0),
        sys::CW_ERR_INVALID_ARGUMENT => Some(sys::CL_SUCCESS),
        _ => statuses.iter().copied().find(|&s| s < 0),
    };
    let statuses = if rc == sys::CW_ERR_INVALID_ARGUMENT {
        Vec::new()
    } else {
        statuses
    };
    Err(WaitAllError::new(
        Error::from_code(rc, named.unwrap_or(sys::CL_SUCCESS)),
        statuses,
    ))
}

/// Waits until at least one event finished, or the timeout; returns the
/// index of the one that completed (the lowest when several did at once).
///
/// A failed command counts as finished: its index comes back in
/// [`WaitAnyError::index`] with `CommandFailed`.
pub fn wait_any(events: &[EventRef<'_>], options: &WaitOptions) -> Result<usize, WaitAnyError> {
    let opts = options.to_c().map_err(|e| WaitAnyError::new(e, None))?;
    let mut index = events.len();
    let mut status: cl_int = sys::CL_SUCCESS;
    // SAFETY: as in wait_all.
    let rc = unsafe {
        sys::cw_wait_any(
            events.as_ptr() as *const cl_event,
            events.len(),
            &opts,
            &mut index,
            &mut status,
        )
    };
    if rc == sys::CW_OK {
        return Ok(index);
    }
    let index = if index < events.len() {
        Some(index)
    } else {
        None
    };
    Err(WaitAnyError::new(Error::from_code(rc, status), index))
}

/// Drops what cw keeps of `event` (its shared callback's record and a
/// reference on the event): for an event that may never finish, such as a
/// user event that will never be set, once nothing waits on it any more.
pub fn forget(event: EventRef<'_>) {
    // SAFETY: `event` is valid; cw runs no Rust code.
    unsafe { sys::cw_event_forget(event.raw) }
}

/// The running library's version (major, minor, patch).
pub fn version() -> (u32, u32, u32) {
    // SAFETY: no arguments.
    let v = unsafe { sys::cw_version() };
    (v / 10000, v / 100 % 100, v % 100)
}

/// The running library's version as text ("1.1.0").
pub fn version_string() -> &'static str {
    // SAFETY: cw returns a static NUL-terminated ASCII string.
    unsafe { CStr::from_ptr(sys::cw_version_string()) }
        .to_str()
        .unwrap_or("?")
}

/// A snapshot of cw's process-wide counters (`cw_stats`, see `cw/stats.h`).
pub fn stats() -> sys::cw_stats {
    let mut s = sys::cw_stats::default();
    // SAFETY: `s` is a live cw_stats.
    unsafe { sys::cw_stats_get(&mut s) };
    s
}
