//! Sizing math: how many bits and hash functions a filter needs, and what it will do.
//!
//! Notation used throughout: `n` elements, `m` bits, `k` hash functions, `p` false-positive
//! probability (FPR), `X` bits set.
//!
//! | quantity | formula |
//! |---|---|
//! | expected FPR after `n` insertions | `p = (1 - e^(-k·n/m))^k` |
//! | optimal `k` for given `m`, `n` | `k = (m/n)·ln 2` |
//! | optimal `m` for given `n`, `p` | `m = -n·ln p / (ln 2)²` |
//! | optimal `k` for given `p` | `k = -ln p / ln 2 = -log₂ p` |
//! | FPR from the fill ratio | `p = (X/m)^k` |
//! | element count from set bits (Swamidass–Baldi) | `n ≈ -(m/k)·ln(1 - X/m)` |
//! | capacity of (`m`, `k`) at FPR `p` | `n = -(m/k)·ln(1 - p^(1/k))` |
//! | d-left FPR, `n` fingerprints stored among `F = buckets·2^r` ([`DLeftParams`]) | `p = 1 - (1 - 1/F)^n ≈ 24·2^-r` at the paper's load |
//!
//! Besides bloomkit's own sizing ([`params_for`]) this module reproduces the exact sizing of
//! Guava ([`guava_params`]), Go's bits-and-blooms ([`go_params`]) and Redisson
//! ([`redisson_params`]), because a filter that must be byte-identical to theirs has to start
//! from the same `m` and `k`.
//!
//! ## Blocked layouts: one model, one search
//! A blocked filter puts all of an element's bits in one block (a 512-bit cache line, or the
//! Redis crate's 64-bit register). Blocks receive a Poisson-distributed number of elements, so
//! its FPR is the in-block FPR averaged over block loads:
//! `FPR(B blocks, n) = Σⱼ Pois(j; n/B) · fpp_in_block(j)` ([`blocked_fpp`]). Every layout only
//! says what a block holding `j` elements answers ([`BlockModel`]); [`blocks_for`] is the one
//! search for the smallest `B` that meets a target. Both are bounded: the sum covers the loads
//! within `12√λ + 30` of the mean `λ` (the rest weighs under 10⁻³⁰), and the search takes at
//! most a few hundred model evaluations whatever `n`. Targets above 50 % are sized for 50 %
//! (about 1.5 bits per element; the filter then meets the looser target too), which keeps the
//! mean load, and so the work, small.
//!
//! ## What `n = 0` means
//! A capacity of zero is treated as a capacity of one, as Guava does: every sizing function
//! returns the smallest useful filter instead of an error, so that "I expect no elements" still
//! gives a working filter.

use crate::error::{Error, Result};
use std::f64::consts::LN_2;

/// The largest number of hash functions bloomkit accepts.
///
/// 64 hash functions already give a false-positive rate of 2⁻⁶⁴ at the optimum; a larger
/// `k` is a mistake, not a design. The limit also bounds the work of a single operation.
pub const MAX_HASHES: u32 = 1024;

/// The largest number of bits a filter may have on this platform: the word array must be
/// addressable (`isize::MAX` bytes) and the bit index must fit in `u64`.
pub const MAX_BITS: u64 = {
    let by_address = (isize::MAX as u64).saturating_mul(8);
    if by_address < u64::MAX - 63 {
        by_address
    } else {
        u64::MAX - 63
    }
};

/// The size of a filter: `bits` (m) and `hashes` (k).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Params {
    /// Number of bits, `m`.
    pub bits: u64,
    /// Number of hash functions, `k`.
    pub hashes: u32,
}

impl Params {
    /// Checks that `bits` and `hashes` describe a filter this platform can hold.
    ///
    /// ```
    /// use bloomkit::math::Params;
    /// assert!(Params { bits: 1024, hashes: 7 }.validate().is_ok());
    /// assert!(Params { bits: 0, hashes: 7 }.validate().is_err());
    /// ```
    pub fn validate(self) -> Result<Self> {
        check_bits_hashes(self.bits, u64::from(self.hashes))?;
        Ok(self)
    }

    /// The number of 64-bit words needed to hold `bits`.
    pub fn words(self) -> u64 {
        self.bits.div_ceil(64)
    }

    /// Expected false-positive probability after `n` insertions (see [`expected_fpp`]).
    pub fn expected_fpp(self, n: u64) -> f64 {
        expected_fpp(self.bits, self.hashes, n)
    }
}

/// Checks `m` and `k` against the limits; `k` is taken as `u64` so that callers decoding a
/// foreign format can pass their raw value.
pub(crate) fn check_bits_hashes(bits: u64, hashes: u64) -> Result<()> {
    if bits == 0 {
        return Err(Error::ZeroBits);
    }
    if bits > MAX_BITS {
        return Err(Error::TooLarge {
            bits,
            limit: "more bits than this platform can address",
        });
    }
    if hashes == 0 {
        return Err(Error::ZeroHashes);
    }
    if hashes > u64::from(MAX_HASHES) {
        return Err(Error::TooManyHashes {
            hashes,
            max: MAX_HASHES,
        });
    }
    Ok(())
}

/// Rejects `p` outside the open interval (0, 1), and NaN.
pub fn check_fpp(p: f64) -> Result<f64> {
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(Error::InvalidFpp(p))
    }
}

/// Converts a float bit count to `u64`, refusing values past [`MAX_BITS`].
fn bits_from_f64(bits: f64) -> Result<u64> {
    // `MAX_BITS as f64` rounds up to a power of two; compare in floats first so that
    // infinity and enormous values are refused before the saturating cast.
    let fits = bits.is_finite() && bits < MAX_BITS as f64;
    if !fits {
        return Err(Error::TooLarge {
            bits: if bits.is_finite() {
                bits as u64
            } else {
                u64::MAX
            },
            limit: "more bits than this platform can address",
        });
    }
    Ok(bits as u64)
}

