//! Single inserts among other work: what one `insert` call costs a program that does something
//! between two inserts (parses a line, fetches a page, runs an interpreter), as opposed to the
//! tight loops of `interleaved.rs`, where nothing but inserts run and the CPU overlaps many of
//! them.
//!
//! ```text
//! cargo bench -p bloomkit --bench busy_insert                 # URL and u64 keys, n = 1e7
//! BLOOMKIT_WORK=60 BLOOMKIT_ROUNDS=11 BLOOMKIT_KEYS=url cargo bench -p bloomkit --bench busy_insert
//! ```
//!
//! Per key, every contender runs the same work: `BLOOMKIT_WORK` steps (default 60) of a dependent
//! multiply-and-shift chain seeded by the key's index (about 35 ns on the Intel machine of
//! docs/BENCHMARKS.md); then it adds the key to a filter sized for n = `BLOOMKIT_N` keys (default
//! 10⁷) at 1 %, emptied before each run (fastbloom and sbbf-rs-safe are given the key's XXH3-64,
//! computed in the loop, as in `interleaved.rs`). "work alone" runs only the chain. Rounds are
//! interleaved (each runs every contender once over the same `min(n, 2·10⁶)` keys) and the report
//! gives each contender's median time per key and its median extra time over "work alone" in the
//! same round: what the insert adds to the program.

#[path = "support/keys.rs"]
mod keys;

use bloomkit::{BlockedBloomFilter, BloomFilter, Key};
use keys::{splitmix, url_key};
use std::hint::black_box;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_64;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

const NAMES: [&str; 5] = [
    "work alone",
    "bloomkit blocked",
    "bloomkit classic",
    "fastbloom (xxh3)",
    "sbbf-rs-safe (xxh3)",
];

/// The work between two inserts: `steps` dependent multiply-and-shift steps from `seed`.
#[inline(always)]
fn work(seed: u64, steps: u64) -> u64 {
    let mut x = black_box(seed);
    for _ in 0..steps {
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (x >> 29);
    }
    x
}

/// Runs the work and `insert` for every key; returns a value the compiler must compute.
#[inline(never)]
fn run<K>(keys: &[K], steps: u64, mut insert: impl FnMut(&K) -> bool) -> u64 {
    let mut acc = 0u64;
    for (i, k) in keys.iter().enumerate() {
        acc = acc.wrapping_add(work(i as u64, steps));
        acc += u64::from(insert(k));
    }
    acc
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn bench<K: Key>(name: &str, make: impl Fn(u64) -> K, n: u64, rounds: usize, steps: u64) {
    let p = 0.01;
    let sub = 2_000_000.min(n) as usize;
    let keys: Vec<K> = (0..sub as u64).map(&make).collect();
    let mut blocked = BlockedBloomFilter::new(n, p).unwrap();
    let mut classic = BloomFilter::new(n, p).unwrap();
    let mut fast = fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize);
    let bits = (blocked.bits() as f64 / n as f64).ceil() as usize;
    let mut sbbf = sbbf_rs_safe::Filter::new(bits, n as usize);
    println!(
        "\n## {name} keys, n = {n}, p = {p}, {steps} work steps per key, {rounds} rounds of {sub} keys"
    );
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); NAMES.len()];
    let mut extra: Vec<Vec<f64>> = vec![Vec::new(); NAMES.len()];
    for r in 0..rounds {
        let mut times = [0f64; NAMES.len()];
        for j in 0..NAMES.len() {
            // A rotating order, so that no contender always runs after the same one.
            let which = (j + r) % NAMES.len();
            blocked.clear();
            classic.clear();
            fast.clear();
            sbbf.reset();
            let t = Instant::now();
            let out = match which {
                0 => run(&keys, steps, |_| false),
                1 => run(&keys, steps, |k| blocked.insert(k)),
                2 => run(&keys, steps, |k| classic.insert(k)),
                3 => run(&keys, steps, |k| fast.insert_hash(k.with_bytes(xxh3_64))),
                _ => run(&keys, steps, |k| sbbf.insert_hash(k.with_bytes(xxh3_64))),
            };
            times[which] = t.elapsed().as_nanos() as f64 / keys.len() as f64;
            black_box(out);
        }
        for (c, &t) in times.iter().enumerate() {
            ns[c].push(t);
            extra[c].push(t - times[0]);
        }
    }
    println!("| contender | ns/key | extra over work alone |");
    println!("|---|---:|---:|");
    for (c, name) in NAMES.iter().enumerate() {
        println!(
            "| {name} | {:.1} | {:.1} |",
            median(ns[c].clone()),
            median(extra[c].clone())
        );
    }
}

fn main() {
    let n = env("BLOOMKIT_N", 10_000_000);
    let rounds = env("BLOOMKIT_ROUNDS", 11) as usize;
    let steps = env("BLOOMKIT_WORK", 60);
    let which = std::env::var("BLOOMKIT_KEYS").unwrap_or_else(|_| "url,u64".into());
    for k in which.split(',') {
        match k {
            "url" => bench("url", url_key, n, rounds, steps),
            "u64" => bench("u64", splitmix, n, rounds, steps),
            other => eprintln!("unknown key kind {other}: url or u64"),
        }
    }
}
