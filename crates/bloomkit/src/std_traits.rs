//! The standard library's traits for the filters: [`Extend`], [`FromIterator`], `|=` and `&=`
//! ([`BitOrAssign`], [`BitAndAssign`]), and [`Debug`](fmt::Debug) for the public types whose
//! module does not derive it.
//!
//! # Collecting and extending
//!
//! The in-memory filter kinds [`BloomFilter`], [`BlockedBloomFilter`], [`AtomicBloomFilter`],
//! [`AtomicBlockedBloomFilter`], [`CountingBloomFilter`], [`ScalableBloomFilter`] and
//! [`CountWindowFilter`] implement both; [`TimeWindowFilter`] implements `Extend` only (it
//! needs a window length, which an iterator does not give), and
//! [`DLeftCountingFilter`] neither: its `insert` fails when all of
//! an element's buckets are full, which `extend` could not report, so call `insert` in a loop.
//! The exact integer sets [`Bitmap`](crate::bitmap::Bitmap) and
//! [`TwoBitMap`](crate::bitmap::TwoBitMap) have neither for the same reason: their `insert`
//! refuses an integer outside the declared range; `insert_batch` applies a whole slice or
//! nothing and reports the first integer out of range.
//!
//! - `extend` inserts each element as it comes (in batches of [`EXTEND_BATCH`] through
//!   `insert_batch` for the kinds that have one);
//! - `collect` builds a filter at [`DEFAULT_FPP`] (1 %). When the iterator reports its exact
//!   length (`size_hint` with equal bounds, as for slices, vectors, ranges and maps) the filter
//!   is sized for that many elements and filled as the iterator runs; otherwise the elements
//!   are first buffered and counted, then inserted. A [`ScalableBloomFilter`] never buffers: its
//!   first layer holds the iterator's lower bound (at least [`SCALABLE_INITIAL_CAPACITY`]) and
//!   it grows from there. A [`CountWindowFilter`] collected from `n` elements has a window of
//!   `n`: it remembers them all. Duplicates count towards the size, so the filter can only be larger
//!   than needed, never smaller. For any other false-positive rate or layout, create the filter
//!   and `extend` it.
//!
//! ```
//! use bloomkit::{BlockedBloomFilter, BloomFilter, ScalableBloomFilter};
//! let urls = ["https://example.com/", "https://example.org/"];
//! let f: BloomFilter = urls.iter().collect();                  // exact length: no buffering
//! assert!(f.contains("https://example.org/"));
//! let g: BlockedBloomFilter = (0..10_000u64).filter(|i| i % 3 == 0).collect(); // buffered
//! assert!(g.contains(&9_999u64));
//! let mut s: ScalableBloomFilter = (0..10u64).collect();
//! s.extend(10..100_000u64);                                    // grows past its first layer
//! assert!(s.contains(&99_999u64) && s.layers().len() > 1);
//! ```
//!
//! # `|=` and `&=`
//!
//! `a |= &b` is [`union`](BloomFilter::union) and `a &= &b` is
//! [`intersect`](BloomFilter::intersect), for the kinds that have them (not for a scalable
//! filter, whose layers two filters do not share). Those methods return an error when the two
//! filters map elements differently (size, hashing, probing or layout); an operator cannot
//! return one, and bloomkit's types do not encode the spec, so the compiler cannot rule the
//! case out. The operators must not panic either. So they keep each operation's guarantee,
//! "no false negative", in the only way left when the bits cannot be combined:
//!
//! - `a &= &b` on incompatible filters leaves `a` unchanged: everything in both is still in `a`;
//! - `a |= &b` on incompatible filters **saturates** `a`: every bit (or counter) is set, so it
//!   answers "maybe" to everything, the union included; [`estimated_fpp`](BloomFilter::estimated_fpp)
//!   then returns 1.
//!
//! Use the operators for filters built from one spec (shards of one job, copies of one filter);
//! use [`union`](BloomFilter::union) and [`intersect`](BloomFilter::intersect) when the filters
//! come from elsewhere and a mismatch must be reported.
//!
//! ```
//! use bloomkit::BloomFilter;
//! let mut a = BloomFilter::new(1000, 0.01)?;
//! let mut b = BloomFilter::new(1000, 0.01)?;
//! a.insert("x");
//! b.insert("y");
//! a |= &b;
//! assert!(a.contains("x") && a.contains("y"));
//! a &= &b;
//! assert!(a.contains("y") && !a.contains("x"));
//!
//! let other = BloomFilter::new(50, 0.2)?; // another size: incompatible
//! assert!(a.union(&other).is_err());      // the checked method says so
//! a |= &other;                            // the operator saturates instead
//! assert!(a.contains("anything") && a.estimated_fpp() == 1.0);
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::blocked::BlockedBloomFilter;
use crate::classic::{BloomFilter, DEFAULT_FPP};
use crate::concurrent::{AtomicBlockedBloomFilter, AtomicBloomFilter};
use crate::counting::CountingBloomFilter;
use crate::dleft::DLeftCountingFilter;
use crate::file::Content;
use crate::key::Key;
use crate::scalable::{Layer, ScalableBloomFilter};
use crate::spec::Spec;
use crate::storage::{AtomicBitVec, BitVec, Block, Counters};
use crate::window::{CountWindowFilter, TimeWindowFilter};
use std::fmt;
use std::ops::{BitAndAssign, BitOrAssign};

