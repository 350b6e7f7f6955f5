//! The memory/FPR trade-off of the expiring filters, measured (the table in
//! docs/EXPIRING.md): for a window of N elements at target p, each filter's bits per element of
//! the window and its FPR measured at its fullest, next to a blocked filter that never forgets.
//!
//! ```text
//! cargo run -p bloomkit --example window_table [N] [P,P,...]
//! ```

use bloomkit::clock::ManualClock;
use bloomkit::window::{sizing, CountWindowFilter, TimeWindowFilter, WindowLayout};
use bloomkit::{BlockedBloomFilter, Hashing};
use std::sync::Arc;
use std::time::Duration;

#[path = "support/args.rs"]
mod args;

const QUERIES: u64 = 40_000_000;

fn fpr(contains: impl Fn(u64) -> bool) -> f64 {
    let q = 1u64 << 63;
    (q..q + QUERIES).filter(|&k| contains(k)).count() as f64 / QUERIES as f64
}

/// The row of a count window, measured just before a generation turns over (its fullest),
/// in steady state.
fn count_window_row(mut c: CountWindowFilter, n: u64, p: f64) {
    let g = c.shape().generation;
    let total = (c.forgotten_after() / g + 2) * g;
    let keys: Vec<u64> = (0..total).collect();
    c.insert_batch(&keys);
    let s = c.shape();
    let layout = match c.layout() {
        WindowLayout::Blocked(b) | WindowLayout::BlockedFields(b) => format!(
            "blocked, {} lanes of {} bits, b = {}",
            s.slices(),
            b.lane_bits,
            b.bits_per_element
        ),
        WindowLayout::Slices => "one bit array per slice".into(),
    };
    println!(
        "| count window, {layout} (k = {}, l = {}; forgotten after {:.2}·N) | {p} | {:.2} | {:.5} |",
        s.k,
        s.l,
        c.forgotten_after() as f64 / n as f64,
        s.bits() as f64 / n as f64,
        fpr(|k| c.contains(&k))
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(1_000_000, |s| s.parse().expect("N"));
    let fpps: Vec<f64> = args::list(args.next(), "0.01,0.001", "P");
    println!("| filter (window of {n}) | target p | bits per element of the window | measured FPR at its fullest |");
    println!("|---|---:|---:|---:|");
    for &p in &fpps {
        count_window_row(CountWindowFilter::new(n, p).unwrap(), n, p);
        let shape = sizing::age_partitioned_for(n, p).unwrap();
        let slices = CountWindowFilter::from_shape(shape, n, p, Hashing::Xxh3).unwrap();
        count_window_row(slices, n, p);
        for generations in [7u32, 30] {
            let clock = Arc::new(ManualClock::new(0));
            let day = Duration::from_secs(86_400);
            let mut t = TimeWindowFilter::new(day * generations, generations, n, p)
                .unwrap()
                .with_clock(clock.clone());
            // Every live generation (one window and the current generation) full.
            let per = n.div_ceil(u64::from(generations));
            for gen in 0..=u64::from(generations) {
                let keys: Vec<u64> = (gen * per..(gen + 1) * per).collect();
                t.insert_batch(&keys);
                if gen < u64::from(generations) {
                    clock.advance(day);
                }
            }
            println!(
                "| time window, {generations} generations | {p} | {:.2} | {:.5} |",
                t.memory_bytes() as f64 * 8.0 / n as f64,
                fpr(|k| t.contains(&k))
            );
        }
        let mut b = BlockedBloomFilter::new(n, p).unwrap();
        let keys: Vec<u64> = (0..n).collect();
        b.insert_batch(&keys);
        println!(
            "| blocked, never forgets (reference) | {p} | {:.2} | {:.5} |",
            b.bits() as f64 / n as f64,
            fpr(|k| b.contains(&k))
        );
    }
}
