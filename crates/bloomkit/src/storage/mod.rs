//! Storage: where a filter's bits live (stage 4 of the pipeline).
//!
//! Every storage uses the same bit layout, which is also Guava's and Go's: bit `i` is bit
//! `i % 64` (least significant first) of 64-bit word `i / 64`. Keeping one layout everywhere
//! is what lets the native format, memory maps and foreign formats share the same words.
//!
//! - [`BitVec`]: plain words in a `Vec<u64>`, for filters owned by one thread at a time.
//! - [`Counters`]: packed saturating 4- or 8-bit counters, for counting filters.
//! - [`AtomicBitVec`]: atomic words, for lock-free concurrent filters.
//! - [`Block`] and [`AtomicBlock`]: 64-byte-aligned 512-bit blocks, for blocked filters.
//! - Memory-mapped words: see [`crate::mmap`].

mod alloc;
mod atomic;
mod blocks;
mod counters;
mod sync;

pub(crate) use alloc::zeroed_vec;
pub use atomic::AtomicBitVec;
pub(crate) use blocks::{blocks_from_words, zeroed_blocks};
pub use blocks::{AtomicBlock, Block};
pub use counters::{CounterWidth, Counters};

use crate::error::{Error, Result};
use crate::math::MAX_BITS;

/// Allocates `words` zeroed 64-bit words, reporting failure instead of aborting.
pub(crate) fn zeroed_words(words: u64) -> Result<Vec<u64>> {
    alloc::zeroed_vec(words, 0)
}

/// A fixed-size array of bits in plain 64-bit words.
///
/// Bits at positions `len..` of the last word are always zero.
///
/// ```
/// use bloomkit::storage::BitVec;
/// let mut b = BitVec::zeros(100).unwrap();
/// assert!(b.set(70));   // newly set
/// assert!(!b.set(70));  // already set
/// assert!(b.get(70) && !b.get(71));
/// assert_eq!(b.as_words()[1], 1 << 6);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct BitVec {
    words: Vec<u64>,
    len: u64,
}

impl BitVec {
    /// `len` zero bits.
    pub fn zeros(len: u64) -> Result<Self> {
        if len == 0 {
            return Err(Error::ZeroBits);
        }
        if len > MAX_BITS {
            return Err(Error::TooLarge {
                bits: len,
                limit: "more bits than this platform can address",
            });
        }
        Ok(BitVec {
            words: zeroed_words(len.div_ceil(64))?,
            len,
        })
    }

    /// Takes `words` as the bits of a `len`-bit array. The word count must be exactly
    /// `ceil(len / 64)` and no bit at or past `len` may be set.
    pub fn from_words(words: Vec<u64>, len: u64) -> Result<Self> {
        if len == 0 {
            return Err(Error::ZeroBits);
        }
        if words.len() as u64 != len.div_ceil(64) {
            return Err(Error::InvalidParameters(format!(
                "{} words cannot hold exactly {len} bits (need {})",
                words.len(),
                len.div_ceil(64)
            )));
        }
        let tail = len % 64;
        if tail != 0 && words[words.len() - 1] >> tail != 0 {
            return Err(Error::InvalidParameters(format!(
                "bits are set past the last bit ({len})"
            )));
        }
        Ok(BitVec { words, len })
    }

    /// Number of bits.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: a `BitVec` has at least one bit.
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Sets bit `i`; returns `true` if it was clear before. `i` must be `< len`.
    #[inline]
    pub fn set(&mut self, i: u64) -> bool {
        debug_assert!(i < self.len);
        let word = &mut self.words[(i >> 6) as usize];
        let mask = 1u64 << (i & 63);
        let was_clear = *word & mask == 0;
        *word |= mask;
        was_clear
    }

    /// Reads bit `i`. `i` must be `< len`.
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        debug_assert!(i < self.len);
        self.words[(i >> 6) as usize] & (1u64 << (i & 63)) != 0
    }

    /// Number of set bits (a pass over all words).
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// ORs `other` into `self`. Both must have the same length.
    pub(crate) fn union_with(&mut self, other: &BitVec) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
    }

    /// ANDs `other` into `self`. Both must have the same length.
    pub(crate) fn intersect_with(&mut self, other: &BitVec) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= *b;
        }
    }

    /// The words, least significant bit first.
    #[inline]
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// Gives up the words.
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }

    /// Bytes of heap memory used by the words.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_words_checks_shape() {
        assert!(BitVec::from_words(vec![0, 0], 128).is_ok());
        assert!(BitVec::from_words(vec![0], 128).is_err());
        assert!(BitVec::from_words(vec![0, 0, 0], 128).is_err());
        assert!(BitVec::from_words(vec![1 << 10], 10).is_err());
        assert!(BitVec::from_words(vec![1 << 9], 9).is_err());
        assert!(BitVec::from_words(vec![1 << 9], 10).is_ok());
        assert!(BitVec::from_words(vec![1 << 63], 64).is_ok());
        assert!(matches!(
            BitVec::from_words(vec![], 0),
            Err(Error::ZeroBits)
        ));
        assert!(matches!(BitVec::zeros(0), Err(Error::ZeroBits)));
        assert!(matches!(
            BitVec::zeros(u64::MAX),
            Err(Error::TooLarge { .. })
        ));
    }

    #[test]
    fn count_union_intersect() {
        let mut a = BitVec::zeros(130).unwrap();
        let mut b = BitVec::zeros(130).unwrap();
        a.set(1);
        a.set(129);
        b.set(129);
        b.set(64);
        let mut u = a.clone();
        u.union_with(&b);
        assert_eq!(u.count_ones(), 3);
        a.intersect_with(&b);
        assert_eq!(a.count_ones(), 1);
        assert!(a.get(129));
        a.clear();
        assert_eq!(a.count_ones(), 0);
    }
}
