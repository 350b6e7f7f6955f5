//! [`KeyRange`]: the integers a bitmap can hold, and how an integer key becomes a bit index.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// One more than the largest `u64`: the end of the widest unsigned range.
const U64_END: i128 = 1 << 64;

/// The integers a [`Bitmap`](super::Bitmap) or [`TwoBitMap`](super::TwoBitMap) can hold:
/// `start..end`, start inclusive, end exclusive, at most 2⁶⁴ integers wide.
///
/// Values are `i128` so that one type holds every `i64` and every `u64`. A range that starts
/// below zero must lie within the `i64`s; one that starts at zero or above, within the
/// `u64`s. An 8-byte key (an `i64` or `u64` as [`Key`](crate::Key) encodes it, the same
/// bytes for the same non-negative value) is read as an `i64` when the range ends at or
/// below 2⁶³, as a `u64` when it reaches beyond. The integer `v` is bit `v - start`.
///
/// ```
/// use bloomkit::bitmap::KeyRange;
/// let r: KeyRange = "0..1000000000".parse()?;
/// assert_eq!(r.width(), 1_000_000_000);
/// assert_eq!("-5..=5".parse::<KeyRange>()?, KeyRange::new(-5, 6)?);
/// assert!(KeyRange::new(10, 10).is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyRange {
    start: i128,
    end: i128,
}

impl KeyRange {
    /// Every `u64`: `0..2⁶⁴`.
    pub const U64: KeyRange = KeyRange {
        start: 0,
        end: U64_END,
    };

    /// The negative `i64`s: `-2⁶³..0`.
    pub const NEGATIVE_I64: KeyRange = KeyRange {
        start: i64::MIN as i128,
        end: 0,
    };

    /// The integers `start..end`. Refuses an empty range, one wider than 2⁶⁴, a signed one
    /// that leaves `i64` and an unsigned one that leaves `u64`.
    pub fn new(start: i128, end: i128) -> Result<KeyRange> {
        let bad = |why: &str| {
            Err(Error::InvalidParameters(format!(
                "bitmap range {start}..{end}: {why}"
            )))
        };
        if end <= start {
            return bad("the range is empty (the end is exclusive: write 0..10 for 0 to 9)");
        }
        if start < 0 && (start < i128::from(i64::MIN) || end > i128::from(i64::MAX) + 1) {
            return bad(
                "a range with negative integers must lie within the 64-bit signed integers",
            );
        }
        if start >= 0 && end > U64_END {
            return bad("the range must lie within the 64-bit unsigned integers");
        }
        Ok(KeyRange { start, end })
    }

    /// The first integer of the range.
    pub fn start(&self) -> i128 {
        self.start
    }

    /// One past the last integer of the range.
    pub fn end(&self) -> i128 {
        self.end
    }

    /// How many integers the range holds (at most 2⁶⁴).
    pub fn width(&self) -> u128 {
        (self.end - self.start) as u128
    }

    /// Whether the range's 8-byte keys are read as `i64` (it ends at or below 2⁶³), rather
    /// than as `u64`.
    pub fn keys_are_i64(&self) -> bool {
        self.end <= i128::from(i64::MAX) + 1
    }

    /// Whether `value` is in the range.
    pub fn contains(&self, value: i128) -> bool {
        (self.start..self.end).contains(&value)
    }

    /// The bit index of `value`, or [`Error::OutOfRange`].
    #[inline]
    pub(crate) fn index(&self, value: i128) -> Result<u64> {
        if self.contains(value) {
            Ok((value - self.start) as u64)
        } else {
            Err(Error::OutOfRange {
                value,
                range: self.to_string(),
            })
        }
    }

    /// The integer at bit index `index`.
    #[inline]
    pub(crate) fn value(&self, index: u64) -> i128 {
        self.start + i128::from(index)
    }

