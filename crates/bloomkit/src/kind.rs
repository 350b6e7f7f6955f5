//! [`Kind`]: which kind of filter something is, by one name everywhere.
//!
//! Each kind has a stable name (what `info` prints, what `--kind` takes) and a stable code
//! (what the native format stores); both are fixed forever once a kind is released.
//!
//! ```
//! use bloomkit::{BloomFilter, Filter, Kind};
//! let f = BloomFilter::new(100, 0.01)?;
//! assert_eq!(f.kind(), Kind::Classic);
//! assert_eq!(f.kind().to_string(), "classic");
//! assert_eq!("counting".parse::<Kind>()?, Kind::Counting);
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::error::Error;
use std::fmt;
use std::str::FromStr;

/// A kind of filter.
///
/// `#[non_exhaustive]`: kinds will be added (each with a new name and code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// One bit array ([`BloomFilter`](crate::BloomFilter)).
    Classic,
    /// Counters instead of bits, so elements can be removed
    /// ([`CountingBloomFilter`](crate::CountingBloomFilter)).
    Counting,
    /// Layers added as it fills ([`ScalableBloomFilter`](crate::ScalableBloomFilter)).
    Scalable,
    /// Every probe of an element in one block
    /// ([`BlockedBloomFilter`](crate::BlockedBloomFilter)).
    Blocked,
    /// The last `N` insertions, age-partitioned
    /// ([`CountWindowFilter`](crate::window::CountWindowFilter)).
    CountWindow,
    /// The last span of time, in generations rotated by a clock
    /// ([`TimeWindowFilter`](crate::window::TimeWindowFilter)).
    TimeWindow,
    /// One bit per possible integer of a declared range: an exact set of integer keys
    /// ([`Bitmap`](crate::bitmap::Bitmap)).
    Bitmap,
    /// Two bits per possible integer (absent, seen once, seen more than once)
    /// ([`TwoBitMap`](crate::bitmap::TwoBitMap)).
    TwoBitMap,
    /// Fingerprints with small counters in d-left hash tables: removal and counting in about
    /// half a counting filter's memory ([`DLeftCountingFilter`](crate::DLeftCountingFilter)).
    DLeft,
}

impl Kind {
    /// Every kind, in order of their codes.
    pub const ALL: [Kind; 9] = [
        Kind::Classic,
        Kind::Counting,
        Kind::Scalable,
        Kind::Blocked,
        Kind::CountWindow,
        Kind::TimeWindow,
        Kind::Bitmap,
        Kind::TwoBitMap,
        Kind::DLeft,
    ];

    /// The stable name: `classic`, `counting`, `scalable`, `blocked`, `count-window`,
    /// `time-window`, `bitmap`, `two-bit-map`, `dleft`.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Classic => "classic",
            Kind::Counting => "counting",
            Kind::Scalable => "scalable",
            Kind::Blocked => "blocked",
            Kind::CountWindow => "count-window",
            Kind::TimeWindow => "time-window",
            Kind::Bitmap => "bitmap",
            Kind::TwoBitMap => "two-bit-map",
            Kind::DLeft => "dleft",
        }
    }

    /// The code of the kind in the native format's header (`docs/FORMAT.md`).
    pub const fn code(self) -> u16 {
        match self {
            Kind::Classic => 1,
            Kind::Counting => 2,
            Kind::Scalable => 3,
            Kind::Blocked => 4,
            Kind::CountWindow => 5,
            Kind::TimeWindow => 6,
            Kind::Bitmap => 7,
            Kind::TwoBitMap => 8,
            Kind::DLeft => 9,
        }
    }

    /// The kind with native code `code`, if there is one.
    pub fn from_code(code: u16) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.code() == code)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = Error;

    /// Parses a stable name, as [`Kind::name`] writes it.
    fn from_str(s: &str) -> Result<Kind, Error> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                Error::InvalidParameters(format!(
                    "unknown filter kind '{s}' (known: {})",
                    Kind::ALL.map(Kind::name).join(", ")
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_are_stable_and_round_trip() {
        let pinned = [
            (Kind::Classic, "classic", 1),
            (Kind::Counting, "counting", 2),
            (Kind::Scalable, "scalable", 3),
            (Kind::Blocked, "blocked", 4),
            (Kind::CountWindow, "count-window", 5),
            (Kind::TimeWindow, "time-window", 6),
            (Kind::Bitmap, "bitmap", 7),
            (Kind::TwoBitMap, "two-bit-map", 8),
            (Kind::DLeft, "dleft", 9),
        ];
        for (kind, name, code) in pinned {
            assert_eq!(kind.name(), name);
            assert_eq!(kind.to_string(), name);
            assert_eq!(kind.code(), code);
            assert_eq!(name.parse::<Kind>().unwrap(), kind);
            assert_eq!(Kind::from_code(code), Some(kind));
        }
        assert_eq!(Kind::from_code(0), None);
        assert_eq!(Kind::from_code(1000), None);
        let err = "Classic".parse::<Kind>().unwrap_err().to_string();
        assert!(err.contains("unknown filter kind 'Classic'"), "{err}");
    }
}
