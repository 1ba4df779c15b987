// SPDX-License-Identifier: MIT
//! Futures of events on tokio (feature `tokio`): the notifier's descriptor
//! is registered with the runtime's reactor through [`AsyncFd`], so every
//! pending wait of the process shares one descriptor and one task that
//! drains it, with no thread per wait and no helper thread.
//!
//! The task is spawned on the runtime of the first poll that finds none
//! running, and ends once no future waits; it comes back with the next
//! one. Add a timeout with `tokio::time::timeout` (feature `time` of
//! tokio): the future it drops cancels its watch.
//!
//! ```no_run
//! # async fn f(raw: cw_opencl::cl_event) -> Result<(), cw_opencl::Error> {
//! // SAFETY: `raw` is a live cl_event while the EventRef is used.
//! let event = unsafe { cw_opencl::EventRef::from_raw(raw) };
//! cw_opencl::tokio::wait(event).await?;
//! # Ok(()) }
//! ```

use crate::future::{EventFuture, WaitAll, WaitAny};
use crate::notifier::{Driver, Shared};
use crate::{Error, EventRef};
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The process's notifier for tokio futures.
static TOKIO_SHARED: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

fn tokio_shared() -> Result<Arc<Shared>, Error> {
    let mut g = TOKIO_SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = &*g {
        return Ok(s.clone());
    }
    let shared = Shared::new(Driver::Tokio)?;
    *g = Some(shared.clone());
    Ok(shared)
}

/// A future of `event`, woken by the tokio runtime it is polled on (see the
/// module's description).
///
/// # Panics
/// Polling it outside a tokio runtime panics (as tokio's own I/O does) when
/// no draining task runs yet. On a runtime built without `enable_io()` the
/// draining task panics and the pending futures end with
/// [`Error::NoResources`].
pub fn wait(event: EventRef<'_>) -> EventFuture {
    EventFuture::watch(tokio_shared(), event)
}

/// [`crate::future::wait_all`] on tokio.
pub fn wait_all(events: &[EventRef<'_>]) -> WaitAll {
    WaitAll::new(events.iter().map(|&e| wait(e)).collect())
}

/// [`crate::future::wait_any`] on tokio.
pub fn wait_any(events: &[EventRef<'_>]) -> WaitAny {
    WaitAny::new(events.iter().map(|&e| wait(e)).collect())
}

/// The notifier's descriptor, borrowed: cw closes it, AsyncFd only
/// registers it.
struct Fd(RawFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// Ends the draining task's turn when the runtime drops the task (at
/// shutdown): pending futures are woken so that their next poll starts a
/// task again, on the runtime that polls them. A task that panicked ends
/// them instead, with `NoResources`.
struct Turn {
    shared: Arc<Shared>,
    ended: bool,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if std::thread::panicking() {
            // The task panicked (tokio's AsyncFd does on a runtime built
            // without enable_io): a task started again would too.
            self.shared.fail_all(Error::NoResources);
            return;
        }
        let wake: Vec<_> = {
            let mut st = self.shared.lock();
            st.driven = false;
            st.slots
                .values_mut()
                .filter_map(|s| match s {
                    crate::notifier::Slot::Waiting(w) => w.take(),
                    _ => None,
                })
                .collect()
        };
        for w in wake {
            w.wake();
        }
    }
}

/// Spawns the task that drains `shared` (its `driven` flag already set).
pub(crate) fn drive(shared: Arc<Shared>) {
    let handle = match tokio::runtime::Handle::try_current() {
        Ok(h) => h,
        Err(_) => {
            shared.lock().driven = false;
            panic!("cw_opencl::tokio futures must be polled within a tokio runtime");
        }
    };
    handle.spawn(async move {
        // Declared before the AsyncFd, so dropped after it: the descriptor
        // is deregistered before another task may register it.
        let mut turn = Turn {
            shared: shared.clone(),
            ended: false,
        };
        let afd = match AsyncFd::with_interest(Fd(shared.fd), Interest::READABLE) {
            Ok(a) => a,
            Err(_) => {
                turn.ended = true;
                return shared.fail_all(Error::NoResources);
            }
        };
        loop {
            match afd.readable().await {
                Ok(mut ready) => {
                    // The reactor is edge-triggered: clearing before the
                    // drain keeps a readiness that comes during it.
                    ready.clear_ready();
                }
                Err(_) => {
                    drop(afd);
                    turn.ended = true;
                    return shared.fail_all(Error::NoResources);
                }
            }
            // Between two batches the task yields, so that the futures it
            // woke run on this worker (where tokio queued them) before it
            // drains more: in a burst of completions a task resumes after
            // its own batch, not after the whole burst.
            while shared.drain_batch() == crate::notifier::BATCH {
                tokio::task::yield_now().await;
            }
            let mut st = shared.lock();
            if !st.waiting() {
                // Deregistered while the lock keeps the next poll from
                // starting a task that registers the descriptor again.
                drop(afd);
                st.driven = false;
                turn.ended = true;
                return;
            }
        }
    });
}
