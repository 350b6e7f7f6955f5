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
//! [`BlockedBloomFilter`] and its lock-free twin
//! [`AtomicBlockedBloomFilter`](crate::AtomicBlockedBloomFilter) (in [`crate::concurrent`])
//! are generated from one source, the `blocked_filter!` macro below, over [`Block`]s or
//! [`AtomicBlock`](crate::storage::AtomicBlock)s: the same methods (SIMD paths, batches,
//! union, [`Filter`]) with the same code. Only the receivers of the bit-setting methods differ
//! (`&mut self` for the plain filter, `&self` for the atomic one).
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

use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::hash::Hashing;
use crate::key::Key;
use crate::math::{self, Params};
use crate::probe::blocked::{self, BlockLayout, Path, BLOCK_BITS};
use crate::spec::BlockSpec;
use crate::storage::{blocks_from_words, zeroed_blocks, Block, BlockCell, BlocksMut};
use std::fmt;

/// A Bloom filter whose probes for one element all fall in one 512-bit, 64-byte-aligned block.
#[derive(Clone, PartialEq, Eq)]
pub struct BlockedBloomFilter {
    spec: BlockSpec,
    /// Which code serves the operations, decided once at construction ([`Path::new`]).
    path: Path,
    blocks: Vec<Block>,
}

/// The expected FPR of one block's words for `layout`: `(ones/512)^k` for `Bits(k)`, the
/// product of the words' fills for split blocks, the mean of the two halves' products over
/// 32-bit words for half-block split blocks.
pub(crate) fn block_fpp(layout: BlockLayout, b: &[u64; 8]) -> f64 {
    match layout {
        BlockLayout::Bits(k) => {
            let ones: u32 = b.iter().map(|w| w.count_ones()).sum();
            math::fpp_from_fill(f64::from(ones) / BLOCK_BITS as f64, k)
        }
        BlockLayout::SplitBlock => b.iter().map(|w| f64::from(w.count_ones()) / 64.0).product(),
        BlockLayout::SplitBlock256 => {
            let half = |ws: &[u64]| -> f64 {
                ws.iter()
                    .flat_map(|w| [w & 0xffff_ffff, w >> 32])
                    .map(|x| f64::from(x.count_ones()) / 32.0)
                    .product()
            };
            (half(&b[..4]) + half(&b[4..])) / 2.0
        }
    }
}

/// Checks that `words` are a whole, non-zero number of 8-word blocks.
pub(crate) fn check_words(words: &[u64], layout: BlockLayout) -> Result<()> {
    if words.is_empty() || !words.len().is_multiple_of(8) {
        return Err(Error::InvalidParameters(format!(
            "{} words is not a whole, non-zero number of 8-word blocks",
            words.len()
        )));
    }
    math::check_bits_hashes(words.len() as u64 * 64, u64::from(layout.hashes()))
}