/// Optimal number of bits for `n` elements at FPR `p`: `ceil(-n·ln p / (ln 2)²)`.
///
/// ```
/// // ~9.59 bits per element at 1%.
/// assert_eq!(bloomkit::math::optimal_bits(1000, 0.01).unwrap(), 9586);
/// ```
pub fn optimal_bits(n: u64, p: f64) -> Result<u64> {
    let p = check_fpp(p)?;
    let n = n.max(1) as f64;
    let bits = bits_from_f64((-n * p.ln() / (LN_2 * LN_2)).ceil())?;
    Ok(bits.max(1))
}

/// Optimal number of hash functions for `m` bits holding `n` elements:
/// `max(1, round(m/n · ln 2))`, capped at [`MAX_HASHES`].
///
/// ```
/// assert_eq!(bloomkit::math::optimal_hashes(9586, 1000), 7);
/// ```
pub fn optimal_hashes(m: u64, n: u64) -> u32 {
    let k = (m as f64 / n.max(1) as f64 * LN_2).round();
    clamp_hashes(k)
}

/// Optimal number of hash functions for a target FPR: `max(1, round(-log₂ p))`.
///
/// ```
/// assert_eq!(bloomkit::math::hashes_for_fpp(0.01).unwrap(), 7);
/// ```
pub fn hashes_for_fpp(p: f64) -> Result<u32> {
    let p = check_fpp(p)?;
    Ok(clamp_hashes((-p.ln() / LN_2).round()))
}

fn clamp_hashes(k: f64) -> u32 {
    if k.is_nan() || k < 1.0 {
        1
    } else if k > f64::from(MAX_HASHES) {
        MAX_HASHES
    } else {
        k as u32
    }
}

/// Expected FPR after inserting `n` distinct elements into `m` bits with `k` hashes:
/// `(1 - e^(-k·n/m))^k`.
///
/// This is the classic approximation; it is accurate to well under 1% relative error once
/// `m` exceeds a few thousand bits, which the FPR tests of this crate confirm by measurement.
///
/// ```
/// let p = bloomkit::math::expected_fpp(9586, 7, 1000);
/// assert!((p - 0.01).abs() < 0.0005);
/// ```
pub fn expected_fpp(m: u64, k: u32, n: u64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    let k = f64::from(k);
    let fill = -(-k * n as f64 / m as f64).exp_m1();
    fill.powf(k)
}

/// FPR of a filter whose fraction of set bits is `fill`: `fill^k`.
///
/// Given the filter's actual bits, this is the exact probability that an element that was never
/// inserted tests positive, when the hash behaves like a random function.
pub fn fpp_from_fill(fill: f64, k: u32) -> f64 {
    fill.clamp(0.0, 1.0).powi(k.min(i32::MAX as u32) as i32)
}

/// Estimated number of distinct elements in a filter of `m` bits with `k` hashes and
/// `set_bits` bits set (Swamidass & Baldi, 2007): `-(m/k)·ln(1 - X/m)`.
///
/// Returns `f64::INFINITY` for a saturated filter (every bit set), since any number of
/// elements is then consistent with the bits.
///
/// ```
/// use bloomkit::math::estimate_count;
/// assert_eq!(estimate_count(1000, 3, 0), 0.0);
/// assert!(estimate_count(1000, 3, 1000).is_infinite());
/// ```
pub fn estimate_count(m: u64, k: u32, set_bits: u64) -> f64 {
    if m == 0 || k == 0 {
        return 0.0;
    }
    if set_bits >= m {
        return f64::INFINITY;
    }
    let fill = set_bits as f64 / m as f64;
    -(m as f64) / f64::from(k) * (-fill).ln_1p()
}

/// The largest number of elements that `m` bits with `k` hashes hold with an expected FPR of
/// at most `p`: `floor(-(m/k)·ln(1 - p^(1/k)))`.
///
/// ```
/// use bloomkit::math::{max_capacity, expected_fpp};
/// let n = max_capacity(9586, 7, 0.01).unwrap();
/// assert!(expected_fpp(9586, 7, n) <= 0.01);
/// assert!(expected_fpp(9586, 7, n + 1) > 0.01);
/// ```
pub fn max_capacity(m: u64, k: u32, p: f64) -> Result<u64> {
    let p = check_fpp(p)?;
    check_bits_hashes(m, u64::from(k))?;
    let kf = f64::from(k);
    let estimate = -(m as f64) / kf * (-(p.powf(1.0 / kf))).ln_1p();
    let mut n = if estimate.is_finite() && estimate > 0.0 {
        estimate.floor() as u64
    } else {
        0
    };
    // The closed form is exact in real arithmetic; step over float rounding at the edge (a
    // few steps; bounded all the same).
    for _ in 0..1024 {
        if n > 0 && expected_fpp(m, k, n) > p {
            n -= 1;
        } else if expected_fpp(m, k, n + 1) <= p {
            n += 1;
        } else {
            return Ok(n);
        }
    }
    Err(Error::InvalidParameters(format!(
        "no capacity found for {m} bits, {k} hash functions at FPR {p}"
    )))
}

