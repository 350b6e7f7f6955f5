//! Packed saturating counters for counting filters.
//!
//! Counter `i` of width `w` bits lives in word `i / (64 / w)` at bit offset
//! `(i % (64 / w)) · w`, least significant first, the same order as [`super::BitVec`]'s bits.
//! A counter that reaches its maximum (15 for 4-bit, 255 for 8-bit counters) is *saturated*:
//! it is never incremented past the maximum and never decremented again, because after
//! saturation the true count is unknown and decrementing could bring it to zero while elements
//! that still map to it are present (a false negative).

use super::{check_packed, zeroed_words};
use crate::error::{Error, Result};
use crate::math::MAX_BITS;

/// Width of each counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CounterWidth {
    /// 4-bit counters, 16 to a word, saturating at 15 (the default).
    #[default]
    Four,
    /// 8-bit counters, 8 to a word, saturating at 255.
    Eight,
}

impl CounterWidth {
    /// Bits per counter.
    #[inline]
    pub fn bits(self) -> u32 {
        match self {
            CounterWidth::Four => 4,
            CounterWidth::Eight => 8,
        }
    }

    /// The saturation value.
    #[inline]
    pub fn max(self) -> u8 {
        match self {
            CounterWidth::Four => 15,
            CounterWidth::Eight => 255,
        }
    }

    #[inline]
    fn per_word(self) -> u64 {
        64 / u64::from(self.bits())
    }
}

/// A fixed number of packed, saturating counters.
///
/// ```
/// use bloomkit::storage::{Counters, CounterWidth};
/// let mut c = Counters::zeros(100, CounterWidth::Four).unwrap();
/// for _ in 0..20 { c.increment(7); }
/// assert_eq!(c.get(7), 15);          // saturated
/// c.decrement(7);
/// assert_eq!(c.get(7), 15);          // and stays so
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Counters {
    words: Vec<u64>,
    len: u64,
    width: CounterWidth,
}

impl Counters {
    /// `len` counters at zero.
    pub fn zeros(len: u64, width: CounterWidth) -> Result<Self> {
        if len == 0 {
            return Err(Error::ZeroBits);
        }
        if len > MAX_BITS / u64::from(width.bits()) {
            return Err(Error::TooLarge {
                bits: len,
                limit: "more counters than this platform can address",
            });
        }
        Ok(Counters {
            words: zeroed_words(len.div_ceil(width.per_word()))?,
            len,
            width,
        })
    }

    /// Takes `words` as `len` packed counters. The word count must match exactly and the unused
    /// high bits of the last word must be zero.
    pub fn from_words(words: Vec<u64>, len: u64, width: CounterWidth) -> Result<Self> {
        if len == 0 {
            return Err(Error::ZeroBits);
        }
        check_packed(&words, len, width.bits(), "counter")?;
        Ok(Counters { words, len, width })
    }

    len_methods!("counter");

    /// Counter width.
    #[inline]
    pub fn width(&self) -> CounterWidth {
        self.width
    }

    #[inline]
    fn locate(&self, i: u64) -> (usize, u32) {
        debug_assert!(i < self.len);
        let per = self.width.per_word();
        ((i / per) as usize, ((i % per) as u32) * self.width.bits())
    }

    /// Value of counter `i`.
    #[inline]
    pub fn get(&self, i: u64) -> u8 {
        let (w, shift) = self.locate(i);
        ((self.words[w] >> shift) & u64::from(self.width.max())) as u8
    }

    /// Sets counter `i` to `v` (clamped to the maximum).
    #[inline]
    pub fn set(&mut self, i: u64, v: u8) {
        let (w, shift) = self.locate(i);
        let max = u64::from(self.width.max());
        let v = u64::from(v).min(max);
        self.words[w] = (self.words[w] & !(max << shift)) | (v << shift);
    }

    /// Adds one unless saturated; returns the value before.
    #[inline]
    pub fn increment(&mut self, i: u64) -> u8 {
        let old = self.get(i);
        if old < self.width.max() {
            let (w, shift) = self.locate(i);
            self.words[w] += 1 << shift;
        }
        old
    }

    /// Subtracts one unless zero or saturated; returns the value before.
    #[inline]
    pub fn decrement(&mut self, i: u64) -> u8 {
        let old = self.get(i);
        if old > 0 && old < self.width.max() {
            let (w, shift) = self.locate(i);
            self.words[w] -= 1 << shift;
        }
        old
    }

    /// Number of non-zero counters.
    pub fn count_nonzero(&self) -> u64 {
        (0..self.len).filter(|&i| self.get(i) != 0).count() as u64
    }

    /// Sets every counter to zero.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Adds `other` counter by counter, saturating. Lengths and widths must match.
    pub(crate) fn saturating_add(&mut self, other: &Counters) {
        debug_assert_eq!((self.len, self.width), (other.len, other.width));
        for i in 0..self.len {
            let sum = self.get(i).saturating_add(other.get(i));
            self.set(i, sum);
        }
    }

    /// The packed words.
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// Bytes of heap memory used.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_do_not_interfere() {
        for width in [CounterWidth::Four, CounterWidth::Eight] {
            let mut c = Counters::zeros(40, width).unwrap();
            for _ in 0..300 {
                c.increment(17);
            }
            assert_eq!(c.get(17), width.max());
            assert_eq!((c.get(16), c.get(18)), (0, 0));
            c.set(16, 3);
            c.decrement(16);
            assert_eq!(c.get(16), 2);
            assert_eq!(c.get(17), width.max());
            assert_eq!(c.count_nonzero(), 2);
            // Zero stays zero.
            assert_eq!(c.decrement(0), 0);
            assert_eq!(c.get(0), 0);
        }
    }

    #[test]
    fn from_words_checks_shape() {
        assert!(Counters::from_words(vec![0; 2], 17, CounterWidth::Four).is_ok());
        assert!(Counters::from_words(vec![0; 1], 17, CounterWidth::Four).is_err());
        assert!(Counters::from_words(vec![0, 1 << 4], 17, CounterWidth::Four).is_err());
        assert!(Counters::from_words(vec![0, 1 << 3], 17, CounterWidth::Four).is_ok());
        assert!(matches!(
            Counters::zeros(0, CounterWidth::Eight),
            Err(Error::ZeroBits)
        ));
    }
}
