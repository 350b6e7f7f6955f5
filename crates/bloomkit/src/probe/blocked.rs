//! Cache-blocked probing: every probe of an element lands in one 512-bit block (a cache line).
//!
//! From an element's hash words `[h1, h2]` ([`BlockLayout::hash`]):
//! - the block is `⌊h1 · B / 2⁶⁴⌋` (multiply-shift range reduction over `B` blocks, any `B`);
//! - the positions inside the block come from `h2`, as an 8-word mask:
//!   - [`BlockLayout::Bits`]: `[h1, h2]` is the 128-bit hash; `k` positions of 9 bits each,
//!     taken from `h2` (7 per 64-bit word of hash; further words come from a SplitMix64 step),
//!     positions may coincide;
//!   - [`BlockLayout::SplitBlock`]: `h1 = h2` is one 64-bit hash ([`Hashing::hash64`]): its
//!     high bits pick the block, its low 32 bits `h32` the bits: exactly one bit in each of the
//!     8 words (`k = 8`), bit `(h32 · SALTᵢ mod 2³²) >> 26` of word `i` with the eight odd
//!     salts below (the layout of Parquet's split-block Bloom filter, widened to 64-bit words).
//!     The two parts are independent for any filter of fewer than 2³² blocks.
//!   - [`BlockLayout::SplitBlock256`]: Parquet's split-block layout in half a block. The same
//!     64-bit hash picks the block; bit 32 picks its lower or upper 256-bit half, and `h32` sets
//!     exactly one bit in each of that half's eight 32-bit words: bit `(h32 · SALTᵢ mod 2³²) >>
//!     27` of 32-bit word `i`, which is bits `32·(i mod 2) ..` of 64-bit word `4·half + i/2`.
//!     Half the vector work of `SplitBlock` per query, for 4–7 % more memory at the same FPR
//!     (smaller groups of bits fill less evenly).
//!
//! A query then loads one cache line and compares it with the mask; an insert ORs the mask in.
//!
//! Blocking costs accuracy: blocks receive a Poisson-distributed number of elements, and an
//! overloaded block has a much higher FPR than the average. [`expected_fpp`] computes the exact
//! expectation, `Σⱼ Poisson(j; n/B) · fpp_in_block(j)`, and [`params_for`] searches for the
//! smallest filter whose expectation meets the target: the measured FPR then meets it too
//! (`tests/blocked.rs`), at the price of extra bits per element (`docs/BENCHMARKS.md`).

use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::math::{check_fpp, MAX_BITS};
use crate::probe::reduce;
use std::f64::consts::LN_2;

/// Bits in one block.
pub const BLOCK_BITS: u64 = 512;

/// Odd multipliers of the split-block layout.
const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// How the bits of an element are placed inside its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockLayout {
    /// `k` bits anywhere in the block.
    Bits(u32),
    /// One bit in each of the block's eight 64-bit words (`k = 8`).
    SplitBlock,
    /// One bit in each of the eight 32-bit words of one half of the block (`k = 8`): Parquet's
    /// 256-bit split block.
    SplitBlock256,
}

impl BlockLayout {
    /// Number of bits set per element.
    pub fn hashes(self) -> u32 {
        match self {
            BlockLayout::Bits(k) => k,
            BlockLayout::SplitBlock | BlockLayout::SplitBlock256 => 8,
        }
    }

    /// The hash words `[h1, h2]` of an element's key bytes: one 64-bit hash twice for the
    /// split-block layouts, the 128-bit hash for `Bits(k)`.
    #[inline(always)]
    pub fn hash(self, hashing: &Hashing, bytes: &[u8]) -> [u64; 2] {
        match self {
            BlockLayout::SplitBlock | BlockLayout::SplitBlock256 => {
                let h = hashing.hash64(bytes);
                [h, h]
            }
            BlockLayout::Bits(_) => hashing.hash128(bytes),
        }
    }

    /// The block (in `0..blocks`) and the 8-word mask of an element with hash `[h1, h2]`.
    #[inline(always)]
    pub fn locate(self, h1: u64, h2: u64, blocks: u64) -> (usize, [u64; 8]) {
        (reduce(h1, blocks) as usize, self.mask(h2))
    }

