//! The memory/FPR trade-off of the expiring filters, measured (the table in
//! docs/EXPIRING.md): for a window of N elements at target p, each filter's bits per element of
//! the window and its FPR measured at its fullest, next to a blocked filter that never forgets.
//!
//! ```text
//! cargo run -p bloomkit --example window_table [N] [P,P,...]
//! ```

use bloomkit::clock::ManualClock;
use bloomkit::window::{CountWindowFilter, TimeWindowFilter};
use bloomkit::BlockedBloomFilter;
use std::sync::Arc;
use std::time::Duration;

const QUERIES: u64 = 4_000_000;

fn fpr(contains: impl Fn(u64) -> bool) -> f64 {
    let q = 1u64 << 63;
    (q..q + QUERIES).filter(|&k| contains(k)).count() as f64 / QUERIES as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(1_000_000, |s| s.parse().expect("N"));
    let fpps: Vec<f64> = args
        .next()
        .unwrap_or_else(|| "0.01,0.001".into())
        .split(',')
        .map(|s| s.parse().expect("P"))
        .collect();
    println!("| filter (window of {n}) | target p | bits per element of the window | measured FPR at its fullest |");
    println!("|---|---:|---:|---:|");
    for &p in &fpps {
        let mut c = CountWindowFilter::new(n, p).unwrap();
        let g = c.shape().generation;
        // Just before a generation turns over, in steady state.
        let total = (c.forgotten_after() / g + 2) * g;
        let keys: Vec<u64> = (0..total).collect();
        c.insert_batch(&keys);
        let s = c.shape();
        println!(
            "| count window (k = {}, l = {}) | {p} | {:.2} | {:.5} |",
            s.k,
            s.l,
            s.bits() as f64 / n as f64,
            fpr(|k| c.contains(&k))
        );
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
