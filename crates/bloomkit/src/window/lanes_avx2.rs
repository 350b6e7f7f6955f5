//! The AVX2 kernel of the count window's blocked layout for its most common shape, lanes of
//! 128 bits (a block of one cache line) and at most 8 bits per element: the lane mask from
//! the hash in vector registers, and the test of all 4 lanes with two 256-bit loads. The
//! portable code in `lanes.rs` defines the layout; `tests` compares the two.

use crate::storage::Block;
use core::arch::x86_64::*;

/// Whether the kernel serves lanes of `lane_words` words and `b` bits per element on this CPU.
pub(super) fn applies(lane_words: usize, b: u32) -> bool {
    lane_words == 2 && b <= 8 && crate::probe::blocked::avx2::available()
}

/// Per `b`, 255 in the position slots `b..8` (not used) and 0 in the others.
static UNUSED: [[i64; 8]; 9] = {
    let mut t = [[0i64; 8]; 9];
    let mut b = 0;
    while b < 9 {
        let mut i = b;
        while i < 8 {
            t[b][i] = 255;
            i += 1;
        }
        b += 1;
    }
    t
};

/// The element's bits in a 128-bit lane as `[m0, m1, m0, m1]`: positions `i < b` are the
/// 7-bit fields `(h2 >> 7i) & 127` (as `lanes::mask` defines them), each a bit of word 0
/// (`< 64`) or word 1.
#[inline]
#[target_feature(enable = "avx2")]
fn mask(h2: u64, b: u32) -> __m256i {
    let h = _mm256_set1_epi64x(h2 as i64);
    let field = _mm256_set1_epi64x(127);
    let lo = _mm256_and_si256(
        _mm256_srlv_epi64(h, _mm256_setr_epi64x(0, 7, 14, 21)),
        field,
    );
    let hi = _mm256_and_si256(
        _mm256_srlv_epi64(h, _mm256_setr_epi64x(28, 35, 42, 49)),
        field,
    );
    // Positions at or past `b` become 255 (ORed in from a table), which shifts a bit out of
    // both words.
    let unused = UNUSED[b as usize].as_ptr().cast::<__m256i>();
    // SAFETY: each row of `UNUSED` is 8 × 8 = 64 readable bytes; `loadu` has no alignment
    // requirement (and `b ≤ 8` by `applies`).
    let (lo, hi) = unsafe {
        (
            _mm256_or_si256(lo, _mm256_loadu_si256(unused)),
            _mm256_or_si256(hi, _mm256_loadu_si256(unused.add(1))),
        )
    };
    // `sllv` gives 0 for counts of 64 and more, and `pos - 64` wraps to such a count below 64.
    let one = _mm256_set1_epi64x(1);
    let sixty_four = _mm256_set1_epi64x(64);
    let word0 = _mm256_or_si256(_mm256_sllv_epi64(one, lo), _mm256_sllv_epi64(one, hi));
    let word1 = _mm256_or_si256(
        _mm256_sllv_epi64(one, _mm256_sub_epi64(lo, sixty_four)),
        _mm256_sllv_epi64(one, _mm256_sub_epi64(hi, sixty_four)),
    );
    // OR the four candidates of each word into [m0, m1, m0, m1].
    let pairs = _mm256_or_si256(
        _mm256_unpacklo_epi64(word0, word1),
        _mm256_unpackhi_epi64(word0, word1),
    );
    _mm256_or_si256(pairs, _mm256_permute2x128_si256(pairs, pairs, 1))
}

/// Whether any of the 4 lanes of `block` (one [`Block`]) has every bit of `h2`.
///
/// # Safety
/// The CPU must have AVX2 ([`applies`]), and `block` must not be empty.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn any_hit(block: &[Block], h2: u64, b: u32) -> bool {
    debug_assert!(!block.is_empty());
    // SAFETY: the caller's.
    unsafe { hit_with(block, mask(h2, b)) }
}

/// Whether any lane of `block` has every bit of mask `m` (`[m0, m1, m0, m1]`).
///
/// # Safety
/// As [`any_hit`].
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn hit_with(block: &[Block], m: __m256i) -> bool {
    let zero = _mm256_setzero_si256();
    let p = block.as_ptr().cast::<__m256i>();
    let mut full = 0i32;
    for i in 0..2 {
        // SAFETY: a 64-byte-aligned block is two aligned 32-byte vectors.
        let w = unsafe { _mm256_load_si256(p.add(i)) };
        let missing = _mm256_cmpeq_epi64(_mm256_andnot_si256(w, m), zero);
        full |= _mm256_movemask_pd(_mm256_castsi256_pd(missing)) << (4 * i);
    }
    // Lane j is words 2j and 2j + 1: both must miss nothing.
    full & (full >> 1) & 0x55 != 0
}

/// Sets the element's bits in lane `lane` of `block`; returns whether no lane had all of
/// them before (the element was new), when `test` is set (else `false`).
///
/// # Safety
/// The CPU must have AVX2 ([`applies`]), `block` must not be empty, and `lane < 4`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn set(block: &mut [Block], h2: u64, b: u32, lane: usize, test: bool) -> bool {
    debug_assert!(!block.is_empty() && lane < 4);
    let m = mask(h2, b);
    // SAFETY: the caller's.
    let new = test && !unsafe { hit_with(block, m) };
    // SAFETY: lane `lane` is words `2·lane` and `2·lane + 1` of the first block, 16 bytes
    // inside it; `loadu`/`storeu` have no alignment requirement.
    unsafe {
        let p = block
            .as_mut_ptr()
            .cast::<u64>()
            .add(2 * lane)
            .cast::<__m128i>();
        _mm_storeu_si128(
            p,
            _mm_or_si128(_mm_loadu_si128(p), _mm256_castsi256_si128(m)),
        );
    }
    new
}