    /// The 8-word in-block mask for hash word `h2`.
    #[inline(always)]
    pub fn mask(self, h2: u64) -> [u64; 8] {
        let mut mask = [0u64; 8];
        match self {
            BlockLayout::SplitBlock => {
                let h = h2 as u32;
                for (m, salt) in mask.iter_mut().zip(SALT) {
                    *m = 1u64 << (h.wrapping_mul(salt) >> 26);
                }
            }
            BlockLayout::SplitBlock256 => {
                let (half, h) = half_of(h2);
                for (i, salt) in SALT.into_iter().enumerate() {
                    mask[4 * half + i / 2] |=
                        (1u64 << (h.wrapping_mul(salt) >> 27)) << (32 * (i % 2));
                }
            }
            BlockLayout::Bits(k) => for_each_bit(h2, k, |w, bit| mask[w] |= bit),
        }
        mask
    }

    /// Whether every bit of the element with in-block hash `h2` is set in `block`.
    ///
    /// Equivalent to comparing `block` with [`mask`](Self::mask), but tests the bits where
    /// they are instead of building the mask in memory first (which would make the CPU wait
    /// for the mask's stores before the comparison can load it).
    #[inline(always)]
    pub fn test(self, block: &[u64; 8], h2: u64) -> bool {
        match self {
            BlockLayout::SplitBlock => split_test(block, h2 as u32),
            BlockLayout::SplitBlock256 => split256_test(block, h2),
            BlockLayout::Bits(k) => {
                let mut all = 1u64;
                for_each_position(h2, k, |pos| {
                    all &= block[(pos >> 6) & 7] >> (pos & 63);
                });
                all & 1 != 0
            }
        }
    }

    /// Sets the bits of the element with in-block hash `h2` in `block`; returns `true` if any
    /// of them was clear.
    #[inline(always)]
    pub fn set(self, block: &mut [u64; 8], h2: u64) -> bool {
        match self {
            BlockLayout::SplitBlock => split_set(block, h2 as u32),
            BlockLayout::SplitBlock256 => split256_set(block, h2),
            BlockLayout::Bits(k) => {
                let mut missing = 0u64;
                for_each_bit(h2, k, |w, bit| {
                    missing |= bit & !block[w];
                    block[w] |= bit;
                });
                missing != 0
            }
        }
    }

    /// Probability that a query element not in the set tests positive in a block holding `j`
    /// elements.
    pub fn fpp_in_block(self, j: u64) -> f64 {
        match self {
            BlockLayout::Bits(k) => {
                let kf = f64::from(k);
                // Each of the j·k sets hits a given bit with probability 1/512.
                let fill = -((kf * j as f64) * (-1.0 / BLOCK_BITS as f64).ln_1p()).exp_m1();
                fill.powf(kf)
            }
            BlockLayout::SplitBlock => {
                let fill = -((j as f64) * (-1.0 / 64.0f64).ln_1p()).exp_m1();
                fill.powi(8)
            }
            BlockLayout::SplitBlock256 => {
                // Each of the j elements lands in either half: a binomial split.
                let half_fpp = |i: u64| {
                    let fill = -((i as f64) * (-1.0 / 32.0f64).ln_1p()).exp_m1();
                    fill.powi(8)
                };
                // log C(j, i) - j ln 2, accumulated term by term.
                let mut log_c = -(j as f64) * std::f64::consts::LN_2;
                let mut total = 0.0;
                for i in 0..=j {
                    if i > 0 {
                        log_c += ((j - i + 1) as f64).ln() - (i as f64).ln();
                    }
                    total += log_c.exp() * half_fpp(i);
                }
                total
            }
        }
    }
}

/// The half (0 or 1) and the in-half hash of a [`BlockLayout::SplitBlock256`] element.
#[inline(always)]
fn half_of(h: u64) -> (usize, u32) {
    (((h >> 32) & 1) as usize, h as u32)
}