    /// The integer an 8-byte key stands for (see [`keys_are_i64`](Self::keys_are_i64)), or
    /// [`Error::NotAnInteger`] for a key of another length.
    pub fn decode_key(&self, bytes: &[u8]) -> Result<i128> {
        let b: [u8; 8] = bytes
            .try_into()
            .map_err(|_| Error::NotAnInteger { bytes: bytes.len() })?;
        Ok(if self.keys_are_i64() {
            i128::from(i64::from_le_bytes(b))
        } else {
            i128::from(u64::from_le_bytes(b))
        })
    }
}

impl fmt::Display for KeyRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl FromStr for KeyRange {
    type Err = Error;

    /// Parses `A..B` (B excluded) or `A..=B` (B included); the bounds are decimal integers,
    /// optionally with `_` separators or in the form `4e9`.
    fn from_str(s: &str) -> Result<KeyRange> {
        let bad = || {
            Error::InvalidParameters(format!(
                "'{s}' is not an integer range (write START..END, END excluded, or START..=END, e.g. 0..1000000000)"
            ))
        };
        let (a, b, inclusive) = match s.split_once("..=") {
            Some((a, b)) => (a, b, true),
            None => {
                let (a, b) = s.split_once("..").ok_or_else(bad)?;
                (a, b, false)
            }
        };
        let start = parse_bound(a).ok_or_else(bad)?;
        let end = parse_bound(b).ok_or_else(bad)? + i128::from(inclusive);
        KeyRange::new(start, end)
    }
}

/// A decimal integer, `1_000` or a whole `4e9`.
fn parse_bound(s: &str) -> Option<i128> {
    let t: String = s.trim().chars().filter(|&c| c != '_').collect();
    if let Ok(v) = t.parse::<i128>() {
        return Some(v);
    }
    let x: f64 = t.parse().ok()?;
    (x.is_finite() && x.fract() == 0.0 && x.abs() <= 2f64.powi(64)).then_some(x as i128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_refuse_what_they_cannot_hold() {
        assert_eq!("0..4e9".parse::<KeyRange>().unwrap().width(), 4_000_000_000);
        assert_eq!("1_000..2_000".parse::<KeyRange>().unwrap().start(), 1000);
        let full = format!("0..={}", u64::MAX);
        assert_eq!(full.parse::<KeyRange>().unwrap(), KeyRange::U64);
        assert!(KeyRange::new(-1, 1 << 63).is_ok());
        assert!(KeyRange::new(-1, (1 << 63) + 1).is_err());
        assert!(KeyRange::new(0, (1 << 64) + 1).is_err());
        assert!("5..5".parse::<KeyRange>().is_err());
        for bad in ["", "1-5", "a..b", "1.5..3", "..3"] {
            let e = bad.parse::<KeyRange>().unwrap_err().to_string();
            assert!(e.contains("not an integer range"), "{bad}: {e}");
        }
    }

    #[test]
    fn keys_are_read_by_the_ranges_signedness() {
        // -1 as an i64 key: below a range that fits the i64s.
        let small = KeyRange::new(0, 10).unwrap();
        assert_eq!(small.decode_key(&(-1i64).to_le_bytes()).unwrap(), -1);
        let signed = KeyRange::new(-10, 10).unwrap();
        assert_eq!(signed.decode_key(&(-3i64).to_le_bytes()).unwrap(), -3);
        assert_eq!(
            KeyRange::U64.decode_key(&u64::MAX.to_le_bytes()).unwrap(),
            u64::MAX as i128
        );
        assert!(matches!(
            signed.decode_key(b"abc"),
            Err(Error::NotAnInteger { bytes: 3 })
        ));
        let e = signed.index(10).unwrap_err().to_string();
        assert!(
            e.contains("integer 10 is outside the bitmap's range -10..10"),
            "{e}"
        );
        assert_eq!(signed.index(-10).unwrap(), 0);
        assert_eq!(signed.value(19), 9);
    }
}
