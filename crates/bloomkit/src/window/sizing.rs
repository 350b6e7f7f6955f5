//! Sizing of the expiring filters: the age-partitioned filter's false-positive model and its
//! choice of `k` and `l` (Shtul, Baquero & Almeida, "Age-Partitioned Bloom Filters", 2020),
//! the model and size search of its blocked layout ([`BlockedAgePartitioned`]), and the time
//! window's split of its FPR budget over its generations.
//!
//! ## Why the blocked layout has `k = 1`
//! In the paper's layout an element has one bit in each of its `k` slices (`k ≈ 10` at 1%),
//! and a query reads a word in each slice, in separate cache lines. Putting every slice's bits
//! of an element in one block makes the slices of a block share their load: an element that
//! lands in a busy block meets fuller sub-words in all the `k` slices of a run at once. The
//! model over block loads (Poisson loads per block and generation, a run of `k` slices holding
//! `2k - 1` generations) puts the cost at 1%, N = 10⁶, `k + l = 32` slices, at 24.1 bits per
//! element in one cache line, 22.1 in two and 21.2 in four, against the paper's 19.7: only four
//! lines stay within 1.1× of it. With `k = 1` and `b = 8` bits per element in each slice, one in
//! each 16-bit sub-lane (every slice a small split-block filter of its own generation: a query
//! tests the same 8 bits in each lane of one block, an insert sets them in the newest), 4 lanes
//! of 128 bits need 21.0 bits per element in one cache line (1.07× the paper), so that is the
//! layout new filters use.
//! `cargo run --release -p bloomkit --example window_layouts` prints these figures.

use crate::error::{Error, Result};
use crate::math::{self, BlockModel, MAX_BITS};
use std::f64::consts::LN_2;

/// Slices are whole 512-bit blocks, so that each starts on a cache line in memory and in a
/// file.
pub const SLICE_ALIGN_BITS: u64 = 512;

/// The largest `k` (slices an element is inserted into) the sizing considers.
pub const MAX_K: u32 = 40;

/// The largest `l` (extra slices, one per remembered generation) the sizing considers.
pub const MAX_L: u32 = 200;

/// The shape of an age-partitioned filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgePartitioned {
    /// Slices each element is inserted into (and must be found in, consecutively).
    pub k: u32,
    /// Extra slices: how many full generations an element outlives its own.
    pub l: u32,
    /// Insertions per generation: a new generation starts every `g` insertions.
    pub generation: u64,
    /// Bits per slice (a multiple of 512).
    pub slice_bits: u64,
}

impl AgePartitioned {
    /// Slices in all: `k + l`.
    pub fn slices(&self) -> u32 {
        self.k + self.l
    }

    /// Bits in all: `(k + l) · slice_bits`.
    pub fn bits(&self) -> u64 {
        u64::from(self.slices()).saturating_mul(self.slice_bits)
    }

    /// The guaranteed window: each of the last `l · g` insertions is always found.
    pub fn window(&self) -> u64 {
        u64::from(self.l).saturating_mul(self.generation)
    }

    /// The age (in later insertions) after which an element has certainly left the filter,
    /// every one of its bits cleared: `(k + l) · g`.
    pub fn forgotten_after(&self) -> u64 {
        u64::from(self.slices()).saturating_mul(self.generation)
    }

    /// The fill ratio of each slice, newest first, just before a new generation starts (the
    /// fullest the filter gets): the slice at age `i` holds `min(i + 1, k)` generations.
    pub fn steady_fills(&self) -> Vec<f64> {
        (0..self.slices())
            .map(|i| {
                let n = u64::from((i + 1).min(self.k)) * self.generation;
                slice_fill(self.slice_bits, n)
            })
            .collect()
    }

    /// The FPR at its fullest: [`run_probability`] of [`steady_fills`](Self::steady_fills).
    pub fn expected_fpp(&self) -> f64 {
        run_probability(&self.steady_fills(), self.k)
    }
}

/// The expected fill of a slice of `bits` bits after `n` insertions of one bit each:
/// `1 - (1 - 1/bits)^n`.
pub fn slice_fill(bits: u64, n: u64) -> f64 {
    if bits == 0 {
        return 1.0;
    }
    -((n as f64) * (-1.0 / bits as f64).ln_1p()).exp_m1()
}