/// SplitMix64's output function, used to stretch hash bits.
#[inline(always)]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Calls `f` with each of the `k` in-block positions (`0..512`) of in-block hash `h2`: seven
/// 9-bit fields per 64-bit word, `h2` first, then SplitMix64 steps from `h2` (never from the
/// shifted-out remainder, which would be the same for every element). Positions may coincide.
#[inline(always)]
fn for_each_position(h2: u64, k: u32, mut f: impl FnMut(usize)) {
    let mut seed = h2;
    let mut x = h2;
    let mut left = 7;
    for _ in 0..k {
        if left == 0 {
            seed = splitmix64(seed);
            x = seed;
            left = 7;
        }
        f((x & 511) as usize);
        x >>= 9;
        left -= 1;
    }
}

/// [`for_each_position`] as (word index, single-bit word mask) pairs.
#[inline(always)]
fn for_each_bit(h2: u64, k: u32, mut f: impl FnMut(usize, u64)) {
    for_each_position(h2, k, |pos| f((pos >> 6) & 7, 1u64 << (pos & 63)));
}

/// Whether this CPU runs the AVX2 split-block kernels (checked at compile time when the
/// build targets AVX2, otherwise once at run time and cached by the standard library).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    cfg!(target_feature = "avx2") || std::arch::is_x86_feature_detected!("avx2")
}

/// Split-block test: portable code, or the AVX2 kernel when the CPU has it.
#[inline(always)]
fn split_test(block: &[u64; 8], h: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `has_avx2` just confirmed the CPU supports AVX2.
        return unsafe { avx2::split_test(block, h) };
    }
    split_test_portable(block, h)
}

#[inline(always)]
fn split_test_portable(block: &[u64; 8], h: u32) -> bool {
    let mut missing = 0u64;
    for (w, salt) in block.iter().zip(SALT) {
        missing |= (1u64 << (h.wrapping_mul(salt) >> 26)) & !w;
    }
    missing == 0
}

/// Split-block insert: portable code, or the AVX2 kernel when the CPU has it.
#[inline(always)]
fn split_set(block: &mut [u64; 8], h: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `has_avx2` just confirmed the CPU supports AVX2.
        return unsafe { avx2::split_set(block, h) };
    }
    split_set_portable(block, h)
}

#[inline(always)]
fn split_set_portable(block: &mut [u64; 8], h: u32) -> bool {
    let mut missing = 0u64;
    for (w, salt) in block.iter_mut().zip(SALT) {
        let bit = 1u64 << (h.wrapping_mul(salt) >> 26);
        missing |= bit & !*w;
        *w |= bit;
    }
    missing != 0
}

/// Half-block (Parquet) split-block test: portable code, or the AVX2 kernel when the CPU has it.
#[inline(always)]
fn split256_test(block: &[u64; 8], h: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `has_avx2` just confirmed the CPU supports AVX2.
        return unsafe { avx2::split256_test(block, h) };
    }
    split256_test_portable(block, h)
}

#[inline(always)]
fn split256_test_portable(block: &[u64; 8], h: u64) -> bool {
    let m = BlockLayout::SplitBlock256.mask(h);
    block.iter().zip(m).all(|(w, m)| m & !w == 0)
}

/// Half-block split-block insert: portable code, or the AVX2 kernel when the CPU has it.
#[inline(always)]
fn split256_set(block: &mut [u64; 8], h: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `has_avx2` just confirmed the CPU supports AVX2.
        return unsafe { avx2::split256_set(block, h) };
    }
    split256_set_portable(block, h)
}

#[inline(always)]
fn split256_set_portable(block: &mut [u64; 8], h: u64) -> bool {
    let mut missing = 0u64;
    for (w, m) in block.iter_mut().zip(BlockLayout::SplitBlock256.mask(h)) {
        missing |= m & !*w;
        *w |= m;
    }
    missing != 0
}

