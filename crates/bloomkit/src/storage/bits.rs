//! Bit arrays: [`BitVec`] in plain words, [`AtomicBitVec`] in atomic words, one implementation.
//!
//! Both use the layout of every storage (bit `i` is bit `i % 64` of word `i / 64`) and keep the
//! bits at and past `len` clear. The shape checks and every read go through the helpers below,
//! generic over the word type; only `set` differs between the two.

use super::sync::{AtomicU64, Ordering};
use super::zeroed_words;
use crate::error::{Error, Result};
use crate::math::MAX_BITS;

/// A 64-bit word as the read paths see it: a plain word, or an atomic one read with a relaxed
/// load (on common CPUs the same instruction).
pub(crate) trait Word {
    /// The word's value.
    fn get(&self) -> u64;
}

impl Word for u64 {
    #[inline(always)]
    fn get(&self) -> u64 {
        *self
    }
}

impl Word for AtomicU64 {
    #[inline(always)]
    fn get(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

/// Number of set bits.
fn count_ones<W: Word>(words: &[W]) -> u64 {
    words.iter().map(|w| u64::from(w.get().count_ones())).sum()
}

/// Reads bit `i`.
#[inline(always)]
fn get_bit<W: Word>(words: &[W], i: u64) -> bool {
    bit(words, i) != 0
}

/// Bit `i` as the number 0 or 1 (a value a probe loop can combine with others before it
/// branches).
#[inline(always)]
fn bit<W: Word>(words: &[W], i: u64) -> u64 {
    (words[(i >> 6) as usize].get() >> (i & 63)) & 1
}

/// Reads bit `i` of atomic words (for views of shared memory).
#[cfg(feature = "mmap")]
#[inline(always)]
pub(crate) fn atomic_get(words: &[AtomicU64], i: u64) -> bool {
    get_bit(words, i)
}

/// Bit `i` of atomic words as 0 or 1 (for views of shared memory; see [`bit`]).
#[cfg(feature = "mmap")]
#[inline(always)]
pub(crate) fn atomic_bit(words: &[AtomicU64], i: u64) -> u64 {
    bit(words, i)
}

/// Sets bit `i` of atomic words with one `fetch_or`; `true` if it was clear.
#[inline(always)]
pub(crate) fn atomic_set(words: &[AtomicU64], i: u64) -> bool {
    let mask = 1u64 << (i & 63);
    words[(i >> 6) as usize].fetch_or(mask, Ordering::Relaxed) & mask == 0
}

/// Checks a bit count for a new array.
fn check_len(len: u64) -> Result<()> {
    if len == 0 {
        return Err(Error::ZeroBits);
    }
    if len > MAX_BITS {
        return Err(Error::TooLarge {
            bits: len,
            limit: "more bits than this platform can address",
        });
    }
    Ok(())
}

/// Checks that `words` hold exactly `len` bits with none set at or past `len`.
pub(crate) fn check_shape<W: Word>(words: &[W], len: u64) -> Result<()> {
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
    if tail != 0 && words[words.len() - 1].get() >> tail != 0 {
        return Err(Error::InvalidParameters(format!(
            "bits are set past the last bit ({len})"
        )));
    }
    Ok(())
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

/// A fixed-size array of bits in atomic 64-bit words, with the layout of [`BitVec`].
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
pub struct AtomicBitVec {
    words: Vec<AtomicU64>,
    len: u64,
}

/// The methods both arrays have, with the same code (only the word type differs).
macro_rules! common_bit_methods {
    () => {
        len_methods!("bit");

        /// Reads bit `i`. `i` must be `< len`.
        #[inline]
        pub fn get(&self, i: u64) -> bool {
            debug_assert!(i < self.len);
            get_bit(&self.words, i)
        }

        /// Number of set bits (a pass over all words; a snapshot for atomic words).
        pub fn count_ones(&self) -> u64 {
            count_ones(&self.words)
        }

        /// Bytes of heap memory used by the words.
        pub fn memory_bytes(&self) -> usize {
            self.words.len() * 8
        }

        /// The words themselves, plain or atomic (for the other array's `union_with`).
        #[inline]
        pub(crate) fn words(&self) -> &[impl Word] {
            &self.words
        }

        /// A closure that starts loading the cache line of bit `i` (`prefetch`, a hint: it
        /// reads nothing). It holds the words' address, not a borrow, so that a batch can use
        /// it beside [`setter`](Self::setter); it computes addresses with `wrapping_add` and
        /// never dereferences them.
        #[inline(always)]
        pub(crate) fn prefetcher(&self) -> impl Fn(u64) + Copy {
            let words = self.words.as_ptr();
            move |i| super::prefetch(words.wrapping_add((i >> 6) as usize))
        }

        /// Bit `i` as 0 or 1, as a closure over the words' slice, for a filter's probe loop:
        /// the slice's address and length stay in registers across the probes.
        #[inline(always)]
        pub(crate) fn getter(&self) -> impl Fn(u64) -> u64 + '_ {
            let words = &self.words[..];
            move |i| bit(words, i)
        }
    };
}

impl BitVec {
    common_bit_methods!();

    /// `len` zero bits.
    pub fn zeros(len: u64) -> Result<Self> {
        check_len(len)?;
        Ok(BitVec {
            words: zeroed_words(len.div_ceil(64))?,
            len,
        })
    }

    /// Takes `words` as the bits of a `len`-bit array. The word count must be exactly
    /// `ceil(len / 64)` and no bit at or past `len` may be set.
    pub fn from_words(words: Vec<u64>, len: u64) -> Result<Self> {
        check_shape(&words, len)?;
        Ok(BitVec { words, len })
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

    /// [`set`](Self::set) as a closure over the words' slice (see `getter`): the probe loop's
    /// stores cannot then make the compiler reload the vector's address and length.
    #[inline(always)]
    pub(crate) fn setter(&mut self) -> impl FnMut(u64) -> bool + '_ {
        let words = &mut self.words[..];
        move |i| {
            let word = &mut words[(i >> 6) as usize];
            let mask = 1u64 << (i & 63);
            let was_clear = *word & mask == 0;
            *word |= mask;
            was_clear
        }
    }

    /// Clears bit `i`; returns `true` if it was set before. `i` must be `< len`.
    #[inline]
    pub fn unset(&mut self, i: u64) -> bool {
        debug_assert!(i < self.len);
        let word = &mut self.words[(i >> 6) as usize];
        let mask = 1u64 << (i & 63);
        let was_set = *word & mask != 0;
        *word &= !mask;
        was_set
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// ORs `other` into `self`. Both must have the same length.
    pub(crate) fn union_with(&mut self, other: &[impl Word]) {
        debug_assert_eq!(self.words.len(), other.len());
        for (a, b) in self.words.iter_mut().zip(other) {
            *a |= b.get();
        }
    }

    /// Clears in `self` every bit set in `other` (`self & !other`). Both must have the same
    /// length.
    pub(crate) fn difference_with(&mut self, other: &[impl Word]) {
        debug_assert_eq!(self.words.len(), other.len());
        for (a, b) in self.words.iter_mut().zip(other) {
            *a &= !b.get();
        }
    }

    /// ANDs `other` into `self`. Both must have the same length.
    pub(crate) fn intersect_with(&mut self, other: &[impl Word]) {
        debug_assert_eq!(self.words.len(), other.len());
        for (a, b) in self.words.iter_mut().zip(other) {
            *a &= b.get();
        }
    }

    /// The words, least significant bit first.
    #[inline]
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// The words (a copy; for the plain array, the same as [`as_words`](Self::as_words)).
    pub fn to_words(&self) -> Vec<u64> {
        self.words.clone()
    }

    /// Gives up the words.
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }
}

impl AtomicBitVec {
    common_bit_methods!();

    /// `len` zero bits.
    pub fn zeros(len: u64) -> Result<Self> {
        Ok(Self::from_bitvec(BitVec::zeros(len)?))
    }

    /// Takes `words` as the bits of a `len`-bit array (the checks of [`BitVec::from_words`]).
    pub fn from_words(words: Vec<u64>, len: u64) -> Result<Self> {
        Ok(Self::from_bitvec(BitVec::from_words(words, len)?))
    }

    /// Takes over a plain bit array.
    pub fn from_bitvec(bits: BitVec) -> Self {
        let len = bits.len();
        AtomicBitVec {
            // `AtomicU64` has the layout of `u64`: this collects in place.
            words: bits.into_words().into_iter().map(AtomicU64::new).collect(),
            len,
        }
    }

    /// Gives back a plain bit array.
    pub fn into_bitvec(self) -> BitVec {
        let words = self.words.into_iter().map(|w| w.get()).collect();
        BitVec {
            words,
            len: self.len,
        }
    }

    /// Sets bit `i` with one atomic `fetch_or`; returns `true` if it was clear before.
    #[inline]
    pub fn set(&self, i: u64) -> bool {
        debug_assert!(i < self.len);
        atomic_set(&self.words, i)
    }

    /// [`set`](Self::set) as a closure over the words' slice (as [`BitVec`]'s `setter`).
    #[inline(always)]
    pub(crate) fn setter(&self) -> impl FnMut(u64) -> bool + '_ {
        let words = &self.words[..];
        move |i| atomic_set(words, i)
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        for w in &self.words {
            w.store(0, Ordering::Relaxed);
        }
    }

    /// ORs `other` into `self` with atomic ORs (safe while other threads insert).
    pub(crate) fn union_with(&self, other: &[impl Word]) {
        debug_assert_eq!(self.words.len(), other.len());
        for (a, b) in self.words.iter().zip(other) {
            let b = b.get();
            if b != 0 {
                a.fetch_or(b, Ordering::Relaxed);
            }
        }
    }

    /// ANDs `other` into `self`.
    pub(crate) fn intersect_with(&mut self, other: &[impl Word]) {
        debug_assert_eq!(self.words.len(), other.len());
        for (a, b) in self.words.iter().zip(other) {
            a.fetch_and(b.get(), Ordering::Relaxed);
        }
    }

    /// The words (a snapshot).
    pub fn to_words(&self) -> Vec<u64> {
        self.words.iter().map(Word::get).collect()
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
        u.union_with(b.as_words());
        assert_eq!(u.count_ones(), 3);
        a.intersect_with(b.as_words());
        assert_eq!(a.count_ones(), 1);
        assert!(a.get(129));
        a.clear();
        assert_eq!(a.count_ones(), 0);
    }
}
