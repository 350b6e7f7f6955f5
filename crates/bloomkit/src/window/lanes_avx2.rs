//! The AVX2 kernel of the count window's blocked layout for its most common shape, lanes of
//! 128 bits (a block of one cache line): the lane mask from the hash with the split-block
//! filters' one vector multiply and shift, and the test of all 4 lanes with two 256-bit loads
//! (word `t` of the four lanes is one vector, `lanes.rs`). The portable code in `lanes.rs`
//! defines the layout; its tests compare the two.
//!
//! The entry points hold the whole operation (block lookup, mask, test or set; the batch
//! loops with their hashing), compiled for AVX2, so that the kernel inlines into them: a call
//! into an AVX2 function per key costs about what the rest of a query does.

use super::ages::Ages;
use super::lanes::clear_lane;
use crate::probe::blocked::{pipeline_touching, SALT};
use crate::probe::reduce;
use crate::storage::{prefetch, Block};
use core::arch::x86_64::*;

/// Whether the kernel serves lanes of `lane_words` words on this CPU.
pub(super) fn applies(lane_words: usize) -> bool {
    lane_words == 2 && crate::probe::blocked::avx2::available()
}

/// The lane mask of in-lane hash `h` as its two words, each broadcast to a whole vector:
/// `([w0; 4], [w1; 4])`. Sub-lane `i` (16 bits) gets bit `(h · SALTᵢ mod 2³²) >> 28`, as
/// `lanes::mask` defines.
#[inline]
#[target_feature(enable = "avx2")]
fn mask(h: u32) -> (__m256i, __m256i) {
    // SAFETY: `SALT` is 8 × 4 = 32 readable bytes; `loadu` has no alignment requirement.
    let salts = unsafe { _mm256_loadu_si256(SALT.as_ptr().cast()) };
    let shifts = _mm256_srli_epi32::<28>(_mm256_mullo_epi32(_mm256_set1_epi32(h as i32), salts));
    // Each 32-bit lane holds 1 << (0..16), which packs into 16 bits unchanged: the 16-bit
    // words are then [s0 s1 s2 s3 s0 s1 s2 s3 | s4 s5 s6 s7 s4 s5 s6 s7], so 64-bit word 0 is
    // lane word 0 and 64-bit word 2 is lane word 1.
    let bits = _mm256_sllv_epi32(_mm256_set1_epi32(1), shifts);
    let words = _mm256_packus_epi32(bits, bits);
    (
        _mm256_permute4x64_epi64::<0b00_00_00_00>(words),
        _mm256_permute4x64_epi64::<0b10_10_10_10>(words),
    )
}

/// Whether some lane of the block at `block` has every bit of mask `m`.
///
/// # Safety
/// The CPU must have AVX2, and `block` must point to a readable [`Block`].
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn hit(block: *const Block, m: (__m256i, __m256i)) -> bool {
    let p = block.cast::<__m256i>();
    // SAFETY: a `Block` is two aligned 32-byte vectors: word 0 and word 1 of the 4 lanes.
    let w = unsafe { (_mm256_load_si256(p), _mm256_load_si256(p.add(1))) };
    full(w, m)
}

/// Whether some lane of the block whose two vectors are `(w0, w1)` has every bit of mask `m`.
#[inline]
#[target_feature(enable = "avx2")]
fn full((w0, w1): (__m256i, __m256i), (m0, m1): (__m256i, __m256i)) -> bool {
    let missing = _mm256_or_si256(_mm256_andnot_si256(w0, m0), _mm256_andnot_si256(w1, m1));
    let full = _mm256_cmpeq_epi64(missing, _mm256_setzero_si256());
    _mm256_movemask_pd(_mm256_castsi256_pd(full)) != 0
}

/// Per lane `j`, all ones in 64-bit word `j` of a vector and zeros elsewhere: selects word
/// `t` of lane `j` in the vector of word `t` of the four lanes.
static LANE_SELECT: [[i64; 4]; 4] = [[-1, 0, 0, 0], [0, -1, 0, 0], [0, 0, -1, 0], [0, 0, 0, -1]];

/// Whether some lane of the block of hash `h` has all its bits.
///
/// # Safety
/// The CPU must have AVX2 ([`applies`]), and `lines` must be `blocks` blocks of one line.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn contains(lines: &[Block], blocks: u64, h: u64) -> bool {
    debug_assert_eq!(lines.len() as u64, blocks);
    let i = reduce(h, blocks) as usize;
    // SAFETY: `reduce(h, blocks) < blocks = lines.len()`, and the caller's AVX2.
    unsafe { hit(lines.as_ptr().add(i), mask(h as u32)) }
}

