//! [`Store`]: a set of bit indices, as a plain bit array (the `storage/` [`BitVec`]) or a
//! roaring bitmap; the one set type under [`Bitmap`](super::Bitmap) and both planes of
//! [`TwoBitMap`](super::TwoBitMap).

use super::BitmapForm;
use crate::error::Result;
use crate::storage::BitVec;
use roaring::RoaringTreemap;

/// Indices merged into a roaring store at once by [`Store::insert_sorted`]: a slice's own
/// containers (about 90 bytes each) stay a few hundred KiB however spread the indices are.
const MERGE_SLICE: usize = 1 << 13;

/// A set of indices `0..width`. Two stores are equal when they hold the same indices, whatever
/// their forms.
#[derive(Clone)]
pub(crate) enum Store {
    /// One bit per index, with the number of bits set.
    Dense { bits: BitVec, ones: u64 },
    /// Roaring containers: memory follows the indices present.
    Roaring(RoaringTreemap),
}

impl PartialEq for Store {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Store::Dense { bits: a, .. }, Store::Dense { bits: b, .. }) => a == b,
            (Store::Roaring(a), Store::Roaring(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} store of {} indices", self.form(), self.len())
    }
}

impl Store {
    /// An empty store of `width` indices in `form`.
    pub fn new(form: BitmapForm, width: u64) -> Result<Store> {
        Ok(match form {
            BitmapForm::Dense => Store::Dense {
                bits: BitVec::zeros(width)?,
                ones: 0,
            },
            BitmapForm::Roaring => Store::Roaring(RoaringTreemap::new()),
        })
    }

    /// A dense store over `bits` (whose shape the caller checked).
    pub fn from_bits(bits: BitVec) -> Store {
        let ones = bits.count_ones();
        Store::Dense { bits, ones }
    }

    pub fn form(&self) -> BitmapForm {
        match self {
            Store::Dense { .. } => BitmapForm::Dense,
            Store::Roaring(_) => BitmapForm::Roaring,
        }
    }

    #[inline]
    pub fn insert(&mut self, i: u64) -> bool {
        self.put(i, true)
    }

    #[inline]
    pub fn remove(&mut self, i: u64) -> bool {
        self.put(i, false)
    }

    /// Sets (`present`) or clears index `i`; `true` if that changed it.
    #[inline(always)]
    fn put(&mut self, i: u64, present: bool) -> bool {
        match self {
            Store::Dense { bits, ones } => {
                let changed = if present { bits.set(i) } else { bits.unset(i) };
                if changed {
                    *ones = if present { *ones + 1 } else { *ones - 1 };
                }
                changed
            }
            Store::Roaring(r) if present => r.insert(i),
            Store::Roaring(r) => r.remove(i),
        }
    }

    #[inline]
    pub fn contains(&self, i: u64) -> bool {
        match self {
            Store::Dense { bits, .. } => bits.get(i),
            Store::Roaring(r) => r.contains(i),
        }
    }

    pub fn len(&self) -> u64 {
        match self {
            Store::Dense { ones, .. } => *ones,
            Store::Roaring(r) => r.len(),
        }
    }

    /// Indices present that are `<= i`.
    pub fn rank(&self, i: u64) -> u64 {
        match self {
            Store::Dense { bits, .. } => {
                let words = bits.as_words();
                let w = (i / 64) as usize;
                let full: u64 = words[..w].iter().map(|x| u64::from(x.count_ones())).sum();
                let mask = if i % 64 == 63 {
                    u64::MAX
                } else {
                    (1u64 << (i % 64 + 1)) - 1
                };
                full + u64::from((words[w] & mask).count_ones())
            }
            Store::Roaring(r) => r.rank(i),
        }
    }

    pub fn clear(&mut self) {
        match self {
            Store::Dense { bits, ones } => {
                bits.clear();
                *ones = 0;
            }
            Store::Roaring(r) => r.clear(),
        }
    }

    /// Bytes of memory held (for roaring, its serialized size: close to its heap use).
    pub fn memory_bytes(&self) -> usize {
        match self {
            Store::Dense { bits, .. } => bits.memory_bytes(),
            Store::Roaring(r) => r.serialized_size(),
        }
    }

