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
use crate::math::Params;
use std::fmt;

/// Operations common to every bloomkit filter kind.
///
/// Elements are passed already encoded (see [`Key::to_key_bytes`] or [`Key::with_bytes`]);
/// the generic helpers [`Filter::insert_key`] and [`Filter::contains_key`] do the encoding.
pub trait Filter: Send + Sync + fmt::Debug {
    /// The kind's stable name: `classic`, `blocked`, `counting`, `scalable`, ...
    fn kind(&self) -> &'static str;

    /// Adds an element by its encoded bytes; returns whether it was new. Fails only for kinds
    /// that can be full (a scalable filter at its limit).
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool>;

    /// Removes one occurrence of an element by its encoded bytes. Only counting filters can;
    /// the others return [`Error::Unsupported`](crate::Error::Unsupported).
    fn remove_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        let _ = bytes;
        Err(crate::Error::Unsupported {
            operation: "remove",
            kind: self.kind(),
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

use crate::{BlockedBloomFilter, BloomFilter, CountingBloomFilter, ScalableBloomFilter};

/// Any in-memory filter kind, as read from a file whose kind is known only at run time.
///
/// ```
/// use bloomkit::{AnyFilter, BloomFilter, Filter};
/// let any = AnyFilter::from(BloomFilter::new(100, 0.01)?);
/// assert_eq!(any.kind(), "classic");
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AnyFilter {
    /// A classic filter.
    Classic(BloomFilter),
    /// A cache-blocked filter.
    Blocked(BlockedBloomFilter),
    /// A counting filter.
    Counting(CountingBloomFilter),
    /// A scalable filter.
    Scalable(ScalableBloomFilter),
}

impl From<BloomFilter> for AnyFilter {
    fn from(f: BloomFilter) -> Self {
        AnyFilter::Classic(f)
    }
}

impl From<BlockedBloomFilter> for AnyFilter {
    fn from(f: BlockedBloomFilter) -> Self {
        AnyFilter::Blocked(f)
    }
}

impl From<CountingBloomFilter> for AnyFilter {
    fn from(f: CountingBloomFilter) -> Self {
        AnyFilter::Counting(f)
    }
}

impl From<ScalableBloomFilter> for AnyFilter {
    fn from(f: ScalableBloomFilter) -> Self {
        AnyFilter::Scalable(f)
    }
}

impl AnyFilter {
    /// The filter as a trait object.
    pub fn as_filter(&self) -> &dyn Filter {
        match self {
            AnyFilter::Classic(f) => f,
            AnyFilter::Blocked(f) => f,
            AnyFilter::Counting(f) => f,
            AnyFilter::Scalable(f) => f,
        }
    }

    /// The filter as a mutable trait object.
    pub fn as_filter_mut(&mut self) -> &mut dyn Filter {
        match self {
            AnyFilter::Classic(f) => f,
            AnyFilter::Blocked(f) => f,
            AnyFilter::Counting(f) => f,
            AnyFilter::Scalable(f) => f,
        }
    }
}

impl Filter for AnyFilter {
    fn kind(&self) -> &'static str {
        self.as_filter().kind()
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        self.as_filter_mut().insert_encoded(bytes)
    }
    fn remove_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        self.as_filter_mut().remove_encoded(bytes)
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.as_filter().contains_encoded(bytes)
    }
    fn params(&self) -> Params {
        self.as_filter().params()
    }
    fn estimated_len(&self) -> f64 {
        self.as_filter().estimated_len()
    }
    fn estimated_fpp(&self) -> f64 {
        self.as_filter().estimated_fpp()
    }
    fn memory_bytes(&self) -> usize {
        self.as_filter().memory_bytes()
    }
    fn clear(&mut self) {
        self.as_filter_mut().clear()
    }
}
