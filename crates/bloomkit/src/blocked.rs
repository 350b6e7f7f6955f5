//! The cache-blocked Bloom filter: all of an element's bits in one 64-byte block, so a query
//! costs one cache miss instead of `k`.
//!
//! Probing is [`crate::probe::blocked`]; storage is [`Block`]s. Blocking makes some blocks
//! fuller than others, which raises the FPR for a given size; the sizing here accounts for that
//! exactly (it sums over the distribution of block loads), so the measured FPR meets the target
//! at the cost of extra bits per element over the classic filter (at 1%: +10% in the default
//! half-block split-block layout, +5% in the split-block layout, +3% in the compact layout;
//! +8–17% at 0.1%; see `docs/BENCHMARKS.md`).
//!
//! ```
//! use bloomkit::BlockedBloomFilter;
//! let mut f = BlockedBloomFilter::new(1_000_000, 0.01)?;
//! f.insert("https://example.com/");
//! assert!(f.contains("https://example.com/"));
//! // Batches hash everything first and prefetch the blocks: much faster when the filter is
//! // larger than the CPU caches.
//! let urls = ["a", "b", "c"];
//! f.insert_batch(&urls);
//! assert_eq!(f.contains_batch(&["a", "zzz"]), vec![true, false]);
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::error::{Error, Incompatibility, Result};
use crate::filter::Filter;
use crate::hash::Hashing;
use crate::key::Key;
use crate::math::{self, Params};
use crate::probe::blocked::{self, BlockLayout, BLOCK_BITS};
use crate::probe::reduce;
use crate::storage::{blocks_from_words, zeroed_blocks, Block};
use std::fmt;

/// How many elements a batch hashes and prefetches ahead of probing.
const BATCH: usize = 32;

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

/// A Bloom filter whose probes for one element all fall in one 512-bit, 64-byte-aligned block.
#[derive(Clone, PartialEq, Eq)]
pub struct BlockedBloomFilter {
    blocks: Vec<Block>,
    layout: BlockLayout,
    hashing: Hashing,
    /// Which code serves single operations, decided once at construction (a function of the
    /// layout, the hashing and the CPU, so it never makes two equal filters differ).
    path: Path,
}

/// The code path of a filter's operations. A query on a filter larger than the caches costs one
/// memory load; independent queries overlap their loads only as far as the CPU can run ahead, so
/// every instruction and stack access around the load costs throughput. Deciding the path once
/// keeps a query to one predictable branch on a plain field, instead of a CPU-feature test, a
/// layout test and a hashing test each time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// Portable code for any layout and hashing.
    Portable,
    /// Split-block layout on an AVX2 CPU.
    Avx2,
    /// Split-block layout on an AVX2 CPU with XXH3 hashing: the default filter, whose key hash
    /// (`xxh3_64`) is inlined into the caller.
    Avx2Xxh3,
    /// Half-block split-block layout on an AVX2 CPU.
    Avx2Half,
    /// Half-block split-block layout on an AVX2 CPU with XXH3 hashing (inlined, as
    /// [`Path::Avx2Xxh3`]).
    Avx2HalfXxh3,
}

impl Path {
    fn new(layout: BlockLayout, hashing: &Hashing) -> Path {
        #[cfg(target_arch = "x86_64")]
        if blocked::has_avx2() {
            let xxh3 = matches!(hashing, Hashing::Xxh3);
            match (layout, xxh3) {
                (BlockLayout::SplitBlock, true) => return Path::Avx2Xxh3,
                (BlockLayout::SplitBlock, false) => return Path::Avx2,
                (BlockLayout::SplitBlock256, true) => return Path::Avx2HalfXxh3,
                (BlockLayout::SplitBlock256, false) => return Path::Avx2Half,
                (BlockLayout::Bits(_), _) => {}
            }
        }
        let _ = (layout, hashing);
        Path::Portable
    }
}

