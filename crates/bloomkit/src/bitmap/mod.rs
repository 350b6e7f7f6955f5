//! Exact sets of integers: [`Bitmap`] (one bit per possible integer of a declared
//! [`KeyRange`]) and [`TwoBitMap`] (two bits per integer: absent, seen once, seen more than
//! once).
//!
//! A Bloom filter needs about 9.6 bits per element at 1% false positives, whatever the keys.
//! When the keys are integers in a known range (user ids, phone numbers, order numbers), one
//! bit per *possible* key answers exactly, with no false positive, and is smaller whenever the
//! range is less than about ten times the number of keys. A bitmap also sorts: its integers
//! come out in ascending order.
//!
//! Each comes in two forms ([`BitmapForm`]), chosen from the range and the expected number of
//! integers: a plain bit array (the `storage/` [`BitVec`](crate::storage::BitVec)) when the
//! integers are dense in their range, roaring containers (the `roaring` crate's 64-bit map)
//! when they are sparse, so that memory follows the integers present. `docs/BITMAPS.md` says
//! when a bitmap beats a Bloom filter.
//!
//! ```
//! use bloomkit::bitmap::{Bitmap, BitmapForm, KeyRange};
//! let mut ids = Bitmap::new(KeyRange::new(0, 1_000_000)?, 500_000)?;
//! assert_eq!(ids.form(), BitmapForm::Dense);
//! assert!(ids.insert(42u32)?);
//! assert!(!ids.insert(42u32)?);
//! ids.insert_batch(&[7u64, 999_999, 7])?;
//! assert!(ids.insert(1_000_000u32).is_err()); // outside the range: refused
//! assert_eq!(ids.iter().collect::<Vec<_>>(), [7, 42, 999_999]);
//! assert_eq!(ids.rank(42), 2);
//! # Ok::<(), bloomkit::Error>(())
//! ```

/// The [`Filter`] methods the bitmap kinds share: `$planes` bit planes over the range, an
/// exact count, no false positives, and the type's own `memory_bytes` and `clear`.
macro_rules! exact_filter_methods {
    ($ty:ident, $planes:expr) => {
        fn params(&self) -> Params {
            bitmap_params(self.range, $planes)
        }

        fn estimated_len(&self) -> f64 {
            self.len() as f64
        }

        /// Zero: exact.
        fn estimated_fpp(&self) -> f64 {
            0.0
        }

        fn memory_bytes(&self) -> usize {
            $ty::memory_bytes(self)
        }

        fn clear(&mut self) {
            $ty::clear(self)
        }
    };
}

#[cfg(feature = "mmap")]
mod mapped;
mod range;
mod store;
mod two_bit;

#[cfg(all(feature = "mmap", not(loom)))]
pub use mapped::MappedBitmap;
pub use range::KeyRange;
pub use two_bit::{Seen, TwoBitMap};

pub(crate) use store::Store;

use crate::error::{Error, Incompatibility, Result};
use crate::filter::Filter;
use crate::kind::Kind;
use crate::math::{Params, MAX_BITS};
use std::fmt;

/// Ranges at most this wide are always dense (8 KiB of bits: a single roaring container
/// would take as much).
const ALWAYS_DENSE_WIDTH: u128 = 1 << 16;

/// How a bitmap keeps its bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitmapForm {
    /// One bit per integer of the range: `width / 8` bytes whatever the contents; the fastest,
    /// and the form that can be memory-mapped ([`MappedBitmap`]).
    Dense,
    /// Roaring containers (arrays of 16-bit offsets while sparse, 8 KiB bit arrays while
    /// dense, per 2¹⁶ integers): about 2 bytes per integer while sparse, never much more
    /// than the dense form.
    Roaring,
}

impl BitmapForm {
    /// The form for about `expected` integers in `range`: dense when they are at least one
    /// in 16 of the range's integers (then the dense form is no larger than roaring's 2
    /// bytes per integer) or the range is at most 2¹⁶ wide, roaring otherwise (and for
    /// ranges too wide for one bit array).
    pub fn choose(range: KeyRange, expected: u64) -> BitmapForm {
        let width = range.width();
        if width > u128::from(MAX_BITS) {
            BitmapForm::Roaring
        } else if width <= ALWAYS_DENSE_WIDTH || u128::from(expected) * 16 >= width {
            BitmapForm::Dense
        } else {
            BitmapForm::Roaring
        }
    }