/// bloomkit's default sizing: the smallest `m` (a multiple of 64) and the `k` for which the
/// expected FPR after `n` insertions is at most `p`.
///
/// Textbook sizing rounds `k` to an integer after choosing `m`, which leaves the expected FPR a
/// little above `p` (for example 1.003% for a 1% target). bloomkit instead tries the two
/// integers around the optimal `k` and, for each, solves `(1 - e^(-k·n/m))^k = p` for `m`
/// exactly, keeping the smaller filter. The result is then rounded up to whole 64-bit words,
/// which only lowers the FPR. So the target is met by construction, not approximately.
///
/// `n = 0` is treated as `n = 1`.
///
/// ```
/// use bloomkit::math::{params_for, expected_fpp};
/// let params = params_for(1_000_000, 0.01).unwrap();
/// assert_eq!(params.hashes, 7);
/// assert!(expected_fpp(params.bits, params.hashes, 1_000_000) <= 0.01);
/// ```
pub fn params_for(n: u64, p: f64) -> Result<Params> {
    let p = check_fpp(p)?;
    let n = n.max(1);
    let k_opt = -p.ln() / LN_2;
    let mut best: Option<Params> = None;
    for k in [k_opt.floor(), k_opt.ceil()] {
        let k = clamp_hashes(k);
        let kf = f64::from(k);
        // m = -k·n / ln(1 - p^(1/k))
        let m = -kf * n as f64 / (-(p.powf(1.0 / kf))).ln_1p();
        let mut bits = bits_from_f64(m.ceil())?.max(1);
        bits = bits.div_ceil(64).checked_mul(64).ok_or(Error::TooLarge {
            bits,
            limit: "more bits than this platform can address",
        })?;
        // Guard against float rounding in the closed form (a word or two; bounded).
        let mut steps = 0;
        while expected_fpp(bits, k, n) > p {
            steps += 1;
            bits = bits
                .checked_add(64)
                .filter(|_| steps <= 1024)
                .ok_or(Error::TooLarge {
                    bits,
                    limit: "more bits than this platform can address",
                })?;
        }
        if best.is_none_or(|b| bits < b.bits) {
            best = Some(Params { bits, hashes: k });
        }
    }
    let params = best.expect("two candidates were tried");
    params.validate()
}

/// How a blocked layout places an element's bits in its block, as sizing sees it.
pub trait BlockModel {
    /// Probability that an element never added tests positive in a block holding `load`
    /// elements.
    fn fpp_in_block(&self, load: u64) -> f64;
}

/// The highest target the blocked sizing searches for: targets above it are sized for it.
pub const MAX_BLOCKED_FPP: f64 = 0.5;

/// `ln(x!)`: exact summation for small `x`, Stirling's series (error below 10⁻¹⁴) beyond.
pub(crate) fn ln_factorial(x: u64) -> f64 {
    if x < 64 {
        return (2..=x).map(|i| (i as f64).ln()).sum();
    }
    let x = x as f64;
    let inv = 1.0 / x;
    x * x.ln() - x + 0.5 * (std::f64::consts::TAU * x).ln() + inv / 12.0 - inv.powi(3) / 360.0
        + inv.powi(5) / 1260.0
}

/// The loads that matter for mean load `lambda`: within `12√λ + 30` of it.
fn load_window(lambda: f64) -> (u64, u64) {
    let spread = 12.0 * lambda.sqrt() + 30.0;
    (
        (lambda - spread).max(0.0) as u64,
        (lambda + spread).ceil() as u64,
    )
}

/// Expected FPR of a blocked filter of `blocks` blocks after `n` insertions:
/// `Σⱼ Pois(j; n/B) · fpp_in_block(j)` over the loads that matter (see the module docs).
///
/// ```
/// use bloomkit::math::blocked_fpp;
/// use bloomkit::probe::blocked::BlockLayout;
/// let p = blocked_fpp(&BlockLayout::SplitBlock, 20_000, 1_000_000);
/// assert!(p > 0.005 && p < 0.02);
/// ```
pub fn blocked_fpp(model: &impl BlockModel, blocks: u64, n: u64) -> f64 {
    if blocks == 0 {
        return 1.0;
    }
    let lambda = n as f64 / blocks as f64;
    if lambda == 0.0 {
        return 0.0;
    }
    let (lo, hi) = load_window(lambda);
    if hi - lo > MAX_LOADS {
        return wide_blocked_fpp(model, lambda, lo, hi);
    }
    // log P(j) = j ln λ - λ - ln j!
    let mut log_p = lo as f64 * lambda.ln() - lambda - ln_factorial(lo);
    let mut total = 0.0;
    for j in lo..=hi {
        if j > lo {
            log_p += lambda.ln() - (j as f64).ln();
        }
        total += log_p.exp() * model.fpp_in_block(j);
    }
    total.min(1.0)
}

/// The most loads [`blocked_fpp`] sums one by one: windows up to this wide (mean loads up to
/// about 7·10⁶ elements per block) are summed exactly.
const MAX_LOADS: u64 = 1 << 16;

/// [`blocked_fpp`] for a mean load `lambda` whose window `lo..=hi` holds more than
/// [`MAX_LOADS`] loads, as an estimated count reaches for a saturated filter (`n` up to
/// `u64::MAX`, where the exact sum would take minutes): the Poisson distribution is then normal
/// to within `1/√λ` and smooth at the scale of `MAX_LOADS` evenly spaced loads, whose weighted
/// mean this is. (Its direct `log P(j)` would also lose every digit to cancellation there.)
fn wide_blocked_fpp(model: &impl BlockModel, lambda: f64, lo: u64, hi: u64) -> f64 {
    let step = (hi - lo) as f64 / MAX_LOADS as f64;
    let sd = lambda.sqrt();
    let (mut total, mut weight) = (0.0, 0.0);
    for i in 0..=MAX_LOADS {
        let load = lo as f64 + i as f64 * step;
        let z = (load - lambda) / sd;
        let w = (-0.5 * z * z).exp();
        total += w * model.fpp_in_block(load as u64);
        weight += w;
    }
    (total / weight).min(1.0)
}

