//! AVX2 kernels of the split-block layouts, and the probing loops compiled for AVX2 as a whole.
//!
//! The kernels compute the eight salted products in one vector multiply and the eight
//! single-bit words with variable shifts, and compare or update the block as 256-bit halves.
//! They are written with intrinsics because the portable loop needs per-lane variable shifts,
//! which the compiler cannot use without AVX2 enabled for the whole build.
//!
//! The entry points (`insert`, `contains`, the batch loops) are `#[target_feature(enable =
//! "avx2")]` functions that contain hashing, block lookup and probe, so that the kernels inline
//! into them: a call per query into an AVX2 function from code compiled without AVX2 costs more
//! than the kernel saves. They are generic over the storage, so the plain, the atomic and the
//! mapped filters share them. This is the only file with vector intrinsics.

use super::portable::{half_of, SALT};
use super::{contains_at, contains_loop, insert_at, insert_loop, BlockLayout, Kernel};
use crate::storage::{or_where, AtomicBlock, AtomicU64, BlockCell, BlocksMut, Ordering};
use core::arch::x86_64::*;

/// Whether this CPU runs the AVX2 kernels (known at compile time when the build targets AVX2,
/// otherwise checked at run time and cached by the standard library).
#[inline(always)]
pub(crate) fn available() -> bool {
    cfg!(target_feature = "avx2") || std::arch::is_x86_feature_detected!("avx2")
}

/// The split-block mask of `h` as two halves of four 64-bit words.
#[inline]
#[target_feature(enable = "avx2")]
fn mask(h: u32) -> (__m256i, __m256i) {
    // SAFETY: `SALT` is 8 × 4 = 32 readable bytes; `loadu` has no alignment requirement.
    let salts = unsafe { _mm256_loadu_si256(SALT.as_ptr().cast()) };
    let shifts = _mm256_srli_epi32::<26>(_mm256_mullo_epi32(_mm256_set1_epi32(h as i32), salts));
    let one = _mm256_set1_epi64x(1);
    let lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(shifts)));
    let hi = _mm256_sllv_epi64(
        one,
        _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(shifts)),
    );
    (lo, hi)
}

