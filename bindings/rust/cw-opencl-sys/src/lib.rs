// SPDX-License-Identifier: MIT
//! Raw FFI to cw, the C library that waits on OpenCL events (`libcw-opencl`).
//!
//! One declaration per item of the public C headers (`cw.h` and `cw/*.h`),
//! with the same names, types and layout; the contracts (threads,
//! lifetimes, error codes) are the headers' and are not repeated here. The
//! safe API is the `cw-opencl` crate.
//!
//! The build script finds the installed library with `pkg-config cw-opencl`
//! (set `PKG_CONFIG_PATH` to `<prefix>/lib/pkgconfig` for a private prefix)
//! and links `-lcw-opencl` and OpenCL from its flags.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uint, c_void};

/// OpenCL's `cl_int`.
pub type cl_int = i32;
/// OpenCL's `cl_event`: the same type as `cl3::types::cl_event` (what
/// `opencl3`'s `Event::get()` returns) and `ocl`'s `as_ptr()`.
pub type cl_event = *mut c_void;

/// OpenCL's `CL_COMPLETE` execution status.
pub const CL_COMPLETE: cl_int = 0;
/// OpenCL's `CL_RUNNING`.
pub const CL_RUNNING: cl_int = 1;
/// OpenCL's `CL_SUBMITTED`.
pub const CL_SUBMITTED: cl_int = 2;
/// OpenCL's `CL_QUEUED`.
pub const CL_QUEUED: cl_int = 3;
/// OpenCL's `CL_SUCCESS`.
pub const CL_SUCCESS: cl_int = 0;

// --- cw/common.h -------------------------------------------------------------

/// `enum cw_error`: 0 or a negative code.
pub type cw_error = c_int;
pub const CW_OK: cw_error = 0;
pub const CW_ERR_INVALID_ARGUMENT: cw_error = -1;
pub const CW_ERR_INVALID_EVENT: cw_error = -2;
pub const CW_ERR_TIMEOUT: cw_error = -3;
pub const CW_ERR_COMMAND_FAILED: cw_error = -4;
pub const CW_ERR_OPENCL: cw_error = -5;
pub const CW_ERR_NO_MEMORY: cw_error = -6;
pub const CW_ERR_UNSUPPORTED: cw_error = -7;
pub const CW_ERR_NO_RESOURCES: cw_error = -8;
pub const CW_ERR_INTERRUPTED: cw_error = -9;

/// `CW_DEADLINE_NONE`.
pub const CW_DEADLINE_NONE: u64 = u64::MAX;

// --- cw/version.h (of the headers this crate was written against) ------------

pub const CW_VERSION_MAJOR: c_uint = 1;
pub const CW_VERSION_MINOR: c_uint = 1;
pub const CW_VERSION_PATCH: c_uint = 0;
pub const CW_VERSION_NUMBER: c_uint =
    CW_VERSION_MAJOR * 10000 + CW_VERSION_MINOR * 100 + CW_VERSION_PATCH;

// --- cw/parker.h -------------------------------------------------------------

/// `cw_parker_ops`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cw_parker_ops {
    pub park: Option<unsafe extern "C" fn(parker: *mut cw_parker, deadline_ns: u64) -> c_int>,
    pub unpark: Option<unsafe extern "C" fn(parker: *mut cw_parker)>,
}

/// `struct cw_parker`.
#[repr(C)]
#[derive(Debug)]
pub struct cw_parker {
    pub ops: *const cw_parker_ops,
}

/// `cw_futex_parker`.
#[repr(C)]
#[derive(Debug)]
pub struct cw_futex_parker {
    pub parker: cw_parker,
    pub state: c_int,
}

// --- cw/wait.h ---------------------------------------------------------------

/// `enum cw_strategy`.
pub type cw_strategy = c_uint;
pub const CW_STRATEGY_DEFAULT: cw_strategy = 0;
pub const CW_STRATEGY_BLOCKING: cw_strategy = 1;
pub const CW_STRATEGY_COOPERATIVE: cw_strategy = 2;
pub const CW_STRATEGY_POLL: cw_strategy = 3;
pub const CW_STRATEGY_COOPERATIVE_WAKE_LOCKED: cw_strategy = 4;
pub const CW_STRATEGY_COOPERATIVE_NOYIELD: cw_strategy = 5;
pub const CW_STRATEGY_PTHREAD: cw_strategy = 6;
pub const CW_STRATEGY_SPIN_PARK: cw_strategy = 7;
pub const CW_STRATEGY_BACKOFF_POLL: cw_strategy = 8;
pub const CW_STRATEGY_AUTO: cw_strategy = 9;
pub const CW_STRATEGY_COUNT: cw_strategy = 10;

pub const CW_WAIT_NO_FLUSH: c_uint = 1 << 0;
pub const CW_WAIT_OWN_CALLBACK: c_uint = 1 << 1;
pub const CW_WAIT_POLL: c_uint = 1 << 2;
pub const CW_WAIT_LATENCY: c_uint = 1 << 3;
pub const CW_WAIT_INTERRUPT_FD: c_uint = 1 << 4;
pub const CW_WAIT_FLAGS_ALL_: c_uint =
    CW_WAIT_NO_FLUSH | CW_WAIT_OWN_CALLBACK | CW_WAIT_POLL | CW_WAIT_LATENCY | CW_WAIT_INTERRUPT_FD;
pub const CW_INTERRUPT_LOOK_US: u32 = 100_000;

pub const CW_SPIN_US_DEFAULT: u32 = 1;
pub const CW_SPIN_US_MAX: u32 = 1_000_000;
pub const CW_SPIN_PARK_YIELDS: u32 = 4;
pub const CW_AUTO_SPIN_US_CAP: u32 = 200;
pub const CW_CHECK_INTERVAL_US_DEFAULT: u32 = 16_000;
pub const CW_CHECK_INTERVAL_US_MAX: u32 = 1_000_000;
pub const CW_CHECK_INTERVAL_GROWTH: u32 = 2;

