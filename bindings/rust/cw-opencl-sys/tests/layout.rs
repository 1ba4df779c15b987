// SPDX-License-Identifier: MIT
//! Every struct shared with C has the C headers' size, alignment and field
//! offsets, and every constant the headers' value: a C program compiled
//! against the installed headers (the flags pkg-config gave the build
//! script) prints them, and each is compared with this crate's.

use cw_opencl_sys::*;
use std::collections::HashMap;
use std::mem::{align_of, size_of, MaybeUninit};
use std::process::Command;

const PROGRAM: &str = r#"
#define CL_TARGET_OPENCL_VERSION 300
#include <stddef.h>
#include <stdio.h>
#include <cw.h>
#define S(t) printf("size " #t " %zu\nalign " #t " %zu\n", sizeof(t), _Alignof(t));
#define O(t, f) printf("offset " #t "." #f " %zu\n", offsetof(t, f));
#define C(c) \
    if ((c) < 0) printf("const " #c " %lld\n", (long long)(c)); \
    else printf("const " #c " %llu\n", (unsigned long long)(c));
int main(void) {
    S(cw_wait_options) O(cw_wait_options, strategy) O(cw_wait_options, flags)
    O(cw_wait_options, timeout_us) O(cw_wait_options, check_interval_us)
    O(cw_wait_options, parker) O(cw_wait_options, spin_us) O(cw_wait_options, interrupt_fd)
    O(cw_wait_options, reserved)
    S(cw_parker) O(cw_parker, ops)
    S(cw_parker_ops) O(cw_parker_ops, park) O(cw_parker_ops, unpark)
    S(cw_futex_parker) O(cw_futex_parker, parker) O(cw_futex_parker, state)
    S(cw_notifier_result) O(cw_notifier_result, tag) O(cw_notifier_result, rc)
    O(cw_notifier_result, status)
    S(cw_stats) O(cw_stats, waits) O(cw_stats, spins) O(cw_stats, yields) O(cw_stats, parks)
    O(cw_stats, sleeps) O(cw_stats, polls) O(cw_stats, timeouts) O(cw_stats, latency_count)
    O(cw_stats, latency_us)
    S(cw_stats_auto) O(cw_stats_auto, platforms_probed) O(cw_stats_auto, platforms_failed_fire)
    O(cw_stats_auto, platforms_failed_silent) O(cw_stats_auto, platforms_late)
    O(cw_stats_auto, lateness_ns) O(cw_stats_auto, lateness_samples)
    O(cw_stats_auto, unchecked_waits) O(cw_stats_auto, deferred_checks)
    O(cw_stats_auto, checks) O(cw_stats_auto, hybrid_waits)
    O(cw_stats_auto, hybrid_callback_first) O(cw_stats_auto, late_callbacks)
    O(cw_stats_auto, driver_waits) O(cw_stats_auto, platforms_driver_wait)
    S(cw_strategy) S(cw_error) S(cl_event) S(cl_int)
    C(CW_OK) C(CW_ERR_INVALID_ARGUMENT) C(CW_ERR_INVALID_EVENT) C(CW_ERR_TIMEOUT)
    C(CW_ERR_COMMAND_FAILED) C(CW_ERR_OPENCL) C(CW_ERR_NO_MEMORY) C(CW_ERR_UNSUPPORTED)
    C(CW_ERR_NO_RESOURCES) C(CW_ERR_INTERRUPTED) C(CW_DEADLINE_NONE)
    C(CW_VERSION_MAJOR) C(CW_VERSION_MINOR) C(CW_VERSION_PATCH) C(CW_VERSION_NUMBER)
    C(CW_STRATEGY_DEFAULT) C(CW_STRATEGY_BLOCKING) C(CW_STRATEGY_COOPERATIVE)
    C(CW_STRATEGY_POLL) C(CW_STRATEGY_COOPERATIVE_WAKE_LOCKED)
    C(CW_STRATEGY_COOPERATIVE_NOYIELD) C(CW_STRATEGY_PTHREAD) C(CW_STRATEGY_SPIN_PARK)
    C(CW_STRATEGY_BACKOFF_POLL) C(CW_STRATEGY_AUTO) C(CW_STRATEGY_COUNT)
    C(CW_WAIT_NO_FLUSH) C(CW_WAIT_OWN_CALLBACK) C(CW_WAIT_POLL) C(CW_WAIT_LATENCY) C(CW_WAIT_INTERRUPT_FD)
    C(CW_WAIT_FLAGS_ALL_) C(CW_INTERRUPT_LOOK_US)
    C(CW_SPIN_US_DEFAULT) C(CW_SPIN_US_MAX) C(CW_SPIN_PARK_YIELDS) C(CW_AUTO_SPIN_US_CAP)
    C(CW_CHECK_INTERVAL_US_DEFAULT) C(CW_CHECK_INTERVAL_US_MAX) C(CW_CHECK_INTERVAL_GROWTH)
    C(CW_WAIT_MANY_MAX) C(CW_STATS_LATENCY_BUCKETS)
    C(CL_COMPLETE) C(CL_RUNNING) C(CL_SUBMITTED) C(CL_QUEUED) C(CL_SUCCESS)
    return 0;
}
"#;

/// What the C compiler says, keyed "size T", "align T", "offset T.f", "const C".
fn c_layout() -> HashMap<String, i128> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cw-opencl-sys-layout");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, PROGRAM).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .arg("-std=c11")
        .args(env!("CW_OPENCL_SYS_CFLAGS").split_whitespace())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{}`: {}", cc, e));
    assert!(status.success(), "{} failed on the layout program", cc);
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let mut map = HashMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let (key, value) = line.rsplit_once(' ').unwrap();
        map.insert(key.to_string(), value.parse::<i128>().unwrap());
    }
    map
}

/// The offset of a field, from a pointer into an uninitialised value
/// (core::mem::offset_of! came after this crate's minimum Rust).
macro_rules! offset {
    ($t:ty, $f:ident) => {{
        let v = MaybeUninit::<$t>::uninit();
        let base = v.as_ptr();
        // SAFETY: addr_of! takes the field's address without reading it.
        let field = unsafe { std::ptr::addr_of!((*base).$f) };
        (field as usize - base as usize) as i128
    }};
}

#[test]
fn structs_and_constants_match_the_c_headers() {
    let c = c_layout();
    let mut rust: Vec<(String, i128)> = Vec::new();
    macro_rules! s {
        ($t:ty) => {
            rust.push((format!("size {}", stringify!($t)), size_of::<$t>() as i128));
            rust.push((
                format!("align {}", stringify!($t)),
                align_of::<$t>() as i128,
            ));
        };
    }
    macro_rules! o {
        ($t:ty, $($f:ident),+) => {
            $(rust.push((format!("offset {}.{}", stringify!($t), stringify!($f)), offset!($t, $f)));)+
        };
    }
    macro_rules! k {
        ($($c:ident),+) => {
            $(rust.push((format!("const {}", stringify!($c)), $c as i128));)+
        };
    }
    s!(cw_wait_options);
    o!(
        cw_wait_options,
        strategy,
        flags,
        timeout_us,
        check_interval_us,
        parker,
        spin_us,
        interrupt_fd,
        reserved
    );
    s!(cw_parker);
    o!(cw_parker, ops);
    s!(cw_parker_ops);
    o!(cw_parker_ops, park, unpark);
    s!(cw_futex_parker);
    o!(cw_futex_parker, parker, state);
    s!(cw_notifier_result);
    o!(cw_notifier_result, tag, rc, status);
    s!(cw_stats);
    o!(
        cw_stats,
        waits,
        spins,
        yields,
        parks,
        sleeps,
        polls,
        timeouts,
        latency_count,
        latency_us
    );
    s!(cw_stats_auto);
    o!(
        cw_stats_auto,
        platforms_probed,
        platforms_failed_fire,
        platforms_failed_silent,
        platforms_late,
        lateness_ns,
        lateness_samples,
        unchecked_waits,
        deferred_checks,
        checks,
        hybrid_waits,
        hybrid_callback_first,
        late_callbacks,
        driver_waits,
        platforms_driver_wait
    );
    s!(cw_strategy);
    s!(cw_error);
    s!(cl_event);
    s!(cl_int);
    k!(
        CW_OK,
        CW_ERR_INVALID_ARGUMENT,
        CW_ERR_INVALID_EVENT,
        CW_ERR_TIMEOUT
    );
    k!(
        CW_ERR_COMMAND_FAILED,
        CW_ERR_OPENCL,
        CW_ERR_NO_MEMORY,
        CW_ERR_UNSUPPORTED
    );
    k!(CW_ERR_NO_RESOURCES, CW_ERR_INTERRUPTED, CW_DEADLINE_NONE);
    k!(
        CW_VERSION_MAJOR,
        CW_VERSION_MINOR,
        CW_VERSION_PATCH,
        CW_VERSION_NUMBER
    );
    k!(
        CW_STRATEGY_DEFAULT,
        CW_STRATEGY_BLOCKING,
        CW_STRATEGY_COOPERATIVE,
        CW_STRATEGY_POLL
    );
    k!(
        CW_STRATEGY_COOPERATIVE_WAKE_LOCKED,
        CW_STRATEGY_COOPERATIVE_NOYIELD
    );
    k!(
        CW_STRATEGY_PTHREAD,
        CW_STRATEGY_SPIN_PARK,
        CW_STRATEGY_BACKOFF_POLL
    );
    k!(CW_STRATEGY_AUTO, CW_STRATEGY_COUNT);
    k!(
        CW_WAIT_NO_FLUSH,
        CW_WAIT_OWN_CALLBACK,
        CW_WAIT_POLL,
        CW_WAIT_LATENCY,
        CW_WAIT_INTERRUPT_FD,
        CW_WAIT_FLAGS_ALL_
    );
    k!(CW_INTERRUPT_LOOK_US);
    k!(
        CW_SPIN_US_DEFAULT,
        CW_SPIN_US_MAX,
        CW_SPIN_PARK_YIELDS,
        CW_AUTO_SPIN_US_CAP
    );
    k!(
        CW_CHECK_INTERVAL_US_DEFAULT,
        CW_CHECK_INTERVAL_US_MAX,
        CW_CHECK_INTERVAL_GROWTH
    );
    k!(CW_WAIT_MANY_MAX, CW_STATS_LATENCY_BUCKETS);
    k!(CL_COMPLETE, CL_RUNNING, CL_SUBMITTED, CL_QUEUED, CL_SUCCESS);

    let mut mismatches = Vec::new();
    for (key, value) in &rust {
        match c.get(key) {
            Some(v) if v == value => {}
            other => mismatches.push(format!("{}: Rust {}, C {:?}", key, value, other)),
        }
    }
    // Every line the C program printed was compared: none left unchecked.
    for key in c.keys() {
        if !rust.iter().any(|(k, _)| k == key) {
            mismatches.push(format!("{}: printed by C, not checked in Rust", key));
        }
    }
    assert!(
        mismatches.is_empty(),
        "layout mismatches:\n{}",
        mismatches.join("\n")
    );
    assert!(rust.len() > 100, "only {} items compared", rust.len());
}

#[test]
fn links_against_the_installed_library() {
    // The version the build found through pkg-config is the one running.
    let v = unsafe { cw_version() };
    let s = unsafe { std::ffi::CStr::from_ptr(cw_version_string()) };
    assert_eq!(s.to_str().unwrap(), env!("CW_OPENCL_SYS_VERSION"));
    assert_eq!(
        v / 10000,
        CW_VERSION_MAJOR,
        "a different major version is not ABI compatible"
    );
    let msg = unsafe { std::ffi::CStr::from_ptr(cw_strerror(CW_ERR_TIMEOUT)) };
    assert!(!msg.to_bytes().is_empty());
}
