//! # bloomkit
//!
//! Bloom filters for Rust: a classic filter that is bit-exact with Guava and Go when asked,
//! the sizing math, and (in other modules and crates) faster, concurrent, counting, scalable,
//! persistent and Redis-backed variants.
//!
//! A Bloom filter answers "definitely not in the set" or "probably in the set", using far less
//! memory than the set: about 9.6 bits per element at a 1% false-positive rate, whatever the
//! elements' size.
//!
//! ```
//! use bloomkit::BloomFilter;
//! let mut filter = BloomFilter::new(10_000, 0.01)?;
//! filter.insert("alice@example.com");
//! assert!(filter.contains("alice@example.com"));
//! assert!(!filter.contains("bob@example.com"));
//! # Ok::<(), bloomkit::Error>(())
//! ```
//!
//! ## The pipeline
//!
//! Every filter maps an element to bit positions through four stages, each in its own module:
//!
//! 1. [`key`]: the element's stable bytes ([`Key`]), identical on every platform and version;
//! 2. [`hash`]: 128 bits from those bytes ([`Hashing`]: XXH3, Murmur3, keyed SipHash, ...);
//! 3. [`probe`]: `k` positions from the hash ([`Scheme`]: bloomkit's, Guava's, Go's, ...);
//! 4. [`storage`]: the bits themselves.
//!
//! A [`Spec`] joins stages 1–3 with the size; [`math`] computes sizes. Filters such as
//! [`BloomFilter`] put a spec on top of a storage.

#![warn(missing_docs)]

pub mod any;
pub mod blocked;
pub mod classic;
pub mod codec;
pub mod concurrent;
pub mod counting;
pub mod error;
pub mod file;
pub mod filter;
pub mod hash;
pub mod key;
pub mod kind;
pub mod math;
pub mod mmap;
pub mod probe;
pub mod scalable;
pub mod sharing;
pub mod spec;
pub mod storage;

pub use any::AnyFilter;
pub use blocked::BlockedBloomFilter;
pub use classic::BloomFilter;
pub use concurrent::{AtomicBlockedBloomFilter, AtomicBloomFilter};
pub use counting::CountingBloomFilter;
pub use error::{Error, Incompatibility, Result};
pub use filter::Filter;
pub use hash::Hashing;
pub use key::Key;
pub use kind::Kind;
pub use math::{Params, MAX_HASHES};
pub use probe::{Digest, Scheme};
pub use scalable::{ScalableBloomFilter, ScalableConfig};
pub use spec::{BlockSpec, Preset, Spec};

// Compile README's examples as doctests so they cannot go stale.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
