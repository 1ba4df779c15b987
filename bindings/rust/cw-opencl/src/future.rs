// SPDX-License-Identifier: MIT
//! Futures of events, for any executor.
//!
//! [`wait`] watches the event on a notifier shared by the whole process
//! (one file descriptor, one CL_COMPLETE callback per event however many
//! waits share it), drained by one helper thread started on first use:
//! no thread per wait, and no runtime needed. With the `tokio` feature,
//! `cw_opencl::tokio::wait` returns the same [`EventFuture`] on a notifier
//! that a task of the tokio runtime drains instead, with no helper thread.
//!
//! Dropping an [`EventFuture`] before it finished cancels its watch: cw
//! gives the completion back and releases the event, and nothing is woken
//! for it later.

use crate::error::{WaitAllError, WaitAnyError};
use crate::notifier::{Driver, Shared, Slot};
use crate::{Error, EventRef};
use cw_opencl_sys as sys;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// The result of one event: `Ok(())` when it completed, else the error
/// (`CommandFailed` with its status, `InvalidEvent`, ...).
///
/// Created by [`wait`] or `tokio::wait`. It is `Send`, `Unpin` and
/// `'static`: cw holds its own reference on the event while it watches.
#[must_use = "futures do nothing unless awaited; dropping one cancels its watch"]
pub struct EventFuture {
    shared: Option<Arc<Shared>>,
    tag: u64,
    /// An error found before anything was watched.
    early: Option<Error>,
}

impl EventFuture {
    pub(crate) fn watch(shared: Result<Arc<Shared>, Error>, event: EventRef<'_>) -> EventFuture {
        let early = |e| EventFuture {
            shared: None,
            tag: 0,
            early: Some(e),
        };
        let shared = match shared {
            Ok(s) => s,
            Err(e) => return early(e),
        };
        match shared.watch(event) {
            Ok(tag) => EventFuture {
                shared: Some(shared),
                tag,
                early: None,
            },
            Err(e) => early(e),
        }
    }

    /// Watches of this future's notifier not yet reported or cancelled
    /// (shared with every other future on it); for tests and diagnostics.
    pub fn notifier_pending(&self) -> usize {
        self.shared.as_ref().map_or(0, |s| s.pending())
    }
}

impl Future for EventFuture {
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        if let Some(e) = self.early.take() {
            return Poll::Ready(Err(e));
        }
        let shared = match &self.shared {
            Some(s) => s.clone(),
            None => panic!("EventFuture polled after it completed"),
        };
        let mut st = shared.lock();
        match st.slots.get_mut(&self.tag) {
            Some(Slot::Waiting(w)) => {
                if !w.as_ref().map_or(false, |w| w.will_wake(cx.waker())) {
                    *w = Some(cx.waker().clone());
                }
            }
            Some(Slot::Done(_)) => {
                let r = match st.slots.remove(&self.tag) {
                    Some(Slot::Done(r)) => r,
                    _ => unreachable!(),
                };
                drop(st);
                self.shared = None;
                return Poll::Ready(r);
            }
            None => unreachable!("a live future's slot is only removed by the future"),
        }
        #[cfg(feature = "tokio")]
        if shared.driver == Driver::Tokio && !st.driven {
            st.driven = true;
            drop(st);
            crate::tokio::drive(shared);
        }
        Poll::Pending
    }
}

impl Drop for EventFuture {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.abandon(self.tag);
        }
    }
}

/// The process's notifier for [`wait`], with its helper thread.
static THREAD_SHARED: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

fn thread_shared() -> Result<Arc<Shared>, Error> {
    let mut g = THREAD_SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = &*g {
        return Ok(s.clone());
    }
    let shared = Shared::new(Driver::Thread)?;
    let s = shared.clone();
    std::thread::Builder::new()
        .name("cw-notifier".into())
        .stack_size(64 * 1024)
        .spawn(move || drive_thread(s))
        .map_err(|_| Error::NoResources)?;
    *g = Some(shared.clone());
    Ok(shared)
}

