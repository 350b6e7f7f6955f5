//! # bloomkit
//!
//! Bloom filters for Rust: a classic filter that is bit-exact with Guava, Go and Redisson when
//! asked, a cache-blocked filter, lock-free concurrent, counting and scalable filters, the
//! sizing math, and a checksummed file format (Redis-backed filters are in the crate
//! `bloomkit-redis`).
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
//! Every filter maps an element to positions through four stages, each in its own module:
//!
//! 1. `key.rs`: the element's stable bytes ([`Key`]), identical on every platform and version;
//! 2. `hash/`: 128 bits from those bytes ([`Hashing`]: XXH3, Murmur3, keyed SipHash, ...);
//! 3. `probe/`: positions from the hash: `k` bits anywhere ([`Scheme`]: bloomkit's, Guava's,
//!    Go's, Redisson's) or inside one block ([`BlockLayout`]; `probe/blocked/` with its SIMD
//!    kernels, `probe/register.rs` for the Redis layout);
//! 4. `storage/`: the bits, blocks or counters, plain or atomic.
//!
//! A [`Spec`] (classic kinds) or a [`BlockSpec`] (blocked kinds) joins stages 1–3 with a size;
//! [`math`] computes sizes. Each filter puts a spec on top of a storage; [`codec`] turns filters
//! into bytes and back.
//!
//! ## Where each concept lives
//!
//! | module | concept |
//! |---|---|
//! | `key.rs` | [`Key`]: stable element encoding (strings, integers, tuples, UTF-16 as Guava) |
//! | `hash/` | [`Hashing`]: the hash functions |
//! | `probe/` | [`Scheme`] and [`BlockLayout`]: from a hash to positions |
//! | `storage/` | bit vectors, blocks and counters, plain and atomic ([`CounterWidth`]) |
//! | `spec.rs` | [`Spec`], [`BlockSpec`], [`Preset`]: how a filter maps elements, and its size |
//! | `math.rs` | sizing: `m` and `k` for `(n, p)`, expected FPR, estimates, other libraries' sizing |
//! | `classic.rs` | [`BloomFilter`] |
//! | `blocked.rs` | [`BlockedBloomFilter`] |
//! | `concurrent.rs` | [`AtomicBloomFilter`], [`AtomicBlockedBloomFilter`]: the same filters through `&self` |
//! | `counting.rs` | [`CountingBloomFilter`] |
//! | `dleft.rs` | [`DLeftCountingFilter`]: the d-left counting filter |
//! | `scalable.rs` | [`ScalableBloomFilter`], [`ScalableConfig`] |
//! | `bitmap/` | [`bitmap::Bitmap`], [`bitmap::TwoBitMap`]: exact sets of integers of a range, dense or roaring; [`bitmap::MappedBitmap`] |
//! | `filter.rs`, `any.rs`, `kind.rs` | the [`Filter`] trait, [`AnyFilter`], [`Kind`]: any kind chosen at run time |
//! | `codec/` | bytes: [`codec::native`] (`docs/FORMAT.md`), [`codec::guava`], [`codec::go`] |
//! | `file.rs`, `sharing.rs`, `mmap.rs`, `path_watch.rs` | files: atomic saves and loads, locks for files shared by processes, filters used in place from a mapping, a cheap check that a shared file's path was not replaced |
//! | `clock.rs` | [`clock::Clock`]: where filters that forget read the time |
//! | `std_traits.rs` | the standard traits: `Extend`, `FromIterator`, `\|=`, `&=`, `Debug` |
//! | `window/` | [`window::CountWindowFilter`], [`window::TimeWindowFilter`]: filters that forget (the last `N` insertions, the last span of time) and their sizing |
//! | `error.rs` | [`Error`]: the one error type |
//!
//! ## One vocabulary
//!
//! Every filter, in memory, in a mapped file (`mmap`) or in Redis (crate `bloomkit-redis`),
//! names its operations the same way: `insert` and `contains` for one element, `remove` where
//! a kind can remove (counting filters), `insert_batch` and `contains_batch` for a slice of
//! elements, and `check_and_insert` for "seen before?" in one step. `insert` returns whether the
//! element was new. The Redis filters' methods are `async` and return a `Result`, because each
//! is a round trip to a server. Collections' conventions hold too: the kinds implement
//! [`Extend`] and [`FromIterator`], and `|=`/`&=` combine filters where union and intersection
//! exist ([`std_traits`] says how, which kinds cannot and why, and what the operators do with
//! incompatible filters).
//!
//! ## Cargo features
//!
//! | feature | default | adds |
//! |---|---|---|
//! | `go-json` | yes | [`codec::go`]'s JSON functions (serde_json, base64) |
//! | `redisson` | yes | `Hashing::Highway` and `Preset::Redisson` (HighwayHash) |
//! | `mmap` | yes | `mmap`: filters used in place from a mapped file (memmap2) |
//! | `serde` | no | `Serialize`/`Deserialize` for the in-memory filters |
//!
//! Without `redisson`, loading a native file hashed with HighwayHash fails with
//! [`Error::FeatureDisabled`].
//!
//! ## Stability
//!
//! The stable API is what the crate root exports and the public modules shown in this
//! documentation: [`bitmap`], [`blocked`], [`classic`], [`clock`], [`codec`], [`concurrent`], [`counting`], [`dleft`], [`file`](mod@file),
//! [`hash`], [`key`], [`math`], [`mmap`], [`path_watch`], [`scalable`], [`sharing`], [`std_traits`] and [`window`]. The modules `probe` and
//! `storage` are public only for bloomkit's own command-line tool, Redis crate, benchmarks and
//! tests; they are hidden from this documentation and may change in any release.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
// docs.rs builds with `--cfg docsrs`: mark the items each feature adds.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Stable modules: each holds one concept (see the table above).
pub mod bitmap;
pub mod blocked;
pub mod classic;
pub mod clock;
pub mod codec;
pub mod concurrent;
pub mod counting;
pub mod dleft;
pub mod file;
pub mod hash;
pub mod key;
pub mod math;
#[cfg(feature = "mmap")]
pub mod mmap;
#[cfg(feature = "mmap")]
mod mmap_sigbus;
pub mod path_watch;
pub mod scalable;
pub mod sharing;
pub mod std_traits;
pub mod window;

// Modules whose every public item is exported at the root.
mod any;
mod error;
mod filter;
mod kind;
mod spec;

// Internals shared with bloomkit-cli, bloomkit-redis, the benchmarks and the tests.
#[doc(hidden)]
pub mod probe;
#[doc(hidden)]
pub mod storage;

pub use any::AnyFilter;
pub use blocked::BlockedBloomFilter;
pub use classic::BloomFilter;
pub use concurrent::{AtomicBlockedBloomFilter, AtomicBloomFilter};
pub use counting::CountingBloomFilter;
pub use dleft::DLeftCountingFilter;
pub use error::{Error, Incompatibility, Result};
pub use filter::Filter;
pub use hash::Hashing;
pub use key::Key;
pub use kind::Kind;
pub use math::{Params, MAX_HASHES};
pub use probe::blocked::BlockLayout;
pub use probe::{Digest, Scheme};
pub use scalable::{ScalableBloomFilter, ScalableConfig};
pub use spec::{BlockSpec, Preset, Spec};
pub use storage::CounterWidth;

// Compile the crate README's examples as doctests so they cannot go stale. The README is the
// crate's own (published with it); `tests/readme.rs` checks that the workspace README shows
// the same example.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
