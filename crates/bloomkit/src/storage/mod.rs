//! Storage: where a filter's bits live (stage 4 of the pipeline).
//!
//! Every storage uses the same bit layout, which is also Guava's and Go's: bit `i` is bit
//! `i % 64` (least significant first) of 64-bit word `i / 64`. Keeping one layout everywhere
//! is what lets the native format, memory maps and foreign formats share the same words.
//!
//! Each storage comes in a plain and an atomic form with one implementation:
//!
//! - [`BitVec`] and [`AtomicBitVec`] (`bits.rs`): a bit array in plain words, for filters
//!   owned by one thread at a time, or in atomic words, for lock-free concurrent filters. The
//!   two share their shape checks and read paths; only `set` differs (`|=` through `&mut`,
//!   `fetch_or` through `&`).
//! - [`Block`] and [`AtomicBlock`] (`blocks.rs`): 64-byte-aligned 512-bit blocks, for blocked
//!   filters, read through `BlockCell` and updated through `BlocksMut`, the two traits
//!   the blocked probing loops are written over.
//! - [`Counters`]: packed saturating 4- or 8-bit counters, for counting filters.
//! - [`PackedCells`] (`cells.rs`): fields of any width up to 64 bits, for the d-left filter's
//!   fingerprint-and-counter cells.
//! - Memory-mapped files ([`crate::mmap`]) are viewed as atomic words or atomic blocks: the
//!   same storage, over the mapping instead of the heap, so that processes sharing a file
//!   write it soundly.
//!
//! `prefetch` (a cache hint used by every batch loop) lives here too, and `cache.rs` says
//! whether a bit array fits in the core's own cache (batches then skip their prefetch walk).

/// `len` and `is_empty` of a storage array of `len` `$what`s, which always has at least one
/// (the three arrays' own words for them).
macro_rules! len_methods {
    ($what:literal) => {
        #[doc = concat!("Number of ", $what, "s.")]
        #[inline]
        pub fn len(&self) -> u64 {
            self.len
        }

        #[doc = concat!("Always false: there is at least one ", $what, ".")]
        #[inline]
        pub fn is_empty(&self) -> bool {
            false
        }
    };
}

mod alloc;
mod bits;
mod blocks;
mod cache;
mod cells;
mod counters;
mod sync;

pub(crate) use alloc::zeroed_vec;
// Views of mapped files (`crate::mmap`) use these.
#[cfg(feature = "mmap")]
// Used by the memory-mapped filters, which the loom build leaves out.
#[cfg_attr(loom, allow(unused_imports))]
pub(crate) use bits::{atomic_bit, atomic_get, atomic_set};
pub use bits::{AtomicBitVec, BitVec};
pub(crate) use blocks::prefetch;
pub(crate) use blocks::{blocks_from_words, cell, or_atomic, or_where, zeroed_blocks};
pub use blocks::{AtomicBlock, Block};
pub(crate) use blocks::{BlockCell, BlocksMut};
#[cfg(test)]
pub(crate) use cache::assuming_in_core_cache;
pub(crate) use cache::in_core_cache;
use cells::check_packed;
pub use cells::PackedCells;
pub use counters::{CounterWidth, Counters};
pub(crate) use sync::{AtomicU64, Ordering};

use crate::error::Result;

/// Allocates `words` zeroed 64-bit words, reporting failure instead of aborting.
pub(crate) fn zeroed_words(words: u64) -> Result<Vec<u64>> {
    alloc::zeroed_vec(words, 0)
}
