// SPDX-License-Identifier: MIT
//! The safe crate's tests on a real OpenCL platform (PoCL in CI), in one
//! binary so that the test build links once.

#[path = "../cl/mod.rs"]
mod cl;

mod future;
mod readme;
mod sync;
#[cfg(feature = "tokio")]
mod tokio_waits;