/// Elements per batch when a blocked filter is extended.
pub const EXTEND_BATCH: usize = 256;

/// The smallest first layer of a [`ScalableBloomFilter`] built by `collect`.
pub const SCALABLE_INITIAL_CAPACITY: u64 = 1024;

/// The elements of `iter` and how many there are: the iterator itself when its length is
/// exact, else a buffer.
enum Elements<I: Iterator> {
    Exact(I, u64),
    Buffered(Vec<I::Item>),
}

impl<I: Iterator> Elements<I> {
    fn of(iter: I) -> Self {
        match iter.size_hint() {
            (lo, Some(hi)) if lo == hi => Elements::Exact(iter, lo as u64),
            _ => Elements::buffer(iter),
        }
    }

    /// Buffers the elements, growing the buffer as they come (not trusting the size hint).
    fn buffer(iter: I) -> Self {
        let mut v = Vec::new();
        for x in iter {
            v.push(x);
        }
        Elements::Buffered(v)
    }

    /// Builds a filter for the elements with `make(capacity)` (falling back to buffering, then
    /// to the smallest filter, when the claimed length cannot be allocated) and fills it.
    fn build<F: Extend<I::Item>>(self, make: impl Fn(u64) -> Option<F>) -> F {
        let (mut filter, rest) = match self {
            Elements::Exact(iter, n) => match make(n.max(1)) {
                Some(f) => (f, Elements::Exact(iter, n)),
                // An iterator may claim more than memory holds (a lying `size_hint`, or
                // `0..u64::MAX`): count what it really yields instead.
                None => return Elements::buffer(iter).build(make),
            },
            Elements::Buffered(v) => {
                let n = v.len() as u64;
                let filter = make(n.max(1))
                    .or_else(|| make(1))
                    .expect("memory for a one-element filter");
                (filter, Elements::Buffered(v))
            }
        };
        match rest {
            Elements::Exact(iter, _) => filter.extend(iter),
            Elements::Buffered(v) => filter.extend(v),
        }
        filter
    }
}

/// `Extend` one element at a time and `FromIterator` through [`Elements`], for a kind whose
/// `insert` cannot fail; `$new(n)` makes an empty filter for `n` elements at [`DEFAULT_FPP`].
macro_rules! collect_one_by_one {
    ($name:ty, $new:expr) => {
        impl<K: Key> Extend<K> for $name {
            /// Inserts every element (see the [module docs](crate::std_traits)).
            fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
                for key in iter {
                    self.insert(&key);
                }
            }
        }

        impl<K: Key> FromIterator<K> for $name {
            /// A filter at [`DEFAULT_FPP`] sized for the elements (see the
            /// [module docs](crate::std_traits)).
            fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
                Elements::of(iter.into_iter()).build($new)
            }
        }
    };
}