impl BlockedBloomFilter {
    /// A filter for `capacity` elements whose measured FPR meets `fpp`, with XXH3 hashing: the
    /// fastest layout that needs at most 10% more memory than the most compact `Bits(k)` one.
    /// That is the half-block split-block layout from about 0.07% to 2% (at 1%: 10.53 bits
    /// per element, against 10.10 for split blocks and 9.90 compact), the split-block layout
    /// just outside that range (about 0.01% to 3%), and the compact layout beyond (at high FPRs
    /// such as 5%, and at very low ones, where 8 bits per element are too many or too few).
    pub fn new(capacity: u64, fpp: f64) -> Result<Self> {
        let (blocks, layout) = blocked::default_params(capacity, fpp)?;
        Self::with_layout(blocks, layout, Hashing::Xxh3)
    }

    /// The filter with the least memory for `capacity` at `fpp`: the `Bits(k)` layout with the
    /// best `k` (a few percent smaller than split-block, and slower).
    pub fn new_compact(capacity: u64, fpp: f64) -> Result<Self> {
        let (blocks, layout) = blocked::params_for(capacity, fpp, false)?;
        Self::with_layout(blocks, layout, Hashing::Xxh3)
    }

    /// A split-block filter (one bit per 64-bit word, `k = 8`) sized for `capacity` at `fpp`.
    pub fn new_split_block(capacity: u64, fpp: f64) -> Result<Self> {
        let (blocks, layout) = blocked::params_for(capacity, fpp, true)?;
        Self::with_layout(blocks, layout, Hashing::Xxh3)
    }

    /// A half-block split-block filter (Parquet's layout: one bit in each 32-bit word of one
    /// 256-bit half of the block, `k = 8`) sized for `capacity` at `fpp`: the fastest single-key
    /// queries on CPUs whose vector units are 128 bits wide (a 512-bit block needs two of
    /// each operation there), for 4–7 % more memory than [`new_split_block`](Self::new_split_block).
    ///
    /// ```
    /// use bloomkit::{probe::blocked::BlockLayout, BlockedBloomFilter};
    /// let mut f = BlockedBloomFilter::new_split_block_256(100_000, 0.01)?;
    /// assert_eq!(f.layout(), BlockLayout::SplitBlock256);
    /// f.insert(&42u64);
    /// assert!(f.contains(&42u64));
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn new_split_block_256(capacity: u64, fpp: f64) -> Result<Self> {
        let (blocks, layout) =
            blocked::params_for_layouts(capacity, fpp, &[BlockLayout::SplitBlock256])?;
        Self::with_layout(blocks, layout, Hashing::Xxh3)
    }

    /// An empty filter of exactly `blocks` blocks.
    pub fn with_layout(blocks: u64, layout: BlockLayout, hashing: Hashing) -> Result<Self> {
        if blocks == 0 {
            return Err(Error::ZeroBits);
        }
        math::check_bits_hashes(
            blocks.saturating_mul(BLOCK_BITS),
            u64::from(layout.hashes()),
        )?;
        Ok(BlockedBloomFilter {
            blocks: zeroed_blocks(blocks)?,
            layout,
            path: Path::new(layout, &hashing),
            hashing,
        })
    }

    /// A filter from its words (8 per block), for example read from a file.
    pub fn from_words(words: &[u64], layout: BlockLayout, hashing: Hashing) -> Result<Self> {
        if words.is_empty() || words.len() % 8 != 0 {
            return Err(Error::InvalidParameters(format!(
                "{} words is not a whole, non-zero number of 8-word blocks",
                words.len()
            )));
        }
        math::check_bits_hashes(words.len() as u64 * 64, u64::from(layout.hashes()))?;
        Ok(BlockedBloomFilter {
            blocks: blocks_from_words(words)?,
            layout,
            path: Path::new(layout, &hashing),
            hashing,
        })
    }

    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// Number of bits (`512 ×` blocks).
    pub fn bits(&self) -> u64 {
        self.blocks() * BLOCK_BITS
    }

    /// The in-block layout.
    pub fn layout(&self) -> BlockLayout {
        self.layout
    }

    /// The hash function.
    pub fn hashing(&self) -> &Hashing {
        &self.hashing
    }

    /// The hash words of a key ([`BlockLayout::hash`]).
    #[inline(always)]
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> [u64; 2] {
        key.with_bytes(|b| self.layout.hash(&self.hashing, b))
    }

