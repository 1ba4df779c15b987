// SPDX-License-Identifier: MIT
//! Measures N concurrent waits on a tokio runtime, three ways:
//!   cw        each task awaits `cw_opencl::tokio::wait(event)` (one notifier
//!             descriptor for all of them, no thread per wait);
//!   cw-thread each task awaits `cw_opencl::future::wait(event)` (the
//!             executor-agnostic future: the same notifier, drained by one
//!             helper thread);
//!   blocking  each task awaits `spawn_blocking(clWaitForEvents)` (one
//!             blocking-pool thread per wait; the pool is sized to N so
//!             that no wait queues behind another).
//! Each event is a user event whose command "ends" on a schedule: the
//! i-th at i * gap after the first (all at once with --gap-us 0), and the
//! setting thread calls clSetUserEventStatus for it at that time, or at
//! once when it is behind. A wait's added latency (p50_us, p99_us) runs
//! from its command's scheduled end to the moment its task resumed: a
//! setting thread held back by the waiters' threads (each woken inside
//! clSetUserEventStatus) delays the waits it has not set yet, as a driver
//! thread would be. Further columns: p50_set_us, from the event's own set
//! call instead, which hides that delay; first_us, the least added latency
//! (the first task to resume); late_p99_us, how late the setting thread
//! set the events after their scheduled ends (p99), which a loaded machine
//! adds to every mode; set_ms, from the first scheduled end to the last
//! set. Process CPU (getrusage) is taken from the spawning of the tasks to
//! the last one's end; threads are counted while all N wait. The modes
//! alternate within every round, after one small unreported warm-up run of
//! each.
//!
//!   cargo run --release --features tokio --example concurrent_waits -- \
//!       [--waits N] [--rounds R] [--gap-us G] [--workers W]

#[path = "../tests/cl/mod.rs"]
mod cl;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Cw,
    CwThread,
    Blocking,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Cw => "cw",
            Mode::CwThread => "cw-thread",
            Mode::Blocking => "blocking",
        }
    }
}

struct Run {
    cpu_ms: f64,
    wall_ms: f64,
    set_ms: f64,
    threads_added: usize,
    p50_us: f64,
    p99_us: f64,
    p50_set_us: f64,
    first_us: f64,
    late_p99_us: f64,
}

fn cpu_ns() -> u64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a live rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn now_ns() -> u64 {
    // SAFETY: no arguments.
    unsafe { cw_opencl_sys::cw_now_ns() }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

/// A raw event handle to move into a blocking closure.
#[derive(Clone, Copy)]
struct Handle(cl::cl_event);
unsafe impl Send for Handle {}

fn run(host: &cl::Host, mode: Mode, n: usize, gap: Duration, workers: usize) -> Run {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .max_blocking_threads(n + 8)
        .enable_io()
        .build()
        .expect("runtime");
    // Warm the runtime's workers up before counting threads.
    rt.block_on(async { tokio::task::yield_now().await });
    let events: Vec<_> = (0..n).map(|_| host.user_event()).collect();
    let done: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let threads_before = cl::threads();
    let cpu0 = cpu_ns();
    let wall0 = Instant::now();
    let tasks: Vec<_> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let done = done.clone();
            match mode {
                Mode::Cw | Mode::CwThread => {
                    let fut = if mode == Mode::Cw {
                        cw_opencl::tokio::wait(e.as_ref())
                    } else {
                        cw_opencl::future::wait(e.as_ref())
                    };
                    rt.spawn(async move {
                        fut.await.expect("cw wait");
                        done[i].store(now_ns(), Ordering::Relaxed);
                    })
                }
                Mode::Blocking => {
                    let h = Handle(e.0);
                    rt.spawn(async move {
                        let rc = tokio::task::spawn_blocking(move || {
                            let h = h;
                            // SAFETY: the event outlives the run.
                            unsafe { cl::clWaitForEvents(1, &h.0) }
                        })
                        .await
                        .expect("blocking task");
                        assert_eq!(rc, 0, "clWaitForEvents");
                        done[i].store(now_ns(), Ordering::Relaxed);
                    })
                }
            }
        })
        .collect();
    // Every wait is in place (tasks polled, blocking threads started).
    let settle = Instant::now();
    let mut threads_peak = cl::threads();
    while settle.elapsed() < Duration::from_millis(300) {
        std::thread::sleep(Duration::from_millis(20));
        threads_peak = threads_peak.max(cl::threads());
    }
    // The setter sleeps until each scheduled end with a 1 ns timer slack
    // (the default 50 us would make it late on every gap).
    // SAFETY: prctl with plain integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let gap_ns = gap.as_nanos() as u64;
    let start = now_ns();
    let due: Vec<u64> = (0..n as u64).map(|i| start + i * gap_ns).collect();
    let mut set = vec![0u64; n];
    for (i, e) in events.iter().enumerate() {
        let now = now_ns();
        if due[i] > now {
            std::thread::sleep(Duration::from_nanos(due[i] - now));
        }
        set[i] = now_ns();
        e.set(0);
    }
    let set_ms = (now_ns() - start) as f64 / 1e6;
    rt.block_on(async {
        for t in tasks {
            t.await.expect("task");
        }
    });
    let cpu = cpu_ns() - cpu0;
    let wall = wall0.elapsed();
    drop(rt);
    let latencies = |from: &[u64]| {
        let mut lat: Vec<u64> = (0..n)
            .map(|i| done[i].load(Ordering::Relaxed).saturating_sub(from[i]))
            .collect();
        lat.sort_unstable();
        lat
    };
    let (lat, lat_set) = (latencies(&due), latencies(&set));
    let mut late: Vec<u64> = (0..n).map(|i| set[i] - due[i]).collect();
    late.sort_unstable();
    Run {
        cpu_ms: cpu as f64 / 1e6,
        wall_ms: wall.as_secs_f64() * 1e3,
        set_ms,
        threads_added: threads_peak.saturating_sub(threads_before),
        p50_us: percentile(&lat, 0.50),
        p99_us: percentile(&lat, 0.99),
        p50_set_us: percentile(&lat_set, 0.50),
        first_us: percentile(&lat, 0.0),
        late_p99_us: percentile(&late, 0.99),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let k = v.len();
    if k % 2 == 1 {
        v[k / 2]
    } else {
        (v[k / 2 - 1] + v[k / 2]) / 2.0
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: concurrent_waits [--waits N (1000)] [--rounds R (5)] [--gap-us G (100)] \
         [--workers W (2)]"
    );
    std::process::exit(2)
}