/// The smallest number of blocks (at most `max_blocks`) whose [`blocked_fpp`] after `n`
/// insertions is at most `p` (at most [`MAX_BLOCKED_FPP`]), or `None` if even `max_blocks` is
/// not enough. `start` is a size near the answer (for example the classic optimum in blocks),
/// which the search widens and halves from; `n = 0` counts as 1.
///
/// ```
/// use bloomkit::math::{blocked_fpp, blocks_for};
/// use bloomkit::probe::blocked::BlockLayout;
/// let b = blocks_for(&BlockLayout::SplitBlock, 1_000_000, 0.01, 18_000, u64::MAX >> 10).unwrap();
/// assert!(blocked_fpp(&BlockLayout::SplitBlock, b, 1_000_000) <= 0.01);
/// assert!(blocked_fpp(&BlockLayout::SplitBlock, b - 1, 1_000_000) > 0.01);
/// ```
pub fn blocks_for(
    model: &impl BlockModel,
    n: u64,
    p: f64,
    start: u64,
    max_blocks: u64,
) -> Option<u64> {
    let (n, p) = (n.max(1), p.min(MAX_BLOCKED_FPP));
    let model = Memo::new(model);
    let fpp = |b: u64| blocked_fpp(&model, b, n);
    if fpp(max_blocks) > p {
        return None;
    }
    // `lo` fails (or is 0); halve it while it does not (at most 64 times).
    let mut lo = start.saturating_sub(1).min(max_blocks);
    let mut lo_fpp = fpp(lo);
    while lo > 0 && lo_fpp <= p {
        lo /= 2;
        lo_fpp = fpp(lo);
    }
    // Grow `hi` until it meets p (at most 64 doublings).
    let mut hi = (lo + 1).max(lo + lo / 8).min(max_blocks);
    let mut hi_fpp = fpp(hi);
    while hi_fpp > p {
        if hi >= max_blocks {
            return None;
        }
        (lo, lo_fpp) = (hi, hi_fpp);
        hi = hi.saturating_mul(2).min(max_blocks);
        hi_fpp = fpp(hi);
    }
    // Shrink the bracket (lo fails, hi meets) to adjacent sizes. Any order of probes gives the
    // same answer, the smallest size that meets p (the FPR falls as blocks are added): guesses
    // where ln FPR, nearly linear in the size over the bracket, crosses ln p (regula falsi,
    // Illinois variant: a few model evaluations where bisection takes ~log₂(lo/8) of them),
    // with a bisection whenever a guess cannot be made or after 12 guesses.
    let mut side = 0i8;
    let (mut lo_excess, mut hi_excess) = ((lo_fpp / p).ln(), (hi_fpp / p).ln());
    for round in 0.. {
        if lo + 1 >= hi {
            break;
        }
        let t = lo_excess / (lo_excess - hi_excess);
        let mid = if round < 12 && t.is_finite() && t > 0.0 && t < 1.0 {
            lo + ((hi - lo) as f64 * t).round() as u64
        } else {
            lo + (hi - lo) / 2
        }
        .clamp(lo + 1, hi - 1);
        let mid_fpp = fpp(mid);
        if mid_fpp <= p {
            (hi, hi_excess) = (mid, (mid_fpp / p).ln());
            if side < 0 {
                lo_excess /= 2.0;
            }
            side = -1;
        } else {
            (lo, lo_excess) = (mid, (mid_fpp / p).ln());
            if side > 0 {
                hi_excess /= 2.0;
            }
            side = 1;
        }
    }
    Some(hi)
}

/// Loads whose in-block FPR a [`Memo`] keeps (128 KiB of them at most): a search's loads are
/// within a few hundred of its mean load, which the sizing keeps in the hundreds (see the
/// module docs); a larger load is computed each time.
const MEMO_LOADS: u64 = 1 << 14;

/// A [`BlockModel`] whose in-block FPRs are each computed once. A size search evaluates
/// [`blocked_fpp`] at several sizes whose load windows overlap almost entirely, and one
/// in-block FPR may be a sum of its own (the half-block split block's sums over the splits
/// between the halves): kept, each is computed once per load instead of once per load and
/// size. The values are the model's own, so every sum, and so every size the search chooses,
/// is the same to the bit.
struct Memo<'a, M> {
    model: &'a M,
    /// `values[j]` is the FPR at load `j`, or NaN if not computed yet.
    values: std::cell::RefCell<Vec<f64>>,
}

impl<'a, M: BlockModel> Memo<'a, M> {
    fn new(model: &'a M) -> Self {
        Memo {
            model,
            values: std::cell::RefCell::new(Vec::new()),
        }
    }
}

impl<M: BlockModel> BlockModel for Memo<'_, M> {
    fn fpp_in_block(&self, load: u64) -> f64 {
        if load >= MEMO_LOADS {
            return self.model.fpp_in_block(load);
        }
        let j = load as usize;
        let mut values = self.values.borrow_mut();
        if values.len() <= j {
            values.resize(j + 1, f64::NAN);
        }
        if values[j].is_nan() {
            values[j] = self.model.fpp_in_block(load);
        }
        values[j]
    }
}