    /// Whether the split-block AVX2 kernels apply (only on x86_64 CPUs with AVX2).
    #[inline(always)]
    fn simd(&self) -> bool {
        self.path != Path::Portable
    }

    /// Adds an element; returns `true` if it was new.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        #[cfg(target_arch = "x86_64")]
        match self.path {
            Path::Avx2Xxh3 => {
                // Equal to `self.hash(key)[0]` for this layout and hashing.
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: the path is an AVX2 one only when the CPU has AVX2.
                return unsafe { avx2::insert(&mut self.blocks, h) };
            }
            Path::Avx2HalfXxh3 => {
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: as above.
                return unsafe { avx2::insert256(&mut self.blocks, h) };
            }
            _ => {}
        }
        self.insert_other(key)
    }

    /// [`insert`](Self::insert) for the paths other than the default one, out of line so that
    /// `insert` stays small enough to inline into callers' loops.
    #[inline(never)]
    fn insert_other<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let [h1, h2] = self.hash(key);
        self.insert_hash(h1, h2)
    }

    /// Whether the element may be present.
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        #[cfg(target_arch = "x86_64")]
        match self.path {
            Path::Avx2Xxh3 => {
                // Equal to `self.hash(key)[0]` for this layout and hashing.
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: the path is an AVX2 one only when the CPU has AVX2.
                return unsafe { avx2::contains(&self.blocks, h) };
            }
            Path::Avx2HalfXxh3 => {
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: as above.
                return unsafe { avx2::contains256(&self.blocks, h) };
            }
            _ => {}
        }
        self.contains_other(key)
    }

    /// [`contains`](Self::contains) for the paths other than the default one, out of line (as
    /// for [`insert_other`](Self::insert_other)).
    #[inline(never)]
    fn contains_other<K: Key + ?Sized>(&self, key: &K) -> bool {
        let [h1, h2] = self.hash(key);
        self.contains_hash(h1, h2)
    }

    /// Adds an element by its hash words (from [`hash`](Self::hash) or
    /// [`BlockLayout::hash`] of its key bytes).
    #[inline(always)]
    pub fn insert_hash(&mut self, h1: u64, h2: u64) -> bool {
        #[cfg(target_arch = "x86_64")]
        match self.path {
            // SAFETY: the AVX2 paths are chosen only when the CPU has AVX2 (`Path::new`).
            Path::Avx2 | Path::Avx2Xxh3 => return unsafe { avx2::insert(&mut self.blocks, h1) },
            // SAFETY: as above.
            Path::Avx2Half | Path::Avx2HalfXxh3 => {
                return unsafe { avx2::insert256(&mut self.blocks, h1) }
            }
            Path::Portable => {}
        }
        let i = reduce(h1, self.blocks.len() as u64) as usize;
        self.layout.set(&mut self.blocks[i].0, h2)
    }

    /// Tests an element by its hash words.
    #[inline(always)]
    pub fn contains_hash(&self, h1: u64, h2: u64) -> bool {
        #[cfg(target_arch = "x86_64")]
        match self.path {
            // SAFETY: the AVX2 paths are chosen only when the CPU has AVX2 (`Path::new`).
            Path::Avx2 | Path::Avx2Xxh3 => return unsafe { avx2::contains(&self.blocks, h1) },
            // SAFETY: as above.
            Path::Avx2Half | Path::Avx2HalfXxh3 => {
                return unsafe { avx2::contains256(&self.blocks, h1) }
            }
            Path::Portable => {}
        }
        let i = reduce(h1, self.blocks.len() as u64) as usize;
        self.layout.test(&self.blocks[i].0, h2)
    }

    /// Adds every element of `keys`: hashes a group of elements, prefetches their blocks, then
    /// sets the bits, so that the memory loads of a group overlap.
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        #[cfg(target_arch = "x86_64")]
        if self.simd() {
            // SAFETY: `simd()` is true only when the CPU has AVX2 (`Path::new`).
            return unsafe { avx2::insert_batch(self, keys) };
        }
        let layout = self.layout;
        self.insert_batch_with(keys, |b, h| layout.set(b, h));
    }

    /// The batch insert loop, with the in-block update `set` inlined.
    #[inline(always)]
    fn insert_batch_with<K: Key>(
        &mut self,
        keys: &[K],
        mut set: impl FnMut(&mut [u64; 8], u64) -> bool,
    ) {
        let n = self.blocks.len() as u64;
        let mut located = [(0usize, 0u64); BATCH];
        for chunk in keys.chunks(BATCH) {
            for (slot, key) in located.iter_mut().zip(chunk) {
                let [h1, h2] = self.hash(key);
                *slot = (reduce(h1, n) as usize, h2);
                prefetch(&self.blocks[slot.0]);
            }
            for &(i, h2) in &located[..chunk.len()] {
                set(&mut self.blocks[i].0, h2);
            }
        }
    }

    /// Tests every element of `keys` (hash, prefetch, then probe, a group at a time).
    pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Vec<bool> {
        let mut out = vec![false; keys.len()];
        self.contains_batch_into(keys, &mut out);
        out
    }

    /// Like [`contains_batch`](Self::contains_batch), writing into `out` (`out.len()` must equal
    /// `keys.len()`; extra entries on either side are ignored).
    pub fn contains_batch_into<K: Key>(&self, keys: &[K], out: &mut [bool]) {
        #[cfg(target_arch = "x86_64")]
        if self.simd() {
            // SAFETY: `simd()` is true only when the CPU has AVX2 (`Path::new`).
            return unsafe { avx2::contains_batch(self, keys, out) };
        }
        self.contains_batch_with(keys, out, |b, h| self.layout.test(b, h));
    }

    /// The batch query loop, with the in-block test `test` inlined.
    #[inline(always)]
    fn contains_batch_with<K: Key>(
        &self,
        keys: &[K],
        out: &mut [bool],
        test: impl Fn(&[u64; 8], u64) -> bool,
    ) {
        let n = self.blocks.len() as u64;
        let mut located = [(0usize, 0u64); BATCH];
        for (chunk, out) in keys.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (slot, key) in located.iter_mut().zip(chunk) {
                let [h1, h2] = self.hash(key);
                *slot = (reduce(h1, n) as usize, h2);
                prefetch(&self.blocks[slot.0]);
            }
            for (&(i, h2), o) in located.iter().zip(out.iter_mut()) {
                *o = test(&self.blocks[i].0, h2);
            }
        }
    }

    /// Adds every element of `other` (bitwise OR). Layout, size and hashing must be equal.
    pub fn union(&mut self, other: &BlockedBloomFilter) -> Result<()> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            a.insert(&b.0);
        }
        Ok(())
    }

    /// Keeps only bits set in both filters. Layout, size and hashing must be equal.
    pub fn intersect(&mut self, other: &BlockedBloomFilter) -> Result<()> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x &= y;
            }
        }
        Ok(())
    }

    fn check_compatible(&self, other: &BlockedBloomFilter) -> Result<()> {
        if self.blocks.len() != other.blocks.len() {
            return Err(Error::Incompatible(Incompatibility::Bits(
                self.bits(),
                other.bits(),
            )));
        }
        if self.layout != other.layout {
            return Err(Error::Incompatible(Incompatibility::Scheme(
                format!("{:?}", self.layout),
                format!("{:?}", other.layout),
            )));
        }
        if self.hashing != other.hashing {
            return Err(Error::Incompatible(Incompatibility::Hashing(
                self.hashing.id(),
                other.hashing.id(),
            )));
        }
        Ok(())
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// Estimated number of distinct elements (Swamidass–Baldi over all bits; blocking makes it
    /// slightly low for heavily loaded filters).
    pub fn estimated_len(&self) -> f64 {
        math::estimate_count(self.bits(), self.layout.hashes(), self.count_ones())
    }

    /// Estimated FPR given the current bits: the average over blocks of each block's
    /// `fill^k` (`(set bits in word / 64)^8` per word for split blocks, the mean of the two
    /// halves' products over 32-bit words for half-block split blocks).
    pub fn estimated_fpp(&self) -> f64 {
        let k = self.layout.hashes();
        let sum: f64 = self
            .blocks
            .iter()
            .map(|b| match self.layout {
                BlockLayout::Bits(_) => {
                    let ones: u32 = b.0.iter().map(|w| w.count_ones()).sum();
                    math::fpp_from_fill(f64::from(ones) / BLOCK_BITS as f64, k)
                }
                BlockLayout::SplitBlock => {
                    b.0.iter()
                        .map(|w| f64::from(w.count_ones()) / 64.0)
                        .product()
                }
                BlockLayout::SplitBlock256 => {
                    let half = |ws: &[u64]| -> f64 {
                        ws.iter()
                            .flat_map(|w| [w & 0xffff_ffff, w >> 32])
                            .map(|x| f64::from(x.count_ones()) / 32.0)
                            .product()
                    };
                    (half(&b.0[..4]) + half(&b.0[4..])) / 2.0
                }
            })
            .sum();
        sum / self.blocks.len() as f64
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.blocks.fill(Block::default());
    }

    /// The bits as words, 8 per block.
    pub fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.iter().flat_map(|b| b.0)
    }

    /// The blocks.
    pub fn as_blocks(&self) -> &[Block] {
        &self.blocks
    }

    pub(crate) fn into_parts(self) -> (Vec<Block>, BlockLayout, Hashing) {
        (self.blocks, self.layout, self.hashing)
    }

    pub(crate) fn from_parts(blocks: Vec<Block>, layout: BlockLayout, hashing: Hashing) -> Self {
        BlockedBloomFilter {
            blocks,
            layout,
            path: Path::new(layout, &hashing),
            hashing,
        }
    }

    /// Bytes of heap memory used.
    pub fn memory_bytes(&self) -> usize {
        self.blocks.len() * 64
    }
}