    /// The indices present, ascending.
    pub fn iter(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            Store::Dense { bits, .. } => Box::new(DenseIter::new(bits.as_words())),
            Store::Roaring(r) => Box::new(r.iter()),
        }
    }

    /// The same indices in `form` (`width` indices wide).
    pub fn to_form(&self, form: BitmapForm, width: u64) -> Result<Store> {
        if form == self.form() {
            return Ok(self.clone());
        }
        Ok(match self {
            Store::Dense { bits, .. } => Store::Roaring(
                RoaringTreemap::from_sorted_iter(DenseIter::new(bits.as_words()))
                    .expect("ascending"),
            ),
            Store::Roaring(r) => {
                let mut s = Store::new(BitmapForm::Dense, width)?;
                for i in r {
                    s.insert(i);
                }
                s
            }
        })
    }

    /// A roaring store of `indices` (ascending, without repeats).
    pub fn roaring_from_sorted(indices: impl Iterator<Item = u64>) -> Store {
        Store::Roaring(
            RoaringTreemap::from_sorted_iter(indices).expect("indices are strictly ascending"),
        )
    }

    /// Adds `indices` (ascending, without repeats): a dense store sets them one by one; a
    /// roaring store builds small stores of them, [`MERGE_SLICE`] indices at a time, and
    /// merges each in, container by container, so a container that receives several is
    /// rewritten once, not once per index (and the slices' own containers stay few).
    pub fn insert_sorted(&mut self, mut indices: impl Iterator<Item = u64>) {
        match self {
            Store::Roaring(r) => loop {
                let slice = RoaringTreemap::from_sorted_iter(indices.by_ref().take(MERGE_SLICE))
                    .expect("indices are strictly ascending");
                if slice.is_empty() {
                    break;
                }
                *r |= &slice;
            },
            Store::Dense { .. } => {
                for i in indices {
                    self.insert(i);
                }
            }
        }
    }

    /// Whether no index is in both (same width and form).
    pub fn is_disjoint(&self, other: &Store) -> bool {
        match (self, other) {
            (Store::Dense { bits: a, .. }, Store::Dense { bits: b, .. }) => a
                .as_words()
                .iter()
                .zip(b.as_words())
                .all(|(x, y)| x & y == 0),
            (Store::Roaring(a), Store::Roaring(b)) => a.is_disjoint(b),
            (a, b) => a.iter().all(|i| !b.contains(i)),
        }
    }

    /// `self |= other` (same width).
    pub fn union_with(&mut self, other: &Store) {
        match (&mut *self, other) {
            (Store::Dense { bits, ones }, Store::Dense { bits: b, .. }) => {
                bits.union_with(b.as_words());
                *ones = bits.count_ones();
            }
            (Store::Roaring(a), Store::Roaring(b)) => *a |= b,
            (_, b) => {
                for i in b.iter() {
                    self.insert(i);
                }
            }
        }
    }

    /// `self &= other` (same width).
    pub fn intersect_with(&mut self, other: &Store) {
        match (&mut *self, other) {
            (Store::Dense { bits, ones }, Store::Dense { bits: b, .. }) => {
                bits.intersect_with(b.as_words());
                *ones = bits.count_ones();
            }
            (Store::Roaring(a), Store::Roaring(b)) => *a &= b,
            (a, b) => {
                let gone: Vec<u64> = a.iter().filter(|&i| !b.contains(i)).collect();
                for i in gone {
                    a.remove(i);
                }
            }
        }
    }

    /// `self -= other` (same width).
    pub fn difference_with(&mut self, other: &Store) {
        match (&mut *self, other) {
            (Store::Dense { bits, ones }, Store::Dense { bits: b, .. }) => {
                bits.difference_with(b.as_words());
                *ones = bits.count_ones();
            }
            (Store::Roaring(a), Store::Roaring(b)) => *a -= b,
            (a, b) => {
                for i in b.iter() {
                    a.remove(i);
                }
            }
        }
    }
}

/// The set bits of dense words, ascending.
pub(crate) struct DenseIter<'a> {
    words: &'a [u64],
    /// Index of the word in `current`.
    at: usize,
    current: u64,
}

impl<'a> DenseIter<'a> {
    pub fn new(words: &'a [u64]) -> Self {
        DenseIter {
            words,
            at: 0,
            current: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for DenseIter<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        while self.current == 0 {
            self.at += 1;
            self.current = *self.words.get(self.at)?;
        }
        let bit = self.current.trailing_zeros();
        self.current &= self.current - 1;
        Some(self.at as u64 * 64 + u64::from(bit))
    }
}