/// `Extend` in batches through `insert_batch`.
macro_rules! extend_in_batches {
    ($name:ty) => {
        impl<K: Key> Extend<K> for $name {
            /// Inserts every element, [`EXTEND_BATCH`] at a time through
            /// [`insert_batch`](Self::insert_batch).
            fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
                let mut iter = iter.into_iter();
                let mut batch = Vec::with_capacity(EXTEND_BATCH.min(iter.size_hint().0.max(1)));
                loop {
                    batch.clear();
                    batch.extend(iter.by_ref().take(EXTEND_BATCH));
                    if batch.is_empty() {
                        break;
                    }
                    self.insert_batch(&batch);
                }
            }
        }
    };
}

/// `Extend` in batches, and `FromIterator` through [`Elements`] with `$name::new(n, fpp)`.
macro_rules! collect_in_batches {
    ($name:ty) => {
        extend_in_batches!($name);

        impl<K: Key> FromIterator<K> for $name {
            /// A filter in the default layout at [`DEFAULT_FPP`] sized for the elements (see
            /// the [module docs](crate::std_traits)).
            fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
                Elements::of(iter.into_iter()).build(|n| Self::new(n, DEFAULT_FPP).ok())
            }
        }
    };
}

collect_one_by_one!(BloomFilter, |n| BloomFilter::new(n, DEFAULT_FPP).ok());
collect_one_by_one!(AtomicBloomFilter, |n| AtomicBloomFilter::new(
    n,
    DEFAULT_FPP
)
.ok());
collect_one_by_one!(CountingBloomFilter, |n| CountingBloomFilter::new(
    n,
    DEFAULT_FPP
)
.ok());
collect_in_batches!(BlockedBloomFilter);
collect_in_batches!(AtomicBlockedBloomFilter);
// A count window collected from `n` elements remembers all `n`.
collect_in_batches!(CountWindowFilter);
// A time window needs a window length, which an iterator cannot give: `Extend` only.
extend_in_batches!(TimeWindowFilter);

impl<K: Key> Extend<K> for ScalableBloomFilter {
    /// Inserts every element, adding layers as needed. `Extend` cannot report an error, so when
    /// a limit ([`ScalableConfig::max_layers`](crate::ScalableConfig::max_layers),
    /// [`max_capacity`](crate::ScalableConfig::max_capacity)) or memory forbids a new layer,
    /// the rest go into the newest layer past its capacity: no element is lost, but the FPR
    /// bound no longer holds (see [`estimated_fpp`](ScalableBloomFilter::estimated_fpp)). Use
    /// [`insert`](ScalableBloomFilter::insert) to be told instead.
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        for key in iter {
            self.insert_or_overfill(&key);
        }
    }
}

impl<K: Key> FromIterator<K> for ScalableBloomFilter {
    /// A scalable filter at [`DEFAULT_FPP`] whose first layer holds the iterator's lower bound
    /// (at least [`SCALABLE_INITIAL_CAPACITY`]); it grows as needed, without buffering.
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let hint = (iter.size_hint().0 as u64).max(SCALABLE_INITIAL_CAPACITY);
        let mut filter = ScalableBloomFilter::new(hint, DEFAULT_FPP)
            .or_else(|_| ScalableBloomFilter::new(SCALABLE_INITIAL_CAPACITY, DEFAULT_FPP))
            .expect("memory for a small first layer");
        filter.extend(iter);
        filter
    }
}

/// Sets the first `bits` bits of `words` (which has exactly `ceil(bits / 64)` words) and clears
/// the rest of the last word.
fn fill_ones(words: &mut [u64], bits: u64) {
    words.fill(u64::MAX);
    if !bits.is_multiple_of(64) {
        if let Some(last) = words.last_mut() {
            *last = (1u64 << (bits % 64)) - 1;
        }
    }
}

/// Sets every bit of a classic filter in place (its words are reused, not copied).
fn saturate_classic(f: &mut BloomFilter) {
    let spec = f.spec().clone();
    let Ok(tiny) = BloomFilter::from_spec(Spec::with_bits(64, 1).expect("valid")) else {
        return;
    };
    let mut words = std::mem::replace(f, tiny).into_words();
    fill_ones(&mut words, spec.bits());
    *f = BloomFilter::from_words(spec, words).expect("the spec's own word count");
}

