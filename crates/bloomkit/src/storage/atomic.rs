//! Atomic storage: bits that many threads set at once without a lock.

use super::sync::{AtomicU64, Ordering};
use crate::error::Result;

/// Converts plain words to atomic ones without copying element by element semantics
/// (`AtomicU64` has the same layout as `u64`, but we build a new vector for clarity and safety).
pub(crate) fn to_atomic(words: Vec<u64>) -> Vec<AtomicU64> {
    words.into_iter().map(AtomicU64::new).collect()
}

/// Reads atomic words back into plain ones.
pub(crate) fn from_atomic(words: Vec<AtomicU64>) -> Vec<u64> {
    words
        .into_iter()
        .map(|w| w.load(Ordering::Relaxed))
        .collect()
}

/// A fixed-size array of bits in atomic 64-bit words, with the layout of [`super::BitVec`].
///
/// `set` is a single `fetch_or`: concurrent sets of the same or different bits never lose one,
/// so concurrent inserts into a filter never cause a false negative.
///
/// ```
/// use bloomkit::storage::AtomicBitVec;
/// let b = AtomicBitVec::zeros(100).unwrap();
/// assert!(b.set(5));
/// assert!(!b.set(5));
/// assert!(b.get(5));
/// ```
#[derive(Debug)]
pub struct AtomicBitVec {
    words: Vec<AtomicU64>,
    len: u64,
}

impl AtomicBitVec {
    /// `len` zero bits.
    pub fn zeros(len: u64) -> Result<Self> {
        let plain = super::BitVec::zeros(len)?;
        Ok(Self::from_bitvec(plain))
    }

    /// Takes over a plain bit array.
    pub fn from_bitvec(bits: super::BitVec) -> Self {
        let len = bits.len();
        AtomicBitVec {
            words: to_atomic(bits.into_words()),
            len,
        }
    }

    /// Gives back a plain bit array.
    pub fn into_bitvec(self) -> super::BitVec {
        super::BitVec::from_words(from_atomic(self.words), self.len)
            .expect("an AtomicBitVec keeps the BitVec invariants")
    }

    /// Number of bits.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Sets bit `i` with one atomic `fetch_or`; returns `true` if it was clear before.
    #[inline]
    pub fn set(&self, i: u64) -> bool {
        let mask = 1u64 << (i & 63);
        self.words[(i >> 6) as usize].fetch_or(mask, Ordering::Relaxed) & mask == 0
    }

    /// Reads bit `i`.
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        self.words[(i >> 6) as usize].load(Ordering::Relaxed) & (1u64 << (i & 63)) != 0
    }

    /// Number of set bits (a snapshot; concurrent sets may or may not be counted).
    pub fn count_ones(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
            .sum()
    }

    /// Bytes of memory used.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }
}
