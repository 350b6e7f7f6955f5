//! The time window's targets: no false negative inside the window over 10⁷ timed insertions
//! with an injected clock, and elements forgotten after the window plus one generation (their
//! hit rate falls to the FPR of the filter without them). The figures are in docs/EXPIRING.md.
//!
//! ```text
//! cargo run -p bloomkit --example time_window [INSERTIONS]
//! ```

use bloomkit::clock::{Clock, ManualClock};
use bloomkit::window::TimeWindowFilter;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let total: u64 = std::env::args()
        .nth(1)
        .map_or(10_000_000, |s| s.parse().expect("INSERTIONS"));
    let day_ms = 86_400_000u64;
    let window_ms = 30 * day_ms;
    // 90 days of traffic, a third of it in any window.
    let span_ms = 90 * day_ms;
    let per_window = total / 3;
    let clock = Arc::new(ManualClock::new(1_764_000_000_000));
    let mut f = TimeWindowFilter::new(Duration::from_millis(window_ms), 30, per_window, 0.01)
        .unwrap()
        .with_clock(clock.clone());
    println!(
        "{total} insertions over 90 days; window 30d in 30 generations, {per_window} per window, p = 0.01; {:.1} MiB, {:.2} bits per element of a window",
        f.memory_bytes() as f64 / 1048576.0,
        f.memory_bytes() as f64 * 8.0 / per_window as f64
    );
    let start_ms = clock.now_ms();
    let step = span_ms as f64 / total as f64;
    let mut times = Vec::with_capacity(total as usize);
    let (mut checked, mut misses) = (0u64, 0u64);
    let started = Instant::now();
    for i in 0..total {
        let now = start_ms + (i as f64 * step) as u64;
        clock.set(now);
        f.insert(&i);
        times.push(now);
        // The oldest element inside the window (inserted at or after now - window).
        let j = times.partition_point(|&t| t + window_ms < now) as u64;
        checked += 1;
        misses += u64::from(!f.contains(&j));
        // And one random one inside it.
        let r = j + (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) % (i - j + 1);
        checked += 1;
        misses += u64::from(!f.contains(&r));
    }
    println!(
        "{checked} checks of elements inside the window during the run: {misses} false negatives ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    // At the end: every element inside the window, and the hit rate of those older than the
    // window plus one generation.
    let now = clock.now_ms();
    let inside = times.partition_point(|&t| t + window_ms < now) as u64;
    let lost = (inside..total).filter(|x| !f.contains(x)).count();
    println!(
        "at the end: {} elements inside the window, {lost} not found",
        total - inside
    );
    let forgotten = times.partition_point(|&t| t + window_ms + day_ms < now) as u64;
    let sample = forgotten.min(1_000_000);
    let hits = (0..sample).filter(|x| f.contains(x)).count();
    let fresh = (0..sample).filter(|x| f.contains(&(x | 1 << 62))).count();
    println!(
        "older than window + one generation: {sample} queried, hit rate {:.5}; never-inserted keys: {:.5}; estimated FPR {:.5}",
        hits as f64 / sample as f64,
        fresh as f64 / sample as f64,
        f.estimated_fpp()
    );
}
