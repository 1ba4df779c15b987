// SPDX-License-Identifier: MIT
//! The few OpenCL calls the tests and examples need to make events: a
//! context and queue on the first platform's first device, user events,
//! markers. Declared here rather than taken from an OpenCL crate: the crate
//! itself only passes handles through. Linked through cw-opencl.pc's
//! `Requires: OpenCL`.
#![allow(dead_code, non_camel_case_types)]

use std::os::raw::{c_uint, c_void};
use std::ptr::{null, null_mut};

pub use cw_opencl::{cl_event, cl_int};
pub type cl_platform_id = *mut c_void;
pub type cl_device_id = *mut c_void;
pub type cl_context = *mut c_void;
pub type cl_command_queue = *mut c_void;

const CL_DEVICE_TYPE_ALL: u64 = 0xFFFF_FFFF;

extern "C" {
    fn clGetPlatformIDs(n: c_uint, platforms: *mut cl_platform_id, found: *mut c_uint) -> cl_int;
    fn clGetDeviceIDs(
        platform: cl_platform_id,
        device_type: u64,
        n: c_uint,
        devices: *mut cl_device_id,
        found: *mut c_uint,
    ) -> cl_int;
    fn clCreateContext(
        properties: *const isize,
        n: c_uint,
        devices: *const cl_device_id,
        notify: *const c_void,
        user_data: *mut c_void,
        err: *mut cl_int,
    ) -> cl_context;
    fn clReleaseContext(context: cl_context) -> cl_int;
    fn clCreateCommandQueue(
        context: cl_context,
        device: cl_device_id,
        properties: u64,
        err: *mut cl_int,
    ) -> cl_command_queue;
    fn clReleaseCommandQueue(queue: cl_command_queue) -> cl_int;
    fn clCreateUserEvent(context: cl_context, err: *mut cl_int) -> cl_event;
    fn clSetUserEventStatus(event: cl_event, status: cl_int) -> cl_int;
    fn clReleaseEvent(event: cl_event) -> cl_int;
    fn clEnqueueMarkerWithWaitList(
        queue: cl_command_queue,
        n: c_uint,
        wait_list: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    fn clFinish(queue: cl_command_queue) -> cl_int;
    pub fn clWaitForEvents(n: c_uint, events: *const cl_event) -> cl_int;
}

fn check(what: &str, err: cl_int) {
    assert_eq!(err, 0, "{} failed: OpenCL error {}", what, err);
}

/// A context and an in-order queue on the first platform's first device.
pub struct Host {
    pub context: cl_context,
    pub queue: cl_command_queue,
}

unsafe impl Send for Host {}
unsafe impl Sync for Host {}

impl Host {
    pub fn new() -> Host {
        // PoCL's first clGetPlatformIDs/clGetDeviceIDs set its devices up;
        // two at once on parallel test threads can find no device.
        static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = SETUP.lock().unwrap_or_else(|e| e.into_inner());
        unsafe {
            let mut platform = null_mut();
            let mut n = 0;
            check(
                "clGetPlatformIDs",
                clGetPlatformIDs(1, &mut platform, &mut n),
            );
            assert!(n > 0, "no OpenCL platform (install pocl-opencl-icd)");
            let mut device = null_mut();
            check(
                "clGetDeviceIDs",
                clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, &mut n),
            );
            let mut err = 0;
            let context = clCreateContext(null(), 1, &device, null(), null_mut(), &mut err);
            check("clCreateContext", err);
            let queue = clCreateCommandQueue(context, device, 0, &mut err);
            check("clCreateCommandQueue", err);
            Host { context, queue }
        }
    }

    /// A user event, owned (released on drop).
    pub fn user_event(&self) -> UserEvent {
        let mut err = 0;
        let ev = unsafe { clCreateUserEvent(self.context, &mut err) };
        check("clCreateUserEvent", err);
        UserEvent(ev)
    }

    /// A marker command that waits for `gate`: a real command of the queue.
    pub fn marker_after(&self, gate: &UserEvent) -> Owned {
        let mut ev = null_mut();
        check("clEnqueueMarkerWithWaitList", unsafe {
            clEnqueueMarkerWithWaitList(self.queue, 1, &gate.0, &mut ev)
        });
        Owned(ev)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        unsafe {
            clFinish(self.queue);
            clReleaseCommandQueue(self.queue);
            clReleaseContext(self.context);
        }
    }
}

/// An event of ours, released on drop.
pub struct Owned(pub cl_event);

unsafe impl Send for Owned {}
unsafe impl Sync for Owned {}

impl Owned {
    pub fn as_ref(&self) -> cw_opencl::EventRef<'_> {
        // SAFETY: the event lives as long as self.
        unsafe { cw_opencl::EventRef::from_raw(self.0) }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        unsafe { clReleaseEvent(self.0) };
    }
}

/// A user event, released on drop.
pub struct UserEvent(pub cl_event);

unsafe impl Send for UserEvent {}
unsafe impl Sync for UserEvent {}

impl UserEvent {
    pub fn as_ref(&self) -> cw_opencl::EventRef<'_> {
        // SAFETY: the event lives as long as self.
        unsafe { cw_opencl::EventRef::from_raw(self.0) }
    }

    /// CL_COMPLETE (0) or a negative status for a failed command.
    pub fn set(&self, status: cl_int) {
        check("clSetUserEventStatus", unsafe {
            clSetUserEventStatus(self.0, status)
        });
    }
}

impl Drop for UserEvent {
    fn drop(&mut self) {
        unsafe { clReleaseEvent(self.0) };
    }
}

// --- a minimal executor, for the futures that need none -------------------

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` on this thread, parking between polls.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = Box::pin(fut);
    let waker = Waker::from(Arc::new(Unparker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// A waker that counts its wake-ups.
pub struct Counter(pub AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn counting_waker() -> (Arc<Counter>, Waker) {
    let c = Arc::new(Counter(AtomicUsize::new(0)));
    (c.clone(), Waker::from(c))
}

/// Threads of this process now.
pub fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}
