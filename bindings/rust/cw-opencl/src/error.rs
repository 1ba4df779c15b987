// SPDX-License-Identifier: MIT
//! cw's error codes as a Rust error, with the OpenCL status each carries.

use cw_opencl_sys as sys;
use std::ffi::CStr;
use std::fmt;

/// Why a wait did not end with the command complete. Each variant is one of
/// cw's error codes ([`Error::code`]); OpenCL's own value, where cw hands
/// one back, is kept beside it.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// An option out of range, an empty or too long list of events.
    InvalidArgument,
    /// The OpenCL implementation rejected the event handle.
    InvalidEvent {
        /// The OpenCL error (`CL_INVALID_EVENT`, ...).
        cl_error: cl_int,
    },
    /// The timeout passed before the command finished.
    Timeout {
        /// The last execution status read (positive: queued, submitted, running).
        status: cl_int,
    },
    /// The command ended with a negative execution status.
    CommandFailed {
        /// The command's execution status (negative).
        status: cl_int,
    },
    /// Another OpenCL call failed.
    OpenCl {
        /// The OpenCL error code.
        cl_error: cl_int,
    },
    /// Allocation failed or cw's completion pool is full.
    NoMemory,
    /// A valid request the strategy cannot honour.
    Unsupported,
    /// Out of file descriptors, threads or another system limit (or, for a
    /// tokio future, a runtime without I/O enabled).
    NoResources,
    /// The wait's interrupt descriptor became readable before the command
    /// finished (`CW_WAIT_INTERRUPT_FD`, through the -sys crate).
    Interrupted {
        /// The last execution status read (positive).
        status: cl_int,
    },
    /// A code of a later release of the library.
    Unknown {
        /// cw's code (negative).
        code: i32,
    },
}

use sys::cl_int;

impl Error {
    /// `Ok(())` for `CW_OK`, else the error `rc` names with its status.
    pub(crate) fn check(rc: i32, status: cl_int) -> Result<(), Error> {
        if rc == sys::CW_OK {
            Ok(())
        } else {
            Err(Error::from_code(rc, status))
        }
    }

    /// The error for cw's code `rc` (not `CW_OK`) and the status cw handed
    /// back with it.
    pub fn from_code(rc: i32, status: cl_int) -> Error {
        match rc {
            sys::CW_ERR_INVALID_ARGUMENT => Error::InvalidArgument,
            sys::CW_ERR_INVALID_EVENT => Error::InvalidEvent { cl_error: status },
            sys::CW_ERR_TIMEOUT => Error::Timeout { status },
            sys::CW_ERR_COMMAND_FAILED => Error::CommandFailed { status },
            sys::CW_ERR_OPENCL => Error::OpenCl { cl_error: status },
            sys::CW_ERR_NO_MEMORY => Error::NoMemory,
            sys::CW_ERR_UNSUPPORTED => Error::Unsupported,
            sys::CW_ERR_NO_RESOURCES => Error::NoResources,
            sys::CW_ERR_INTERRUPTED => Error::Interrupted { status },
            code => Error::Unknown { code },
        }
    }

    /// cw's error code (`CW_ERR_*`, negative).
    pub fn code(&self) -> i32 {
        match *self {
            Error::InvalidArgument => sys::CW_ERR_INVALID_ARGUMENT,
            Error::InvalidEvent { .. } => sys::CW_ERR_INVALID_EVENT,
            Error::Timeout { .. } => sys::CW_ERR_TIMEOUT,
            Error::CommandFailed { .. } => sys::CW_ERR_COMMAND_FAILED,
            Error::OpenCl { .. } => sys::CW_ERR_OPENCL,
            Error::NoMemory => sys::CW_ERR_NO_MEMORY,
            Error::Unsupported => sys::CW_ERR_UNSUPPORTED,
            Error::NoResources => sys::CW_ERR_NO_RESOURCES,
            Error::Interrupted { .. } => sys::CW_ERR_INTERRUPTED,
            Error::Unknown { code } => code,
        }
    }

    /// The OpenCL value the error carries: the execution status
    /// (`CommandFailed`, `Timeout`) or the OpenCL error (`InvalidEvent`,
    /// `OpenCl`).
    pub fn status(&self) -> Option<cl_int> {
        match *self {
            Error::InvalidEvent { cl_error } | Error::OpenCl { cl_error } => Some(cl_error),
            Error::Timeout { status }
            | Error::CommandFailed { status }
            | Error::Interrupted { status } => Some(status),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: cw_strerror returns a static NUL-terminated string for any int.
        let text = unsafe { CStr::from_ptr(sys::cw_strerror(self.code())) };
        f.write_str(&text.to_string_lossy())?;
        match *self {
            Error::InvalidEvent { cl_error } | Error::OpenCl { cl_error } => {
                write!(f, " (OpenCL error {})", cl_error)
            }
            Error::Timeout { status } | Error::Interrupted { status } => {
                write!(f, " (execution status {})", status)
            }
            Error::CommandFailed { status } => write!(f, " (execution status {})", status),
            Error::Unknown { code } => write!(f, " (cw error {})", code),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for Error {}

/// A failed [`wait_all`](crate::wait_all): the error, and every event's
/// execution status as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitAllError {
    /// What went wrong; its status is the first failed (after a timeout:
    /// unfinished) event's.
    pub error: Error,
    /// One status per event, in order; empty for `InvalidArgument`.
    pub statuses: Vec<cl_int>,
}

impl WaitAllError {
    pub(crate) fn new(error: Error, statuses: Vec<cl_int>) -> Self {
        WaitAllError { error, statuses }
    }
}

impl fmt::Display for WaitAllError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wait_all: {}", self.error)
    }
}

impl std::error::Error for WaitAllError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// A failed [`wait_any`](crate::wait_any): the error and, where it concerns
/// one event (a failed command, an unreadable status), that event's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitAnyError {
    /// What went wrong.
    pub error: Error,
    /// The event it concerns; `None` for a timeout or bad input.
    pub index: Option<usize>,
}

impl WaitAnyError {
    pub(crate) fn new(error: Error, index: Option<usize>) -> Self {
        WaitAnyError { error, index }
    }
}

impl fmt::Display for WaitAnyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "wait_any: event {}: {}", i, self.error),
            None => write!(f, "wait_any: {}", self.error),
        }
    }
}

impl std::error::Error for WaitAnyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