/// `|=` and `&=` for a bit-array filter; `$saturate` sets every bit of `&mut $name`.
macro_rules! set_operators {
    ($name:ty, $saturate:expr) => {
        impl BitOrAssign<&$name> for $name {
            /// [`union`](Self::union); on incompatible filters, sets every bit (see the
            /// [module docs](crate::std_traits)).
            fn bitor_assign(&mut self, other: &$name) {
                if self.union(other).is_err() {
                    let saturate: fn(&mut $name) = $saturate;
                    saturate(self);
                }
            }
        }

        impl BitAndAssign<&$name> for $name {
            /// [`intersect`](Self::intersect); on incompatible filters, leaves `self` unchanged
            /// (see the [module docs](crate::std_traits)).
            fn bitand_assign(&mut self, other: &$name) {
                let _ = self.intersect(other);
            }
        }
    };
}

set_operators!(BloomFilter, saturate_classic);
set_operators!(AtomicBloomFilter, |f| {
    let mut plain = std::mem::replace(f, tiny_atomic()).into_inner();
    saturate_classic(&mut plain);
    *f = AtomicBloomFilter::from(plain);
});
set_operators!(BlockedBloomFilter, saturate_blocked);
set_operators!(AtomicBlockedBloomFilter, |f| {
    let Ok(tiny) = BlockedBloomFilter::with_layout(1, f.layout(), f.hashing().clone()) else {
        return;
    };
    let mut plain = std::mem::replace(f, tiny.into()).into_inner();
    saturate_blocked(&mut plain);
    *f = plain.into();
});

fn tiny_atomic() -> AtomicBloomFilter {
    AtomicBloomFilter::with_params(64, 1).expect("a 64-bit filter")
}

/// Sets every bit of a blocked filter in place.
fn saturate_blocked(f: &mut BlockedBloomFilter) {
    let Ok(tiny) = BlockedBloomFilter::with_layout(1, f.layout(), f.hashing().clone()) else {
        return;
    };
    let (spec, mut blocks) = std::mem::replace(f, tiny).into_parts();
    blocks.fill(Block([u64::MAX; 8]));
    *f = BlockedBloomFilter::from_parts(spec, blocks);
}

impl BitOrAssign<&CountingBloomFilter> for CountingBloomFilter {
    /// [`union`](Self::union) (counters added, saturating); on incompatible filters, sets every
    /// counter to its maximum, where it stays (see the [module docs](crate::std_traits)).
    fn bitor_assign(&mut self, other: &CountingBloomFilter) {
        if self.union(other).is_err() {
            saturate_counting(self);
        }
    }
}

/// Sets every counter of a counting filter to its maximum.
fn saturate_counting(f: &mut CountingBloomFilter) {
    let spec = f.spec().clone();
    let (len, width) = (f.counters().len(), f.counters().width());
    let Ok(tiny) = CountingBloomFilter::from_spec(Spec::with_bits(1, 1).expect("valid"), width)
    else {
        return;
    };
    // Free the old counters before allocating the saturated ones.
    *f = tiny;
    let bits = len * u64::from(width.bits());
    let mut words = vec![0; bits.div_ceil(64) as usize];
    fill_ones(&mut words, bits);
    let counters =
        Counters::from_words(words, len, width).expect("words for exactly `len` counters");
    *f = CountingBloomFilter::from_parts(spec, counters).expect("counters of the spec's size");
}

/// `Debug` that shows a few accessors of a type (its size and state), not its contents.
macro_rules! debug_accessors {
    ($($ty:path { $($field:ident: $accessor:ident),* })*) => {$(
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    $(.field(stringify!($field), &self.$accessor()))*
                    .finish()
            }
        }
    )*};
}

// The length and the number of set bits, not the bits; the number and width of the counters,
// not their values; a layer's filter and fill; a d-left filter's shape and occupied cells.
debug_accessors! {
    BitVec { len: len, set_bits: count_ones }
    AtomicBitVec { len: len, set_bits: count_ones }
    Counters { len: len, width: width }
    Layer { filter: filter, capacity: capacity, inserted: inserted }
    DLeftCountingFilter { params: params, hashing: hashing, occupied: len }
}

impl fmt::Debug for Content<'_> {
    /// The byte count or the filter's summary, not the bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Content::Bytes(bytes) => f.debug_tuple("Bytes").field(&bytes.len()).finish(),
            Content::Filter(filter, design) => {
                f.debug_tuple("Filter").field(filter).field(design).finish()
            }
        }
    }
}

