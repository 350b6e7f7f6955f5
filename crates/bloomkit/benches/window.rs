//! The count window against a plain blocked filter of the same memory, at N = 10⁶, p = 1%
//! (docs/EXPIRING.md): single-key queries of members and non-members, and inserts.
//!
//! ```text
//! cargo bench -p bloomkit --bench window
//! ```
//!
//! Every row times 1024 operations per iteration over u64 keys (hashing included). Count-window
//! `insert` reports whether the element was new, so it queries first; `insert_batch` only sets
//! bits, like the blocked filter's insert.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

#[path = "shared/window_filters.rs"]
mod window_setup;

use window_setup::N;

const OPS: u64 = 1024;

fn bench(c: &mut Criterion) {
    let (mut window, mut blocked) = window_setup::filled();
    let members: Vec<u64> = (2 * N..3 * N).collect();
    let recent = &members[..];
    let mut g = c.benchmark_group(format!("window_n{N}_p0.01"));
    g.throughput(Throughput::Elements(OPS));
    g.measurement_time(Duration::from_secs(3));
    g.warm_up_time(Duration::from_secs(1));
    let mut at = 0usize;
    let mut next = |pool: &[u64]| {
        at = (at + OPS as usize) % (pool.len() - OPS as usize);
        at
    };
    g.bench_function("count-window/query-present", |b| {
        b.iter(|| {
            let s = next(recent);
            recent[s..s + OPS as usize]
                .iter()
                .filter(|k| window.contains(*k))
                .count()
        })
    });
    g.bench_function("blocked/query-present", |b| {
        b.iter(|| {
            let s = next(recent);
            recent[s..s + OPS as usize]
                .iter()
                .filter(|k| blocked.contains(*k))
                .count()
        })
    });
    g.bench_function("count-window/query-present-batch", |b| {
        b.iter(|| {
            let s = next(recent);
            window.contains_batch(&recent[s..s + OPS as usize])
        })
    });
    g.bench_function("blocked/query-present-batch", |b| {
        b.iter(|| {
            let s = next(recent);
            blocked.contains_batch(&recent[s..s + OPS as usize])
        })
    });
    let absent: Vec<u64> = (1u64 << 63..(1u64 << 63) + N).collect();
    g.bench_function("count-window/query-absent", |b| {
        b.iter(|| {
            let s = next(&absent);
            absent[s..s + OPS as usize]
                .iter()
                .filter(|k| window.contains(*k))
                .count()
        })
    });
    g.bench_function("blocked/query-absent", |b| {
        b.iter(|| {
            let s = next(&absent);
            absent[s..s + OPS as usize]
                .iter()
                .filter(|k| blocked.contains(*k))
                .count()
        })
    });
    g.bench_function("count-window/query-absent-batch", |b| {
        b.iter(|| {
            let s = next(&absent);
            window.contains_batch(&absent[s..s + OPS as usize])
        })
    });
    g.bench_function("blocked/query-absent-batch", |b| {
        b.iter(|| {
            let s = next(&absent);
            blocked.contains_batch(&absent[s..s + OPS as usize])
        })
    });
    let mut key = 10 * N;
    g.bench_function("count-window/insert", |b| {
        b.iter(|| {
            for _ in 0..OPS {
                key += 1;
                black_box(window.insert(&key));
            }
        })
    });
    g.bench_function("count-window/insert-no-answer", |b| {
        b.iter(|| {
            for _ in 0..OPS {
                key += 1;
                window.insert_batch(std::slice::from_ref(&key));
            }
        })
    });
    g.bench_function("blocked/insert", |b| {
        b.iter(|| {
            for _ in 0..OPS {
                key += 1;
                black_box(blocked.insert(&key));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