    /// `dense` or `roaring`.
    pub fn name(self) -> &'static str {
        match self {
            BitmapForm::Dense => "dense",
            BitmapForm::Roaring => "roaring",
        }
    }

    /// Bytes of a dense bitmap of `range` (`None` if it is too wide for one bit array).
    pub fn dense_bytes(range: KeyRange) -> Option<u64> {
        let width = range.width();
        (width <= u128::from(MAX_BITS)).then(|| (width as u64).div_ceil(64) * 8)
    }

    /// Estimated bytes of a roaring bitmap of `count` integers spread evenly over `range`:
    /// per 2¹⁶ integers, an array of 2-byte offsets up to 4096 of them, an 8 KiB bit array
    /// beyond, plus the container headers.
    pub fn roaring_bytes(range: KeyRange, count: u64) -> u64 {
        let containers = range
            .width()
            .div_ceil(1 << 16)
            .min(u128::from(count.max(1))) as u64;
        let per = count.div_ceil(containers.max(1));
        containers * (per.min(4096) * 2 + 8) + 16
    }
}

impl fmt::Display for BitmapForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The width of a range as a bit count of a store (ranges wider than `u64::MAX` are roaring,
/// whose stores ignore the width).
fn store_width(range: KeyRange) -> u64 {
    u64::try_from(range.width()).unwrap_or(u64::MAX)
}

/// An exact set of the integers of a [`KeyRange`]: one bit per possible integer (see the
/// module docs).
///
/// Integers are given and returned as `i128` (any `i64` and any `u64`); one outside the range
/// is an [`Error::OutOfRange`] and changes nothing. Bitmaps are equal when they hold the same
/// integers of the same range, whatever their forms.
#[derive(Clone, PartialEq)]
pub struct Bitmap {
    range: KeyRange,
    store: Store,
}

impl fmt::Debug for Bitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bitmap({}, {:?})", self.range, self.store)
    }
}

impl Bitmap {
    /// An empty bitmap of `range`, in the form [`BitmapForm::choose`] picks for `expected`
    /// integers.
    pub fn new(range: KeyRange, expected: u64) -> Result<Bitmap> {
        Bitmap::with_form(range, BitmapForm::choose(range, expected))
    }

    /// An empty bitmap of `range` in `form` (a dense one allocates its `width / 8` bytes now).
    pub fn with_form(range: KeyRange, form: BitmapForm) -> Result<Bitmap> {
        if form == BitmapForm::Dense && BitmapForm::dense_bytes(range).is_none() {
            return Err(Error::TooLarge {
                bits: store_width(range),
                limit:
                    "a dense bitmap needs one bit per integer of its range; use the roaring form",
            });
        }
        Ok(Bitmap {
            range,
            store: Store::new(form, store_width(range))?,
        })
    }