/// The probability that a sequence of independent slices, slice `i` hit with probability
/// `fills[i]`, has a run of `k` consecutive hits: the FPR of an age-partitioned filter whose
/// slices have those fills (the paper's false-positive model, computed as a Markov chain on
/// the length of the current run of hits).
pub fn run_probability(fills: &[f64], k: u32) -> f64 {
    let k = k as usize;
    if k == 0 {
        return 1.0;
    }
    // state[r]: probability that the current run has length r (< k) and no run of k yet.
    let mut state = vec![0.0f64; k];
    state[0] = 1.0;
    let mut done = 0.0;
    for &f in fills {
        let f = f.clamp(0.0, 1.0);
        let mut next = vec![0.0f64; k];
        for (r, &p) in state.iter().enumerate() {
            next[0] += p * (1.0 - f);
            if r + 1 == k {
                done += p * f;
            } else {
                next[r + 1] += p * f;
            }
        }
        state = next;
    }
    done
}

/// How much more memory than the least the sizing accepts to need fewer slices (faster
/// queries): 5%.
pub const MEMORY_SLACK: f64 = 1.05;

/// The paper's sizing for a window of the last `n` insertions at FPR `p`: slices of
/// `k·g / ln 2` bits (half full at their fullest; here rounded up to whole 512-bit blocks),
/// `g = ⌈n / l⌉`, and `(k, l)` such that the FPR at the fullest is at most `p`. Of those
/// pairs, the paper's optimum needs the least memory, about `(k + l)·k/l / ln 2` bits per
/// element of the window, but often with a hundred slices or more; a query reads one word per
/// slice. So this takes the pair with the fewest slices whose memory is within
/// [`MEMORY_SLACK`] of the least (at 1%: `k = 10, l = 24`, 20.5 bits per element against the
/// optimum's 19.7 with 100 slices).
pub fn age_partitioned_for(n: u64, p: f64) -> Result<AgePartitioned> {
    let p = math::check_fpp(p)?;
    if n == 0 {
        return Err(Error::InvalidParameters(
            "a count window must hold at least one insertion".into(),
        ));
    }
    // Every (k, l) is considered (with small windows, rounding slices up to whole blocks makes
    // the FPR and the memory jump about with l); the paper's memory, a lower bound of the
    // rounded one, skips the DP for pairs that cannot win.
    let lower_bound = |k, l| paper_bits_per_element(k, l) * n as f64;
    let mut least: Option<u64> = None;
    for k in 1..=MAX_K {
        for l in 1..=MAX_L {
            if least.is_some_and(|b| lower_bound(k, l) >= b as f64) {
                continue;
            }
            let s = shape(n, k, l)?;
            if s.expected_fpp() <= p {
                least = Some(least.map_or(s.bits(), |b| b.min(s.bits())));
            }
        }
    }
    let Some(least) = least else {
        return Err(Error::InvalidParameters(format!(
            "no age-partitioned filter with k ≤ {MAX_K} and l ≤ {MAX_L} reaches FPR {p}"
        )));
    };
    // Then the fewest slices within the memory limit.
    let limit = least as f64 * MEMORY_SLACK;
    let mut best: Option<AgePartitioned> = None;
    for k in 1..=MAX_K {
        for l in 1..=MAX_L {
            if lower_bound(k, l) > limit || best.is_some_and(|b| k + l > b.slices()) {
                continue;
            }
            let s = shape(n, k, l)?;
            if s.bits() as f64 <= limit
                && best.is_none_or(|b| (s.slices(), s.bits()) < (b.slices(), b.bits()))
                && s.expected_fpp() <= p
            {
                best = Some(s);
            }
        }
    }
    Ok(best.expect("the least-memory shape is within the limit"))
}

/// The paper's memory before rounding: `(k + l)·k / (l·ln 2)` bits per element.
pub fn paper_bits_per_element(k: u32, l: u32) -> f64 {
    f64::from(k + l) * f64::from(k) / f64::from(l) / LN_2
}

/// The shape for window `n` with `k` and `l`: `g = ⌈n / l⌉`, slices of `⌈k·g / ln 2⌉` bits
/// rounded up to whole blocks.
pub fn shape(n: u64, k: u32, l: u32) -> Result<AgePartitioned> {
    if k == 0 || l == 0 {
        return Err(Error::InvalidParameters(format!(
            "an age-partitioned filter needs k ≥ 1 and l ≥ 1 (got k = {k}, l = {l})"
        )));
    }
    let generation = n.div_ceil(u64::from(l)).max(1);
    let raw = (f64::from(k) * generation as f64 / LN_2).ceil();
    let too_large = Error::TooLarge {
        bits: u64::MAX,
        limit: "a count-window slice of more than 2⁴⁸ bits",
    };
    if raw >= (1u64 << 48) as f64 {
        return Err(too_large);
    }
    let slice_bits = (raw as u64).max(1).div_ceil(SLICE_ALIGN_BITS) * SLICE_ALIGN_BITS;
    Ok(AgePartitioned {
        k,
        l,
        generation,
        slice_bits,
    })
}

