//! The count window's targets at N = 10⁶, p = 1%: memory against the age-partitioned filter
//! paper's figure for the same (N, p), and the FPR measured over a stream of 10⁸ distinct
//! elements (with a check that none of the last N is ever missed). The figures are in
//! docs/EXPIRING.md.
//!
//! ```text
//! cargo run -p bloomkit --example count_window [N] [P] [STREAM]
//! ```

use bloomkit::window::sizing::paper_figure;
use bloomkit::window::{CountWindowFilter, WindowLayout};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(1_000_000, |s| s.parse().expect("N"));
    let p: f64 = args.next().map_or(0.01, |s| s.parse().expect("P"));
    let stream: u64 = args
        .next()
        .map_or(100_000_000, |s| s.parse().expect("STREAM"));

    // The paper's figure: the least (k + l)·k·N / (l·ln 2) bits over the (k, l) whose FPR at
    // the fullest (the paper's model) meets p.
    let (paper_bits, pk, pl) = paper_figure(n, p).expect("a paper configuration");

    let mut f = CountWindowFilter::new(n, p).unwrap();
    let s = *f.shape();
    println!("N = {n}, p = {p}, stream = {stream}");
    let layout = match f.layout() {
        WindowLayout::Blocked(b) | WindowLayout::BlockedFields(b) => format!(
            "blocked: {} blocks of {} lanes of {} bits, b = {} bits per element",
            b.blocks,
            s.slices(),
            b.lane_bits,
            b.bits_per_element
        ),
        WindowLayout::Slices => format!("{} slices of {} bits", s.slices(), s.slice_bits),
    };
    println!(
        "bloomkit: k = {}, l = {}, g = {}, {layout}: {} bits = {:.3} bits/element ({:.2} MiB)",
        s.k,
        s.l,
        s.generation,
        s.bits(),
        s.bits() as f64 / n as f64,
        s.bits() as f64 / 8.0 / 1048576.0
    );
    println!(
        "paper's least-memory configuration: k = {pk}, l = {pl}: {:.0} bits = {:.3} bits/element",
        paper_bits,
        paper_bits / n as f64
    );
    println!(
        "memory ratio to the paper's figure: {:.3}",
        s.bits() as f64 / paper_bits
    );
    println!(
        "guaranteed window {} insertions, forgotten after {}; design FPR at the fullest {:.5}",
        f.guaranteed_window(),
        f.forgotten_after(),
        f.expected_fpp()
    );

    // Members are 0, 1, 2, ...; queries are keys with the top bit set (never inserted).
    const CHUNK: u64 = 1 << 16;
    let checkpoints = 200u64;
    let every = (stream / checkpoints).max(CHUNK);
    let queries_per_checkpoint = 50_000u64;
    let (mut fp, mut queries, mut worst) = (0u64, 0u64, 0.0f64);
    let mut misses = 0u64;
    let mut q = 1u64 << 63;
    let start = Instant::now();
    let mut next_check = every;
    let mut batch = Vec::with_capacity(CHUNK as usize);
    let mut i = 0u64;
    while i < stream {
        batch.clear();
        batch.extend(i..(i + CHUNK).min(stream));
        f.insert_batch(&batch);
        i += batch.len() as u64;
        if i >= next_check {
            next_check += every;
            // Steady state only: once the first elements have been forgotten.
            if i < f.forgotten_after() {
                continue;
            }
            let mut here = 0;
            for _ in 0..queries_per_checkpoint {
                here += u64::from(f.contains(&q));
                q += 1;
            }
            fp += here;
            queries += queries_per_checkpoint;
            worst = worst.max(here as f64 / queries_per_checkpoint as f64);
            // The last N are all there (a sample of 10,000 of them, and the oldest).
            let oldest = i - n;
            misses += u64::from(!f.contains(&oldest));
            misses += (0..10_000u64)
                .map(|j| oldest + j * (n / 10_000))
                .filter(|x| !f.contains(x))
                .count() as u64;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "stream: {stream} insertions in {secs:.1} s ({:.1} ns per insertion, queries included)",
        secs * 1e9 / stream as f64
    );
    let rate = fp as f64 / queries as f64;
    println!(
        "measured FPR over {queries} queries at {} points of the stream (steady state): {rate:.5} (worst point {worst:.5}); target {p}",
        queries / queries_per_checkpoint
    );
    println!("false negatives among the last N (sampled at each point): {misses}");
    println!(
        "estimated distinct elements in the window at the end: {:.0} (l·g + current = {})",
        f.estimated_len(),
        u64::from(s.l) * s.generation + (stream - (stream - 1) / s.generation * s.generation)
    );
}