    /// A bitmap of `range` over a store (whose indices the caller checked).
    pub(crate) fn from_store(range: KeyRange, store: Store) -> Bitmap {
        Bitmap { range, store }
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The integers it can hold.
    pub fn range(&self) -> KeyRange {
        self.range
    }

    /// How it keeps its bits.
    pub fn form(&self) -> BitmapForm {
        self.store.form()
    }

    /// The same integers in `form`.
    pub fn to_form(&self, form: BitmapForm) -> Result<Bitmap> {
        if form == BitmapForm::Dense && BitmapForm::dense_bytes(self.range).is_none() {
            return Bitmap::with_form(self.range, form);
        }
        Ok(Bitmap {
            range: self.range,
            store: self.store.to_form(form, store_width(self.range))?,
        })
    }

    /// Adds an integer; returns whether it was new.
    #[inline]
    pub fn insert(&mut self, value: impl Into<i128>) -> Result<bool> {
        let i = self.range.index(value.into())?;
        Ok(self.store.insert(i))
    }

    /// Adds every integer of `values`; returns how many were new. If any is outside the
    /// range, none is added.
    pub fn insert_batch<V: Copy + Into<i128>>(&mut self, values: &[V]) -> Result<u64> {
        for &v in values {
            self.range.index(v.into())?;
        }
        let mut new = 0;
        for &v in values {
            new += u64::from(self.store.insert(self.range.value_index(v.into())));
        }
        Ok(new)
    }

    /// Adds integers given in ascending order (repeats allowed); returns how many were new.
    /// The fast way to add many integers to a roaring bitmap: each container they fall in is
    /// merged once per call. If any is outside the range, or the values are not ascending,
    /// none is added.
    pub fn insert_sorted<V: Copy + Into<i128>>(&mut self, values: &[V]) -> Result<u64> {
        check_sorted(self.range, values)?;
        let before = self.len();
        self.store
            .insert_sorted(distinct_indices(self.range, values));
        Ok(self.len() - before)
    }

    /// Whether the integer is present (`false` outside the range).
    #[inline]
    pub fn contains(&self, value: impl Into<i128>) -> bool {
        self.range
            .index(value.into())
            .is_ok_and(|i| self.store.contains(i))
    }

    /// Removes an integer; returns whether it was present.
    pub fn remove(&mut self, value: impl Into<i128>) -> Result<bool> {
        let i = self.range.index(value.into())?;
        Ok(self.store.remove(i))
    }

    /// The exact number of integers present.
    pub fn len(&self) -> u64 {
        self.store.len()
    }

    /// Whether no integer is present.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many integers present are `<= value`.
    pub fn rank(&self, value: impl Into<i128>) -> u64 {
        let v = value.into();
        if v < self.range.start() {
            0
        } else if v >= self.range.end() {
            self.len()
        } else {
            self.store.rank(self.range.value_index(v))
        }
    }

    /// The integers present, in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = i128> + '_ {
        self.store.iter().map(|i| self.range.value(i))
    }

    /// Removes every integer.
    pub fn clear(&mut self) {
        self.store.clear();
    }

    /// Bytes of memory held by its bits (roaring: its containers' serialized size, close to
    /// their heap use).
    pub fn memory_bytes(&self) -> usize {
        self.store.memory_bytes()
    }

    fn check_compatible(&self, other: &Bitmap) -> Result<()> {
        if self.range != other.range {
            return Err(Error::Incompatible(Incompatibility::Range(
                self.range.to_string(),
                other.range.to_string(),
            )));
        }
        Ok(())
    }

    /// Adds every integer of `other` (which must have the same range; the forms may differ).
    pub fn union_with(&mut self, other: &Bitmap) -> Result<()> {
        self.check_compatible(other)?;
        self.store.union_with(&other.store);
        Ok(())
    }

    /// Keeps only the integers also in `other` (same range).
    pub fn intersect_with(&mut self, other: &Bitmap) -> Result<()> {
        self.check_compatible(other)?;
        self.store.intersect_with(&other.store);
        Ok(())
    }

    /// Removes every integer of `other` (same range).
    pub fn difference_with(&mut self, other: &Bitmap) -> Result<()> {
        self.check_compatible(other)?;
        self.store.difference_with(&other.store);
        Ok(())
    }
}

/// Checks that `values` are ascending and inside `range` (so the first and last are).
fn check_sorted<V: Copy + Into<i128>>(range: KeyRange, values: &[V]) -> Result<()> {
    if let (Some(&first), Some(&last)) = (values.first(), values.last()) {
        range.index(first.into())?;
        range.index(last.into())?;
    }
    if values.windows(2).any(|w| w[0].into() > w[1].into()) {
        return Err(Error::InvalidParameters(
            "a sorted insert needs its integers in ascending order".into(),
        ));
    }
    Ok(())
}

/// The indices of ascending `values` (checked to be in `range`), each once.
fn distinct_indices<V: Copy + Into<i128>>(
    range: KeyRange,
    values: &[V],
) -> impl Iterator<Item = u64> + '_ {
    let mut last = None;
    values.iter().filter_map(move |&v| {
        let i = range.value_index(v.into());
        (last.replace(i) != Some(i)).then_some(i)
    })
}

impl KeyRange {
    /// The index of a value already checked to be in the range.
    #[inline]
    fn value_index(&self, value: i128) -> u64 {
        (value - self.start()) as u64
    }
}

/// What the [`Filter`] trait reports of a bitmap kind: the range's width as its bits (or the
/// dense array's size), no hash functions.
fn bitmap_params(range: KeyRange, planes: u64) -> Params {
    Params {
        bits: store_width(range).saturating_mul(planes),
        hashes: 0,
    }
}