/// The paper's figure for a window of `n` at FPR `p`: the least memory `(k + l)·k·n / (l·ln 2)`
/// bits over the pairs `(k, l)` (`k ≤ 40`, `l ≤ 200`) whose FPR at the fullest meets `p`,
/// as `(bits, k, l)`.
pub fn paper_figure(n: u64, p: f64) -> Result<(f64, u32, u32)> {
    let p = math::check_fpp(p)?;
    let mut best: Option<(f64, u32, u32)> = None;
    for k in 1..=MAX_K {
        for l in 1..=MAX_L {
            let bits = paper_bits_per_element(k, l) * n as f64;
            if best.is_some_and(|(b, _, _)| bits >= b) {
                continue;
            }
            if shape(n, k, l)?.expected_fpp() <= p {
                best = Some((bits, k, l));
            }
        }
    }
    best.ok_or_else(|| {
        Error::InvalidParameters(format!(
            "no age-partitioned filter with k ≤ {MAX_K} and l ≤ {MAX_L} reaches FPR {p}"
        ))
    })
}

/// Slices (lanes) in a block of the blocked layout: the current generation and the `l = 3`
/// before it (so an element is certainly forgotten `4·g ≈ 1.33·N` insertions later, against
/// `(k + l)·g ≈ 1.42·N` for the paper's layout at 1%; eight lanes would forget sooner, at
/// `1.14·N`, but need blocks of two cache lines for the same memory).
pub const LANES: u32 = 4;

/// The lane widths the blocked layout takes, fastest first: a block of 4 lanes of 128 bits is
/// one cache line, of 256 bits two, of 512 bits four.
pub const LANE_BITS: [u32; 3] = [128, 256, 512];

/// Bits per element in its slice in the blocked layout: one in each of 8 sub-lanes of
/// `w / 8` bits (16, 32 or 64), as the split-block filters do in a block, so that a lane's
/// mask is one vector multiply and shift (at 1% and N = 10⁶ this needs 21.02 bits per
/// element; the best `b` positions drawn over the whole lane, `b = 7`, needed 21.18).
pub const BITS_PER_SLICE: u32 = 8;

/// The blocked layout takes the fastest lane width whose memory is at most this factor of
/// [`paper_figure`] (the target), else the most compact one.
pub const BLOCKED_MEMORY_LIMIT: f64 = 1.1;

/// The shape of a blocked age-partitioned filter (see the module documentation): `k = 1`,
/// `l = LANES - 1`, blocks of [`LANES`] lanes, lane `j` of every block being slice `j`, and
/// `b` bits per element in its lane, one in each of `b` sub-lanes (`b` =
/// [`BITS_PER_SLICE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockedAgePartitioned {
    /// Insertions per generation.
    pub generation: u64,
    /// Blocks (each `LANES · lane_bits` bits).
    pub blocks: u64,
    /// Bits of one slice in one block: 128, 256 or 512.
    pub lane_bits: u32,
    /// Bits set per element in its slice (`b`, one per sub-lane of `lane_bits / b` bits;
    /// always [`BITS_PER_SLICE`]).
    pub bits_per_element: u32,
}

impl BlockedAgePartitioned {
    /// The shape as the paper's parameters: `k = 1`, `l = LANES - 1`, the generation, and the
    /// bits of one slice (its lane in every block).
    pub fn age_partitioned(&self) -> AgePartitioned {
        AgePartitioned {
            k: 1,
            l: LANES - 1,
            generation: self.generation,
            slice_bits: self.blocks.saturating_mul(u64::from(self.lane_bits)),
        }
    }

    /// Bits in all.
    pub fn bits(&self) -> u64 {
        self.age_partitioned().bits()
    }

    /// The expected FPR at the fullest (every slice holding a whole generation):
    /// `1 - (1 - p_slice)^LANES`, `p_slice` from the block-load model of one lane
    /// ([`LaneModel`], [`math::blocked_fpp`]). A query tests the same bits in each slice, and
    /// the slices hold different elements, so they answer independently.
    pub fn expected_fpp(&self) -> f64 {
        self.expected_fpp_with(&LaneModel::new(self.lane_bits, self.bits_per_element))
    }

