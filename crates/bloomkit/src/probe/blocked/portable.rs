//! The in-block probes of every layout in plain Rust: the definition of each layout, and the
//! code that runs wherever no vector kernel applies (other CPUs, the `Bits(k)` layouts, the
//! tests that check the vector kernels against it).

use crate::probe::splitmix64;

/// Odd multipliers of the split-block layouts.
pub(crate) const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// Split-block mask: bit `(h · SALTᵢ mod 2³²) >> 26` of word `i`.
#[inline(always)]
pub(crate) fn split_mask(h: u32) -> [u64; 8] {
    SALT.map(|salt| 1u64 << (h.wrapping_mul(salt) >> 26))
}

/// Split-block test, without building the mask in memory.
#[inline(always)]
pub(crate) fn split_test(block: &[u64; 8], h: u32) -> bool {
    let mut missing = 0u64;
    for (w, salt) in block.iter().zip(SALT) {
        missing |= (1u64 << (h.wrapping_mul(salt) >> 26)) & !w;
    }
    missing == 0
}

/// Split-block insert; `true` if any bit was clear.
#[inline(always)]
pub(crate) fn split_set(block: &mut [u64; 8], h: u32) -> bool {
    let mut missing = 0u64;
    for (w, salt) in block.iter_mut().zip(SALT) {
        let bit = 1u64 << (h.wrapping_mul(salt) >> 26);
        missing |= bit & !*w;
        *w |= bit;
    }
    missing != 0
}

/// The half (0 or 1) and the in-half hash of a half-block split-block element.
#[inline(always)]
pub(crate) fn half_of(h: u64) -> (usize, u32) {
    (((h >> 32) & 1) as usize, h as u32)
}

/// Half-block split-block mask: one bit in each 32-bit word of one half.
#[inline(always)]
pub(crate) fn split256_mask(h2: u64) -> [u64; 8] {
    let (half, h) = half_of(h2);
    let mut mask = [0u64; 8];
    for (i, salt) in SALT.into_iter().enumerate() {
        mask[4 * half + i / 2] |= (1u64 << (h.wrapping_mul(salt) >> 27)) << (32 * (i % 2));
    }
    mask
}

/// Half-block split-block test.
#[inline(always)]
pub(crate) fn split256_test(block: &[u64; 8], h: u64) -> bool {
    let m = split256_mask(h);
    block.iter().zip(m).all(|(w, m)| m & !w == 0)
}

/// Half-block split-block insert; `true` if any bit was clear.
#[inline(always)]
pub(crate) fn split256_set(block: &mut [u64; 8], h: u64) -> bool {
    or_mask(block, &split256_mask(h))
}

/// ORs `mask` into `block`; `true` if any bit of it was clear.
#[inline(always)]
pub(crate) fn or_mask(block: &mut [u64; 8], mask: &[u64; 8]) -> bool {
    let mut missing = 0u64;
    for (w, m) in block.iter_mut().zip(mask) {
        missing |= m & !*w;
        *w |= m;
    }
    missing != 0
}

/// Calls `f` with each of the `k` in-block positions (`0..512`) of in-block hash `h2`: seven
/// 9-bit fields per 64-bit word, `h2` first, then SplitMix64 steps from `h2` (never from the
/// shifted-out remainder, which would be the same for every element). Positions may coincide.
#[inline(always)]
pub(crate) fn for_each_position(h2: u64, k: u32, mut f: impl FnMut(usize)) {
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

/// `Bits(k)` mask.
#[inline(always)]
pub(crate) fn bits_mask(h2: u64, k: u32) -> [u64; 8] {
    let mut mask = [0u64; 8];
    for_each_position(h2, k, |pos| mask[(pos >> 6) & 7] |= 1u64 << (pos & 63));
    mask
}

/// `Bits(k)` test, bit by bit where the bits are.
#[inline(always)]
pub(crate) fn bits_test(block: &[u64; 8], h2: u64, k: u32) -> bool {
    let mut all = 1u64;
    for_each_position(h2, k, |pos| all &= block[(pos >> 6) & 7] >> (pos & 63));
    all & 1 != 0
}

/// `Bits(k)` insert; `true` if any bit was clear.
#[inline(always)]
pub(crate) fn bits_set(block: &mut [u64; 8], h2: u64, k: u32) -> bool {
    let mut missing = 0u64;
    for_each_position(h2, k, |pos| {
        let (w, bit) = ((pos >> 6) & 7, 1u64 << (pos & 63));
        missing |= bit & !block[w];
        block[w] |= bit;
    });
    missing != 0
}