/// The constructors and queries of [`BlockedBloomFilter`] and
/// [`AtomicBlockedBloomFilter`](crate::AtomicBlockedBloomFilter): one source, so the two
/// cannot drift. `$name` is the type and `$block` its block; `$($mut)?` is `mut` for the plain
/// filter (its inserts take `&mut self`) and empty for the atomic one.
macro_rules! blocked_filter {
    ($name:ident, $block:ty, $($mut:ident)?) => {
        impl $name {
            /// A filter for `capacity` elements whose measured FPR meets `fpp`, with XXH3
            /// hashing: the fastest layout that needs at most 10% more memory than the most
            /// compact `Bits(k)` one. That is the half-block split-block layout from about
            /// 0.07% to 2% (at 1%: 10.53 bits per element, against 10.10 for split blocks and
            /// 9.90 compact), the split-block layout just outside that range (about 0.01% to
            /// 3%), and the compact layout beyond (at high FPRs such as 5%, and at very low
            /// ones, where 8 bits per element are too many or too few).
            pub fn new(capacity: u64, fpp: f64) -> Result<Self> {
                Self::from_spec(BlockSpec::for_capacity(capacity, fpp)?)
            }

            /// The filter with the least memory for `capacity` at `fpp`: the `Bits(k)` layout
            /// with the best `k` (a few percent smaller than split-block, and slower).
            pub fn new_compact(capacity: u64, fpp: f64) -> Result<Self> {
                let (blocks, layout) = blocked::params_for(capacity, fpp, false)?;
                Self::with_layout(blocks, layout, Hashing::Xxh3)
            }

            /// A split-block filter (one bit per 64-bit word, `k = 8`) sized for `capacity` at
            /// `fpp`.
            pub fn new_split_block(capacity: u64, fpp: f64) -> Result<Self> {
                let (blocks, layout) = blocked::params_for(capacity, fpp, true)?;
                Self::with_layout(blocks, layout, Hashing::Xxh3)
            }

            /// A half-block split-block filter (Parquet's layout: one bit in each 32-bit word
            /// of one 256-bit half of the block, `k = 8`) sized for `capacity` at `fpp`: the
            /// fastest single-key queries on CPUs whose vector units are 128 bits wide (a
            /// 512-bit block needs two of each operation there), for 4–7 % more memory than
            /// [`new_split_block`](Self::new_split_block).
            pub fn new_split_block_256(capacity: u64, fpp: f64) -> Result<Self> {
                let (blocks, layout) =
                    blocked::params_for_layouts(capacity, fpp, &[BlockLayout::SplitBlock256])?;
                Self::with_layout(blocks, layout, Hashing::Xxh3)
            }

            /// An empty filter of exactly `blocks` blocks.
            pub fn with_layout(blocks: u64, layout: BlockLayout, hashing: Hashing) -> Result<Self> {
                Self::from_spec(BlockSpec::new(blocks, layout, hashing)?)
            }

            /// An empty filter with the given spec.
            pub fn from_spec(spec: BlockSpec) -> Result<Self> {
                let blocks = zeroed_blocks(spec.blocks())?;
                Ok(Self::from_parts(spec, blocks))
            }

            /// A filter from its words (8 per block), for example read from a file.
            pub fn from_words(words: &[u64], layout: BlockLayout, hashing: Hashing) -> Result<Self> {
                crate::blocked::check_words(words, layout)?;
                let spec = BlockSpec::new(words.len() as u64 / 8, layout, hashing)?;
                Ok(Self::from_parts(spec, blocks_from_words(words)?))
            }

            pub(crate) fn from_parts(spec: BlockSpec, blocks: Vec<Block>) -> Self {
                debug_assert_eq!(blocks.len() as u64, spec.blocks());
                $name {
                    path: Path::for_cells::<$block>(spec.layout(), spec.hashing()),
                    spec,
                    blocks: <$block>::from_blocks(blocks),
                }
            }

            /// The filter's spec: blocks, layout and hashing.
            pub fn spec(&self) -> &BlockSpec {
                &self.spec
            }

            /// Number of blocks.
            pub fn blocks(&self) -> u64 {
                self.spec.blocks()
            }

            /// Number of bits (`512 ×` blocks).
            pub fn bits(&self) -> u64 {
                self.spec.bits()
            }

            /// The in-block layout.
            pub fn layout(&self) -> BlockLayout {
                self.spec.layout()
            }

            /// The hash function.
            pub fn hashing(&self) -> &Hashing {
                self.spec.hashing()
            }

            /// The hash words of a key ([`BlockLayout::hash`]).
            #[inline(always)]
            pub fn hash<K: Key + ?Sized>(&self, key: &K) -> [u64; 2] {
                self.spec.hash(key)
            }

            /// Adds an element; returns `true` if it was new (two threads adding the same
            /// element at once may both see `true`).
            #[inline]
            pub fn insert<K: Key + ?Sized>(&$($mut)? self, key: &K) -> bool {
                self.path.insert(&self.spec, &$($mut)? self.blocks[..], key)
            }

            /// Whether the element may be present.
            #[inline]
            pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
                self.path.contains(&self.spec, &self.blocks[..], key)
            }

            /// Adds an element by its hash words (from [`hash`](Self::hash) or
            /// [`BlockLayout::hash`] of its key bytes).
            #[inline(always)]
            pub fn insert_hash(&$($mut)? self, h1: u64, h2: u64) -> bool {
                self.path.insert_hash(self.spec.layout(), &$($mut)? self.blocks[..], h1, h2)
            }

            /// Tests an element by its hash words.
            #[inline(always)]
            pub fn contains_hash(&self, h1: u64, h2: u64) -> bool {
                self.path.contains_hash(self.spec.layout(), &self.blocks[..], h1, h2)
            }

            /// Adds every element of `keys`: hashes a group of elements, prefetches their
            /// blocks, then sets the bits, so that the memory loads of a group overlap.
            pub fn insert_batch<K: Key>(&$($mut)? self, keys: &[K]) {
                self.path.insert_batch(&self.spec, &$($mut)? self.blocks[..], keys, |_, _| {});
            }

            /// Adds elements by their hash words (each from [`hash`](Self::hash)), a group at a
            /// time as [`insert_batch`](Self::insert_batch) does: for callers that hash elsewhere,
            /// such as a binding that hashes while it holds its interpreter's lock.
            pub fn insert_hash_batch(&$($mut)? self, hashes: &[[u64; 2]]) {
                let layout = self.spec.layout();
                self.path.insert_items(layout, &$($mut)? self.blocks[..], hashes, |_| {}, |h| *h, |_, _| {});
            }

            /// Tests elements by their hash words into `out` (as
            /// [`contains_batch_into`](Self::contains_batch_into)).
            pub fn contains_hash_batch_into(&self, hashes: &[[u64; 2]], out: &mut [bool]) {
                let layout = self.spec.layout();
                self.path.contains_items(layout, &self.blocks[..], hashes, |_| {}, |h| *h, out);
            }

            /// Tests every element of `keys` (hash, prefetch, then probe, a group at a time).
            pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Vec<bool> {
                let mut out = vec![false; keys.len()];
                self.contains_batch_into(keys, &mut out);
                out
            }

            /// Like [`contains_batch`](Self::contains_batch), writing into `out` (`out.len()`
            /// must equal `keys.len()`; extra entries on either side are ignored).
            pub fn contains_batch_into<K: Key>(&self, keys: &[K], out: &mut [bool]) {
                self.path.contains_batch(&self.spec, &self.blocks[..], keys, out);
            }

            /// Adds every element of `other` (bitwise OR). Layout, size and hashing must be
            /// equal.
            pub fn union(&$($mut)? self, other: &$name) -> Result<()> {
                self.spec.check_compatible(&other.spec)?;
                let mut dst = &$($mut)? self.blocks[..];
                for (i, b) in other.blocks.iter().enumerate() {
                    let w = b.words();
                    let or = |x: &mut [u64; 8]| {
                        x.iter_mut().zip(w).for_each(|(a, b)| *a |= b);
                        true
                    };
                    // SAFETY: `i` indexes `other`'s blocks, and the specs (hence the block
                    // counts) are equal.
                    unsafe { dst.update(i, or, |a| crate::storage::or_atomic(&a.0, w)) };
                }
                Ok(())
            }

            /// Keeps only bits set in both filters. Layout, size and hashing must be equal.
            pub fn intersect(&mut self, other: &$name) -> Result<()> {
                self.spec.check_compatible(&other.spec)?;
                for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
                    a.and_with(&b.words());
                }
                Ok(())
            }

            /// Number of set bits.
            pub fn count_ones(&self) -> u64 {
                self.words().map(|w| u64::from(w.count_ones())).sum()
            }

            /// Estimated number of distinct elements (Swamidass–Baldi over all bits; blocking
            /// makes it slightly low for heavily loaded filters).
            pub fn estimated_len(&self) -> f64 {
                math::estimate_count(self.bits(), self.spec.hashes(), self.count_ones())
            }

            /// Estimated FPR given the current bits: the average over blocks of each block's
            /// `fill^k` (`(set bits in word / 64)^8` per word for split blocks, the mean of the
            /// two halves' products over 32-bit words for half-block split blocks).
            pub fn estimated_fpp(&self) -> f64 {
                let layout = self.spec.layout();
                let sum: f64 = self.blocks.iter().map(|b| crate::blocked::block_fpp(layout, &b.words())).sum();
                sum / self.blocks.len() as f64
            }

            /// Removes every element.
            pub fn clear(&mut self) {
                self.blocks.iter_mut().for_each(BlockCell::clear);
            }

            /// The bits as words, 8 per block (a snapshot for the atomic filter).
            pub fn words(&self) -> impl Iterator<Item = u64> + '_ {
                self.blocks.iter().flat_map(BlockCell::words)
            }

            /// Bytes of heap memory used.
            pub fn memory_bytes(&self) -> usize {
                self.blocks.len() * 64
            }

            /// Makes every operation take the portable path (for tests that compare it with
            /// the vector kernels).
            #[cfg(test)]
            pub(crate) fn force_portable(&mut self) {
                self.path = Path::Portable;
            }

            /// The code path the operations take.
            #[cfg(test)]
            pub(crate) fn path(&self) -> Path {
                self.path
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("blocks", &self.blocks.len())
                    .field("layout", &self.spec.layout())
                    .field("hashing", self.spec.hashing())
                    .finish()
            }
        }

        crate::classic::filter_impl!($name, Blocked);
    };
}
pub(crate) use blocked_filter;