#[cfg(all(feature = "mmap", not(loom)))]
impl fmt::Debug for crate::mmap::MappedFilter {
    /// What is mapped and how, not the bits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedFilter")
            .field("kind", &self.kind())
            .field("params", &self.params())
            .field("writable", &self.is_writable())
            .field("file_len", &self.file_len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hashing, ScalableConfig};

    /// An iterator that hides its length (`size_hint` is `(0, None)`).
    fn unsized_iter(n: u64) -> impl Iterator<Item = u64> {
        (0..n).filter(|_| true)
    }

    #[test]
    fn collect_sizes_from_exact_length_or_buffer_and_keeps_every_element() {
        let exact: BloomFilter = (0..5_000u64).collect();
        let buffered: BloomFilter = unsized_iter(5_000).collect();
        assert_eq!(exact, buffered, "same size either way");
        assert_eq!(
            exact.spec(),
            BloomFilter::new(5_000, DEFAULT_FPP).unwrap().spec()
        );
        assert!((0..5_000u64).all(|i| exact.contains(&i)));

        let blocked: BlockedBloomFilter = unsized_iter(5_000).collect();
        assert_eq!(
            blocked.spec(),
            BlockedBloomFilter::new(5_000, DEFAULT_FPP).unwrap().spec()
        );
        assert!((0..5_000u64).all(|i| blocked.contains(&i)));
        let atomic: AtomicBlockedBloomFilter = (0..5_000u64).collect();
        assert!((0..5_000u64).all(|i| atomic.contains(&i)));
        let atomic: AtomicBloomFilter = (0..5_000u64).collect();
        assert!((0..5_000u64).all(|i| atomic.contains(&i)));
        let window: CountWindowFilter = unsized_iter(5_000).collect();
        assert!(
            (0..5_000u64).all(|i| window.contains(&i)),
            "a window of all of them"
        );
        let counting: CountingBloomFilter = ["a", "b", "a"].into_iter().collect();
        assert_eq!((counting.count("a"), counting.count("b")), (2, 1));

        let empty: BloomFilter = std::iter::empty::<u64>().collect();
        assert!(empty.is_empty() && !empty.contains(&1u64));
        let none = || std::iter::empty::<u64>();
        assert!(!none().collect::<BlockedBloomFilter>().contains(&1u64));
        assert!(!none().collect::<AtomicBloomFilter>().contains(&1u64));
        assert!(!none().collect::<AtomicBlockedBloomFilter>().contains(&1u64));
        assert!(!none().collect::<CountingBloomFilter>().contains(&1u64));
        assert!(!none().collect::<ScalableBloomFilter>().contains(&1u64));
        assert!(!none().collect::<CountWindowFilter>().contains(&1u64));
    }

    #[test]
    fn collect_meets_the_default_fpr() {
        // 20,000 elements at 1 %: 100,000 absent queries expect 1,000 false positives
        // (standard deviation about 31); 1,500 is more than 15 sigma above.
        let f: BlockedBloomFilter = unsized_iter(20_000).collect();
        let fp = (1_000_000..1_100_000u64).filter(|i| f.contains(i)).count();
        assert!(fp < 1_500, "{fp} false positives in 100,000");
    }

    #[test]
    fn a_lying_size_hint_cannot_allocate_beyond_the_input() {
        /// Claims `u64::MAX` elements and yields three.
        struct Liar(u64);
        impl Iterator for Liar {
            type Item = u64;
            fn next(&mut self) -> Option<u64> {
                (self.0 < 3).then(|| {
                    self.0 += 1;
                    self.0
                })
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                (usize::MAX, Some(usize::MAX))
            }
        }
        let f: BloomFilter = Liar(0).collect();
        assert!(f.contains(&1u64) && f.contains(&3u64));
        assert_eq!(f.spec(), BloomFilter::new(3, DEFAULT_FPP).unwrap().spec());
    }

