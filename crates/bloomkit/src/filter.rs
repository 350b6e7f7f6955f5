//! The [`Filter`] trait: what every kind of filter can do, behind one object-safe interface.
//!
//! Each filter type also has richer inherent methods (generic over [`Key`]); the trait is for
//! code that must work with any kind chosen at run time, such as the command-line tool.
//!
//! ```
//! use bloomkit::{BloomFilter, Filter, Key};
//! let mut filters: Vec<Box<dyn Filter>> = vec![Box::new(BloomFilter::new(100, 0.01)?)];
//! for f in &mut filters {
//!     f.insert_encoded(&"x".to_key_bytes())?;
//!     assert!(f.contains_encoded(b"x"));
//! }
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::error::Result;
use crate::key::Key;
use crate::kind::Kind;
use crate::math::Params;
use std::fmt;

/// Inside `impl Filter for $ty`: `estimated_fpp`, `memory_bytes` and `clear`, answered by the
/// type's inherent methods of the same names (which every filter has).
macro_rules! inherent_filter_methods {
    ($ty:ty) => {
        fn estimated_fpp(&self) -> f64 {
            <$ty>::estimated_fpp(self)
        }

        fn memory_bytes(&self) -> usize {
            <$ty>::memory_bytes(self)
        }

        fn clear(&mut self) {
            <$ty>::clear(self)
        }
    };
}
pub(crate) use inherent_filter_methods;

/// Operations common to every bloomkit filter kind.
///
/// Elements are passed already encoded (see [`Key::to_key_bytes`] or [`Key::with_bytes`]);
/// the generic helpers [`Filter::insert_key`] and [`Filter::contains_key`] do the encoding.
pub trait Filter: Send + Sync + fmt::Debug {
    /// The kind of filter (its stable name is [`Kind::name`]).
    fn kind(&self) -> Kind;

    /// Adds an element by its encoded bytes; returns whether it was new. Fails only for kinds
    /// that can be full (a scalable filter at its limit).
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool>;

    /// Removes one occurrence of an element by its encoded bytes. Only counting filters (not
    /// minimal-increase ones) and d-left filters can; the others return [`Error::Unsupported`](crate::Error::Unsupported).
    fn remove_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        let _ = bytes;
        Err(crate::Error::Unsupported {
            operation: "remove",
            kind: self.kind().name(),
        })
    }

    /// Whether an element (by its encoded bytes) may be present.
    fn contains_encoded(&self, bytes: &[u8]) -> bool;

    /// Bits and hash functions (for layered kinds, those of the newest layer).
    fn params(&self) -> Params;

    /// Estimated number of distinct elements added.
    fn estimated_len(&self) -> f64;

    /// Estimated false-positive probability given the current contents.
    fn estimated_fpp(&self) -> f64;

    /// Bytes of memory held by the filter's bits or counters.
    fn memory_bytes(&self) -> usize;

    /// Removes every element.
    fn clear(&mut self);

    /// Encodes and adds an element.
    fn insert_key<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool>
    where
        Self: Sized,
    {
        key.with_bytes(|b| self.insert_encoded(b))
    }

    /// Encodes and tests an element.
    fn contains_key<K: Key + ?Sized>(&self, key: &K) -> bool
    where
        Self: Sized,
    {
        key.with_bytes(|b| self.contains_encoded(b))
    }
}