/// One branch-free test of all eight words. (Testing the first four words and the other four
/// only if those pass saves instructions on streams of absent elements, but measured at n = 1e7
/// it gained nothing and cost up to 10 % on streams that mix present and absent elements,
/// whose branch it mispredicts.)
#[inline]
#[target_feature(enable = "avx2")]
fn split_test(block: &[u64; 8], h: u32) -> bool {
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

#[inline]
#[target_feature(enable = "avx2")]
fn split_set(block: &mut [u64; 8], h: u32) -> bool {
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

#[inline]
#[target_feature(enable = "avx2")]
fn split_mask(h: u32) -> [u64; 8] {
    let (lo, hi) = mask(h);
    let mut out = [0u64; 8];
    let p = out.as_mut_ptr();
    // SAFETY: `out` is 64 writable bytes; `storeu` has no alignment requirement.
    unsafe {
        _mm256_storeu_si256(p.cast(), lo);
        _mm256_storeu_si256(p.add(4).cast(), hi);
    }
    out
}

/// The half-block mask of in-half hash `h`: one bit in each 32-bit lane.
#[inline]
#[target_feature(enable = "avx2")]
fn mask256(h: u32) -> __m256i {
    // SAFETY: `SALT` is 8 × 4 = 32 readable bytes; `loadu` has no alignment requirement.
    let salts = unsafe { _mm256_loadu_si256(SALT.as_ptr().cast()) };
    let shifts = _mm256_srli_epi32::<27>(_mm256_mullo_epi32(_mm256_set1_epi32(h as i32), salts));
    _mm256_sllv_epi32(_mm256_set1_epi32(1), shifts)
}

/// (32-bit lane `i` of words `4·half ..` is 32-bit word `i` of the half in the layout's
/// definition because x86 is little-endian.)
#[inline]
#[target_feature(enable = "avx2")]
fn split256_test(block: &[u64; 8], h: u64) -> bool {
    let (half, h) = half_of(h);
    // SAFETY: `half` is 0 or 1, so words `4·half .. 4·half + 4` are 32 readable bytes of
    // `block`; `loadu` has no alignment requirement.
    let b = unsafe { _mm256_loadu_si256(block.as_ptr().add(4 * half).cast()) };
    _mm256_testc_si256(b, mask256(h)) != 0
}

/// The four words of half `half` of an atomic block in one vector: what four relaxed loads of
/// them return.
///
/// Two 16-byte `vmovdqa` loads, each one atomic access on the CPUs that reach this code (see
/// the SAFETY note), where the portable alternative, four relaxed loads gathered into a vector,
/// costs 7 more instructions per probe and measured 1.1–1.3× the plain filter's time on u64-key
/// batch queries instead of 0.9–1.1× (`benches/interleaved.rs`). Under loom, which must see
/// every read, the four relaxed loads.
#[inline]
#[target_feature(enable = "avx2")]
fn load_half(block: &AtomicBlock, half: usize) -> __m256i {
    let words = block.half(half);
    #[cfg(loom)]
    return load_half_portable(words);
    #[cfg(not(loom))]
    {
        let v: __m256i;
        // SAFETY: `words` is 32 bytes of an `AtomicBlock` (64-byte aligned), 32-byte aligned,
        // so both `vmovdqa` operands are 16-byte aligned, and readable. Every access to a
        // block's words goes through `AtomicU64` (or through this function); this one only
        // reads. Its effect is that of four relaxed `AtomicU64` loads of the four words: the
        // kernels run on atomic blocks only on a path that `Path::for_cells` picked, which it
        // does only where `atomic_vector_loads()` holds (the tests check it before calling a
        // kernel directly), so each `vmovdqa` is one atomic 16-byte access, each word in it is
        // read whole, as one value of its modification order, which is what a relaxed load
        // may return (relaxed loads of different words are not ordered with each other). So
        // there is neither a data race nor a mixed-size atomic access for the abstract
        // machine. `vinserti128` only moves registers.
        unsafe {
            core::arch::asm!(
                "vmovdqa {hi:x}, xmmword ptr [{p} + 16]",
                "vmovdqa {v:x}, xmmword ptr [{p}]",
                "vinserti128 {v:y}, {v:y}, {hi:x}, 1",
                p = in(reg) words.as_ptr(),
                hi = out(xmm_reg) _,
                v = out(ymm_reg) v,
                options(nostack, readonly, preserves_flags),
            );
        }
        v
    }
}

/// [`load_half`] with four relaxed loads.
#[cfg_attr(not(any(loom, test)), allow(dead_code))]
#[inline]
#[target_feature(enable = "avx2")]
fn load_half_portable(words: &[AtomicU64; 4]) -> __m256i {
    let w: [u64; 4] = std::array::from_fn(|i| words[i].load(Ordering::Relaxed));
    _mm256_set_epi64x(w[3] as i64, w[2] as i64, w[1] as i64, w[0] as i64)
}

/// Whether an aligned 16-byte `vmovdqa` load is one atomic access on this CPU: Intel (SDM vol.
/// 3A, "Guaranteed Atomic Operations") and AMD (APM vol. 2, "Access Atomicity") guarantee it on
/// every CPU of theirs that reports AVX (all that run this file's kernels, which need AVX2);
/// other vendors do not say, so their atomic filters take the portable path
/// ([`Path::for_cells`](super::Path::for_cells)). Checked once, then cached.
#[cfg(not(loom))]
pub(super) fn atomic_vector_loads() -> bool {
    match VECTOR_LOADS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => detect_atomic_vector_loads(),
        state => state == 2,
    }
}

/// [`atomic_vector_loads`], once known: 0 not checked yet, 1 no, 2 yes.
#[cfg(not(loom))]
static VECTOR_LOADS: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Checks the CPU for [`atomic_vector_loads`] and caches the answer.
#[cfg(not(loom))]
#[cold]
#[inline(never)]
fn detect_atomic_vector_loads() -> bool {
    // SAFETY: every x86_64 CPU has CPUID, and leaf 0 only reads the vendor string.
    // (Newer Rust declares the function safe; 1.89, the rust-version, does not.)
    #[allow(unused_unsafe)]
    let cpuid = unsafe { __cpuid(0) };
    let mut vendor = [0u8; 12];
    for (chunk, reg) in vendor.chunks_mut(4).zip([cpuid.ebx, cpuid.edx, cpuid.ecx]) {
        chunk.copy_from_slice(&reg.to_le_bytes());
    }
    let yes = available() && matches!(&vendor, b"GenuineIntel" | b"AuthenticAMD");
    VECTOR_LOADS.store(1 + u8::from(yes), std::sync::atomic::Ordering::Relaxed);
    yes
}

/// The four 64-bit lanes of `v`.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes(v: __m256i) -> [u64; 4] {
    [
        _mm256_extract_epi64::<0>(v) as u64,
        _mm256_extract_epi64::<1>(v) as u64,
        _mm256_extract_epi64::<2>(v) as u64,
        _mm256_extract_epi64::<3>(v) as u64,
    ]
}

