//! The count window against a plain blocked filter of the same memory at N = 10⁶, p = 1%,
//! interleaved in one process: every round times each operation on each filter over the same
//! keys, and the fastest round of each is kept (on a shared machine the fastest round is the
//! one least disturbed by other processes). The criterion bench `window` times the same
//! operations one after the other.
//!
//! ```text
//! cargo run --profile bench -p bloomkit --example window_speed
//! ```

use bloomkit::window::CountWindowFilter;
use bloomkit::{BlockLayout, BlockedBloomFilter, Hashing};
use std::hint::black_box;
use std::time::Instant;

const N: u64 = 1_000_000;
const OPS: u64 = 200_000;
const ROUNDS: usize = 15;

fn main() {
    let mut window = CountWindowFilter::new(N, 0.01).unwrap();
    let bits = window.shape().bits();
    let mut blocked =
        BlockedBloomFilter::with_layout(bits / 512, BlockLayout::SplitBlock256, Hashing::Xxh3)
            .unwrap();
    let members: Vec<u64> = (0..3 * N).collect();
    window.insert_batch(&members);
    blocked.insert_batch(&members[2 * N as usize..]);
    let present: Vec<u64> = (2 * N..2 * N + OPS).collect();
    let absent: Vec<u64> = (1u64 << 63..(1u64 << 63) + OPS).collect();
    let names = [
        "query, present",
        "query, absent",
        "query batch, present",
        "query batch, absent",
        "insert (no answer)",
        "insert (reports novelty)",
    ];
    let mut best = [[f64::INFINITY; 2]; 6];
    let mut next_key = 10 * N;
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_nanos() as f64 / OPS as f64
    };
    for _ in 0..ROUNDS {
        let mut row = |i: usize, which: usize, ns: f64| {
            best[i][which] = best[i][which].min(ns);
        };
        row(
            0,
            0,
            time(&mut || {
                black_box(present.iter().filter(|k| window.contains(*k)).count());
            }),
        );
        row(
            0,
            1,
            time(&mut || {
                black_box(present.iter().filter(|k| blocked.contains(*k)).count());
            }),
        );
        row(
            1,
            0,
            time(&mut || {
                black_box(absent.iter().filter(|k| window.contains(*k)).count());
            }),
        );
        row(
            1,
            1,
            time(&mut || {
                black_box(absent.iter().filter(|k| blocked.contains(*k)).count());
            }),
        );
        row(
            2,
            0,
            time(&mut || {
                black_box(window.contains_batch(&present));
            }),
        );
        row(
            2,
            1,
            time(&mut || {
                black_box(blocked.contains_batch(&present));
            }),
        );
        row(
            3,
            0,
            time(&mut || {
                black_box(window.contains_batch(&absent));
            }),
        );
        row(
            3,
            1,
            time(&mut || {
                black_box(blocked.contains_batch(&absent));
            }),
        );
        let fresh: Vec<u64> = (next_key..next_key + OPS).collect();
        next_key += OPS;
        row(
            4,
            0,
            time(&mut || {
                for k in &fresh {
                    window.insert_batch(std::slice::from_ref(k));
                }
            }),
        );
        row(
            4,
            1,
            time(&mut || {
                for k in &fresh {
                    black_box(blocked.insert(k));
                }
            }),
        );
        let fresh: Vec<u64> = (next_key..next_key + OPS).collect();
        next_key += OPS;
        row(
            5,
            0,
            time(&mut || {
                for k in &fresh {
                    black_box(window.insert(k));
                }
            }),
        );
        row(
            5,
            1,
            time(&mut || {
                for k in &fresh {
                    black_box(blocked.insert(k));
                }
            }),
        );
    }
    println!(
        "count window N = {N}, p = 0.01 ({} bits) vs blocked filter of the same bits; ns per key, fastest of {ROUNDS} rounds",
        bits
    );
    println!("| operation | count window | blocked, same memory | ratio |");
    println!("|---|---:|---:|---:|");
    for (name, [w, b]) in names.iter().zip(best) {
        println!("| {name} | {w:.1} | {b:.1} | {:.2}× |", w / b);
    }
}
