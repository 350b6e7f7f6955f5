//! The one error type of the library.
//!
//! Every fallible operation in bloomkit returns [`Error`]. Library code never panics on bad
//! parameters or bad input: it says what was wrong in a variant that a caller can match on.

use std::fmt;

/// A convenient alias for `Result<T, bloomkit::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in bloomkit.
///
/// The enum is `#[non_exhaustive]`: new kinds of failure (for example from new file formats)
/// may be added without a breaking change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The target false-positive probability is not a number in the open interval (0, 1).
    #[error("false-positive probability must be in the open interval (0, 1), got {0:?}")]
    InvalidFpp(f64),

    /// A filter must have at least one bit.
    #[error("a filter must have at least one bit (m = 0)")]
    ZeroBits,

    /// A filter must use at least one hash function.
    #[error("a filter must use at least one hash function (k = 0)")]
    ZeroHashes,

    /// The number of hash functions is beyond what any useful filter needs.
    #[error("{hashes} hash functions is more than the maximum of {max}")]
    TooManyHashes {
        /// The requested number of hash functions.
        hashes: u64,
        /// The largest number bloomkit accepts ([`crate::MAX_HASHES`]).
        max: u32,
    },

    /// The requested size does not fit this platform or the chosen format's limits.
    #[error("a filter of {} bits is too large: {limit}", bit_count(*.bits))]
    TooLarge {
        /// The number of bits that was asked for (saturated at `u64::MAX`).
        bits: u64,
        /// Which limit it exceeds.
        limit: &'static str,
    },

    /// The parameters are valid numbers but describe no usable filter
    /// (for example Guava's sizing rounding down to zero bits).
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),

    /// Memory for the filter could not be allocated.
    #[error("could not allocate {bytes} bytes for the filter")]
    Alloc {
        /// The size of the failed allocation.
        bytes: u64,
    },

    /// A counting filter refused to remove an element that cannot be in it (one of its
    /// counters is zero; in a d-left filter, its fingerprint is in none of its buckets).
    /// Nothing was changed.
    #[error("cannot remove an element that is not in the filter")]
    NotPresent,

    /// An integer outside the declared range of a bitmap. Nothing was changed (a batch with
    /// one such integer is refused whole).
    #[error(
        "integer {value} is outside the bitmap's range {range} (start inclusive, end exclusive)"
    )]
    OutOfRange {
        /// The integer.
        value: i128,
        /// The bitmap's range, as `start..end`.
        range: String,
    },

    /// A bitmap was asked to remove an integer it does not hold. Nothing was changed.
    #[error("integer {0} is not in the bitmap")]
    NotInBitmap(i128),

    /// A bitmap was given a key that is not an 8-byte integer (an `i64` or `u64` as
    /// [`Key`](crate::Key) encodes it).
    #[error("a bitmap holds integer keys only (8-byte i64 or u64), got a {bytes}-byte key")]
    NotAnInteger {
        /// The length of the key's encoding.
        bytes: usize,
    },

    /// A filter with limits (a scalable filter's maximum layers or capacity) is full.
    #[error("filter is full: {0}")]
    Full(String),

    /// A valid file of a kind that is not memory-mapped as a filter (only classic and blocked
    /// filters are; load the others into memory). `kind` is the file's kind's stable name.
    #[error("a {kind} file cannot be memory-mapped as a filter: only classic and blocked filters can (load it into memory instead{})", if *.kind == "bitmap" { "; a dense bitmap maps as bitmap::MappedBitmap" } else { "" })]
    NotMappable {
        /// The file's kind ([`Kind::name`](crate::Kind::name)).
        kind: &'static str,
    },

    /// The operation does not exist for this kind of filter (removing from a classic filter).
    #[error("a {kind} filter cannot {operation} elements")]
    Unsupported {
        /// What was asked.
        operation: &'static str,
        /// What was asked: a kind's stable name ([`Kind::name`](crate::Kind::name)), or a
        /// description such as `read-only mapped`.
        kind: &'static str,
    },

    /// Reading or writing a file failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, and to which file.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// Encoded input ended before the data its header announces.
    #[error("truncated {format} data: {what} needs {needed} bytes, {available} available")]
    Truncated {
        /// Which format was being read (`bloomkit`, `guava`, `go`, `go-json`).
        format: &'static str,
        /// Which part was being read.
        what: &'static str,
        /// Bytes the part needs.
        needed: u64,
        /// Bytes that were left.
        available: u64,
    },

    /// Encoded input is malformed or inconsistent.
    #[error("{format}: corrupt input: {reason}")]
    Corrupt {
        /// Which format was being read.
        format: &'static str,
        /// What is wrong with it.
        reason: String,
    },

    /// The input's format version (or Guava strategy ordinal) is not one this version of
    /// bloomkit knows. It is refused rather than misread.
    #[error("{format}: unsupported version {version} (this bloomkit reads {supported})")]
    UnsupportedVersion {
        /// Which format was being read.
        format: &'static str,
        /// The version found.
        version: u64,
        /// The versions this build reads.
        supported: &'static str,
    },

    /// The input names a filter kind, layout, probing scheme, hash function or key encoding by
    /// a code this version of bloomkit does not know (with a valid checksum): it was written
    /// by a newer version, which added it. It is refused rather than misread; a newer
    /// bloomkit reads it.
    #[error("{format}: {what}: written by a newer version of bloomkit than this one ({}); upgrade bloomkit to read it", env!("CARGO_PKG_VERSION"))]
    NewerVersion {
        /// Which format was being read.
        format: &'static str,
        /// What this version does not know, with its code (`unknown filter kind 10`).
        what: String,
    },

    /// The stored checksum does not match the data: the file is damaged.
    #[error("{format}: checksum mismatch (stored {stored:016x}, computed {computed:016x}): the data is damaged")]
    Checksum {
        /// Which format was being read.
        format: &'static str,
        /// The checksum in the file.
        stored: u64,
        /// The checksum of the data read.
        computed: u64,
    },

    /// A filter uses a keyed or custom hash and the matching key or hasher was not supplied.
    #[error("the filter was built with hashing {0}; supply the matching key or hasher to open it")]
    MissingKey(String),

    /// The input needs a part of bloomkit that this build left out (a cargo feature).
    #[error("this build of bloomkit lacks the feature `{feature}`, needed for {needed_for}")]
    FeatureDisabled {
        /// The cargo feature of the `bloomkit` crate to enable.
        feature: &'static str,
        /// What needs it.
        needed_for: &'static str,
    },

    /// A filter cannot be written in the requested foreign format.
    #[error("cannot write a {format} filter: {reason}")]
    NotRepresentable {
        /// The target format.
        format: &'static str,
        /// What about the filter does not fit.
        reason: String,
    },

    /// Two filters cannot be combined or compared because they map elements differently.
    #[error("incompatible filters: {0}")]
    Incompatible(Incompatibility),
}