/// AVX2 split-block kernels: the eight salted products in one vector multiply, the eight
/// single-bit words from two variable shifts, and the block compared or updated as two 256-bit
/// halves. Written with intrinsics because the portable loop needs per-lane variable shifts,
/// which the compiler cannot use without AVX2 enabled for the whole build.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use super::SALT;
    use core::arch::x86_64::*;

    /// The split-block mask of `h` as two halves of four 64-bit words.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mask(h: u32) -> (__m256i, __m256i) {
        // SAFETY: `SALT` is 8 × 4 = 32 readable bytes; `loadu` has no alignment requirement.
        let salts = unsafe { _mm256_loadu_si256(SALT.as_ptr().cast()) };
        let shifts =
            _mm256_srli_epi32::<26>(_mm256_mullo_epi32(_mm256_set1_epi32(h as i32), salts));
        let one = _mm256_set1_epi64x(1);
        let lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(shifts)));
        let hi = _mm256_sllv_epi64(
            one,
            _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(shifts)),
        );
        (lo, hi)
    }

    /// # Safety
    /// The CPU must support AVX2.
    ///
    /// One branch-free test of all eight words. (Testing the first four words and the other
    /// four only if those pass saves instructions on streams of absent elements, but measured
    /// at n = 1e7 it gained nothing through the runtime-dispatched call and cost up to 10 % on
    /// streams that mix present and absent elements, whose branch it mispredicts.)
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn split_test(block: &[u64; 8], h: u32) -> bool {
        let (m_lo, m_hi) = mask(h);
        let p = block.as_ptr();
        // SAFETY: `block` is 8 × 8 = 64 readable bytes: words 0..4 and 4..8; `loadu` has no
        // alignment requirement.
        let (b_lo, b_hi) = unsafe {
            (
                _mm256_loadu_si256(p.cast()),
                _mm256_loadu_si256(p.add(4).cast()),
            )
        };
        // testc(a, b) is 1 when every bit of b is set in a.
        _mm256_testc_si256(b_lo, m_lo) & _mm256_testc_si256(b_hi, m_hi) != 0
    }

    /// The half-block mask of in-half hash `h`: one bit in each 32-bit lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mask256(h: u32) -> __m256i {
        // SAFETY: `SALT` is 8 × 4 = 32 readable bytes; `loadu` has no alignment requirement.
        let salts = unsafe { _mm256_loadu_si256(SALT.as_ptr().cast()) };
        let shifts =
            _mm256_srli_epi32::<27>(_mm256_mullo_epi32(_mm256_set1_epi32(h as i32), salts));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), shifts)
    }

    /// # Safety
    /// The CPU must support AVX2. (32-bit lane `i` of words `4·half ..` is 32-bit word `i` of
    /// the half in the layout's definition because x86 is little-endian.)
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn split256_test(block: &[u64; 8], h: u64) -> bool {
        let (half, h) = super::half_of(h);
        // SAFETY: `half` is 0 or 1, so words `4·half .. 4·half + 4` are 32 readable bytes of
        // `block`; `loadu` has no alignment requirement.
        let b = unsafe { _mm256_loadu_si256(block.as_ptr().add(4 * half).cast()) };
        _mm256_testc_si256(b, mask256(h)) != 0
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn split256_set(block: &mut [u64; 8], h: u64) -> bool {
        let (half, h) = super::half_of(h);
        let m = mask256(h);
        // SAFETY: as in `split256_test`, on 32 writable bytes of the exclusively borrowed block.
        unsafe {
            let p = block.as_mut_ptr().add(4 * half);
            let b = _mm256_loadu_si256(p.cast());
            _mm256_storeu_si256(p.cast(), _mm256_or_si256(b, m));
            _mm256_testc_si256(b, m) == 0
        }
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn split_set(block: &mut [u64; 8], h: u32) -> bool {
        let (m_lo, m_hi) = mask(h);
        let p = block.as_mut_ptr();
        // SAFETY: `block` is 64 writable bytes, exclusively borrowed: words 0..4 and 4..8;
        // `loadu`/`storeu` have no alignment requirement.
        unsafe {
            let b_lo = _mm256_loadu_si256(p.cast());
            let b_hi = _mm256_loadu_si256(p.add(4).cast());
            let present = _mm256_testc_si256(b_lo, m_lo) & _mm256_testc_si256(b_hi, m_hi) != 0;
            _mm256_storeu_si256(p.cast(), _mm256_or_si256(b_lo, m_lo));
            _mm256_storeu_si256(p.add(4).cast(), _mm256_or_si256(b_hi, m_hi));
            !present
        }
    }
}

/// Expected FPR of a blocked filter of `blocks` blocks after `n` insertions: the in-block FPR
/// averaged over the Poisson distribution of block loads.
pub fn expected_fpp(layout: BlockLayout, blocks: u64, n: u64) -> f64 {
    if blocks == 0 {
        return 1.0;
    }
    let lambda = n as f64 / blocks as f64;
    if lambda == 0.0 {
        return 0.0;
    }
    // Sum the Poisson terms around the mean until they are negligible.
    let hi = (lambda + 12.0 * lambda.sqrt() + 30.0).ceil() as u64;
    let mut total = 0.0;
    // log P(j) = j ln λ - λ - ln j!
    let mut log_p = -lambda;
    for j in 0..=hi {
        if j > 0 {
            log_p += lambda.ln() - (j as f64).ln();
        }
        total += log_p.exp() * layout.fpp_in_block(j);
    }
    total.min(1.0)
}

/// The smallest blocked filter (number of blocks, layout) whose expected FPR after `n`
/// insertions is at most `p`, trying the `k` values around the classic optimum and the
/// split-block layout when `split_block` is true. `n = 0` is treated as 1.
pub fn params_for(n: u64, p: f64, split_block: bool) -> Result<(u64, BlockLayout)> {
    let k_opt = (-check_fpp(p)?.log2()).round().max(1.0) as u32;
    let candidates: Vec<BlockLayout> = if split_block {
        vec![BlockLayout::SplitBlock]
    } else {
        (k_opt.saturating_sub(2).max(1)..=k_opt + 3)
            .map(BlockLayout::Bits)
            .collect()
    };
    params_for_layouts(n, p, &candidates)
}

/// The parameters [`BlockedBloomFilter::new`](crate::BlockedBloomFilter::new) uses: the
/// fastest layout whose size for `n` at `p` is at most 10% over the most compact `Bits(k)`
/// layout's (the half-block split-block layout first, then the split-block one), else the
/// compact layout.
///
/// ```
/// use bloomkit::probe::blocked::{default_params, BlockLayout};
/// let (blocks, layout) = default_params(1_000_000, 0.01)?;
/// assert_eq!(layout, BlockLayout::SplitBlock256);
/// assert!(blocks * 512 < 11 * 1_000_000); // about 10.5 bits per element
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn default_params(n: u64, p: f64) -> Result<(u64, BlockLayout)> {
    let (compact, compact_layout) = params_for(n, p, false)?;
    for fast in [BlockLayout::SplitBlock256, BlockLayout::SplitBlock] {
        if let Ok((blocks, layout)) = params_for_layouts(n, p, &[fast]) {
            if blocks as f64 <= compact as f64 * 1.10 {
                return Ok((blocks, layout));
            }
        }
    }
    Ok((compact, compact_layout))
}

/// The smallest blocked filter (number of blocks, layout) among `candidates` whose expected FPR
/// after `n` insertions is at most `p`. `n = 0` is treated as 1.
pub fn params_for_layouts(
    n: u64,
    p: f64,
    candidates: &[BlockLayout],
) -> Result<(u64, BlockLayout)> {
    let p = check_fpp(p)?;
    let n = n.max(1);
    let max_blocks = MAX_BITS / BLOCK_BITS;
    let mut best: Option<(u64, BlockLayout)> = None;
    for &layout in candidates {
        // A blocked filter never beats the classic optimum, so start there (`lo` fails or is
        // 0), grow `hi` until it meets p, then binary-search between them.
        let classic = (-(n as f64) * p.ln() / (LN_2 * LN_2) / BLOCK_BITS as f64).floor() as u64;
        let mut lo = classic.saturating_sub(1).min(max_blocks);
        while lo > 0 && expected_fpp(layout, lo, n) <= p {
            lo /= 2;
        }
        let mut hi = (lo + 1).max(lo + lo / 8);
        while expected_fpp(layout, hi, n) > p {
            if hi >= max_blocks {
                break;
            }
            lo = hi;
            hi = hi.saturating_mul(2).min(max_blocks);
        }
        if expected_fpp(layout, hi, n) > p {
            continue;
        }
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if expected_fpp(layout, mid, n) <= p {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        if best.is_none_or(|(b, _)| hi < b) {
            best = Some((hi, layout));
        }
    }
    best.ok_or(Error::TooLarge {
        bits: u64::MAX,
        limit: "no blocked filter this platform can address meets that FPR",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_have_the_right_bits() {
        for h in [0u64, 1, u64::MAX, 0x0123_4567_89ab_cdef] {
            let m = BlockLayout::SplitBlock.mask(h);
            assert!(m.iter().all(|w| w.count_ones() == 1));
            // One bit in each 32-bit word of one half, none in the other.
            let m = BlockLayout::SplitBlock256.mask(h);
            let half = ((h >> 32) & 1) as usize;
            for (i, w) in m.iter().enumerate() {
                if i / 4 == half {
                    assert_eq!((w & 0xffff_ffff).count_ones(), 1);
                    assert_eq!((w >> 32).count_ones(), 1);
                } else {
                    assert_eq!(*w, 0);
                }
            }
            for k in [1, 7, 8, 20] {
                let m = BlockLayout::Bits(k).mask(h);
                let ones: u32 = m.iter().map(|w| w.count_ones()).sum();
                assert!(ones >= 1 && ones <= k);
            }
        }
        // Different hashes spread over all words.
        let mut seen = [false; 8];
        for h in 0..1000u64 {
            for (i, w) in BlockLayout::Bits(3).mask(splitmix64(h)).iter().enumerate() {
                seen[i] |= *w != 0;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    /// `test` and `set` (direct bit tests, and the AVX2 kernels on CPUs that have them) agree
    /// with the mask, and the portable split-block code agrees with the AVX2 code.
    #[test]
    fn direct_probes_agree_with_masks() {
        let layouts = [1, 3, 6, 7, 8, 9, 15, 16]
            .map(BlockLayout::Bits)
            .into_iter()
            .chain([BlockLayout::SplitBlock, BlockLayout::SplitBlock256]);
        for layout in layouts {
            for i in 0..3000u64 {
                let h2 = splitmix64(i);
                let fill = splitmix64(i ^ 0xdead_beef);
                // Blocks from empty to nearly full, so both answers occur.
                let block: [u64; 8] = std::array::from_fn(|w| {
                    let r = splitmix64(fill.wrapping_add(w as u64));
                    match i % 4 {
                        0 => 0,
                        1 => r & splitmix64(r),
                        2 => r | splitmix64(r),
                        _ => !0 ^ (1 << (r & 63)),
                    }
                });
                let mask = layout.mask(h2);
                let want = mask.iter().zip(&block).all(|(m, b)| m & !b == 0);
                assert_eq!(layout.test(&block, h2), want, "{layout:?} {h2:x}");
                let mut set = block;
                assert_eq!(layout.set(&mut set, h2), !want);
                let ored: [u64; 8] = std::array::from_fn(|w| block[w] | mask[w]);
                assert_eq!(set, ored);
                assert!(layout.test(&set, h2));
                if layout == BlockLayout::SplitBlock {
                    assert_eq!(split_test_portable(&block, h2 as u32), want);
                    let mut p = block;
                    assert_eq!(split_set_portable(&mut p, h2 as u32), !want);
                    assert_eq!(p, ored);
                }
                if layout == BlockLayout::SplitBlock256 {
                    assert_eq!(split256_test_portable(&block, h2), want);
                    let mut p = block;
                    assert_eq!(split256_set_portable(&mut p, h2), !want);
                    assert_eq!(p, ored);
                }
            }
        }
    }

    #[test]
    fn sizing_meets_target() {
        for p in [0.1, 0.01, 0.001] {
            for n in [1000u64, 1_000_000] {
                let (blocks, layout) = params_for(n, p, false).unwrap();
                assert!(expected_fpp(layout, blocks, n) <= p);
                assert!(expected_fpp(layout, blocks - 1, n) > p || blocks == 1);
                let (b2, l2) = params_for(n, p, true).unwrap();
                assert!(expected_fpp(l2, b2, n) <= p);
                let (b3, l3) = params_for_layouts(n, p, &[BlockLayout::SplitBlock256]).unwrap();
                assert!(expected_fpp(l3, b3, n) <= p);
                // Smaller groups of bits fill less evenly: more memory than SplitBlock.
                assert!(b3 >= b2, "{n} {p}");
            }
        }
        assert!(params_for(10, 2.0, false).is_err());
    }
}
