//! How long sizing a blocked filter takes: `BlockedBloomFilter::new` searches for the
//! smallest (blocks, layout) meeting the target (`probe::blocked::default_params`), and that
//! search, not the allocation, is what constructing a small filter costs.
//!
//! Prints the median time of `default_params`, `params_for` (compact and split-block) and of
//! constructing a 1000-element filter, over a grid of (n, p); with `--table`, prints the
//! chosen (blocks, layout) of the grid instead (the pinned table of `tests/blocked_sizing.rs`,
//! `tests/data/blocked_sizes.txt`).
//!
//! ```sh
//! cargo run --release -p bloomkit --example blocked_sizing
//! cargo run --release -p bloomkit --example blocked_sizing -- --table
//! ```

use bloomkit::probe::blocked::{default_params, params_for, BlockLayout};
use bloomkit::BlockedBloomFilter;
use std::time::{Duration, Instant};

/// The sizes of the grid.
const NS: [u64; 10] = [
    1,
    10,
    1_000,
    12_345,
    100_000,
    1_000_000,
    10_000_000,
    123_456_789,
    1_000_000_000,
    100_000_000_000,
];

/// The targets of the grid.
const PS: [f64; 10] = [0.5, 0.2, 0.1, 0.03, 0.01, 0.0037, 1e-3, 1e-4, 1e-6, 1e-9];

fn layout(l: BlockLayout) -> String {
    format!("{l:?}")
}

/// The median of `rounds` timings of `f` over the whole grid, per (n, p).
fn median_per_call(rounds: usize, mut f: impl FnMut(u64, f64)) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for n in NS {
                for p in PS {
                    f(n, p);
                }
            }
            t.elapsed() / (NS.len() * PS.len()) as u32
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

fn main() -> bloomkit::Result<()> {
    if std::env::args().any(|a| a == "--table") {
        for n in NS {
            for p in PS {
                let (b, l) = default_params(n, p)?;
                let (cb, cl) = params_for(n, p, false)?;
                let (sb, _) = params_for(n, p, true)?;
                println!("{n} {p:e} {b} {} {cb} {} {sb}", layout(l), layout(cl));
            }
        }
        return Ok(());
    }
    let rounds = 15;
    let t = median_per_call(rounds, |n, p| {
        std::hint::black_box(default_params(n, p).unwrap());
    });
    println!("default_params (what new uses): {t:?} per (n, p), median of {rounds} rounds");
    let t = median_per_call(rounds, |n, p| {
        std::hint::black_box(params_for(n, p, false).unwrap());
    });
    println!("params_for compact:             {t:?}");
    let t = median_per_call(rounds, |n, p| {
        std::hint::black_box(params_for(n, p, true).unwrap());
    });
    println!("params_for split-block:         {t:?}");
    let mut slowest = (Duration::ZERO, 0, 0.0);
    for n in NS {
        for p in PS {
            // The fastest of 5 runs: a slow one is the machine, not the search.
            let t = (0..5)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(default_params(n, p).unwrap());
                    t.elapsed()
                })
                .min()
                .unwrap_or_default();
            if t > slowest.0 {
                slowest = (t, n, p);
            }
        }
    }
    println!(
        "slowest default_params (fastest of 5 runs): {:?} at n = {}, p = {}",
        slowest.0, slowest.1, slowest.2
    );
    let mut times: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(BlockedBloomFilter::new(1000, 0.01).unwrap());
            t.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "BlockedBloomFilter::new(1000, 0.01): {:?} (median of 200)",
        times[100]
    );
    Ok(())
}
