//! The count window against a plain blocked filter of the same memory, at N = 10⁶, p = 1%
//! (docs/EXPIRING.md): single-key and batch queries of members and non-members, and inserts,
//! each row for both filters, one after the other.
//!
//! ```text
//! cargo bench -p bloomkit --bench window
//! ```
//!
//! Every row times 1024 operations per iteration over u64 keys (hashing included). `insert`
//! reports whether the element was new, so it queries first; `insert-bits` only sets bits (the
//! count window's `insert_batch` of one key, the blocked filter's `insert`). The interleaved
//! comparison the docs quote is the `window_speed` example.

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

#[path = "shared/window_filters.rs"]
mod window_setup;

use criterion::measurement::WallTime;
use window_setup::{Timed, N};

const OPS: usize = 1024;

/// The rows of one filter.
fn rows(g: &mut BenchmarkGroup<WallTime>, name: &str, f: &mut impl Timed, next_key: &mut u64) {
    let present: Vec<u64> = (2 * N..3 * N).collect();
    let absent: Vec<u64> = (1u64 << 63..(1u64 << 63) + N).collect();
    for (row, keys) in [("present", &present), ("absent", &absent)] {
        let mut at = 0usize;
        let mut next = || {
            at = (at + OPS) % (keys.len() - OPS);
            &keys[at..at + OPS]
        };
        g.bench_function(format!("{name}/query-{row}"), |b| {
            b.iter(|| next().iter().filter(|k| f.query(k)).count())
        });
        g.bench_function(format!("{name}/query-{row}-batch"), |b| {
            b.iter(|| f.query_batch(next()))
        });
    }
    g.bench_function(format!("{name}/insert"), |b| {
        b.iter(|| {
            for _ in 0..OPS {
                *next_key += 1;
                black_box(f.insert_new(next_key));
            }
        })
    });
    g.bench_function(format!("{name}/insert-bits"), |b| {
        b.iter(|| {
            for _ in 0..OPS {
                *next_key += 1;
                f.insert_bits(next_key);
            }
        })
    });
}

fn bench(c: &mut Criterion) {
    let (mut window, mut blocked) = window_setup::filled();
    let mut g = c.benchmark_group(format!("window_n{N}_p0.01"));
    g.throughput(Throughput::Elements(OPS as u64));
    g.measurement_time(Duration::from_secs(3));
    g.warm_up_time(Duration::from_secs(1));
    let mut key = 10 * N;
    rows(&mut g, "count-window", &mut window, &mut key);
    rows(&mut g, "blocked", &mut blocked, &mut key);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