/// Bit `j` set for each 64-bit lane `j` of `m` with a bit clear in `b`.
#[inline]
#[target_feature(enable = "avx2")]
fn gains(b: __m256i, m: __m256i) -> u32 {
    let absent = _mm256_andnot_si256(b, m);
    let none = _mm256_cmpeq_epi64(absent, _mm256_setzero_si256());
    !(_mm256_movemask_pd(_mm256_castsi256_pd(none)) as u32) & 0b1111
}

/// [`split256_test`] on an atomic block: the half's four words only.
#[inline]
#[target_feature(enable = "avx2")]
fn split256_test_atomic(block: &AtomicBlock, h: u64) -> bool {
    let (half, h) = half_of(h);
    _mm256_testc_si256(load_half(block, half), mask256(h)) != 0
}

/// [`split256_set`] on an atomic block: the half's four words, the vector test, and when a bit
/// is missing a relaxed `fetch_or` on each word that gains bits ([`or_where`]), all loads before
/// the first OR. An element already present costs no write at all.
#[inline]
#[target_feature(enable = "avx2")]
fn split256_set_atomic(block: &AtomicBlock, h: u64) -> bool {
    let (half, h) = half_of(h);
    let m = mask256(h);
    let gains = gains(load_half(block, half), m);
    if gains == 0 {
        return false;
    }
    or_where(block.half(half), lanes(m), gains);
    true
}

/// [`split_set`] for a single insert ([`Kernel::set_single`]): the same vector loads and test,
/// but the mask is ORed into the block by 64-bit scalar writes, one word at a time.
///
/// Why: a single insert's block is usually not in the cache, and a vector store whose data
/// waits for that line holds up the caller's following work far longer than scalar stores
/// waiting for it do (128-bit stores as much as 256-bit ones). Measured from Python, whose
/// interpreter does such work between two `add` calls, and in Rust (`benches/busy_insert.rs`):
/// "Single inserts among other work" in docs/BENCHMARKS.md. In a loop that does nothing but
/// insert, the vector store is faster with u64 keys; callers that insert in bulk have the
/// batches, which prefetch their blocks and keep [`split_set`]. The writes are volatile so that
/// the compiler does not merge them back into a vector store; the block is exclusively
/// borrowed, so nothing else sees them.
#[inline]
#[target_feature(enable = "avx2")]
fn split_set_single(block: &mut [u64; 8], h: u32) -> bool {
    let (m_lo, m_hi) = mask(h);
    let p = block.as_ptr();
    // SAFETY: as in `split_test`.
    let (b_lo, b_hi) = unsafe {
        (
            _mm256_loadu_si256(p.cast()),
            _mm256_loadu_si256(p.add(4).cast()),
        )
    };
    let present = _mm256_testc_si256(b_lo, m_lo) & _mm256_testc_si256(b_hi, m_hi) != 0;
    or_words(&mut block[..4], lanes(m_lo));
    or_words(&mut block[4..], lanes(m_hi));
    !present
}