/// The smallest `m` for which `k` hash functions give an expected FPR of at most `p` after `n`
/// insertions: the closed form `m = -k·n / ln(1 - p^(1/k))`, corrected for float rounding.
///
/// ```
/// use bloomkit::math::{bits_for_hashes, expected_fpp};
/// let m = bits_for_hashes(1000, 0.01, 3)?;
/// assert!(expected_fpp(m, 3, 1000) <= 0.01 && expected_fpp(m - 1, 3, 1000) > 0.01);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn bits_for_hashes(n: u64, p: f64, k: u32) -> Result<u64> {
    let p = check_fpp(p)?;
    check_bits_hashes(1, u64::from(k))?;
    let n = n.max(1);
    let kf = f64::from(k);
    let mut m = bits_from_f64((-kf * n as f64 / (-(p.powf(1.0 / kf))).ln_1p()).ceil())?.max(1);
    // The closed form is exact in real arithmetic; a few steps cover float rounding.
    for _ in 0..1024 {
        if m > 1 && expected_fpp(m - 1, k, n) <= p {
            m -= 1;
        } else if expected_fpp(m, k, n) > p {
            m += 1;
        } else {
            return Ok(m);
        }
    }
    Err(Error::InvalidParameters(format!(
        "no filter with {k} hash functions reaches FPR {p} for {n} elements"
    )))
}

/// Which rule Guava uses to choose the number of hash functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GuavaHashes {
    /// Guava 31.1 and earlier: `max(1, round(numBits / n · ln 2))`, from the unrounded
    /// `numBits`.
    #[default]
    V31,
    /// Newer Guava: `max(1, round(-ln p / ln 2))`.
    V33,
}

/// Guava's and Redisson's bit count, `⌊-n·ln p / ln² 2⌋`, with the checked `p` and `n` (at
/// least 1) it was computed from; an error naming `who`'s sizing if it gives 0 bits.
fn truncated_bits(n: u64, p: f64, who: &str) -> Result<(u64, f64, u64)> {
    let p = check_fpp(p)?;
    let n = n.max(1);
    let bits = bits_from_f64((-(n as f64) * p.ln() / (LN_2 * LN_2)).trunc())?;
    if bits == 0 {
        return Err(Error::InvalidParameters(format!(
            "{who} sizing for n = {n}, p = {p} gives 0 bits"
        )));
    }
    Ok((n, p, bits))
}

/// Guava's exact sizing for `BloomFilter.create(funnel, n, p)`.
///
/// `numBits = (long)(-n·ln p / (ln 2)²)` (truncated), rounded up to whole 64-bit words: Guava
/// reduces indexes modulo the rounded size, so the returned `bits` is a multiple of 64.
/// `n = 0` is treated as 1, as Guava does. Zero bits (for example `n = 1`, `p = 0.99`) is
/// an error, as in Guava.
///
/// ```
/// use bloomkit::math::{guava_params, GuavaHashes};
/// let p = guava_params(1_000_000, 0.03, GuavaHashes::V31).unwrap();
/// assert_eq!((p.bits, p.hashes), (114_039 * 64, 5));
/// ```
pub fn guava_params(n: u64, p: f64, policy: GuavaHashes) -> Result<Params> {
    let (n, p, num_bits) = truncated_bits(n, p, "Guava")?;
    let words = num_bits.div_ceil(64);
    // Guava stores the word count in a Java int.
    if words > i32::MAX as u64 {
        return Err(Error::TooLarge {
            bits: num_bits,
            limit: "Guava's format holds at most 2^31 - 1 words",
        });
    }
    let hashes = match policy {
        GuavaHashes::V31 => clamp_hashes((num_bits as f64 / n as f64 * LN_2).round()),
        GuavaHashes::V33 => clamp_hashes((-p.ln() / LN_2).round()),
    };
    if hashes > 255 {
        return Err(Error::TooManyHashes {
            hashes: u64::from(hashes),
            max: 255,
        });
    }
    Params {
        bits: words * 64,
        hashes,
    }
    .validate()
}

/// Go bits-and-blooms' `EstimateParameters(n, p)`: `m = ceil(-n·ln p / (ln 2)²)`,
/// `k = ceil(ln 2 · m / n)`, both at least 1. Unlike Guava, `m` is not rounded to words.
///
/// ```
/// let p = bloomkit::math::go_params(100, 0.03).unwrap();
/// assert_eq!((p.bits, p.hashes), (730, 6));
/// ```
pub fn go_params(n: u64, p: f64) -> Result<Params> {
    let p = check_fpp(p)?;
    let n = n.max(1);
    let bits = bits_from_f64((-(n as f64) * p.ln() / (LN_2 * LN_2)).ceil())?.max(1);
    let hashes = clamp_hashes((LN_2 * bits as f64 / n as f64).ceil());
    Params { bits, hashes }.validate()
}

/// The largest bitmap Redisson accepts (`2^32 - 2` bits).
pub const REDISSON_MAX_BITS: u64 = 4_294_967_294;

/// Redisson `RBloomFilter.tryInit(n, p)` sizing: `size = (long)(-n·ln p / (ln 2)²)` (not
/// rounded to words), `k = max(1, round(size / n · ln 2))`.
///
/// ```
/// let p = bloomkit::math::redisson_params(100, 0.01).unwrap();
/// assert_eq!((p.bits, p.hashes), (958, 7));
/// ```
pub fn redisson_params(n: u64, p: f64) -> Result<Params> {
    let (n, _, bits) = truncated_bits(n, p, "Redisson")?;
    if bits > REDISSON_MAX_BITS {
        return Err(Error::TooLarge {
            bits,
            limit: "Redisson's bitmap holds at most 4294967294 bits",
        });
    }
    let hashes = clamp_hashes((bits as f64 / n as f64 * LN_2).round());
    Params { bits, hashes }.validate()
}

