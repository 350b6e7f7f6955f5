//! The figures of `docs/COUNTING.md`:
//!
//! 1. memory per element and measured FPR of the d-left counting filter next to the 4-bit
//!    counting filter, at 1 % and 0.1 % (and the counting filter sized for the FPR the d-left
//!    filter actually measured);
//! 2. over-estimates of the counting filter's frequency query on a Zipf-distributed stream,
//!    minimum selection (the default insertion) against minimal increase.
//!
//! ```sh
//! cargo run -p bloomkit --example counting_memory            # n = 10^6, 10^6 queries
//! cargo run -p bloomkit --example counting_memory -- 100000  # a smaller n
//! ```

use bloomkit::storage::CounterWidth;
use bloomkit::{CountingBloomFilter, DLeftCountingFilter, Spec};

/// Fraction of `queries` never-inserted keys that `contains` lets through.
fn measured_fpr(contains: impl Fn(u64) -> bool, n: u64, queries: u64) -> f64 {
    (n..n + queries).filter(|&k| contains(k)).count() as f64 / queries as f64
}

/// One binomial standard deviation of a rate `q` measured over `t` trials.
fn sigma(q: f64, t: u64) -> f64 {
    (q * (1.0 - q) / t as f64).sqrt()
}

fn memory(n: u64) -> bloomkit::Result<bool> {
    let queries = n;
    println!("## Memory per element, n = {n}, {queries} queries of absent keys\n");
    println!("| target p | filter | bits/element | expected FPR | measured FPR (±1σ) | memory vs 4-bit counting |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut met = true;
    let mut summary = Vec::new();
    for p in [0.01, 0.001] {
        let mut dleft = DLeftCountingFilter::new(n, p)?;
        for k in 0..n {
            dleft.insert(&k)?;
        }
        let mut counting = CountingBloomFilter::new(n, p)?;
        for k in 0..n {
            counting.insert(&k);
        }
        let d_fpr = measured_fpr(|k| dleft.contains(&k), n, queries);
        let c_fpr = measured_fpr(|k| counting.contains(&k), n, queries);
        // The counting filter sized for the FPR the d-left filter measured: the same accuracy.
        let mut same = CountingBloomFilter::new(n, d_fpr.max(1.0 / queries as f64))?;
        for k in 0..n {
            same.insert(&k);
        }
        let s_fpr = measured_fpr(|k| same.contains(&k), n, queries);
        let bits = |bytes: usize| bytes as f64 * 8.0 / n as f64;
        let (d_bits, c_bits, s_bits) = (
            bits(dleft.memory_bytes()),
            bits(counting.memory_bytes()),
            bits(same.memory_bytes()),
        );
        let rows = [
            (
                "d-left",
                d_bits,
                dleft.params().expected_fpp(dleft.len()),
                d_fpr,
                queries,
            ),
            (
                "4-bit counting",
                c_bits,
                counting.spec().params().expected_fpp(n),
                c_fpr,
                queries,
            ),
            (
                "4-bit counting at d-left's measured FPR",
                s_bits,
                same.spec().params().expected_fpp(n),
                s_fpr,
                queries,
            ),
        ];
        for (name, b, expected, measured, t) in rows {
            println!(
                "| {}% | {name} | {b:.2} | {expected:.5} | {measured:.5} (±{:.5}) | {:.2}× |",
                p * 100.0,
                sigma(measured, t),
                b / c_bits
            );
        }
        // The target: at most 0.6x the counting filter's memory at the same measured FPR,
        // and the d-left filter's FPR within 5σ of its design value and at most p.
        let expected = dleft.params().expected_fpp(dleft.len());
        summary.push(format!(
            "- p = {p}: d-left / 4-bit counting at the same measured FPR = {:.2}× ({d_bits:.2} vs {s_bits:.2} bits per element)",
            d_bits / s_bits
        ));
        met &= d_bits <= 0.6 * s_bits && d_bits <= 0.6 * c_bits;
        met &= (d_fpr - expected).abs() <= 5.0 * sigma(expected, queries) && expected <= p;
        eprintln!(
            "p = {p}: d-left load {:.3}, {} saturated cells; target met so far: {met}",
            dleft.load(),
            dleft.saturated()
        );
    }
    println!();
    for line in summary {
        println!("{line}");
    }
    println!();
    Ok(met)
}

/// A Zipf(s) sampler over ranks `1..=universe` (inverse CDF by binary search).
struct Zipf {
    cdf: Vec<f64>,
    state: u64,
}

impl Zipf {
    fn new(universe: u64, s: f64, seed: u64) -> Zipf {
        let mut total = 0.0;
        let cdf = (1..=universe)
            .map(|r| {
                total += (r as f64).powf(-s);
                total
            })
            .collect::<Vec<_>>();
        let cdf = cdf.iter().map(|c| c / total).collect();
        Zipf { cdf, state: seed }
    }

    fn next(&mut self) -> u64 {
        // SplitMix64 for a uniform double in [0, 1).
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let u = (z ^ (z >> 31)) as f64 / 2f64.powi(64);
        self.cdf.partition_point(|&c| c <= u) as u64 + 1
    }
}

fn zipf(stream: u64) -> bloomkit::Result<()> {
    let universe = stream / 10;
    println!(
        "## Frequency estimates on a Zipf stream: {stream} occurrences of ranks 1..={universe}\n"
    );
    println!(
        "Over-estimate of a key = estimate − min(true count, 255) (8-bit counters), over every \
         distinct key of the stream.\n"
    );
    println!("| exponent s | distinct keys | filter sized for | insertion | mean over-estimate | max over-estimate | keys over-estimated |");
    println!("|---:|---:|---|---|---:|---:|---:|");
    for s in [0.8, 1.0, 1.2] {
        let mut z = Zipf::new(universe, s, 42);
        let mut truth = std::collections::HashMap::<u64, u64>::new();
        let keys: Vec<u64> = (0..stream).map(|_| z.next()).collect();
        for &k in &keys {
            *truth.entry(k).or_default() += 1;
        }
        let distinct = truth.len() as u64;
        for (label, capacity, p) in [
            ("distinct keys, 1%", distinct, 0.01),
            ("distinct keys / 4, 1%", distinct / 4, 0.01),
        ] {
            let spec = Spec::for_capacity(capacity, p)?;
            let mut plain = CountingBloomFilter::from_spec(spec.clone(), CounterWidth::Eight)?;
            let mut mi =
                CountingBloomFilter::from_spec(spec, CounterWidth::Eight)?.with_minimal_increase();
            for &k in &keys {
                plain.insert(&k);
                mi.insert(&k);
            }
            for (name, f) in [("minimum selection", &plain), ("minimal increase", &mi)] {
                let (mut sum, mut max, mut wrong) = (0u64, 0u64, 0u64);
                for (k, &c) in &truth {
                    let est = u64::from(f.count(k));
                    let truth = c.min(255);
                    assert!(est >= truth, "under-estimate of {k}: {est} < {truth}");
                    let e = est - truth;
                    sum += e;
                    max = max.max(e);
                    wrong += u64::from(e > 0);
                }
                println!(
                    "| {s} | {distinct} | {label} | {name} | {:.4} | {max} | {:.2}% |",
                    sum as f64 / distinct as f64,
                    wrong as f64 * 100.0 / distinct as f64
                );
            }
        }
    }
    println!();
    Ok(())
}

fn main() -> bloomkit::Result<()> {
    let n = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("n: a positive integer"))
        .unwrap_or(1_000_000u64);
    let met = memory(n)?;
    zipf(n)?;
    println!(
        "d-left target (at most 0.6x the 4-bit counting filter's memory at the same measured FPR, FPR within its bound): {}",
        if met { "met" } else { "NOT met" }
    );
    Ok(())
}