/// [`split256_set`] for a single insert: the half's vector load and test, then scalar writes
/// as in [`split_set_single`].
#[inline]
#[target_feature(enable = "avx2")]
fn split256_set_single(block: &mut [u64; 8], h: u64) -> bool {
    let (half, h) = half_of(h);
    let m = mask256(h);
    let words = &mut block[4 * half..4 * half + 4];
    // SAFETY: `words` is 32 readable bytes; `loadu` has no alignment requirement.
    let b = unsafe { _mm256_loadu_si256(words.as_ptr().cast()) };
    or_words(words, lanes(m));
    _mm256_testc_si256(b, m) == 0
}

/// ORs `mask` into `words` by one volatile scalar read and write per word (see
/// [`split_set_single`]).
#[inline(always)]
fn or_words(words: &mut [u64], mask: [u64; 4]) {
    for (w, m) in words.iter_mut().zip(mask) {
        let w: *mut u64 = w;
        // SAFETY: `w` comes from a live, exclusively borrowed `&mut u64`: valid, aligned and
        // unaliased for this read and write.
        unsafe { w.write_volatile(w.read_volatile() | m) };
    }
}

/// [`split_test`] on an atomic block.
#[inline]
#[target_feature(enable = "avx2")]
fn split_test_atomic(block: &AtomicBlock, h: u32) -> bool {
    let (b_lo, b_hi) = (load_half(block, 0), load_half(block, 1));
    let (m_lo, m_hi) = mask(h);
    _mm256_testc_si256(b_lo, m_lo) & _mm256_testc_si256(b_hi, m_hi) != 0
}

/// [`split_set`] on an atomic block (as [`split256_set_atomic`], over both halves).
#[inline]
#[target_feature(enable = "avx2")]
fn split_set_atomic(block: &AtomicBlock, h: u32) -> bool {
    let (b_lo, b_hi) = (load_half(block, 0), load_half(block, 1));
    let (m_lo, m_hi) = mask(h);
    let (g_lo, g_hi) = (gains(b_lo, m_lo), gains(b_hi, m_hi));
    if g_lo | g_hi == 0 {
        return false;
    }
    // Both halves' ORs come after both halves' loads.
    or_where(block.half(0), lanes(m_lo), g_lo);
    or_where(block.half(1), lanes(m_hi), g_hi);
    true
}

#[inline]
#[target_feature(enable = "avx2")]
fn split256_set(block: &mut [u64; 8], h: u64) -> bool {
    let (half, h) = half_of(h);
    let m = mask256(h);
    // SAFETY: as in `split256_test`, on 32 writable bytes of the exclusively borrowed block.
    unsafe {
        let p = block.as_mut_ptr().add(4 * half);
        let b = _mm256_loadu_si256(p.cast());
        _mm256_storeu_si256(p.cast(), _mm256_or_si256(b, m));
        _mm256_testc_si256(b, m) == 0
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn split256_mask(h: u64) -> [u64; 8] {
    let (half, h) = half_of(h);
    let mut out = [0u64; 8];
    // SAFETY: words `4·half .. 4·half + 4` are 32 writable bytes of `out`.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(4 * half).cast(), mask256(h)) };
    out
}

/// The split-block kernel. A value exists only inside the `#[target_feature(enable = "avx2")]`
/// functions below, which run only on CPUs with AVX2: that is what makes its methods sound.
#[derive(Clone, Copy)]
struct Split(());

/// The half-block split-block kernel (constructed as [`Split`]).
#[derive(Clone, Copy)]
struct Split256(());

impl Kernel for Split {
    #[inline(always)]
    fn test(self, block: &[u64; 8], h2: u64) -> bool {
        // SAFETY: a `Split` exists only on a CPU with AVX2 (see its docs).
        unsafe { split_test(block, h2 as u32) }
    }
    #[inline(always)]
    fn set(self, block: &mut [u64; 8], h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split_set(block, h2 as u32) }
    }
    #[inline(always)]
    fn set_single(self, block: &mut [u64; 8], h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split_set_single(block, h2 as u32) }
    }
    #[inline(always)]
    fn mask(self, h2: u64) -> [u64; 8] {
        // SAFETY: as above.
        unsafe { split_mask(h2 as u32) }
    }
    #[inline(always)]
    fn test_atomic(self, block: &AtomicBlock, h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split_test_atomic(block, h2 as u32) }
    }
    #[inline(always)]
    fn set_atomic(self, block: &AtomicBlock, h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split_set_atomic(block, h2 as u32) }
    }
}

