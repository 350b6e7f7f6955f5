//! The count window against a plain blocked filter of the same memory at N = 10⁶, p = 1%,
//! interleaved in one process: every round times each operation on one filter then the other
//! over the same keys; the table gives the median round of each and, in brackets, the fastest
//! (on a shared machine the one least disturbed by other processes). The criterion bench
//! `window` times the same operations one after the other.
//!
//! ```text
//! cargo run --profile bench -p bloomkit --example window_speed
//! ```

use std::hint::black_box;
use std::time::Instant;

#[path = "../benches/shared/window_filters.rs"]
mod window_setup;

use window_setup::{Timed, N};

const OPS: u64 = 200_000;
const ROUNDS: usize = 15;

/// Nanoseconds per key of `op` over `OPS` keys.
fn time(mut op: impl FnMut()) -> f64 {
    let t = Instant::now();
    op();
    t.elapsed().as_nanos() as f64 / OPS as f64
}

/// One round of every operation on `f`, appended to `rounds` (one list per operation).
fn round(
    f: &mut impl Timed,
    present: &[u64],
    absent: &[u64],
    next_key: &mut u64,
    rounds: &mut [Vec<f64>; 6],
) {
    let mut fresh = || {
        *next_key += OPS;
        (*next_key - OPS..*next_key).collect::<Vec<u64>>()
    };
    let (a, b) = (fresh(), fresh());
    let ns = [
        time(|| {
            black_box(present.iter().filter(|k| f.query(k)).count());
        }),
        time(|| {
            black_box(absent.iter().filter(|k| f.query(k)).count());
        }),
        time(|| {
            black_box(f.query_batch(present));
        }),
        time(|| {
            black_box(f.query_batch(absent));
        }),
        time(|| a.iter().for_each(|k| f.insert_bits(k))),
        time(|| {
            black_box(b.iter().filter(|k| f.insert_new(k)).count());
        }),
    ];
    for (r, ns) in rounds.iter_mut().zip(ns) {
        r.push(ns);
    }
}

/// The median and the fastest of a list of timings.
fn median_and_min(ns: &[f64]) -> (f64, f64) {
    let mut v = ns.to_vec();
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0])
}

fn main() {
    let (mut window, mut blocked) = window_setup::filled();
    let bits = window.shape().bits();
    let present: Vec<u64> = (2 * N..2 * N + OPS).collect();
    let absent: Vec<u64> = (1u64 << 63..(1u64 << 63) + OPS).collect();
    let names = [
        "query, present",
        "query, absent",
        "query batch, present",
        "query batch, absent",
        "insert (sets bits only)",
        "insert (reports novelty)",
    ];
    let (mut w, mut b): ([Vec<f64>; 6], [Vec<f64>; 6]) = Default::default();
    // Both filters insert the same fresh keys, each from its own counter.
    let (mut wk, mut bk) = (10 * N, 10 * N);
    for _ in 0..ROUNDS {
        round(&mut window, &present, &absent, &mut wk, &mut w);
        round(&mut blocked, &present, &absent, &mut bk, &mut b);
    }
    println!(
        "count window N = {N}, p = 0.01 ({bits} bits, {:?}) vs blocked filter of the same bits; ns per key, median (fastest) of {ROUNDS} interleaved rounds",
        window.layout()
    );
    println!("| operation | count window | blocked, same memory | ratio of medians (of fastest) |");
    println!("|---|---:|---:|---:|");
    for (name, (w, b)) in names.iter().zip(w.iter().zip(&b)) {
        let ((wm, wf), (bm, bf)) = (median_and_min(w), median_and_min(b));
        println!(
            "| {name} | {wm:.1} ({wf:.1}) | {bm:.1} ({bf:.1}) | {:.2}× ({:.2}×) |",
            wm / bm,
            wf / bf
        );
    }
}