/// Why two filters are incompatible (see [`Error::Incompatible`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Incompatibility {
    /// They have a different number of bits.
    Bits(u64, u64),
    /// They use a different number of hash functions.
    Hashes(u32, u32),
    /// They use a different probing scheme.
    Scheme(String, String),
    /// They use a different hash function or a different key for a keyed hash.
    Hashing(String, String),
    /// They are different kinds of filter.
    Kind(String, String),
    /// They are bitmaps of different integer ranges.
    Range(String, String),
    /// They place an element's bits differently inside its block (blocked filters).
    Layout(
        crate::probe::blocked::BlockLayout,
        crate::probe::blocked::BlockLayout,
    ),
}

impl fmt::Display for Incompatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Incompatibility::Bits(a, b) => write!(f, "{a} bits vs {b} bits"),
            Incompatibility::Hashes(a, b) => write!(f, "{a} hash functions vs {b}"),
            Incompatibility::Scheme(a, b) => write!(f, "probing scheme {a} vs {b}"),
            Incompatibility::Hashing(a, b) => write!(f, "hashing {a} vs {b}"),
            Incompatibility::Kind(a, b) => write!(f, "filter kind {a} vs {b}"),
            Incompatibility::Range(a, b) => write!(f, "integer range {a} vs {b}"),
            Incompatibility::Layout(a, b) => write!(f, "block layout {a} vs {b}"),
        }
    }
}

/// A bit count as [`Error::TooLarge`] shows it: a saturated count is "more than" the largest.
fn bit_count(bits: u64) -> String {
    if bits == u64::MAX {
        format!("more than {bits}")
    } else {
        bits.to_string()
    }
}
