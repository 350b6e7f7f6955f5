//! Builds a one-billion-element blocked filter and reports build time, memory and the FPR
//! measured on ten million non-members (not part of the test suite; needs ~1.3 GB at 1%).
//!
//! ```text
//! cargo run --release -p bloomkit --example billion                 # n = 1e9, p = 1%
//! cargo run --release -p bloomkit --example billion -- 100000000 0.001
//! ```

use bloomkit::BlockedBloomFilter;
use std::time::Instant;

/// Distinct 64-bit keys: SplitMix64 of a counter (a bijection, so no duplicates).
fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn main() -> Result<(), bloomkit::Error> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000_000);
    let p: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0.01);
    let queries: u64 = 10_000_000;

    let t = Instant::now();
    let mut filter = BlockedBloomFilter::new(n, p)?;
    let alloc = t.elapsed();
    println!(
        "filter: n = {n}, p = {p}, layout {:?}, {} blocks, {:.2} GiB ({:.2} bits per element), allocated in {:.2?}",
        filter.layout(),
        filter.blocks(),
        filter.memory_bytes() as f64 / (1u64 << 30) as f64,
        filter.bits() as f64 / n as f64,
        alloc
    );

    let t = Instant::now();
    let mut chunk = Vec::with_capacity(1 << 16);
    let mut i = 0;
    while i < n {
        chunk.clear();
        chunk.extend((i..n.min(i + (1 << 16))).map(key));
        filter.insert_batch(&chunk);
        i += chunk.len() as u64;
    }
    let build = t.elapsed();
    println!(
        "build: {n} inserts (batched) in {build:.2?}, {:.1} ns per insert",
        build.as_nanos() as f64 / n as f64
    );

    // Spot-check members, then measure the FPR on keys that were never inserted.
    let step = (n / 1_000_000).max(1);
    let missing = (0..n)
        .step_by(step as usize)
        .filter(|&i| !filter.contains(&key(i)))
        .count();
    let t = Instant::now();
    let strangers: Vec<u64> = (n..n + queries).map(key).collect();
    let hits = filter
        .contains_batch(&strangers)
        .into_iter()
        .filter(|&b| b)
        .count();
    let query = t.elapsed();
    let fpr = hits as f64 / queries as f64;
    // Binomial standard error of the measured rate.
    let se = (fpr * (1.0 - fpr) / queries as f64).sqrt();
    println!(
        "check: {missing} false negatives among {} sampled members; FPR {fpr:.5} ± {se:.5} on {queries} non-members (target {p}); {:.1} ns per batched query",
        n.div_ceil(step),
        query.as_nanos() as f64 / queries as f64
    );
    println!("estimated FPR from the bits: {:.5}", filter.estimated_fpp());
    Ok(())
}
