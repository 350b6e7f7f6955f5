//! Packed fixed-width cells: `len` fields of `width` bits (1 to 64) in 64-bit words, for
//! filters whose slots are wider than a counter (the d-left filter's fingerprint-and-counter
//! cells).
//!
//! Cell `i` occupies bits `i·width .. (i+1)·width` of the word array read as one long bit
//! string, least significant first (bit `j` is bit `j % 64` of word `j / 64`, the layout of
//! every other storage). A cell may straddle two words. Bits past the last cell are zero.

use super::zeroed_words;
use crate::error::{Error, Result};
use crate::math::MAX_BITS;

/// Checks that `words` hold exactly `len` packed fields of `width` bits and nothing past the
/// last one (shared by [`PackedCells`] and [`Counters`](super::Counters)); `what` names a
/// field in the error.
pub(crate) fn check_packed(words: &[u64], len: u64, width: u32, what: &str) -> Result<()> {
    let bits = len.saturating_mul(u64::from(width));
    let need = bits.div_ceil(64);
    if words.len() as u64 != need {
        return Err(Error::InvalidParameters(format!(
            "{} words cannot hold exactly {len} {width}-bit {what}s (need {need})",
            words.len()
        )));
    }
    let used = bits % 64;
    if used != 0 && words[words.len() - 1] >> used != 0 {
        return Err(Error::InvalidParameters(format!(
            "{what} words have bits set past the last {what}"
        )));
    }
    Ok(())
}

/// A fixed number of packed cells of one width.
///
/// ```
/// use bloomkit::storage::PackedCells;
/// let mut c = PackedCells::zeros(10, 14).unwrap();
/// c.set(4, 0x2abc);            // cell 4 spans words 0 and 1
/// assert_eq!(c.get(4), 0x2abc);
/// assert_eq!((c.get(3), c.get(5)), (0, 0));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct PackedCells {
    words: Vec<u64>,
    len: u64,
    width: u32,
}

/// The widest cell.
const MAX_WIDTH: u32 = 64;

impl PackedCells {
    /// Words needed for `len` cells of `width` bits, or an error if that many bits cannot be
    /// addressed.
    fn words_for(len: u64, width: u32) -> Result<u64> {
        if len == 0 {
            return Err(Error::ZeroBits);
        }
        if width == 0 || width > MAX_WIDTH {
            return Err(Error::InvalidParameters(format!(
                "a cell must be 1 to {MAX_WIDTH} bits wide, not {width}"
            )));
        }
        match len.checked_mul(u64::from(width)) {
            Some(bits) if bits <= MAX_BITS => Ok(bits.div_ceil(64)),
            _ => Err(Error::TooLarge {
                bits: len.saturating_mul(u64::from(width)),
                limit: "more cell bits than this platform can address",
            }),
        }
    }

    /// `len` cells of `width` bits, all zero.
    pub fn zeros(len: u64, width: u32) -> Result<Self> {
        let words = zeroed_words(Self::words_for(len, width)?)?;
        Ok(PackedCells { words, len, width })
    }

    /// Takes `words` as `len` cells of `width` bits. The word count must match exactly and the
    /// bits past the last cell must be zero.
    pub fn from_words(words: Vec<u64>, len: u64, width: u32) -> Result<Self> {
        Self::words_for(len, width)?;
        check_packed(&words, len, width, "cell")?;
        Ok(PackedCells { words, len, width })
    }

    len_methods!("cell");

    /// Bits per cell.
    #[inline]
    pub fn width(&self) -> u32 {
        self.width
    }

    #[inline]
    fn mask(&self) -> u64 {
        u64::MAX >> (64 - self.width)
    }

    /// Value of cell `i` (`i < len`).
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.len);
        let bit = i * u64::from(self.width);
        let (w, off) = ((bit / 64) as usize, (bit % 64) as u32);
        let mut v = self.words[w] >> off;
        if off + self.width > 64 {
            v |= self.words[w + 1] << (64 - off);
        }
        v & self.mask()
    }

    /// Sets cell `i` (`i < len`) to the low `width` bits of `v`.
    #[inline]
    pub fn set(&mut self, i: u64, v: u64) {
        debug_assert!(i < self.len);
        let mask = self.mask();
        let v = v & mask;
        let bit = i * u64::from(self.width);
        let (w, off) = ((bit / 64) as usize, (bit % 64) as u32);
        self.words[w] = (self.words[w] & !(mask << off)) | (v << off);
        if off + self.width > 64 {
            let spill = 64 - off;
            let high = mask >> spill;
            self.words[w + 1] = (self.words[w + 1] & !high) | (v >> spill);
        }
    }

    /// Sets every cell to zero.
    pub fn clear(&mut self) {
        self.words.fill(0);
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

impl std::fmt::Debug for PackedCells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedCells")
            .field("len", &self.len)
            .field("width", &self.width)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_round_trips_without_touching_neighbours() {
        for width in 1..=64u32 {
            let len = 200;
            let mut c = PackedCells::zeros(len, width).unwrap();
            let mask = u64::MAX >> (64 - width);
            let value = |i: u64| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7)) & mask;
            for i in 0..len {
                c.set(i, value(i));
            }
            for i in 0..len {
                assert_eq!(c.get(i), value(i), "width {width}, cell {i}");
            }
            // Clearing one cell leaves its neighbours alone.
            c.set(77, 0);
            assert_eq!(c.get(77), 0);
            assert_eq!((c.get(76), c.get(78)), (value(76), value(78)));
            c.set(77, u64::MAX);
            assert_eq!(c.get(77), mask);
            assert_eq!((c.get(76), c.get(78)), (value(76), value(78)));
            // Nothing is written past the last cell.
            let back = PackedCells::from_words(c.as_words().to_vec(), len, width).unwrap();
            assert_eq!(back, c);
        }
    }

    #[test]
    fn shapes_are_checked() {
        assert!(PackedCells::from_words(vec![0; 3], 10, 14).is_ok());
        assert!(PackedCells::from_words(vec![0; 2], 10, 14).is_err());
        assert!(PackedCells::from_words(vec![0, 0, 1 << 20], 10, 14).is_err());
        assert!(PackedCells::from_words(vec![0, 0, 1 << 11], 10, 14).is_ok());
        assert!(matches!(PackedCells::zeros(0, 3), Err(Error::ZeroBits)));
        assert!(PackedCells::zeros(1, 0).is_err());
        assert!(PackedCells::zeros(1, 65).is_err());
        assert!(matches!(
            PackedCells::zeros(u64::MAX, 64),
            Err(Error::TooLarge { .. })
        ));
    }
}
