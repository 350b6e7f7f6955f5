//! Cache-line blocks: 512 bits in eight 64-bit words, aligned to 64 bytes so that a block is
//! exactly one cache line on common hardware.
//!
//! A blocked filter's code is written once over two small traits, so that the plain, the atomic
//! and the memory-mapped filters run the same probing loops:
//! - `BlockCell`: reading a block. Plain memory is tested in place (the probe loads the
//!   words it needs, vector-wide where it can); atomic memory is read with relaxed loads of the
//!   words the layout needs (or vector loads that stand for them, see the AVX2 kernels) and
//!   compared with the element's bits.
//! - `BlocksMut`: setting bits. `&mut [Block]` ORs in place; `&[AtomicBlock]` ORs the mask in
//!   with one `fetch_or` per word that gains bits ([`or_missing`]), so concurrent inserts (from
//!   threads, or from processes sharing a mapped file) never lose a bit.

use super::sync::{AtomicU64, Ordering};
use crate::error::Result;

/// One 512-bit block, 64-byte aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub struct Block(pub [u64; 8]);

/// One 512-bit block of atomic words, 64-byte aligned (the layout of [`Block`]).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct AtomicBlock(pub(crate) [AtomicU64; 8]);

impl AtomicBlock {
    /// A plain copy (a snapshot: each word is read atomically, the block as a whole is not).
    #[inline(always)]
    pub fn load(&self) -> Block {
        Block(std::array::from_fn(|i| self.0[i].load(Ordering::Relaxed)))
    }

    /// An atomic block holding `b`.
    pub fn new(b: Block) -> Self {
        AtomicBlock(b.0.map(AtomicU64::new))
    }

    /// Words `4·half .. 4·half + 4` (`half` is 0 or 1): 32-byte aligned.
    #[inline(always)]
    pub(crate) fn half(&self, half: usize) -> &[AtomicU64; 4] {
        let (lo, hi) = self.0.split_at(4);
        let words = if half == 0 { lo } else { hi };
        words.try_into().expect("a half is four words")
    }
}

/// Reading one block, plain or atomic (see the module docs).
pub(crate) trait BlockCell: Sync {
    /// Whether the words are atomic (atomic blocks are read through `test_atomic`).
    const ATOMIC: bool;

    /// Whether every bit of the element is set: plain blocks call `test` on their words, atomic
    /// blocks call `test_atomic` on theirs (which reads the words it needs with relaxed loads).
    fn probe(
        &self,
        test: impl FnOnce(&[u64; 8]) -> bool,
        test_atomic: impl FnOnce(&AtomicBlock) -> bool,
    ) -> bool;

    /// The block's words (a snapshot for atomic blocks).
    fn words(&self) -> [u64; 8];

    /// Clears every bit.
    fn clear(&mut self);

    /// ANDs `other` in.
    fn and_with(&mut self, other: &[u64; 8]);

    /// Blocks of this type holding `blocks` (no copy for plain blocks).
    fn from_blocks(blocks: Vec<Block>) -> Vec<Self>
    where
        Self: Sized;
}

impl BlockCell for Block {
    const ATOMIC: bool = false;

    #[inline(always)]
    fn probe(
        &self,
        test: impl FnOnce(&[u64; 8]) -> bool,
        _: impl FnOnce(&AtomicBlock) -> bool,
    ) -> bool {
        test(&self.0)
    }

    #[inline(always)]
    fn words(&self) -> [u64; 8] {
        self.0
    }

    fn clear(&mut self) {
        self.0 = [0; 8];
    }

    fn and_with(&mut self, other: &[u64; 8]) {
        for (a, b) in self.0.iter_mut().zip(other) {
            *a &= b;
        }
    }

    fn from_blocks(blocks: Vec<Block>) -> Vec<Self> {
        blocks
    }
}

impl BlockCell for AtomicBlock {
    const ATOMIC: bool = true;

    #[inline(always)]
    fn probe(
        &self,
        _: impl FnOnce(&[u64; 8]) -> bool,
        test_atomic: impl FnOnce(&AtomicBlock) -> bool,
    ) -> bool {
        test_atomic(self)
    }

    #[inline(always)]
    fn words(&self) -> [u64; 8] {
        self.load().0
    }

    fn clear(&mut self) {
        for w in &self.0 {
            w.store(0, Ordering::Relaxed);
        }
    }

    fn and_with(&mut self, other: &[u64; 8]) {
        for (a, &b) in self.0.iter().zip(other) {
            a.fetch_and(b, Ordering::Relaxed);
        }
    }

    fn from_blocks(blocks: Vec<Block>) -> Vec<Self> {
        // `AtomicBlock` has the layout of `Block`: this collects in place.
        blocks.into_iter().map(AtomicBlock::new).collect()
    }
}

/// Blocks an insert can set bits in (see the module docs).
pub(crate) trait BlocksMut {
    /// The block type, for reads.
    type Cell: BlockCell;

    /// The blocks, for reads.
    fn cells(&self) -> &[Self::Cell];

