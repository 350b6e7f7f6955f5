//! [`AnyFilter`]: one value for any in-memory filter kind, for code that learns the kind only
//! at run time (a file read from disk, a kind chosen on the command line).
//!
//! This is the one module that names every filter type; the filters themselves know only the
//! [`Filter`] trait.

use crate::bitmap::{Bitmap, TwoBitMap};
use crate::blocked::BlockedBloomFilter;
use crate::classic::BloomFilter;
use crate::counting::CountingBloomFilter;
use crate::dleft::DLeftCountingFilter;
use crate::error::Result;
use crate::filter::Filter;
use crate::kind::Kind;
use crate::math::Params;
use crate::scalable::ScalableBloomFilter;
use crate::window::{CountWindowFilter, TimeWindowFilter};

/// Any in-memory filter kind, as read from a file whose kind is known only at run time.
///
/// ```
/// use bloomkit::{AnyFilter, BloomFilter, Filter, Kind};
/// let any = AnyFilter::from(BloomFilter::new(100, 0.01)?);
/// assert_eq!(any.kind(), Kind::Classic);
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
    /// A count-window filter (the last `N` insertions).
    CountWindow(CountWindowFilter),
    /// A time-window filter (the last span of time).
    TimeWindow(TimeWindowFilter),
    /// A d-left counting filter.
    DLeft(DLeftCountingFilter),
    /// An exact set of integers of a range.
    Bitmap(Bitmap),
    /// Two bits per integer of a range: absent, once, more than once.
    TwoBitMap(TwoBitMap),
}

/// `From` each filter type for its variant.
macro_rules! from_filter {
    ($($ty:ident => $variant:ident),*) => {$(
        impl From<$ty> for AnyFilter {
            fn from(f: $ty) -> Self {
                AnyFilter::$variant(f)
            }
        }
    )*};
}

from_filter!(BloomFilter => Classic, BlockedBloomFilter => Blocked, CountingBloomFilter => Counting, ScalableBloomFilter => Scalable, CountWindowFilter => CountWindow, TimeWindowFilter => TimeWindow);
from_filter!(DLeftCountingFilter => DLeft);
from_filter!(Bitmap => Bitmap, TwoBitMap => TwoBitMap);

/// `$body` with `$f` bound to the filter inside `$any`, whatever its kind (each kind named once,
/// here).
macro_rules! with_inner {
    ($any:expr, $f:ident => $body:expr) => {
        match $any {
            AnyFilter::Classic($f) => $body,
            AnyFilter::Blocked($f) => $body,
            AnyFilter::Counting($f) => $body,
            AnyFilter::Scalable($f) => $body,
            AnyFilter::CountWindow($f) => $body,
            AnyFilter::TimeWindow($f) => $body,
            AnyFilter::DLeft($f) => $body,
            AnyFilter::Bitmap($f) => $body,
            AnyFilter::TwoBitMap($f) => $body,
        }
    };
}

impl AnyFilter {
    /// The filter as a trait object.
    pub fn as_filter(&self) -> &dyn Filter {
        with_inner!(self, f => f)
    }

    /// The filter as a mutable trait object.
    pub fn as_filter_mut(&mut self) -> &mut dyn Filter {
        with_inner!(self, f => f)
    }
}

impl Filter for AnyFilter {
    fn kind(&self) -> Kind {
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