impl Kernel for Split256 {
    #[inline(always)]
    fn test(self, block: &[u64; 8], h2: u64) -> bool {
        // SAFETY: a `Split256` exists only on a CPU with AVX2 (see `Split`).
        unsafe { split256_test(block, h2) }
    }
    #[inline(always)]
    fn test_atomic(self, block: &AtomicBlock, h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split256_test_atomic(block, h2) }
    }
    #[inline(always)]
    fn set(self, block: &mut [u64; 8], h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split256_set(block, h2) }
    }
    #[inline(always)]
    fn set_single(self, block: &mut [u64; 8], h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split256_set_single(block, h2) }
    }
    #[inline(always)]
    fn mask(self, h2: u64) -> [u64; 8] {
        // SAFETY: as above.
        unsafe { split256_mask(h2) }
    }
    #[inline(always)]
    fn set_atomic(self, block: &AtomicBlock, h2: u64) -> bool {
        // SAFETY: as above.
        unsafe { split256_set_atomic(block, h2) }
    }
}

/// A split-block insert by 64-bit hash `h`. `#[inline]` only makes the function available to
/// callers' crates, which then call it directly rather than through the GOT; it cannot inline
/// into code compiled without AVX2.
///
/// # Safety
/// The CPU must support AVX2, and for atomic blocks [`atomic_vector_loads`] must hold (as
/// [`Path::for_cells`](super::Path::for_cells) ensures).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn insert<S: BlocksMut>(blocks: &mut S, h: u64) -> bool {
    insert_at(blocks, Split(()), h, h)
}

/// A split-block query (`#[inline]` as for [`insert`]).
///
/// # Safety
/// The CPU must support AVX2, and for atomic blocks [`atomic_vector_loads`] must hold (as
/// [`Path::for_cells`](super::Path::for_cells) ensures).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn contains<B: BlockCell>(blocks: &[B], h: u64) -> bool {
    contains_at(blocks, Split(()), h, h)
}

/// A half-block split-block insert (`#[inline]` as for [`insert`]).
///
/// # Safety
/// The CPU must support AVX2, and for atomic blocks [`atomic_vector_loads`] must hold (as
/// [`Path::for_cells`](super::Path::for_cells) ensures).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn insert256<S: BlocksMut>(blocks: &mut S, h: u64) -> bool {
    insert_at(blocks, Split256(()), h, h)
}

/// A half-block split-block query (`#[inline]` as for [`insert`]).
///
/// # Safety
/// The CPU must support AVX2, and for atomic blocks [`atomic_vector_loads`] must hold (as
/// [`Path::for_cells`](super::Path::for_cells) ensures).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn contains256<B: BlockCell>(blocks: &[B], h: u64) -> bool {
    contains_at(blocks, Split256(()), h, h)
}

/// The batch insert loop with the split-block kernels inlined.
///
/// # Safety
/// The CPU must support AVX2, the layout must be a split-block one, and for atomic blocks
/// [`atomic_vector_loads`] must hold (as [`Path::for_cells`](super::Path::for_cells) ensures).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn insert_batch<S: BlocksMut, T>(
    layout: BlockLayout,
    blocks: S,
    items: &[T],
    touch: impl Fn(&T),
    hash: impl Fn(&T) -> [u64; 2],
    on_new: impl FnMut(usize, bool),
) {
    if layout == BlockLayout::SplitBlock256 {
        insert_loop(blocks, Split256(()), items, touch, hash, on_new);
    } else {
        insert_loop(blocks, Split(()), items, touch, hash, on_new);
    }
}