/// The shape of a d-left counting Bloom filter ([`DLeftCountingFilter`](crate::DLeftCountingFilter)):
/// `tables` sub-tables (the paper's `d`) of `buckets` buckets each, every bucket holding
/// `cells_per_bucket` cells of a `remainder_bits`-bit fingerprint remainder and a
/// `counter_bits`-bit counter.
///
/// ## Sizing (Bonomi, Mitzenmacher, Panigrahy, Singh and Varghese, 2006)
/// An element's hash gives a *true fingerprint* in a space of `F = buckets · 2^r` values
/// (`r` = `remainder_bits`); one permutation per sub-table turns it into a bucket and a
/// remainder there. A query is a false positive only when another stored element has the same
/// true fingerprint, so with `n` distinct elements stored
///
/// `FPR = 1 − (1 − 1/F)^n ≤ n / F = d · (n / (d · buckets)) · 2^−r`,
///
/// that is the number of occupied cells in an element's `d` buckets times `2^−r`. The paper's
/// design point, used by [`DLeftParams::for_capacity`]: `d = 4` sub-tables, 8 cells per bucket
/// filled to 6 on average at capacity (so `buckets = ⌈n / 24⌉` and `FPR ≈ 24 · 2^−r`), 2-bit
/// counters, and the smallest `r` meeting the target. With four choices per element the most
/// loaded bucket stays within a small constant of the mean, so 8 cells almost never overflow
/// at 75 % load.
///
/// ```
/// use bloomkit::math::DLeftParams;
/// let p = DLeftParams::for_capacity(1_000_000, 0.01).unwrap();
/// assert_eq!((p.tables, p.cells_per_bucket, p.remainder_bits, p.counter_bits), (4, 8, 12, 2));
/// assert!(p.expected_fpp(1_000_000) <= 0.01);
/// // 14-bit cells at 75 % load: under 19 bits per element (a 4-bit counting filter: 38.3).
/// assert!((p.bits() as f64 / 1e6) < 19.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLeftParams {
    /// Number of sub-tables, `d` (1 to [`DLeftParams::MAX_TABLES`]).
    pub tables: u32,
    /// Buckets in each sub-table.
    pub buckets: u64,
    /// Cells in each bucket (1 to [`DLeftParams::MAX_CELLS_PER_BUCKET`]).
    pub cells_per_bucket: u32,
    /// Bits of the fingerprint remainder stored in a cell, `r`.
    pub remainder_bits: u32,
    /// Bits of each cell's counter (1 to 8).
    pub counter_bits: u32,
}

impl DLeftParams {
    /// The paper's number of sub-tables.
    pub const DEFAULT_TABLES: u32 = 4;
    /// The paper's cells per bucket.
    pub const DEFAULT_CELLS_PER_BUCKET: u32 = 8;
    /// Mean occupied cells per bucket at the design capacity (75 % of 8).
    pub const DESIGN_LOAD: u32 = 6;
    /// The paper's counter width.
    pub const DEFAULT_COUNTER_BITS: u32 = 2;
    /// Most sub-tables accepted.
    pub const MAX_TABLES: u32 = 16;
    /// Most cells per bucket accepted.
    pub const MAX_CELLS_PER_BUCKET: u32 = 64;

    /// The paper's design for `n` elements at false-positive probability `p`: 4 sub-tables,
    /// 8 cells per bucket, buckets for a mean load of 6 at `n`, 2-bit counters, and the smallest
    /// remainder that keeps [`expected_fpp`](Self::expected_fpp)`(n) ≤ p`.
    pub fn for_capacity(n: u64, p: f64) -> Result<DLeftParams> {
        let p = check_fpp(p)?;
        let n = n.max(1);
        let tables = Self::DEFAULT_TABLES;
        let per_table = u64::from(tables * Self::DESIGN_LOAD);
        let buckets = n.div_ceil(per_table);
        // n / (buckets · 2^r) ≤ p  ⇔  r ≥ log2(n / (buckets · p)).
        let need = (n as f64 / (buckets as f64 * p)).log2().ceil().max(1.0);
        let counter_bits = Self::DEFAULT_COUNTER_BITS;
        let max_r = 64 - counter_bits;
        if need > f64::from(max_r) {
            return Err(Error::InvalidParameters(format!(
                "a d-left filter stores at most {max_r}-bit fingerprint remainders, enough for a \
                 false-positive probability of about {:.1e}, not {p:?}",
                n as f64 / (buckets as f64 * 2f64.powi(max_r as i32))
            )));
        }
        let mut params = DLeftParams {
            tables,
            buckets,
            cells_per_bucket: Self::DEFAULT_CELLS_PER_BUCKET,
            remainder_bits: need as u32,
            counter_bits,
        };
        // `n / F` bounds the exact FPR from above; the exact one may allow a bit less (small
        // `n`), and float rounding at an exact power of two may need one more.
        if params.expected_fpp(n) > p && params.remainder_bits < max_r {
            params.remainder_bits += 1;
        }
        while params.remainder_bits > 1 {
            let smaller = DLeftParams {
                remainder_bits: params.remainder_bits - 1,
                ..params
            };
            if smaller.expected_fpp(n) > p {
                break;
            }
            params = smaller;
        }
        params.validate()
    }

    /// The same shape with `bits`-bit counters (1 to 8): wider counters saturate later (at
    /// `2^bits − 1` copies of one fingerprint) and cost one bit per cell each.
    pub fn with_counter_bits(self, bits: u32) -> Result<DLeftParams> {
        DLeftParams {
            counter_bits: bits,
            ..self
        }
        .validate()
    }