    /// [`expected_fpp`](Self::expected_fpp) with lanes of another model (the first blocked
    /// layout's positions over the lane, [`LaneModel::fields`]).
    pub fn expected_fpp_with(&self, model: &LaneModel) -> f64 {
        let slice = math::blocked_fpp(model, self.blocks, self.generation);
        1.0 - (1.0 - slice).powi(LANES as i32)
    }
}

/// One lane of the blocked layout as sizing sees it: `lane_bits` bits cut into `b` sub-lanes
/// of `lane_bits / b` bits, each element setting one bit in every sub-lane (the split-block
/// pattern, what bloomkit builds: [`LaneModel::new`]); or, for comparison, `b` positions drawn
/// uniformly with replacement over the whole lane ([`LaneModel::fields`], so `D ≤ b` distinct
/// ones). A lane holding `j` elements answers a non-member with probability
/// `(1 - (1 - b/w)^j)^b` in the first, `E[f^D]` with `f = 1 - (1 - E[D]/w)^j` in the second.
#[derive(Debug, Clone)]
pub struct LaneModel {
    lane_bits: f64,
    /// Bits of a sub-lane, or 0 for positions over the whole lane.
    sub_lane_bits: f64,
    /// `P(D = d)` for `d = 0..=b`.
    distinct: Vec<f64>,
    /// `E[D]`.
    mean: f64,
}

impl LaneModel {
    /// The model of a lane of `lane_bits` bits with `b` sub-lanes of `lane_bits / b` bits
    /// (`b` must divide `lane_bits`), one bit of each element in each.
    pub fn new(lane_bits: u32, b: u32) -> Self {
        let mut distinct = vec![0.0; b as usize + 1];
        distinct[b as usize] = 1.0;
        LaneModel {
            lane_bits: f64::from(lane_bits),
            sub_lane_bits: f64::from(lane_bits / b.max(1)),
            distinct,
            mean: f64::from(b),
        }
    }

    /// The model of a lane of `lane_bits` bits with `b` positions per element drawn over the
    /// whole lane, with replacement.
    pub fn fields(lane_bits: u32, b: u32) -> Self {
        let w = f64::from(lane_bits);
        // Occupancy: after each draw, the distinct count grows with probability (w - d) / w.
        let mut distinct = vec![0.0; b as usize + 1];
        distinct[0] = 1.0;
        for _ in 0..b {
            for d in (0..b as usize).rev() {
                let grow = distinct[d] * (w - d as f64) / w;
                distinct[d + 1] += grow;
                distinct[d] -= grow;
            }
        }
        let mean = distinct.iter().enumerate().map(|(d, p)| d as f64 * p).sum();
        LaneModel {
            lane_bits: w,
            sub_lane_bits: 0.0,
            distinct,
            mean,
        }
    }

    /// The expected distinct bits an element sets (`E[D]`), for count estimates.
    pub fn mean_distinct(&self) -> f64 {
        self.mean
    }

    /// The probability that a non-member hits a lane whose bits are set with probability
    /// `fill` each: `E[fill^D]`.
    pub fn fpp_from_fill(&self, fill: f64) -> f64 {
        self.distinct
            .iter()
            .enumerate()
            .map(|(d, p)| p * fill.powi(d as i32))
            .sum()
    }
}

impl BlockModel for LaneModel {
    fn fpp_in_block(&self, load: u64) -> f64 {
        // A bit of a sub-lane (or of the lane) is clear after `load` elements with
        // probability (1 - 1/s)^load (or (1 - E[D]/w)^load).
        let clear = if self.sub_lane_bits > 0.0 {
            -1.0 / self.sub_lane_bits
        } else {
            -self.mean / self.lane_bits
        };
        self.fpp_from_fill(-((load as f64) * clear.ln_1p()).exp_m1())
    }
}