impl Filter for Bitmap {
    fn kind(&self) -> Kind {
        Kind::Bitmap
    }

    /// Adds an 8-byte integer key ([`Error::NotAnInteger`] otherwise).
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        let v = self.range.decode_key(bytes)?;
        self.insert(v)
    }

    /// Removes an integer key: [`Error::NotInBitmap`] if it is absent.
    fn remove_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        let v = self.range.decode_key(bytes)?;
        if self.remove(v)? {
            Ok(())
        } else {
            Err(Error::NotInBitmap(v))
        }
    }

    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.range.decode_key(bytes).is_ok_and(|v| self.contains(v))
    }

    exact_filter_methods!(Bitmap, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(range: KeyRange) -> [Bitmap; 2] {
        [
            Bitmap::with_form(range, BitmapForm::Dense).unwrap(),
            Bitmap::with_form(range, BitmapForm::Roaring).unwrap(),
        ]
    }

    #[test]
    fn bitmaps_are_equal_by_range_and_integers_whatever_their_forms() {
        let range = KeyRange::new(0, 100_000).unwrap();
        let [mut dense, mut roaring] = both(range);
        assert!(dense == roaring);
        for v in [3u32, 64, 99_999] {
            dense.insert(v).unwrap();
            roaring.insert(v).unwrap();
        }
        assert!(dense == roaring);
        assert!(roaring == dense, "symmetric across forms");
        assert!(dense == dense.clone());
        roaring.insert(7u32).unwrap();
        assert!(dense != roaring);
        dense.insert(8u32).unwrap();
        assert!(dense != roaring, "same length, other integers");
        let [other_range, _] = both(KeyRange::new(0, 100_001).unwrap());
        assert!(other_range != Bitmap::with_form(range, BitmapForm::Dense).unwrap());

        let mut a = TwoBitMap::with_form(range, BitmapForm::Dense).unwrap();
        let mut b = TwoBitMap::with_form(range, BitmapForm::Roaring).unwrap();
        for v in [5u32, 9, 5] {
            a.insert(v).unwrap();
            b.insert(v).unwrap();
        }
        assert!(a == b);
        b.insert(9u32).unwrap();
        assert!(a != b, "9 seen twice in one, once in the other");
    }

    #[test]
    fn both_forms_behave_as_a_sorted_set() {
        let range = KeyRange::new(-1000, 100_000).unwrap();
        let values = [5i64, -1000, 99_999, 5, 64, 63, -1, 0, 4096];
        for mut b in both(range) {
            let mut expected = std::collections::BTreeSet::new();
            for v in values {
                assert_eq!(b.insert(v).unwrap(), expected.insert(v), "{v}");
            }
            assert_eq!(b.len(), expected.len() as u64);
            let got: Vec<i128> = b.iter().collect();
            let want: Vec<i128> = expected.iter().map(|&v| i128::from(v)).collect();
            assert_eq!(got, want, "{:?}", b.form());
            assert_eq!(b.rank(63), 5, "{:?}", b.form()); // -1000, -1, 0, 5, 63
            assert_eq!(b.rank(-2000), 0);
            assert_eq!(b.rank(1i64 << 40), b.len());
            assert!(b.remove(63).unwrap() && !b.remove(63).unwrap());
            assert!(!b.contains(63) && b.contains(64) && !b.contains(1i64 << 40));
            assert_eq!(b.len(), expected.len() as u64 - 1);
        }
    }

    #[test]
    fn out_of_range_batches_change_nothing() {
        for mut b in both(KeyRange::new(0, 100).unwrap()) {
            let e = b.insert_batch(&[1u8, 2, 100]).unwrap_err();
            assert!(matches!(e, Error::OutOfRange { value: 100, .. }), "{e}");
            assert!(b.is_empty());
            assert!(b.insert(-1).is_err() && b.remove(100).is_err());
            assert_eq!(b.insert_batch(&[1u8, 2, 2]).unwrap(), 2);
        }
    }

    #[test]
    fn sorted_inserts_agree_with_single_inserts() {
        let range = KeyRange::new(-(1 << 20), 1 << 40).unwrap();
        let mut values: Vec<i64> = (0..50_000i64)
            .map(|i| (i * 7919) % (1 << 30) - 1000)
            .collect();
        values.extend_from_slice(&[5, 5, 5]);
        values.sort_unstable();
        for form in [BitmapForm::Dense, BitmapForm::Roaring] {
            let range = if form == BitmapForm::Dense {
                KeyRange::new(-(1 << 20), 1 << 30).unwrap()
            } else {
                range
            };
            let mut a = Bitmap::with_form(range, form).unwrap();
            let mut b = a.clone();
            a.insert(5).unwrap();
            b.insert(5).unwrap();
            let new = a.insert_sorted(&values).unwrap();
            let mut single = 0;
            for &v in &values {
                single += u64::from(b.insert(v).unwrap());
            }
            assert_eq!((new, a.len()), (single, b.len()));
            assert!(a.iter().eq(b.iter()));
            assert!(a.insert_sorted(&[3i64, 2]).is_err());
            assert!(a.insert_sorted(&[0i64, 1 << 41]).is_err());
            assert_eq!(a.len(), b.len(), "refused batches change nothing");
        }
    }

    #[test]
    fn set_operations_agree_across_forms() {
        let range = KeyRange::new(0, 200_000).unwrap();
        let [mut a, mut b] = both(range);
        a.insert_batch(&(0..150_000u32).step_by(3).collect::<Vec<_>>())
            .unwrap();
        b.insert_batch(&(0..200_000u32).step_by(5).collect::<Vec<_>>())
            .unwrap();
        for (x, y) in [(a.clone(), b.clone()), (b.clone(), a.clone())] {
            for form in [BitmapForm::Dense, BitmapForm::Roaring] {
                let y = y.to_form(form).unwrap();
                let mut u = x.clone();
                u.union_with(&y).unwrap();
                let mut i = x.clone();
                i.intersect_with(&y).unwrap();
                let mut d = x.clone();
                d.difference_with(&y).unwrap();
                for v in (0..200_000u32).step_by(7) {
                    let (p, q) = (x.contains(v), y.contains(v));
                    assert_eq!(u.contains(v), p || q);
                    assert_eq!(i.contains(v), p && q);
                    assert_eq!(d.contains(v), p && !q);
                }
                assert_eq!(u.len(), u.iter().count() as u64);
                assert_eq!(i.len(), 10_000); // multiples of 15 below 150,000
            }
        }
        let other = Bitmap::new(KeyRange::new(0, 10).unwrap(), 1).unwrap();
        assert!(matches!(
            a.union_with(&other),
            Err(Error::Incompatible(Incompatibility::Range(..)))
        ));
    }

    #[test]
    fn the_form_follows_the_density() {
        let r = KeyRange::new(0, 4_000_000_000).unwrap();
        assert_eq!(BitmapForm::choose(r, 1_000_000_000), BitmapForm::Dense);
        assert_eq!(BitmapForm::choose(r, 1_000_000), BitmapForm::Roaring);
        assert_eq!(
            BitmapForm::choose(KeyRange::U64, u64::MAX),
            BitmapForm::Roaring
        );
        assert_eq!(BitmapForm::dense_bytes(r), Some(500_000_000));
        assert!(Bitmap::with_form(KeyRange::U64, BitmapForm::Dense).is_err());
        // A full roaring range still works.
        let mut b = Bitmap::new(KeyRange::U64, 3).unwrap();
        assert!(b.insert(u64::MAX).unwrap());
        assert_eq!(b.iter().next(), Some(i128::from(u64::MAX)));
    }

    #[test]
    fn the_filter_trait_takes_integer_keys_only() {
        use crate::key::Key;
        let mut b = Bitmap::new(KeyRange::new(-5, 5).unwrap(), 10).unwrap();
        assert!(b.insert_encoded(&(-3i64).to_key_bytes()).unwrap());
        assert!(b.contains_encoded(&(-3i64).to_key_bytes()));
        assert!(matches!(
            b.insert_encoded(b"x"),
            Err(Error::NotAnInteger { bytes: 1 })
        ));
        assert!(matches!(
            b.remove_encoded(&4i64.to_key_bytes()),
            Err(Error::NotInBitmap(4))
        ));
        b.remove_encoded(&(-3i64).to_key_bytes()).unwrap();
        assert_eq!(b.estimated_len(), 0.0);
        assert_eq!(b.kind(), Kind::Bitmap);
    }
}