    /// Checks that the shape describes a filter this platform can hold.
    pub fn validate(self) -> Result<DLeftParams> {
        let bad = |what: String| Err(Error::InvalidParameters(what));
        if !(1..=Self::MAX_TABLES).contains(&self.tables) {
            return bad(format!(
                "a d-left filter has 1 to {} sub-tables, not {}",
                Self::MAX_TABLES,
                self.tables
            ));
        }
        if !(1..=Self::MAX_CELLS_PER_BUCKET).contains(&self.cells_per_bucket) {
            return bad(format!(
                "a d-left bucket has 1 to {} cells, not {}",
                Self::MAX_CELLS_PER_BUCKET,
                self.cells_per_bucket
            ));
        }
        if !(1..=8).contains(&self.counter_bits) {
            return bad(format!(
                "a d-left counter has 1 to 8 bits, not {}",
                self.counter_bits
            ));
        }
        // `counter_bits` ≤ 8 here: the bound is a subtraction, so that a remainder width read
        // from a file (up to `u32::MAX`) cannot overflow the check.
        if self.remainder_bits == 0 || self.remainder_bits > 64 - self.counter_bits {
            return bad(format!(
                "a d-left cell holds a remainder of 1 to {} bits with {}-bit counters, not {}",
                64 - self.counter_bits,
                self.counter_bits,
                self.remainder_bits
            ));
        }
        if self.buckets == 0 {
            return Err(Error::ZeroBits);
        }
        let bits = self
            .cells_checked()
            .and_then(|c| c.checked_mul(u64::from(self.cell_bits())));
        match bits {
            Some(b) if b <= MAX_BITS => Ok(self),
            _ => Err(Error::TooLarge {
                bits: bits.unwrap_or(u64::MAX),
                limit: "more cell bits than this platform can address",
            }),
        }
    }

    fn cells_checked(self) -> Option<u64> {
        u64::from(self.tables)
            .checked_mul(self.buckets)?
            .checked_mul(u64::from(self.cells_per_bucket))
    }

    /// Bits per cell: remainder and counter.
    pub fn cell_bits(self) -> u32 {
        self.remainder_bits + self.counter_bits
    }

    /// Cells in all sub-tables (for validated params).
    pub fn cells(self) -> u64 {
        u64::from(self.tables) * self.buckets * u64::from(self.cells_per_bucket)
    }

    /// Bits of all cells (for validated params).
    pub fn bits(self) -> u64 {
        self.cells() * u64::from(self.cell_bits())
    }

    /// The size of the true-fingerprint space, `buckets · 2^r`.
    pub fn fingerprint_space(self) -> f64 {
        self.buckets as f64 * 2f64.powi(self.remainder_bits as i32)
    }

    /// Expected false-positive probability with `n` distinct elements stored:
    /// `1 − (1 − 1/F)^n`, `F` = [`fingerprint_space`](Self::fingerprint_space).
    pub fn expected_fpp(self, n: u64) -> f64 {
        let f = self.fingerprint_space();
        -(n as f64 * (-1.0 / f).ln_1p()).exp_m1()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saturated filter's estimated count (up to `u64::MAX`) gets its FPR at once, and the
    /// sampled sum for wide windows agrees with the exact one where both apply.
    #[test]
    fn blocked_fpp_of_huge_loads_is_quick_and_continuous() {
        use crate::probe::blocked::BlockLayout;
        for blocks in [1, 100, 1 << 20] {
            let p = blocked_fpp(&BlockLayout::SplitBlock, blocks, u64::MAX);
            assert!(p > 0.999_999 && p <= 1.0, "{blocks} blocks: {p}");
        }
        // A model that is still far from saturated at these loads, so the two sums differ
        // wherever the sampling would be wrong.
        struct Slow;
        impl BlockModel for Slow {
            fn fpp_in_block(&self, load: u64) -> f64 {
                1.0 - (-(load as f64) / 4e6).exp()
            }
        }
        let lambda = 3e6;
        let (lo, hi) = load_window(lambda);
        assert!(hi - lo < MAX_LOADS);
        let exact = blocked_fpp(&Slow, 1, lambda as u64);
        let sampled = wide_blocked_fpp(&Slow, lambda, lo, hi);
        assert!((exact - sampled).abs() < 1e-6, "{exact} against {sampled}");
        assert!((exact - Slow.fpp_in_block(lambda as u64)).abs() < 1e-3);
    }

    #[test]
    fn a_size_beyond_64_bits_is_not_shown_as_a_number_of_bits() {
        let e = optimal_bits(1 << 63, 0.01).unwrap_err();
        assert!(matches!(e, Error::TooLarge { bits: u64::MAX, .. }));
        assert!(
            e.to_string()
                .starts_with("a filter of more than 18446744073709551615 bits is too large"),
            "{e}"
        );
    }

    #[test]
    fn fpp_is_checked() {
        for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            assert!(matches!(optimal_bits(10, bad), Err(Error::InvalidFpp(_))));
            assert!(matches!(params_for(10, bad), Err(Error::InvalidFpp(_))));
            assert!(matches!(
                guava_params(10, bad, GuavaHashes::V31),
                Err(Error::InvalidFpp(_))
            ));
            assert!(matches!(go_params(10, bad), Err(Error::InvalidFpp(_))));
            assert!(matches!(
                redisson_params(10, bad),
                Err(Error::InvalidFpp(_))
            ));
            assert!(matches!(hashes_for_fpp(bad), Err(Error::InvalidFpp(_))));
            assert!(matches!(
                max_capacity(100, 3, bad),
                Err(Error::InvalidFpp(_))
            ));
        }
    }