blocked_filter!(BlockedBloomFilter, Block, mut);

impl BlockedBloomFilter {
    /// The blocks.
    pub fn as_blocks(&self) -> &[Block] {
        &self.blocks
    }

    pub(crate) fn into_parts(self) -> (BlockSpec, Vec<Block>) {
        (self.spec, self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concurrent::AtomicBlockedBloomFilter;

    /// Runs the comparison of the vector and portable paths on filter type `$t`.
    macro_rules! paths_agree {
        ($t:ty, $spec:expr) => {{
            let spec: BlockSpec = $spec;
            let keys: Vec<u64> = (0..20_000).collect();
            let (members, _) = keys.split_at(10_000);
            let new = || <$t>::from_spec(spec.clone()).unwrap();
            #[allow(unused_mut)] // the atomic filter inserts through `&self`
            let (mut single, mut batch, mut by_hash) = (new(), new(), new());
            #[allow(unused_mut)]
            let (mut portable, mut portable_batch) = (new(), new());
            portable.force_portable();
            portable_batch.force_portable();
            let vector = cfg!(target_arch = "x86_64")
                && std::arch::is_x86_feature_detected!("avx2")
                && spec.layout() != BlockLayout::Bits(7);
            // Two really different paths where the CPU has the vector kernels.
            assert_eq!(single.path() != portable.path(), vector, "{spec:?}");
            for k in members {
                let fresh = portable.insert(k);
                assert_eq!(single.insert(k), fresh);
                let [h1, h2] = by_hash.hash(k);
                assert_eq!(by_hash.insert_hash(h1, h2), fresh);
            }
            batch.insert_batch(members);
            portable_batch.insert_batch(members);
            let want: Vec<u64> = portable.words().collect();
            for f in [&single, &batch, &by_hash, &portable_batch] {
                assert!(f.words().eq(want.iter().copied()), "{spec:?}");
            }
            let answers = batch.contains_batch(&keys);
            assert_eq!(answers, portable.contains_batch(&keys));
            for (k, &a) in keys.iter().zip(&answers) {
                assert_eq!(portable.contains(k), a);
                assert_eq!(single.contains(k), a);
                let [h1, h2] = single.hash(k);
                assert_eq!(single.contains_hash(h1, h2), a);
            }
            assert!(answers[..10_000].iter().all(|&a| a));
        }};
    }

    /// The batch pipeline (keys hashed a fixed distance ahead of their probe) handles batches
    /// shorter than, equal to and just past its distance, and an answer slice shorter than the
    /// keys, on every path: the same bits and answers as one key at a time.
    #[test]
    fn batches_of_every_length_match_single_keys() {
        for layout in [BlockLayout::SplitBlock256, BlockLayout::Bits(7)] {
            let spec = BlockSpec::new(64, layout, Hashing::Xxh3).unwrap();
            for len in [0usize, 1, 31, 32, 33, 63, 64, 65, 200] {
                let keys: Vec<String> = (0..len).map(|i| format!("key-{i}")).collect();
                let probes: Vec<String> = (0..2 * len).map(|i| format!("key-{i}")).collect();
                for portable in [false, true] {
                    let mut single = BlockedBloomFilter::from_spec(spec.clone()).unwrap();
                    let mut batch = single.clone();
                    let atomic = AtomicBlockedBloomFilter::from_spec(spec.clone()).unwrap();
                    if portable {
                        batch.force_portable();
                    }
                    keys.iter().for_each(|k| {
                        single.insert(k);
                    });
                    batch.insert_batch(&keys);
                    atomic.insert_batch(&keys);
                    assert!(batch.words().eq(single.words()), "{layout} {len}");
                    assert!(atomic.words().eq(single.words()), "{layout} {len}");
                    let want: Vec<bool> = probes.iter().map(|k| single.contains(k)).collect();
                    assert_eq!(batch.contains_batch(&probes), want, "{layout} {len}");
                    assert_eq!(atomic.contains_batch(&probes), want, "{layout} {len}");
                    // Answers for the first `len` probes only, the rest left alone.
                    let mut out = vec![false; len];
                    batch.contains_batch_into(&probes, &mut out);
                    assert_eq!(out, want[..len], "{layout} {len}");
                }
            }
        }
    }

    /// The AVX2 paths (single key with the inlined XXH3 key hash or another hashing, by hash,
    /// batch) and the portable path set the same bits and answer the same, for the plain and
    /// the atomic filter. On CPUs without AVX2 every side is the portable path (the test
    /// checks which).
    #[test]
    fn simd_and_portable_paths_agree() {
        for layout in [
            BlockLayout::SplitBlock,
            BlockLayout::SplitBlock256,
            BlockLayout::Bits(7),
        ] {
            for hashing in [Hashing::Xxh3, Hashing::Murmur3] {
                let (blocks, _) = blocked::params_for_layouts(10_000, 0.01, &[layout]).unwrap();
                let spec = BlockSpec::new(blocks, layout, hashing).unwrap();
                paths_agree!(BlockedBloomFilter, spec.clone());
                paths_agree!(AtomicBlockedBloomFilter, spec);
            }
        }
    }
}
