//! Lock-free concurrent filters: `insert` takes `&self`, so one filter can be shared through an
//! `Arc` by any number of threads with no lock.
//!
//! Bits are only ever set, with atomic `fetch_or`, never cleared while shared. Two inserts that
//! touch the same word cannot lose each other's bits: each `fetch_or` is a single atomic
//! read-modify-write. So once an `insert` has returned, its element tests present in every
//! thread that synchronizes with it (and, with `Relaxed` ordering, eventually in every thread):
//! concurrent inserts never cause a false negative. The "was it new?" answer of two threads
//! inserting the same element at once may be `true` for both.
//!
//! ```
//! use bloomkit::concurrent::AtomicBlockedBloomFilter;
//! use std::sync::Arc;
//! let f = Arc::new(AtomicBlockedBloomFilter::new(100_000, 0.01)?);
//! let handles: Vec<_> = (0..4u64)
//!     .map(|t| {
//!         let f = Arc::clone(&f);
//!         std::thread::spawn(move || {
//!             for i in 0..1000u64 {
//!                 f.insert(&(t, i));
//!             }
//!         })
//!     })
//!     .collect();
//! for h in handles {
//!     h.join().unwrap();
//! }
//! assert!(f.contains(&(3u64, 999u64)));
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::blocked::{prefetch, BlockedBloomFilter};
use crate::classic::BloomFilter;
use crate::error::Result;
use crate::hash::Hashing;
use crate::key::Key;
use crate::math;
use crate::probe::blocked::BlockLayout;
use crate::probe::reduce;
use crate::spec::Spec;
use crate::storage::{AtomicBitVec, AtomicBlock, BitVec, Block};
use std::fmt;

/// A classic Bloom filter with atomic bits: `insert(&self)` sets each bit with one `fetch_or`.
pub struct AtomicBloomFilter {
    spec: Spec,
    bits: AtomicBitVec,
}

impl AtomicBloomFilter {
    /// A filter for `capacity` elements at `fpp` with bloomkit's default spec.
    pub fn new(capacity: u64, fpp: f64) -> Result<Self> {
        Ok(Self::from(BloomFilter::new(capacity, fpp)?))
    }

    /// The filter's spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// Adds an element; returns `true` if this call set any bit.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> bool {
        let d = self.spec.digest(key);
        let mut new = false;
        self.spec.for_each_position(&d, |i| {
            new |= self.bits.set(i);
            true
        });
        new
    }

    /// Whether the element may be present.
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        let d = self.spec.digest(key);
        self.spec.for_each_position(&d, |i| self.bits.get(i))
    }

    /// Number of set bits (a snapshot).
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    /// Estimated number of distinct elements (a snapshot).
    pub fn estimated_len(&self) -> f64 {
        math::estimate_count(self.spec.bits(), self.spec.hashes(), self.count_ones())
    }

    /// The plain filter with the same bits.
    pub fn into_inner(self) -> BloomFilter {
        BloomFilter::from_words(self.spec, self.bits.into_bitvec().into_words())
            .expect("an AtomicBloomFilter keeps its spec's size")
    }
}

impl From<BloomFilter> for AtomicBloomFilter {
    fn from(f: BloomFilter) -> Self {
        let spec = f.spec().clone();
        let bits = BitVec::from_words(f.into_words(), spec.bits())
            .expect("a BloomFilter's words fit its spec");
        AtomicBloomFilter {
            spec,
            bits: AtomicBitVec::from_bitvec(bits),
        }
    }
}

impl fmt::Debug for AtomicBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicBloomFilter")
            .field("spec", &self.spec)
            .finish()
    }
}

/// A blocked Bloom filter with atomic blocks: `insert(&self)` ORs the element's mask into its
/// block with one `fetch_or` per word that receives bits.
pub struct AtomicBlockedBloomFilter {
    blocks: Vec<AtomicBlock>,
    layout: BlockLayout,
    hashing: Hashing,
}

impl AtomicBlockedBloomFilter {
    /// A filter for `capacity` elements whose measured FPR meets `fpp`.
    pub fn new(capacity: u64, fpp: f64) -> Result<Self> {
        Ok(Self::from(BlockedBloomFilter::new(capacity, fpp)?))
    }

    #[inline(always)]
    fn locate<K: Key + ?Sized>(&self, key: &K) -> (usize, [u64; 8]) {
        let [h1, h2] = key.with_bytes(|b| self.layout.hash(&self.hashing, b));
        self.layout.locate(h1, h2, self.blocks.len() as u64)
    }

    /// Adds an element; returns `true` if this call set any bit.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> bool {
        let (i, mask) = self.locate(key);
        self.blocks[i].insert(&mask)
    }

    /// Whether the element may be present.
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        let [h1, h2] = key.with_bytes(|b| self.layout.hash(&self.hashing, b));
        let block = &self.blocks[reduce(h1, self.blocks.len() as u64) as usize];
        self.layout.test(&block.load().0, h2)
    }

    /// Adds every element of `keys`, prefetching blocks a group at a time.
    pub fn insert_batch<K: Key>(&self, keys: &[K]) {
        let mut located = [(0usize, [0u64; 8]); 32];
        for chunk in keys.chunks(32) {
            for (slot, key) in located.iter_mut().zip(chunk) {
                *slot = self.locate(key);
                prefetch(&self.blocks[slot.0]);
            }
            for (i, mask) in &located[..chunk.len()] {
                self.blocks[*i].insert(mask);
            }
        }
    }

    /// The plain filter with the same bits.
    pub fn into_inner(self) -> BlockedBloomFilter {
        let blocks: Vec<Block> = self.blocks.iter().map(AtomicBlock::load).collect();
        BlockedBloomFilter::from_parts(blocks, self.layout, self.hashing)
    }

    /// Bytes of memory used.
    pub fn memory_bytes(&self) -> usize {
        self.blocks.len() * 64
    }
}

impl From<BlockedBloomFilter> for AtomicBlockedBloomFilter {
    fn from(f: BlockedBloomFilter) -> Self {
        let (blocks, layout, hashing) = f.into_parts();
        AtomicBlockedBloomFilter {
            blocks: blocks.into_iter().map(AtomicBlock::new).collect(),
            layout,
            hashing,
        }
    }
}

impl fmt::Debug for AtomicBlockedBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicBlockedBloomFilter")
            .field("blocks", &self.blocks.len())
            .field("layout", &self.layout)
            .finish()
    }
}
