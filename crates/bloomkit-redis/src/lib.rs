//! # bloomkit-redis
//!
//! Bloom filters kept in plain Redis (no module) or Redis Cluster, shared by every process that
//! opens them by name.
//!
//! - [`RedisFilter`]: bloomkit's own layout. Every element's `k` bits sit in one 64-bit word
//!   ([`bloomkit::probe::register`]), so a check reads one word and an add ORs one mask
//!   atomically on the server; batches cost one command per touched segment. Large filters are
//!   split into segment keys whose hash tags spread them over a cluster.
//! - [`RedissonFilter`]: bit-exact with Redisson's `RBloomFilter` (Java), to share one filter
//!   between Rust and Java services.
//! - [`ScalableRedisFilter`]: grows by layers; concurrent clients agree on the layer list
//!   through a compare-and-set script on the metadata.
//! - [`CountingRedisFilter`]: 4-bit counters, so elements can be removed across processes.
//! - [`TimeWindowRedisFilter`]: remembers the last window of time (say 30 days) in generations
//!   whose keys Redis expires by itself.
//! - [`expire_filter`] (and `expire` on every filter): one time to live for a whole filter.
//! - [`blocking`]: the same filters for code without an async runtime.
//!
//! Elements are any [`bloomkit::Key`]; encoding, hashing and probing are the core library's.
//!
//! The methods use the core library's vocabulary: `insert` and `contains` for one element,
//! `insert_batch` and `contains_batch` for a slice (plus [`RedisFilter::insert_bulk`], the bulk
//! path for large batches). Unlike the in-memory filters they are `async`, take `&self` (the
//! filter is shared through the server) and return a [`Result`], since every call is a network
//! round trip that can fail.
//! The key layout, metadata fields and protocols are in `docs/REDIS.md`.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

/// `Debug` for a filter handle: its name and shape (the fields listed), not its connection.
macro_rules! debug_fields {
    ($ty:ident { $($field:ident),* }) => {
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    $(.field(stringify!($field), &self.$field))*
                    .finish()
            }
        }
    };
}

pub mod blocking;
pub mod conn;
pub mod counting;
pub mod error;
pub mod expire;
pub mod filter;
pub mod keys;
pub mod kinds;
mod meta;
#[doc(hidden)]
pub mod reads;
pub mod redisson;
pub mod scalable;
pub mod segments;
pub mod window;

pub use conn::{Connection, Options};
pub use counting::{CountingLayout, CountingRedisFilter, Inserted};
pub use error::{Error, Result};
pub use expire::expire_filter;
pub use filter::{delete_filter, stored_kind, FilterOptions, Info, RedisFilter, StoredKind};
pub use kinds::{purge_filter, Purge};
pub use redisson::RedissonFilter;
pub use scalable::{ScalableInfo, ScalableParams, ScalableRedisFilter};
pub use segments::AddMethod;
pub use window::{TimeWindowRedisFilter, WindowInfo, WindowParams};

// Compile the README's example so it cannot go stale.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
