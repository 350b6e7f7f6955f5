//! Sizing of the expiring filters: the age-partitioned filter's false-positive model and its
//! choice of `k` and `l` (Shtul, Baquero & Almeida, "Age-Partitioned Bloom Filters", 2020),
//! and the time window's split of its FPR budget over its generations.

use crate::error::{Error, Result};
use crate::math;
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
