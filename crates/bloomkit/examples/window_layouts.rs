//! Why the count window's blocked layout is what it is: the memory each candidate layout needs
//! for a window of N at FPR p, from the model over block loads, against the age-partitioned
//! paper's figure (docs/EXPIRING.md, "The blocked layout").
//!
//! - The paper's layout blocked: `k + l = 32` slices, one bit per element in each of its `k`
//!   slices, every slice's sub-word of an element in one block of 1, 2 or 4 cache lines. Block
//!   loads are Poisson per generation; a run of `k` slices shares the loads of the `2k - 1`
//!   generations it holds. The FPR is bounded by the first-run decomposition
//!   `P(run at 0) + Σₛ P(slice s-1 misses, run at s)`, each term computed exactly by
//!   inclusion–exclusion over the slices with the Poisson generating function.
//! - `k = 1` with `b` bits per element in each slice: `L` lanes of `w` bits per block
//!   (`LaneModel`, `math::blocked_fpp`), `1 - (1 - p_lane)^L`; one bit in each of 8 sub-lanes
//!   of `w / 8` bits (what bloomkit builds), or the best `b` positions over the whole lane.
//!
//! ```text
//! cargo run --release -p bloomkit --example window_layouts [N] [P]
//! ```

use bloomkit::math::blocks_for;
use bloomkit::window::sizing::{paper_figure, LaneModel};

/// `E[∏_{i ∈ [a, a+m)} fill_i]` for slices of sub-words of `w` bits whose generations each put
/// a Poisson(`lambda`) load on a block, slice `i` holding generations `max(0, i-k+1)..=i`:
/// inclusion–exclusion over the slices, the state being which of the last `k - 1` are chosen.
fn window_prob(k: usize, a: usize, m: usize, lambda: f64, w: f64) -> f64 {
    let q = 1.0 - 1.0 / w;
    let phi: Vec<f64> = (0..=k)
        .map(|c| (lambda * (q.powi(c as i32) - 1.0)).exp())
        .collect();
    let mask = (1usize << (k - 1)) - 1;
    let mut dp = vec![0.0; mask + 1];
    dp[0] = 1.0;
    for i in a..a + m {
        let mut next = vec![0.0; mask + 1];
        for (s, &v) in dp.iter().enumerate() {
            for chosen in 0..2usize {
                let full = (s << 1) | chosen;
                let mut f = if chosen == 1 { -v } else { v };
                if i + 1 >= k {
                    f *= phi[full.count_ones() as usize];
                }
                next[full & mask] += f;
            }
        }
        dp = next;
    }
    let end = a + m;
    dp.iter()
        .enumerate()
        .map(|(s, &v)| {
            (end.saturating_sub(k - 1)..end).fold(v, |f, t| {
                f * phi[(s & ((1usize << (end - t)) - 1)).count_ones() as usize]
            })
        })
        .sum()
}

/// The FPR bound of the paper's layout with `h` slices blocked into sub-words of `w` bits.
fn paper_blocked_fpp(k: usize, h: usize, lambda: f64, w: f64) -> f64 {
    let mut p = window_prob(k, 0, k, lambda, w);
    for s in 1..=h - k {
        p += window_prob(k, s, k, lambda, w) - window_prob(k, s - 1, k + 1, lambda, w);
    }
    p
}

/// The fewest blocks (by bisection) with `fpp(blocks) <= p`.
fn fewest(p: f64, fpp: impl Fn(u64) -> f64) -> u64 {
    let (mut lo, mut hi) = (1u64, 1u64 << 40);
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if fpp(mid) <= p {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(1_000_000, |s| s.parse().expect("N"));
    let p: f64 = args.next().map_or(0.01, |s| s.parse().expect("P"));
    let (paper, pk, pl) = paper_figure(n, p).unwrap();
    println!(
        "N = {n}, p = {p}: the paper's figure {:.2} bits per element (k = {pk}, l = {pl})",
        paper / n as f64
    );
    println!("| layout | cache lines per query | bits per element | ratio to the paper |");
    println!("|---|---:|---:|---:|");
    let h = 32usize;
    for w in [16.0, 32.0, 64.0] {
        let lines = h as f64 * w / 512.0;
        let best = (4..=16usize)
            .map(|k| {
                let g = n.div_ceil((h - k) as u64) as f64;
                let blocks = fewest(p, |b| paper_blocked_fpp(k, h, g / b as f64, w));
                (blocks as f64 * h as f64 * w, k)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        println!(
            "| paper's (one bit per slice), {h} slices of {w}-bit sub-words, best k = {} | {lines} | {:.2} | {:.3} |",
            best.1,
            best.0 / n as f64,
            best.0 / paper
        );
    }
    for (lanes, w) in [(4u32, 128u32), (4, 256), (8, 64), (8, 128)] {
        let g = n.div_ceil(u64::from(lanes - 1));
        let per_lane = -((-p).ln_1p() / f64::from(lanes)).exp_m1();
        let bits = |model: &LaneModel| {
            blocks_for(model, g, per_lane, 1, 1 << 40).map(|b| b as f64 * f64::from(lanes * w))
        };
        // What bloomkit builds: one bit in each of 8 sub-lanes of w/8 bits.
        let split = bits(&LaneModel::new(w, 8)).unwrap();
        // For comparison: the best b positions drawn over the whole lane.
        let fields = (1..=16u32)
            .filter_map(|b| Some((bits(&LaneModel::fields(w, b))?, b)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        for (what, bits) in [
            ("one bit in each of 8 sub-lanes".to_string(), split),
            (
                format!("best b = {} positions over the lane", fields.1),
                fields.0,
            ),
        ] {
            println!(
                "| k = 1, {lanes} lanes of {w} bits, {what} (forgotten after {:.2}·N) | {} | {:.2} | {:.3} |",
                f64::from(lanes) / f64::from(lanes - 1),
                (lanes * w).div_ceil(512),
                bits / n as f64,
                bits / paper
            );
        }
    }
}