/// `cw_wait_options`; `Default` is the all-zero value (every default).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cw_wait_options {
    pub strategy: cw_strategy,
    pub flags: c_uint,
    pub timeout_us: i64,
    pub check_interval_us: u32,
    pub parker: *mut cw_parker,
    pub spin_us: u32,
    pub interrupt_fd: i32,
    pub reserved: [u32; 7],
}

impl Default for cw_wait_options {
    fn default() -> Self {
        cw_wait_options {
            strategy: CW_STRATEGY_DEFAULT,
            flags: 0,
            timeout_us: 0,
            check_interval_us: 0,
            parker: std::ptr::null_mut(),
            spin_us: 0,
            interrupt_fd: 0,
            reserved: [0; 7],
        }
    }
}

// --- cw/waitmany.h -----------------------------------------------------------

pub const CW_WAIT_MANY_MAX: c_uint = 65536;

// --- cw/notify.h -------------------------------------------------------------

/// `cw_notifier`: opaque.
#[repr(C)]
pub struct cw_notifier {
    _private: [u8; 0],
}

/// `cw_notifier_result`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct cw_notifier_result {
    pub tag: u64,
    pub rc: c_int,
    pub status: cl_int,
}

// --- cw/stats.h --------------------------------------------------------------

pub const CW_STATS_LATENCY_BUCKETS: usize = 16;

/// `cw_stats`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct cw_stats {
    pub waits: u64,
    pub spins: u64,
    pub yields: u64,
    pub parks: u64,
    pub sleeps: u64,
    pub polls: u64,
    pub timeouts: u64,
    pub latency_count: u64,
    pub latency_us: [u64; CW_STATS_LATENCY_BUCKETS],
}

/// `cw_stats_auto`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct cw_stats_auto {
    pub platforms_probed: u64,
    pub platforms_failed_fire: u64,
    pub platforms_failed_silent: u64,
    pub platforms_late: u64,
    pub lateness_ns: u64,
    pub lateness_samples: u64,
    pub unchecked_waits: u64,
    pub deferred_checks: u64,
    pub checks: u64,
    pub hybrid_waits: u64,
    pub hybrid_callback_first: u64,
    pub late_callbacks: u64,
    pub driver_waits: u64,
    pub platforms_driver_wait: u64,
}

extern "C" {
    // cw/common.h
    pub fn cw_strerror(error: c_int) -> *const c_char;
    pub fn cw_now_ns() -> u64;
    pub fn cw_deadline_after_ns(relative_ns: u64) -> u64;
    pub fn cw_version() -> c_uint;
    pub fn cw_version_string() -> *const c_char;

    // cw/parker.h
    pub fn cw_futex_parker_init(fp: *mut cw_futex_parker);

    // cw/wait.h
    pub fn cw_wait(
        event: cl_event,
        options: *const cw_wait_options,
        cl_status: *mut cl_int,
    ) -> c_int;
    pub fn cw_event_forget(event: cl_event);
    pub fn cw_strategy_name(strategy: cw_strategy) -> *const c_char;
    pub fn cw_strategy_from_name(name: *const c_char, out: *mut cw_strategy) -> c_int;

    // cw/waitmany.h
    pub fn cw_wait_all(
        events: *const cl_event,
        n: usize,
        options: *const cw_wait_options,
        statuses: *mut cl_int,
    ) -> c_int;
    pub fn cw_wait_any(
        events: *const cl_event,
        n: usize,
        options: *const cw_wait_options,
        index: *mut usize,
        status: *mut cl_int,
    ) -> c_int;

    // cw/notify.h
    pub fn cw_notifier_create(check_interval_us: u32, out: *mut *mut cw_notifier) -> c_int;
    pub fn cw_notifier_destroy(n: *mut cw_notifier);
    pub fn cw_notifier_fd(n: *const cw_notifier) -> c_int;
    pub fn cw_notifier_watch(
        n: *mut cw_notifier,
        event: cl_event,
        tag: u64,
        cl_error: *mut cl_int,
    ) -> c_int;
    pub fn cw_notifier_cancel(n: *mut cw_notifier, tag: u64) -> c_int;
    pub fn cw_notifier_drain(
        n: *mut cw_notifier,
        out: *mut cw_notifier_result,
        max: usize,
    ) -> usize;
    pub fn cw_notifier_pending(n: *mut cw_notifier) -> usize;

    // cw/stats.h
    pub fn cw_stats_get(out: *mut cw_stats) -> c_int;
    pub fn cw_stats_reset();
    pub fn cw_stats_auto_get(out: *mut cw_stats_auto, size: usize) -> c_int;

    // cw/learned.h
    pub fn cw_learned_export(buf: *mut c_char, size: usize, needed: *mut usize) -> c_int;
    pub fn cw_learned_import(text: *const c_char, seeded: *mut c_uint) -> c_int;
}

/// `cw_park`, the header's inline helper.
///
/// # Safety
/// `parker` must point to a live parker whose `ops` is valid.
#[inline]
pub unsafe fn cw_park(parker: *mut cw_parker, deadline_ns: u64) -> c_int {
    match (*(*parker).ops).park {
        Some(f) => f(parker, deadline_ns),
        None => CW_ERR_INVALID_ARGUMENT,
    }
}

/// `cw_unpark`, the header's inline helper.
///
/// # Safety
/// `parker` must point to a live parker whose `ops` is valid.
#[inline]
pub unsafe fn cw_unpark(parker: *mut cw_parker) {
    if let Some(f) = (*(*parker).ops).unpark {
        f(parker)
    }
}
