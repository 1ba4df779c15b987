// SPDX-License-Identifier: MIT
//! One cw notifier shared by many futures: a slot per watch, filled by
//! whoever drains the notifier (a tokio task or the helper thread) and read
//! by the future that owns it.
//!
//! A watch's tag is the slot's key. Tags are never reused, so a result
//! drained for a future that was dropped meanwhile finds no slot and is
//! ignored. No lock of ours is held across a call into cw, and cw runs no
//! Rust code: its callbacks are its own C functions, so no panic can cross
//! the FFI boundary.

use crate::{Error, EventRef};
use cw_opencl_sys as sys;
use std::collections::HashMap;
use std::os::unix::io::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

/// Results taken from the notifier per drain call.
pub(crate) const BATCH: usize = 64;

/// The C notifier; destroyed last, with whatever watches are pending.
pub(crate) struct Raw(*mut sys::cw_notifier);

// SAFETY: cw's notifier calls (watch, cancel, drain, pending) may come from
// any thread; destroy runs once, from Drop, when nothing else holds it.
unsafe impl Send for Raw {}
unsafe impl Sync for Raw {}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: the pointer came from cw_notifier_create and is dropped once.
        unsafe { sys::cw_notifier_destroy(self.0) }
    }
}

pub(crate) enum Slot {
    /// Watched; the waker of the future's last poll.
    Waiting(Option<Waker>),
    /// Drained, not yet taken by its future.
    Done(Result<(), Error>),
}

pub(crate) struct State {
    pub(crate) slots: HashMap<u64, Slot>,
    next_tag: u64,
    /// A tokio task is draining the notifier (unused by the helper thread).
    pub(crate) driven: bool,
}

impl State {
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn waiting(&self) -> bool {
        self.slots.values().any(|s| matches!(s, Slot::Waiting(_)))
    }
}

/// Who drains the notifier and wakes the futures.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driver {
    /// One helper thread per process, blocked in poll(2) on the descriptor.
    Thread,
    /// A task on a tokio runtime, reading readiness through AsyncFd.
    #[cfg(feature = "tokio")]
    Tokio,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    raw: Raw,
    pub(crate) fd: RawFd,
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) driver: Driver,
}

impl Shared {
    pub(crate) fn new(driver: Driver) -> Result<Arc<Shared>, Error> {
        let mut p: *mut sys::cw_notifier = std::ptr::null_mut();
        // SAFETY: p is live; 0 asks for the default check interval.
        let rc = unsafe { sys::cw_notifier_create(0, &mut p) };
        Error::check(rc, sys::CL_SUCCESS)?;
        let raw = Raw(p);
        // SAFETY: p is a live notifier.
        let fd = unsafe { sys::cw_notifier_fd(p) };
        Ok(Arc::new(Shared {
            state: Mutex::new(State {
                slots: HashMap::new(),
                next_tag: 1,
                driven: false,
            }),
            raw,
            fd,
            driver,
        }))
    }

    /// The state; a panic elsewhere while it was held leaves plain data
    /// behind, so a poisoned lock is still used.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts watching `event`: the tag of its slot, or the watch's error.
    pub(crate) fn watch(&self, event: EventRef<'_>) -> Result<u64, Error> {
        let tag = {
            let mut st = self.lock();
            let tag = st.next_tag;
            st.next_tag += 1;
            // The slot exists before the watch does, so a drain that finds
            // the event finished at once has somewhere to put the result.
            st.slots.insert(tag, Slot::Waiting(None));
            tag
        };
        let mut cl_error: sys::cl_int = sys::CL_SUCCESS;
        // SAFETY: the notifier is live; `event` is valid (EventRef's
        // contract) and cw retains it for the watch.
        let rc = unsafe { sys::cw_notifier_watch(self.raw.0, event.as_raw(), tag, &mut cl_error) };
        if rc != sys::CW_OK {
            self.lock().slots.remove(&tag);
            return Err(Error::from_code(rc, cl_error));
        }
        Ok(tag)
    }

    /// Forgets the slot of a future dropped before it took its result, and
    /// cancels its watch when it was still pending: the completion goes back
    /// to cw's pool and nothing is woken for it.
    pub(crate) fn abandon(&self, tag: u64) {
        let removed = self.lock().slots.remove(&tag);
        if let Some(Slot::Waiting(_)) = removed {
            // SAFETY: the notifier is live. A watch drained meanwhile is
            // no longer pending: cw then answers INVALID_ARGUMENT, harmlessly.
            unsafe { sys::cw_notifier_cancel(self.raw.0, tag) };
        }
    }

    /// Watches cw has not yet reported or cancelled.
    pub(crate) fn pending(&self) -> usize {
        // SAFETY: the notifier is live.
        unsafe { sys::cw_notifier_pending(self.raw.0) }
    }

    /// Drains up to `BATCH` finished watches into their slots and wakes
    /// their futures; returns how many it drained. Call it while the
    /// descriptor is readable, until it comes back short of `BATCH`:
    /// nothing more is waiting then. A driver that runs the woken futures
    /// itself lets them run between two calls, so that the first of a burst
    /// of completions do not wait for the whole burst to be drained.
    pub(crate) fn drain_batch(&self) -> usize {
        let mut out = [sys::cw_notifier_result::default(); BATCH];
        // SAFETY: the notifier is live; out has BATCH entries.
        let k = unsafe { sys::cw_notifier_drain(self.raw.0, out.as_mut_ptr(), BATCH) };
        if k == 0 {
            return 0;
        }
        let mut wake: Vec<Waker> = Vec::with_capacity(k);
        {
            let mut st = self.lock();
            for r in &out[..k] {
                if let Some(slot) = st.slots.get_mut(&r.tag) {
                    if let Slot::Waiting(w) = slot {
                        wake.extend(w.take());
                    }
                    *slot = Slot::Done(Error::check(r.rc, r.status));
                }
            }
        }
        // Woken outside the lock: a waker may run the future at once.
        for w in wake {
            w.wake();
        }
        k
    }

    /// Ends every pending watch with `error` (the driver could not run).
    pub(crate) fn fail_all(&self, error: Error) {
        let mut wake = Vec::new();
        let mut tags = Vec::new();
        {
            let mut st = self.lock();
            st.driven = false;
            for (&tag, slot) in st.slots.iter_mut() {
                if let Slot::Waiting(w) = slot {
                    wake.extend(w.take());
                    tags.push(tag);
                    *slot = Slot::Done(Err(error));
                }
            }
        }
        for tag in tags {
            // SAFETY: the notifier is live; its result would find a Done slot.
            unsafe { sys::cw_notifier_cancel(self.raw.0, tag) };
        }
        for w in wake {
            w.wake();
        }
    }
}
