// SPDX-License-Identifier: MIT
//! A complete program: a command gated by a user event, waited on three
//! ways (blocking with a timeout, on tokio, and many at once on tokio's
//! one notifier descriptor), with a failed command's status reported.
//!
//!   cargo run --features tokio --example wait

#[path = "../tests/cl/mod.rs"]
mod cl;

use cw_opencl::{Error, Strategy, WaitOptions};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cw {}", cw_opencl::version_string());
    let host = cl::Host::new();

    // 1. Blocking, with a timeout: the gate is not set yet.
    let gate = host.user_event();
    let marker = host.marker_after(&gate);
    let opts = WaitOptions::new()
        .strategy(Strategy::Auto)
        .timeout(Duration::from_millis(50));
    match cw_opencl::wait(marker.as_ref(), &opts) {
        Err(Error::Timeout { status }) => println!("timed out after 50 ms, status {}", status),
        other => println!("unexpected: {:?}", other),
    }

    // 2. On tokio: a task awaits the marker while another thread opens the gate.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .build()?;
    let waited = rt.spawn(cw_opencl::tokio::wait(marker.as_ref()));
    let t0 = Instant::now();
    gate.set(0);
    rt.block_on(waited)??;
    println!("marker complete, awaited in {:?}", t0.elapsed());

    // 3. A hundred waits on one descriptor; one command fails.
    let events: Vec<_> = (0..100).map(|_| host.user_event()).collect();
    let tasks: Vec<_> = events
        .iter()
        .map(|e| rt.spawn(cw_opencl::tokio::wait(e.as_ref())))
        .collect();
    for (i, e) in events.iter().enumerate() {
        e.set(if i == 42 { -5 } else { 0 });
    }
    rt.block_on(async {
        for (i, t) in tasks.into_iter().enumerate() {
            match t.await.expect("task") {
                Ok(()) => {}
                Err(Error::CommandFailed { status }) => {
                    println!("event {} failed: status {}", i, status)
                }
                Err(e) => println!("event {}: {}", i, e),
            }
        }
    });
    println!("done");
    Ok(())
}