/// The blocked layout for a window of the last `n` insertions at FPR `p`: `g = ⌈n / l⌉` with
/// `l = LANES - 1`, `b` = [`BITS_PER_SLICE`]; for each lane width the fewest blocks whose
/// [`expected_fpp`](BlockedAgePartitioned::expected_fpp) meets `p`
/// ([`math::blocks_for`] on one lane at `1 - (1 - p)^(1/LANES)`); of those, the fastest
/// (narrowest lanes) within [`BLOCKED_MEMORY_LIMIT`] of [`paper_figure`], else the smallest.
pub fn blocked_age_partitioned_for(n: u64, p: f64) -> Result<BlockedAgePartitioned> {
    let p = math::check_fpp(p)?;
    if n == 0 {
        return Err(Error::InvalidParameters(
            "a count window must hold at least one insertion".into(),
        ));
    }
    let generation = n.div_ceil(u64::from(LANES - 1));
    let per_slice = -((-p).ln_1p() / f64::from(LANES)).exp_m1();
    let widths: Vec<BlockedAgePartitioned> = LANE_BITS
        .into_iter()
        .filter_map(|lane_bits| smallest_with_lanes(generation, per_slice, lane_bits))
        .collect();
    let limit = paper_figure(n, p).map_or(0.0, |(bits, _, _)| bits * BLOCKED_MEMORY_LIMIT);
    let fast = widths.iter().find(|s| s.bits() as f64 <= limit);
    fast.or_else(|| widths.iter().min_by_key(|s| s.bits()))
        .copied()
        .ok_or(Error::TooLarge {
            bits: u64::MAX,
            limit: "no blocked count window this platform can address meets that FPR",
        })
}

/// The smallest blocked shape with lanes of `lane_bits` whose every slice meets `per_slice`
/// holding `generation` elements.
fn smallest_with_lanes(
    generation: u64,
    per_slice: f64,
    lane_bits: u32,
) -> Option<BlockedAgePartitioned> {
    let max_blocks = MAX_BITS / (u64::from(LANES) * u64::from(lane_bits));
    // The classic size of one slice, in lanes: where the search starts.
    let start = (generation as f64 * -per_slice.ln() / (LN_2 * LN_2) / f64::from(lane_bits))
        .max(1.0) as u64;
    let model = LaneModel::new(lane_bits, BITS_PER_SLICE);
    let blocks = math::blocks_for(&model, generation, per_slice, start, max_blocks)?;
    Some(BlockedAgePartitioned {
        generation,
        blocks,
        lane_bits,
        bits_per_element: BITS_PER_SLICE,
    })
}

/// The share of its FPR budget a time window's generation is sized for: 90%. At the very
/// small per-generation rates of many generations (30 generations at 0.1%: 3.3·10⁻⁵ each)
/// the blocked filters measure a few percent above their design, and a query adds up
/// `G + 1` of them: without this margin 30 generations at 0.1% measured 0.105%.
pub const GENERATION_MARGIN: f64 = 0.9;

/// The FPR each of a time window's `live` generations is sized for, so that a query of all of
/// them stays within `p`: `0.9 · (1 - (1 - p)^(1/live))` ([`GENERATION_MARGIN`]).
pub fn generation_fpp(p: f64, live: u32) -> Result<f64> {
    let p = math::check_fpp(p)?;
    let per = -((-p).ln_1p() / f64::from(live.max(1))).exp_m1();
    math::check_fpp(per * GENERATION_MARGIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_probability_matches_small_cases() {
        // One slice, k = 1: the slice's fill.
        assert!((run_probability(&[0.3], 1) - 0.3).abs() < 1e-12);
        // Two slices, k = 2: both hit.
        assert!((run_probability(&[0.5, 0.5], 2) - 0.25).abs() < 1e-12);
        // Three slices, k = 2: 1 - P(no two consecutive) = 1 - (1/8)·5 at fill 1/2.
        assert!((run_probability(&[0.5; 3], 2) - 3.0 / 8.0).abs() < 1e-12);
        assert_eq!(run_probability(&[1.0; 4], 5), 0.0);
    }

    #[test]
    fn sizing_meets_the_target_and_the_window() {
        for (n, p) in [(1_000, 0.1), (1_000_000, 0.01), (100_000, 0.001)] {
            let s = age_partitioned_for(n, p).unwrap();
            assert!(s.expected_fpp() <= p, "{s:?}");
            assert!(s.window() >= n, "{s:?}");
            assert!(s.forgotten_after() > s.window());
        }
        assert!(age_partitioned_for(0, 0.01).is_err());
        assert!(age_partitioned_for(10, 1.5).is_err());
    }

    #[test]
    fn generation_budget_adds_up_to_the_target() {
        let per = generation_fpp(0.01, 31).unwrap() / GENERATION_MARGIN;
        assert!((1.0 - (1.0 - per).powi(31) - 0.01).abs() < 1e-12);
    }
}