    #[test]
    fn extend_inserts_into_every_kind_and_scalable_never_loses_one() {
        let mut blocked = BlockedBloomFilter::new(10_000, 0.01).unwrap();
        blocked.extend(unsized_iter(1_000));
        assert!((0..1_000u64).all(|i| blocked.contains(&i)));

        let clock = std::sync::Arc::new(crate::clock::ManualClock::new(0));
        let mut timed = TimeWindowFilter::new(std::time::Duration::from_secs(60), 4, 1_000, 0.01)
            .unwrap()
            .with_clock(clock);
        timed.extend(unsized_iter(1_000));
        assert!((0..1_000u64).all(|i| timed.contains(&i)));

        let mut config = ScalableConfig::new(100, 0.01);
        config.max_layers = Some(2);
        let mut s = ScalableBloomFilter::with_config(config).unwrap();
        s.extend(0..1_000u64);
        assert_eq!(s.layers().len(), 2, "the limit holds");
        assert!((0..1_000u64).all(|i| s.contains(&i)), "no element is lost");
        let fresh = (1_000u64..).find(|i| !s.contains(i)).unwrap();
        assert!(s.insert(&fresh).is_err(), "insert still reports the limit");
    }

    #[test]
    fn operators_combine_compatible_filters() {
        let spec = BlockedBloomFilter::new(1_000, 0.01).unwrap();
        let (mut a, mut b) = (spec.clone(), spec);
        a.extend(0..100u64);
        b.extend(50..150u64);
        let mut union = a.clone();
        union |= &b;
        assert!((0..150u64).all(|i| union.contains(&i)));
        let mut both = a.clone();
        both &= &b;
        assert!((50..100u64).all(|i| both.contains(&i)));
        assert!(both.count_ones() < a.count_ones());

        let mut c = CountingBloomFilter::new(1_000, 0.01).unwrap();
        let mut d = c.clone();
        c.insert("x");
        d.insert("x");
        c |= &d;
        assert_eq!(c.count("x"), 2);
    }

    #[test]
    fn operators_on_incompatible_filters_keep_the_guarantee_without_panicking() {
        let mut a: BloomFilter = (0..100u64).collect();
        let before = a.clone();
        let other = BloomFilter::new(10, 0.3).unwrap();
        a &= &other;
        assert_eq!(a, before, "&= leaves it unchanged");
        a |= &other;
        assert_eq!(a.count_ones(), a.bits(), "|= saturates");
        assert_eq!(a.spec(), before.spec());
        assert_eq!(a.estimated_fpp(), 1.0);

        let mut at = AtomicBloomFilter::new(100, 0.01).unwrap();
        at |= &AtomicBloomFilter::new(100, 0.2).unwrap();
        assert_eq!(at.count_ones(), at.bits());

        let layout = BlockedBloomFilter::new(100, 0.01).unwrap().layout();
        let mut bl = BlockedBloomFilter::with_layout(4, layout, Hashing::Xxh3).unwrap();
        bl |= &BlockedBloomFilter::with_layout(4, layout, Hashing::Murmur3).unwrap();
        assert_eq!(bl.count_ones(), bl.bits());
        assert_eq!(bl.hashing(), &Hashing::Xxh3);
        let mut abl: AtomicBlockedBloomFilter = bl.clone().into();
        abl.clear();
        abl |= &AtomicBlockedBloomFilter::with_layout(5, layout, Hashing::Xxh3).unwrap();
        assert_eq!(abl.count_ones(), abl.bits());

        let mut c = CountingBloomFilter::new(100, 0.01).unwrap();
        c |= &CountingBloomFilter::new(200, 0.01).unwrap();
        assert!(c.contains("anything"));
        c.remove("anything").unwrap();
        assert!(c.contains("anything"), "saturated counters stay");
    }

    #[test]
    fn debug_shows_summaries_not_contents() {
        let f = BloomFilter::new(1_000_000, 0.01).unwrap();
        let shown = format!("{:?}", f.as_bitvec());
        assert_eq!(
            shown,
            format!("BitVec {{ len: {}, set_bits: 0 }}", f.bits())
        );
        let atomic = AtomicBitVec::zeros(1 << 20).unwrap();
        atomic.set(5);
        assert_eq!(
            format!("{atomic:?}"),
            "AtomicBitVec { len: 1048576, set_bits: 1 }"
        );
        let s = ScalableBloomFilter::new(100, 0.01).unwrap();
        assert!(format!("{:?}", s.layers()[0]).starts_with("Layer"));
        let bytes = [0u8; 4096];
        assert_eq!(format!("{:?}", Content::Bytes(&bytes)), "Bytes(4096)");
    }
}