/// Sets the bits of hash `h` in lane `lane` of its block, as one 64-byte read and write of
/// the line (the other lanes ORed with zero); with `TEST`, returns whether no lane had all of
/// them before (else `false`).
///
/// # Safety
/// As [`contains`], and `lane < 4`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn insert<const TEST: bool>(
    lines: &mut [Block],
    blocks: u64,
    h: u64,
    lane: usize,
) -> bool {
    debug_assert!(lines.len() as u64 == blocks && lane < 4);
    let i = reduce(h, blocks) as usize;
    // SAFETY: as in `contains`; `lane < 4` is the caller's.
    unsafe { set_single::<TEST>(lines.as_mut_ptr().add(i), mask(h as u32), lane) }
}

/// [`set`] for a single insert, whose block is usually not in the cache: the test reads the
/// block's two vectors, but the lane's two words are ORed in by scalar writes. A vector store
/// whose data waits for an uncached line holds up the caller's following work far longer than
/// scalar stores do (see `split_set_single` in `probe/blocked/avx2.rs`); the batches prefetch
/// their blocks and keep [`set`]. The writes are volatile so that the compiler does not merge
/// them back into vector stores.
///
/// # Safety
/// As [`set`].
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn set_single<const TEST: bool>(
    block: *mut Block,
    m: (__m256i, __m256i),
    lane: usize,
) -> bool {
    // SAFETY: the caller's `block` points to a readable Block.
    let new = TEST && !unsafe { hit(block, m) };
    // Word `t` of lane `lane` is word `4·t + lane` of the block; each vector of the mask holds
    // its lane word in every 64-bit lane.
    let words = block.cast::<u64>();
    for (t, m) in [m.0, m.1].into_iter().enumerate() {
        let m = _mm256_extract_epi64::<0>(m) as u64;
        // SAFETY: `4·t + lane < 8` (`t < 2`, the caller's `lane < 4`): a word of the writable
        // block, which nothing else uses meanwhile (the caller holds the lanes mutably).
        unsafe {
            let w = words.add(4 * t + lane);
            w.write_volatile(w.read_volatile() | m);
        }
    }
    new
}

/// [`insert`] on the block at `block`.
///
/// # Safety
/// The CPU must have AVX2, `block` must point to a writable [`Block`], and `lane < 4`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn set<const TEST: bool>(block: *mut Block, m: (__m256i, __m256i), lane: usize) -> bool {
    let p = block.cast::<__m256i>();
    // SAFETY: a `Block` is two aligned 32-byte vectors; `LANE_SELECT[lane]` is 32 readable
    // bytes (the caller's `lane < 4`).
    unsafe {
        let (w0, w1) = (_mm256_load_si256(p), _mm256_load_si256(p.add(1)));
        let new = TEST && !full((w0, w1), m);
        let select = _mm256_loadu_si256(LANE_SELECT.get_unchecked(lane).as_ptr().cast());
        _mm256_store_si256(p, _mm256_or_si256(w0, _mm256_and_si256(m.0, select)));
        _mm256_store_si256(p.add(1), _mm256_or_si256(w1, _mm256_and_si256(m.1, select)));
        new
    }
}

/// The first stage of both batch pipelines: the block of hash `h` in `lines` (`blocks` blocks
/// of one line), prefetched, and the in-lane hash.
#[inline(always)]
fn locate(lines: &[Block], blocks: u64, h: u64) -> (usize, u32) {
    let i = reduce(h, blocks) as usize;
    prefetch(&lines[i]);
    (i, h as u32)
}

/// Tests the keys into `out` (the pipeline of `Lanes::contains_batch`).
///
/// # Safety
/// As [`contains`].
#[target_feature(enable = "avx2")]
pub(super) unsafe fn contains_batch<K>(
    lines: &[Block],
    blocks: u64,
    keys: &[K],
    touch: impl Fn(&K),
    hash: impl Fn(&K) -> u64,
    out: &mut [bool],
) {
    debug_assert_eq!(lines.len() as u64, blocks);
    pipeline_touching(
        out,
        keys,
        touch,
        |_, k| locate(lines, blocks, hash(k)),
        // SAFETY: `i < blocks = lines.len()` (indexed in the closure above).
        |out, j, (i, h)| out[j] = unsafe { hit(lines.as_ptr().add(i), mask(h)) },
    );
}

/// Inserts the keys, counting each in `ages` (the pipeline of `Lanes::insert_batch`).
///
/// # Safety
/// As [`contains`], and `ages` must count slices of these lanes (its newest slice `< 4`).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn insert_batch<K>(
    lines: &mut [Block],
    blocks: u64,
    ages: &mut Ages,
    keys: &[K],
    touch: impl Fn(&K),
    hash: impl Fn(&K) -> u64,
) {
    debug_assert_eq!(lines.len() as u64, blocks);
    pipeline_touching(
        lines,
        keys,
        touch,
        |lines, k| locate(lines, blocks, hash(k)),
        |lines, _, (i, h)| {
            if let Some(j) = ages.advance() {
                clear_lane(lines, 2, true, j);
            }
            // SAFETY: `i < lines.len()` (indexed in the closure above); `ages.base < 4`.
            unsafe { set::<false>(lines.as_mut_ptr().add(i), mask(h), ages.base) };
        },
    );
}