/// The helper thread: sleeps in poll(2) until the descriptor is readable,
/// then drains. It lives as long as the process.
fn drive_thread(shared: Arc<Shared>) {
    let mut pfd = libc::pollfd {
        fd: shared.fd,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: pfd is one live pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, -1) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            shared.fail_all(Error::NoResources);
            // Later watches are failed at once rather than never woken.
            let mut g = THREAD_SHARED.lock().unwrap_or_else(|e| e.into_inner());
            *g = None;
            return;
        }
        // The woken futures run on their executors' threads meanwhile.
        while shared.drain_batch() == crate::notifier::BATCH {}
    }
}

/// A future of `event`, on any executor (see the module's description).
pub fn wait(event: EventRef<'_>) -> EventFuture {
    EventFuture::watch(thread_shared(), event)
}

/// A future of every event: `Ok(())` once all completed, or a
/// [`WaitAllError`] with each event's status once all finished and one
/// failed (as [`crate::wait_all`], which also waits for all after a
/// failure). An empty list is `InvalidArgument`.
pub fn wait_all(events: &[EventRef<'_>]) -> WaitAll {
    WaitAll::new(events.iter().map(|&e| wait(e)).collect())
}

/// A future of the first of the events to finish: its index, or a
/// [`WaitAnyError`] with the index of the one that failed. The others'
/// watches are cancelled when it is dropped. An empty list is
/// `InvalidArgument`.
pub fn wait_any(events: &[EventRef<'_>]) -> WaitAny {
    WaitAny::new(events.iter().map(|&e| wait(e)).collect())
}

/// The future of [`wait_all`] (and of `tokio::wait_all`).
#[must_use = "futures do nothing unless awaited"]
pub struct WaitAll {
    futures: Vec<Option<EventFuture>>,
    results: Vec<Option<Result<(), Error>>>,
}

impl WaitAll {
    pub(crate) fn new(futures: Vec<EventFuture>) -> WaitAll {
        let n = futures.len();
        WaitAll {
            futures: futures.into_iter().map(Some).collect(),
            results: vec![None; n],
        }
    }
}

impl Future for WaitAll {
    type Output = Result<(), WaitAllError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.futures.is_empty() {
            return Poll::Ready(Err(WaitAllError::new(Error::InvalidArgument, Vec::new())));
        }
        let this = &mut *self;
        let mut left = false;
        for (f, r) in this.futures.iter_mut().zip(this.results.iter_mut()) {
            if let Some(fut) = f {
                match Pin::new(fut).poll(cx) {
                    Poll::Ready(res) => {
                        *r = Some(res);
                        *f = None;
                    }
                    Poll::Pending => left = true,
                }
            }
        }
        if left {
            return Poll::Pending;
        }
        let statuses: Vec<sys::cl_int> = this
            .results
            .iter()
            .map(|r| match r {
                Some(Ok(())) => sys::CL_COMPLETE,
                Some(Err(e)) => e.status().unwrap_or(sys::CL_SUCCESS),
                None => unreachable!(),
            })
            .collect();
        match this.results.iter().find_map(|r| r.and_then(|r| r.err())) {
            None => Poll::Ready(Ok(())),
            Some(e) => Poll::Ready(Err(WaitAllError::new(e, statuses))),
        }
    }
}

/// The future of [`wait_any`] (and of `tokio::wait_any`).
#[must_use = "futures do nothing unless awaited"]
pub struct WaitAny {
    futures: Vec<EventFuture>,
}

impl WaitAny {
    pub(crate) fn new(futures: Vec<EventFuture>) -> WaitAny {
        WaitAny { futures }
    }
}

impl Future for WaitAny {
    type Output = Result<usize, WaitAnyError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.futures.is_empty() {
            return Poll::Ready(Err(WaitAnyError::new(Error::InvalidArgument, None)));
        }
        for (i, fut) in self.futures.iter_mut().enumerate() {
            if let Poll::Ready(r) = Pin::new(fut).poll(cx) {
                // The others are cancelled now, not when this is dropped.
                self.futures.clear();
                return Poll::Ready(r.map(|()| i).map_err(|e| WaitAnyError::new(e, Some(i))));
            }
        }
        Poll::Pending
    }
}
