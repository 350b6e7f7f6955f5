//! [`TwoBitMap`]: two bits per integer of a range, for "which integers occur exactly once".
//!
//! Each integer has a two-bit cell: `00` absent, `01` seen once, `10` seen more than once
//! (`11` is never used). An occurrence moves `00 → 01 → 10`, and `10` stays. The low bits of
//! all cells form one set (the integers seen exactly once), the high bits another (those seen
//! more than once); each is kept as a [`Store`], dense or roaring like a
//! [`Bitmap`](super::Bitmap)'s, so the singletons are simply the first set, in order.

use super::{bitmap_params, BitmapForm, KeyRange, Store};
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::kind::Kind;
use crate::math::Params;
use std::fmt;

/// How often an integer has been seen: a [`TwoBitMap`] cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Seen {
    /// `00`: never.
    Absent,
    /// `01`: exactly once.
    Once,
    /// `10`: more than once.
    More,
}

/// Two bits per integer of a [`KeyRange`]: absent, seen once, seen more than once (see the
/// module docs).
///
/// ```
/// use bloomkit::bitmap::{KeyRange, Seen, TwoBitMap};
/// let mut m = TwoBitMap::new(KeyRange::new(0, 1000)?, 10)?;
/// for v in [5u32, 9, 5, 700, 5] {
///     m.insert(v)?;
/// }
/// assert_eq!(m.get(5u32), Seen::More);
/// assert_eq!(m.get(9u32), Seen::Once);
/// assert_eq!(m.singles().collect::<Vec<_>>(), [9, 700]);
/// assert_eq!(m.len(), 3);
/// # Ok::<(), bloomkit::Error>(())
/// ```
///
/// Two maps are equal when they have the same range and the same integers seen once and more
/// than once, whatever their forms.
#[derive(Clone, PartialEq)]
pub struct TwoBitMap {
    range: KeyRange,
    /// The low bits: integers seen exactly once.
    once: Store,
    /// The high bits: integers seen more than once.
    more: Store,
}

impl fmt::Debug for TwoBitMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TwoBitMap({}, once: {:?}, more: {:?})",
            self.range, self.once, self.more
        )
    }
}

impl TwoBitMap {
    /// An empty map of `range`, in the form [`BitmapForm::choose`] picks for `expected`
    /// distinct integers (a dense map takes two bits per integer of the range).
    pub fn new(range: KeyRange, expected: u64) -> Result<TwoBitMap> {
        TwoBitMap::with_form(range, BitmapForm::choose(range, expected))
    }

    /// An empty map of `range` in `form`.
    pub fn with_form(range: KeyRange, form: BitmapForm) -> Result<TwoBitMap> {
        let empty = super::Bitmap::with_form(range, form)?;
        Ok(TwoBitMap {
            range,
            more: empty.store().clone(),
            once: empty.store,
        })
    }

    /// A map over its two planes (whose indices the caller checked to be disjoint and in
    /// range).
    pub(crate) fn from_stores(range: KeyRange, once: Store, more: Store) -> TwoBitMap {
        TwoBitMap { range, once, more }
    }

    /// The planes: integers seen once, integers seen more than once.
    pub(crate) fn stores(&self) -> (&Store, &Store) {
        (&self.once, &self.more)
    }

    /// The integers it can hold.
    pub fn range(&self) -> KeyRange {
        self.range
    }

    /// How it keeps its bits.
    pub fn form(&self) -> BitmapForm {
        self.once.form()
    }

    /// Records one occurrence of an integer; returns its cell before.
    #[inline]
    pub fn insert(&mut self, value: impl Into<i128>) -> Result<Seen> {
        let i = self.range.index(value.into())?;
        Ok(self.insert_index(i))
    }

    #[inline]
    fn insert_index(&mut self, i: u64) -> Seen {
        if self.once.remove(i) {
            self.more.insert(i);
            Seen::Once
        } else if self.more.contains(i) {
            Seen::More
        } else {
            self.once.insert(i);
            Seen::Absent
        }
    }

    /// Records one occurrence of every integer of `values` (a repeated integer counts each
    /// time); returns how many were new. If any is outside the range, none is recorded.
    pub fn insert_batch<V: Copy + Into<i128>>(&mut self, values: &[V]) -> Result<u64> {
        for &v in values {
            self.range.index(v.into())?;
        }
        let mut new = 0;
        for &v in values {
            let i = self.range.value_index(v.into());
            new += u64::from(self.insert_index(i) == Seen::Absent);
        }
        Ok(new)
    }