fn main() {
    let (mut n, mut rounds, mut gap_us, mut workers) = (1000usize, 5usize, 100u64, 2usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = || -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage())
        };
        match a.as_str() {
            "--waits" => n = num() as usize,
            "--rounds" => rounds = num() as usize,
            "--gap-us" => gap_us = num(),
            "--workers" => workers = num() as usize,
            "-h" | "--help" => {
                println!(
                    "{}",
                    include_str!("concurrent_waits.rs")
                        .lines()
                        .skip(1)
                        .take_while(|l| l.starts_with("//!"))
                        .map(|l| l.trim_start_matches("//!"))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                return;
            }
            _ => usage(),
        }
    }
    if n == 0 || rounds == 0 || workers == 0 {
        usage();
    }
    let host = cl::Host::new();
    let gap = Duration::from_micros(gap_us);
    println!(
        "# {} concurrent waits on tokio ({} workers), events set {} us apart, {} rounds, \
         modes interleaved after one unreported warm-up run each; cw {}; {} CPUs online",
        n,
        workers,
        gap_us,
        rounds,
        cw_opencl::version_string(),
        std::thread::available_parallelism().map_or(0, |p| p.get())
    );
    // One small unreported run of each mode first: cw's first waits probe
    // the platform, and the first threads and callbacks of a process cost
    // more than later ones.
    const MODES: [Mode; 3] = [Mode::Cw, Mode::CwThread, Mode::Blocking];
    for mode in MODES {
        run(&host, mode, 50.min(n), gap, workers);
    }
    println!(
        "round mode      cpu_ms  wall_ms  set_ms  threads_added  p50_us   p99_us  p50_set_us  first_us  late_p99_us"
    );
    let mut all: Vec<(Mode, Run)> = Vec::new();
    for r in 0..rounds {
        // Each mode takes each place in the order in turn.
        for k in 0..MODES.len() {
            let mode = MODES[(r + k) % MODES.len()];
            let x = run(&host, mode, n, gap, workers);
            println!(
                "{:5} {:9} {:7.1} {:8.1} {:7.1} {:14} {:7.1} {:8.1} {:11.1} {:9.1} {:12.1}",
                r,
                mode.name(),
                x.cpu_ms,
                x.wall_ms,
                x.set_ms,
                x.threads_added,
                x.p50_us,
                x.p99_us,
                x.p50_set_us,
                x.first_us,
                x.late_p99_us
            );
            all.push((mode, x));
        }
    }
    let med = |mode: Mode, f: &dyn Fn(&Run) -> f64| {
        median(
            all.iter()
                .filter(|(m, _)| *m == mode)
                .map(|(_, r)| f(r))
                .collect(),
        )
    };
    println!("# medians over {} rounds", rounds);
    for mode in MODES {
        println!(
            "median {:9} {:7.1} {:8.1} {:7.1} {:14} {:7.1} {:8.1} {:11.1} {:9.1} {:12.1}",
            mode.name(),
            med(mode, &|r| r.cpu_ms),
            med(mode, &|r| r.wall_ms),
            med(mode, &|r| r.set_ms),
            med(mode, &|r| r.threads_added as f64),
            med(mode, &|r| r.p50_us),
            med(mode, &|r| r.p99_us),
            med(mode, &|r| r.p50_set_us),
            med(mode, &|r| r.first_us),
            med(mode, &|r| r.late_p99_us)
        );
    }
    let ratio = med(Mode::Cw, &|r| r.cpu_ms) / med(Mode::Blocking, &|r| r.cpu_ms);
    println!(
        "# cw/blocking: CPU {:.2}x, p50 {:.2}x, p99 {:.2}x, p50 from the set call {:.2}x",
        ratio,
        med(Mode::Cw, &|r| r.p50_us) / med(Mode::Blocking, &|r| r.p50_us),
        med(Mode::Cw, &|r| r.p99_us) / med(Mode::Blocking, &|r| r.p99_us),
        med(Mode::Cw, &|r| r.p50_set_us) / med(Mode::Blocking, &|r| r.p50_set_us)
    );
}