    /// Sets the element's bits in block `i`: plain blocks call `set` on their words, atomic
    /// blocks `set_atomic` on theirs (which ORs the bits in with [`or_missing`]). Returns
    /// `true` if any bit was clear.
    ///
    /// # Safety
    /// `i` must be less than the number of blocks (the probing loops skip the bounds check).
    unsafe fn update(
        &mut self,
        i: usize,
        set: impl FnOnce(&mut [u64; 8]) -> bool,
        set_atomic: impl FnOnce(&AtomicBlock) -> bool,
    ) -> bool;
}

impl BlocksMut for &mut [Block] {
    type Cell = Block;

    #[inline(always)]
    fn cells(&self) -> &[Block] {
        self
    }

    #[inline(always)]
    unsafe fn update(
        &mut self,
        i: usize,
        set: impl FnOnce(&mut [u64; 8]) -> bool,
        _: impl FnOnce(&AtomicBlock) -> bool,
    ) -> bool {
        debug_assert!(i < self.len());
        // SAFETY: the caller guarantees `i < len`.
        set(unsafe { &mut self.get_unchecked_mut(i).0 })
    }
}

impl BlocksMut for &[AtomicBlock] {
    type Cell = AtomicBlock;

    #[inline(always)]
    fn cells(&self) -> &[AtomicBlock] {
        self
    }

    #[inline(always)]
    unsafe fn update(
        &mut self,
        i: usize,
        _: impl FnOnce(&mut [u64; 8]) -> bool,
        set_atomic: impl FnOnce(&AtomicBlock) -> bool,
    ) -> bool {
        debug_assert!(i < self.len());
        // SAFETY: the caller guarantees `i < len`.
        set_atomic(unsafe { self.get_unchecked(i) })
    }
}

/// ORs `mask` into atomic `words` whose values were just loaded as `old` (all loads before
/// this call: a locked read-modify-write on x86 also holds back every later load until it
/// completes, so loads after the first OR would wait for it). Returns `true` if any bit of
/// `mask` was clear in `old`.
///
/// A word gets a relaxed `fetch_or` only when it gains bits: a locked read-modify-write costs
/// far more than a load and stops the CPU from overlapping the next elements' work, and bits
/// are never cleared while the filter is shared, so a bit seen set stays set. The OR's old
/// value is unused (the answer comes from `old`), so x86 ORs with one `lock or` instead of a
/// compare-and-swap loop. Two threads adding the same element at once may both answer "new";
/// at least one does (a thread that saw every bit set saw the other's ORs, which it made after
/// seeing a bit clear).
#[inline(always)]
pub(crate) fn or_missing<const N: usize>(
    words: &[AtomicU64; N],
    old: [u64; N],
    mask: [u64; N],
) -> bool {
    let mut missing = 0u64;
    for ((w, m), old) in words.iter().zip(mask).zip(old) {
        let absent = m & !old;
        if absent != 0 {
            missing |= absent;
            w.fetch_or(m, Ordering::Relaxed);
        }
    }
    missing != 0
}

/// ORs `mask[j]` into `words[j]` with a relaxed `fetch_or` for each bit `j` set in `gains`
/// (the words found to gain bits, as in [`or_missing`]).
#[inline(always)]
pub(crate) fn or_where<const N: usize>(words: &[AtomicU64; N], mask: [u64; N], gains: u32) {
    for (j, (w, m)) in words.iter().zip(mask).enumerate() {
        if gains & (1 << j) != 0 {
            w.fetch_or(m, Ordering::Relaxed);
        }
    }
}

/// Loads `words` with relaxed loads and ORs `mask` in with [`or_missing`] (the portable
/// atomic insert).
#[inline(always)]
pub(crate) fn or_atomic<const N: usize>(words: &[AtomicU64; N], mask: [u64; N]) -> bool {
    let old = std::array::from_fn(|i| words[i].load(Ordering::Relaxed));
    or_missing(words, old, mask)
}

/// The block at `i` of a storage, for reads; `i` must be in range (see [`BlocksMut::update`]).
///
/// # Safety
/// `i < blocks.len()`.
#[inline(always)]
pub(crate) unsafe fn cell<B>(blocks: &[B], i: usize) -> &B {
    debug_assert!(i < blocks.len());
    // SAFETY: the caller guarantees `i < len`.
    unsafe { blocks.get_unchecked(i) }
}

/// `n` zeroed blocks, reporting allocation failure instead of aborting.
pub(crate) fn zeroed_blocks(n: u64) -> Result<Vec<Block>> {
    super::zeroed_vec(n, Block::default())
}

/// Blocks from plain words (8 per block); the word count must be a multiple of 8.
pub(crate) fn blocks_from_words(words: &[u64]) -> Result<Vec<Block>> {
    let mut blocks = zeroed_blocks(words.len() as u64 / 8)?;
    for (b, c) in blocks.iter_mut().zip(words.chunks_exact(8)) {
        b.0.copy_from_slice(c);
    }
    Ok(blocks)
}

/// Hints the CPU to start loading the cache line at `p`.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is only a hint: it never faults and has no effect on program
    // semantics whatever the address; SSE is part of the x86_64 baseline. Callers pass pointers
    // into their own storage anyway. Exercised by every batch test.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p.cast::<i8>(), core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