    /// Records one occurrence of each of `values`, given in ascending order (an integer
    /// repeated in them counts each time); returns how many integers were new. The fast way
    /// to record many integers in the roaring form (see
    /// [`Bitmap::insert_sorted`](super::Bitmap::insert_sorted)). If any is outside the
    /// range, or they are not
    /// ascending, none is recorded.
    pub fn insert_sorted<V: Copy + Into<i128>>(&mut self, values: &[V]) -> Result<u64> {
        super::check_sorted(self.range, values)?;
        let before = self.len();
        if self.form() == BitmapForm::Dense {
            for &v in values {
                self.insert_index(self.range.value_index(v.into()));
            }
            return Ok(self.len() - before);
        }
        // The batch's own cells: integers once in it, integers more than once in it.
        let (mut once, mut more) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < values.len() {
            let v = values[i].into();
            let mut j = i + 1;
            while j < values.len() && values[j].into() == v {
                j += 1;
            }
            let index = self.range.value_index(v);
            if j - i == 1 {
                once.push(index);
            } else {
                more.push(index);
            }
            i = j;
        }
        let batch_once = Store::roaring_from_sorted(once.into_iter());
        let batch_more = Store::roaring_from_sorted(more.into_iter());
        // Seen once before and again now: more than once.
        let mut again = self.once.clone();
        let mut batch = batch_once.clone();
        batch.union_with(&batch_more);
        again.intersect_with(&batch);
        self.more.union_with(&batch_more);
        self.more.union_with(&again);
        self.once.union_with(&batch_once);
        self.once.difference_with(&self.more);
        Ok(self.len() - before)
    }

    /// How often an integer has been seen (`Absent` outside the range).
    pub fn get(&self, value: impl Into<i128>) -> Seen {
        match self.range.index(value.into()) {
            Ok(i) if self.once.contains(i) => Seen::Once,
            Ok(i) if self.more.contains(i) => Seen::More,
            _ => Seen::Absent,
        }
    }

    /// The number of distinct integers seen.
    pub fn len(&self) -> u64 {
        self.once.len() + self.more.len()
    }

    /// Whether nothing has been seen.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of integers seen exactly once.
    pub fn singles_len(&self) -> u64 {
        self.once.len()
    }

    /// The integers seen exactly once, ascending.
    pub fn singles(&self) -> impl Iterator<Item = i128> + '_ {
        self.once.iter().map(|i| self.range.value(i))
    }

    /// The integers seen more than once, ascending.
    pub fn repeated(&self) -> impl Iterator<Item = i128> + '_ {
        self.more.iter().map(|i| self.range.value(i))
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.once.clear();
        self.more.clear();
    }

    /// Bytes of memory held by both planes.
    pub fn memory_bytes(&self) -> usize {
        self.once.memory_bytes() + self.more.memory_bytes()
    }
}

impl Filter for TwoBitMap {
    fn kind(&self) -> Kind {
        Kind::TwoBitMap
    }

    /// Records an occurrence of an 8-byte integer key; `true` if it was never seen before.
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        let v = self.range.decode_key(bytes)?;
        Ok(self.insert(v)? == Seen::Absent)
    }

    /// Refused: a two-bit map cannot tell how many occurrences "more than once" holds.
    fn remove_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        let _ = bytes;
        Err(Error::Unsupported {
            operation: "remove",
            kind: Kind::TwoBitMap.name(),
        })
    }

    /// Whether the integer has been seen at least once.
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.range
            .decode_key(bytes)
            .is_ok_and(|v| self.get(v) != Seen::Absent)
    }

    exact_filter_methods!(TwoBitMap, 2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_move_from_absent_to_once_to_more_in_both_forms() {
        let range = KeyRange::new(-50, 1 << 20).unwrap();
        for form in [BitmapForm::Dense, BitmapForm::Roaring] {
            let mut m = TwoBitMap::with_form(range, form).unwrap();
            assert_eq!(m.insert(-50).unwrap(), Seen::Absent);
            assert_eq!(m.insert(-50).unwrap(), Seen::Once);
            assert_eq!(m.insert(-50).unwrap(), Seen::More);
            assert_eq!(m.get(-50), Seen::More);
            assert_eq!(m.insert_batch(&[3i32, 1, 3, 1000]).unwrap(), 3);
            assert_eq!(m.singles().collect::<Vec<_>>(), [1, 1000]);
            assert_eq!(m.repeated().collect::<Vec<_>>(), [-50, 3]);
            assert_eq!((m.len(), m.singles_len()), (4, 2));
            assert!(m.insert_batch(&[5i64, 1 << 20]).is_err());
            // Sorted batches give the same cells as single inserts.
            let batch = [-50i64, 1, 2, 2, 7, 7, 7, 1000, 1001];
            let mut single = m.clone();
            let new = m.insert_sorted(&batch).unwrap();
            let mut single_new = 0;
            for v in batch {
                single_new += u64::from(single.insert(v).unwrap() == Seen::Absent);
            }
            assert_eq!((new, m.len()), (single_new, single.len()));
            assert!(m.singles().eq(single.singles()) && m.repeated().eq(single.repeated()));
            assert_eq!(m.singles().collect::<Vec<_>>(), [1001]);
            assert!(m.insert_sorted(&[2i64, 1]).is_err());
            assert_eq!(
                m.get(5),
                Seen::Absent,
                "nothing of a refused batch is applied"
            );
            assert!(matches!(
                m.remove_encoded(&1i64.to_le_bytes()),
                Err(Error::Unsupported { .. })
            ));
        }
    }
}