impl fmt::Debug for BlockedBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockedBloomFilter")
            .field("blocks", &self.blocks.len())
            .field("layout", &self.layout)
            .field("hashing", &self.hashing)
            .finish()
    }
}

impl Filter for BlockedBloomFilter {
    fn kind(&self) -> crate::Kind {
        crate::Kind::Blocked
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        Ok(self.insert(bytes))
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.contains(bytes)
    }
    fn params(&self) -> Params {
        Params {
            bits: self.bits(),
            hashes: self.layout.hashes(),
        }
    }
    fn estimated_len(&self) -> f64 {
        BlockedBloomFilter::estimated_len(self)
    }
    fn estimated_fpp(&self) -> f64 {
        BlockedBloomFilter::estimated_fpp(self)
    }
    fn memory_bytes(&self) -> usize {
        BlockedBloomFilter::memory_bytes(self)
    }
    fn clear(&mut self) {
        BlockedBloomFilter::clear(self)
    }
}

/// The split-block filter's hot paths compiled for AVX2 as a whole (hashing, block lookup,
/// probe and batch loops), so that the vector kernels inline into them; a call per query into
/// an AVX2 function from code compiled without AVX2 costs more than the kernel saves.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BlockedBloomFilter, Key};
    use crate::probe::blocked::avx2::{split256_set, split256_test, split_set, split_test};
    use crate::probe::blocked::BlockLayout;
    use crate::probe::reduce;
    use crate::storage::Block;

    /// The block of hash `h` (`blocks` is never empty: constructors refuse zero blocks).
    #[inline(always)]
    fn block(blocks: &[Block], h: u64) -> &[u64; 8] {
        let i = reduce(h, blocks.len() as u64) as usize;
        debug_assert!(i < blocks.len());
        // SAFETY: `reduce(h, n) < n` for every `h` when `n > 0`, and a filter always has
        // blocks. Skipping the bounds check saves a compare and a branch per query.
        unsafe { &blocks.get_unchecked(i).0 }
    }

    /// Like [`block`], mutably.
    #[inline(always)]
    fn block_mut(blocks: &mut [Block], h: u64) -> &mut [u64; 8] {
        let i = reduce(h, blocks.len() as u64) as usize;
        debug_assert!(i < blocks.len());
        // SAFETY: as in `block`.
        unsafe { &mut blocks.get_unchecked_mut(i).0 }
    }

    /// A query. `#[inline]` only makes the function available to callers' crates, which then
    /// call it directly rather than through the GOT; it cannot inline into code compiled
    /// without AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains(blocks: &[Block], h: u64) -> bool {
        // SAFETY: the caller guarantees AVX2.
        unsafe { split_test(block(blocks, h), h as u32) }
    }

    /// An insert (`#[inline]` as for [`contains`]).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert(blocks: &mut [Block], h: u64) -> bool {
        // SAFETY: the caller guarantees AVX2.
        unsafe { split_set(block_mut(blocks, h), h as u32) }
    }

    /// A query on a half-block split-block filter (`#[inline]` as for [`contains`]).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains256(blocks: &[Block], h: u64) -> bool {
        // SAFETY: the caller guarantees AVX2.
        unsafe { split256_test(block(blocks, h), h) }
    }

    /// An insert on a half-block split-block filter (`#[inline]` as for [`contains`]).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert256(blocks: &mut [Block], h: u64) -> bool {
        // SAFETY: the caller guarantees AVX2.
        unsafe { split256_set(block_mut(blocks, h), h) }
    }

    /// # Safety
    /// The CPU must support AVX2, and the filter's layout must be a split-block one.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains_batch<K: Key>(
        f: &BlockedBloomFilter,
        keys: &[K],
        out: &mut [bool],
    ) {
        // SAFETY (closures): the caller guarantees AVX2.
        if f.layout == BlockLayout::SplitBlock256 {
            f.contains_batch_with(keys, out, |b, h| unsafe { split256_test(b, h) });
        } else {
            f.contains_batch_with(keys, out, |b, h| unsafe { split_test(b, h as u32) });
        }
    }

    /// # Safety
    /// The CPU must support AVX2, and the filter's layout must be a split-block one.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert_batch<K: Key>(f: &mut BlockedBloomFilter, keys: &[K]) {
        // SAFETY (closures): the caller guarantees AVX2.
        if f.layout == BlockLayout::SplitBlock256 {
            f.insert_batch_with(keys, |b, h| unsafe { split256_set(b, h) });
        } else {
            f.insert_batch_with(keys, |b, h| unsafe { split_set(b, h as u32) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 paths (single with the inlined XXH3 key hash or another hashing, batch) and
    /// the portable path set the same bits and answer the same, on CPUs with AVX2; elsewhere
    /// every side is the portable path.
    #[test]
    fn simd_and_portable_paths_agree() {
        for layout in [BlockLayout::SplitBlock, BlockLayout::SplitBlock256] {
            for hashing in [Hashing::Xxh3, Hashing::Murmur3] {
                simd_and_portable_agree_with(layout, hashing);
            }
        }
    }

    fn simd_and_portable_agree_with(layout: BlockLayout, hashing: Hashing) {
        let keys: Vec<u64> = (0..20_000).collect();
        let (blocks, layout) = blocked::params_for_layouts(10_000, 0.01, &[layout]).unwrap();
        let mut single = BlockedBloomFilter::with_layout(blocks, layout, hashing).unwrap();
        let mut batch = single.clone();
        let mut portable = single.clone();
        portable.path = Path::Portable;
        for k in &keys[..10_000] {
            single.insert(k);
            let [h1, h2] = portable.hash(k);
            let i = reduce(h1, portable.blocks()) as usize;
            layout.set(&mut portable.blocks[i].0, h2);
        }
        batch.insert_batch(&keys[..10_000]);
        assert!(single.words().eq(portable.words()) && batch.words().eq(portable.words()));
        let answers = batch.contains_batch(&keys);
        for (k, &a) in keys.iter().zip(&answers) {
            let [h1, h2] = portable.hash(k);
            let i = reduce(h1, portable.blocks()) as usize;
            let want = layout.test(&portable.blocks[i].0, h2);
            assert_eq!(single.contains(k), want);
            assert_eq!(portable.contains(k), want);
            assert_eq!(single.contains_hash(h1, h2), want);
            assert_eq!(a, want);
        }
        assert!(answers[..10_000].iter().all(|&a| a));
    }
}