    #[test]
    fn sizes_that_cannot_exist_are_refused() {
        assert!(matches!(
            params_for(u64::MAX, 1e-300),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            optimal_bits(u64::MAX, 1e-300),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            guava_params(u64::MAX, 1e-10, GuavaHashes::V31),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            redisson_params(1_000_000_000, 0.01),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            Params { bits: 0, hashes: 3 }.validate(),
            Err(Error::ZeroBits)
        ));
        assert!(matches!(
            Params {
                bits: 64,
                hashes: 0
            }
            .validate(),
            Err(Error::ZeroHashes)
        ));
        assert!(matches!(
            Params {
                bits: 64,
                hashes: MAX_HASHES + 1
            }
            .validate(),
            Err(Error::TooManyHashes { .. })
        ));
        assert!(matches!(
            Params {
                bits: u64::MAX,
                hashes: 3
            }
            .validate(),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(max_capacity(0, 3, 0.1), Err(Error::ZeroBits)));
    }

    #[test]
    fn zero_capacity_means_one() {
        assert_eq!(params_for(0, 0.01).unwrap(), params_for(1, 0.01).unwrap());
        assert_eq!(
            guava_params(0, 0.01, GuavaHashes::V31).unwrap(),
            guava_params(1, 0.01, GuavaHashes::V31).unwrap()
        );
        assert_eq!(go_params(0, 0.01).unwrap(), go_params(1, 0.01).unwrap());
    }

    #[test]
    fn guava_zero_bits_is_an_error() {
        assert!(matches!(
            guava_params(1, 0.99, GuavaHashes::V31),
            Err(Error::InvalidParameters(_))
        ));
    }

    #[test]
    fn default_sizing_meets_target() {
        for n in [1u64, 10, 1000, 123_457, 10_000_000] {
            for p in [0.5, 0.1, 0.01, 0.001, 1e-6, 1e-12] {
                let params = params_for(n, p).unwrap();
                assert_eq!(params.bits % 64, 0);
                assert!(params.expected_fpp(n) <= p, "n={n} p={p} {params:?}");
                // And it is not wasteful: within 1% + one word of the real-valued optimum.
                let opt = optimal_bits(n, p).unwrap() as f64;
                assert!(
                    (params.bits as f64) < opt * 1.01 + 64.0,
                    "n={n} p={p} {params:?}"
                );
            }
        }
    }

    #[test]
    fn estimates_invert_expectations() {
        // The expected set-bit count after n insertions, fed back, gives n.
        let (m, k) = (1_000_000u64, 7u32);
        for n in [1_000u64, 50_000, 100_000, 200_000] {
            let expected_set = (m as f64) * -(-(k as f64) * n as f64 / m as f64).exp_m1();
            let est = estimate_count(m, k, expected_set.round() as u64);
            assert!((est - n as f64).abs() / (n as f64) < 0.001, "{n} {est}");
        }
        assert!((fpp_from_fill(0.5, 3) - 0.125).abs() < 1e-15);
    }
}

#[cfg(test)]
mod dleft_tests {
    use super::*;

    #[test]
    fn dleft_sizing_meets_the_target_with_the_papers_shape() {
        for n in [1u64, 10, 1000, 123_457, 10_000_000] {
            for p in [0.5, 0.1, 0.01, 0.001, 1e-6] {
                let d = DLeftParams::for_capacity(n, p).unwrap();
                assert_eq!((d.tables, d.cells_per_bucket, d.counter_bits), (4, 8, 2));
                assert_eq!(d.buckets, n.div_ceil(24), "n = {n}");
                assert!(d.expected_fpp(n) <= p, "n = {n}, p = {p}");
                // The smallest remainder: one bit less misses the target.
                let smaller = DLeftParams {
                    remainder_bits: d.remainder_bits - 1,
                    ..d
                };
                assert!(d.remainder_bits == 1 || smaller.expected_fpp(n) > p);
            }
        }
        // 24 · 2^-r: r = 12 at 1 % (24/4096 = 0.59 %), r = 15 at 0.1 %.
        let d = DLeftParams::for_capacity(2_400_000, 0.01).unwrap();
        assert_eq!(d.remainder_bits, 12);
        let bound = 24.0 / 4096.0;
        let exact = d.expected_fpp(2_400_000);
        assert!(exact <= bound && exact > 0.99 * bound, "{exact}");
        assert_eq!(
            DLeftParams::for_capacity(2_400_000, 0.001)
                .unwrap()
                .remainder_bits,
            15
        );
    }

    #[test]
    fn dleft_shapes_outside_the_limits_are_refused() {
        let refusal = |n, p| DLeftParams::for_capacity(n, p).unwrap_err();
        assert!(matches!(refusal(10, 0.0), Error::InvalidFpp(_)));
        assert!(matches!(refusal(10, 1e-30), Error::InvalidParameters(_)));
        assert!(matches!(refusal(u64::MAX, 0.01), Error::TooLarge { .. }));
        let d = DLeftParams::for_capacity(1000, 0.01).unwrap();
        assert!(d.with_counter_bits(0).is_err());
        assert!(d.with_counter_bits(9).is_err());
        assert_eq!(
            d.with_counter_bits(4).unwrap().cell_bits(),
            d.remainder_bits + 4
        );
        for bad in [
            DLeftParams { tables: 0, ..d },
            DLeftParams { tables: 17, ..d },
            DLeftParams {
                cells_per_bucket: 0,
                ..d
            },
            DLeftParams {
                remainder_bits: 0,
                ..d
            },
            DLeftParams {
                remainder_bits: 63,
                ..d
            },
            // A width that overflows when added to the counter's (as a file may state).
            DLeftParams {
                remainder_bits: u32::MAX,
                ..d
            },
            DLeftParams { buckets: 0, ..d },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