/// The batch query loop with the split-block kernels inlined.
///
/// # Safety
/// The CPU must support AVX2, the layout must be a split-block one, and for atomic blocks
/// [`atomic_vector_loads`] must hold (as [`Path::for_cells`](super::Path::for_cells) ensures).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn contains_batch<B: BlockCell, T>(
    layout: BlockLayout,
    blocks: &[B],
    items: &[T],
    touch: impl Fn(&T),
    hash: impl Fn(&T) -> [u64; 2],
    out: &mut [bool],
) {
    if layout == BlockLayout::SplitBlock256 {
        contains_loop(blocks, Split256(()), items, touch, hash, out);
    } else {
        contains_loop(blocks, Split(()), items, touch, hash, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::splitmix64;
    use crate::storage::Block;

    /// The vector load of an atomic half (where this CPU guarantees it atomic) reads what the
    /// four scalar loads read.
    #[test]
    fn vector_loads_of_atomic_halves_match_scalar_loads() {
        if !available() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        if !atomic_vector_loads() {
            eprintln!(
                "this CPU's vendor does not guarantee atomic vector loads: nothing to compare"
            );
            return;
        }
        let as_words = |v: __m256i| {
            let mut w = [0u64; 4];
            // SAFETY: `w` is 32 writable bytes; `storeu` has no alignment requirement.
            unsafe { _mm256_storeu_si256(w.as_mut_ptr().cast(), v) };
            w
        };
        for i in 0..1000u64 {
            let words: [u64; 8] = std::array::from_fn(|w| splitmix64(i * 8 + w as u64));
            let block = AtomicBlock::new(Block(words));
            for half in 0..2 {
                // SAFETY: AVX2 is available (checked above).
                let (v, p) = unsafe {
                    (
                        as_words(load_half(&block, half)),
                        as_words(load_half_portable(block.half(half))),
                    )
                };
                assert_eq!(v, p);
                assert_eq!(v[..], words[4 * half..4 * half + 4]);
            }
        }
    }

    /// The AVX2 kernels agree with the portable definitions bit for bit (on CPUs with AVX2).
    #[test]
    fn kernels_agree_with_portable_code() {
        if !available() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        for i in 0..5000u64 {
            let h = splitmix64(i);
            let block: [u64; 8] = std::array::from_fn(|w| {
                let r = splitmix64(h ^ w as u64);
                [
                    0,
                    r & splitmix64(r),
                    r | splitmix64(r),
                    !0 ^ (1 << (r & 63)),
                ][(i % 4) as usize]
            });
            for layout in [BlockLayout::SplitBlock, BlockLayout::SplitBlock256] {
                // SAFETY: AVX2 is available (checked above).
                let (test, set, mask) = unsafe {
                    match layout {
                        BlockLayout::SplitBlock => {
                            let mut b = block;
                            let new = split_set(&mut b, h as u32);
                            (split_test(&block, h as u32), (b, new), split_mask(h as u32))
                        }
                        _ => {
                            let mut b = block;
                            let new = split256_set(&mut b, h);
                            (split256_test(&block, h), (b, new), split256_mask(h))
                        }
                    }
                };
                assert_eq!(test, layout.test(&block, h), "{layout} {h:x}");
                // The single insert's word-by-word form sets the same bits, same answer.
                let mut single = block;
                let single_new = match layout {
                    BlockLayout::SplitBlock => Split(()).set_single(&mut single, h),
                    _ => Split256(()).set_single(&mut single, h),
                };
                assert_eq!((single, single_new), set, "{layout} {h:x}");
                if !atomic_vector_loads() {
                    // Atomic filters take the portable path on this CPU (`Path::for_cells`).
                    continue;
                }
                let atomic = AtomicBlock::new(crate::storage::Block(block));
                let atomic_test = match layout {
                    BlockLayout::SplitBlock => Split(()).test_atomic(&atomic, h),
                    _ => Split256(()).test_atomic(&atomic, h),
                };
                assert_eq!(atomic_test, test, "{layout} {h:x}");
                // The atomic insert sets the same bits and gives the same answer.
                let atomic_new = match layout {
                    BlockLayout::SplitBlock => Split(()).set_atomic(&atomic, h),
                    _ => Split256(()).set_atomic(&atomic, h),
                };
                assert_eq!(atomic_new, set.1, "{layout} {h:x}");
                assert_eq!(atomic.load().0, set.0, "{layout} {h:x}");
                assert_eq!(mask, layout.mask(h));
                let mut p = block;
                assert_eq!(set.1, layout.set(&mut p, h));
                assert_eq!(set.0, p);
            }
        }
    }
}
