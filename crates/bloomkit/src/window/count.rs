//! [`CountWindowFilter`]: remembers the last `N` insertions (an age-partitioned Bloom filter).
//!
//! The filter is `k + l` slices of `m` bits, each a [`BitVec`]. An element is inserted into the
//! `k` newest slices, one bit each; every `g` insertions a new generation starts: the oldest
//! slice is cleared and becomes the newest. A query reports an element present when `k`
//! consecutive slices (by age) all have its bit. So an element inserted `l` or fewer
//! generations ago is always found (its `k` slices are all still there), one older than
//! `k + l` generations has no bit left anywhere, and one in between is found only by chance.
//! In insertions: each of the last `l·g ≥ N` insertions is found, and an element is certainly
//! forgotten `(k + l)·g` insertions after it was last inserted
//! ([`guaranteed_window`](CountWindowFilter::guaranteed_window),
//! [`forgotten_after`](CountWindowFilter::forgotten_after)).
//!
//! The positions of an element in slice `j` (its physical index) are the `j`-th probe of the
//! default probing scheme ([`Scheme::EnhancedDouble`](crate::Scheme::EnhancedDouble)) over `m`, so a query hashes once and
//! touches one word per slice.
//!
//! ```
//! use bloomkit::window::CountWindowFilter;
//! let mut recent = CountWindowFilter::new(1000, 0.01)?;
//! assert!(recent.insert("event-1"));
//! for i in 0..recent.guaranteed_window() {
//!     recent.insert(&i);
//! }
//! assert!(recent.contains("event-1"), "one of the last l·g insertions: always found");
//! assert!(recent.forgotten_after() > recent.guaranteed_window());
//! # Ok::<(), bloomkit::Error>(())
//! ```

use super::sizing::{self, AgePartitioned};
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::hash::Hashing;
use crate::key::Key;
use crate::kind::Kind;
use crate::math::{self, Params};
use crate::probe::{reduce, Digest};
use crate::storage::{prefetch, BitVec};
use std::fmt;

/// At most this many slices (`k + l`).
pub const MAX_SLICES: u32 = sizing::MAX_K + sizing::MAX_L;

/// A filter of the last `N` insertions. See the [module documentation](self).
#[derive(Clone, PartialEq)]
pub struct CountWindowFilter {
    shape: AgePartitioned,
    hashing: Hashing,
    /// The window asked for (`N`) and the target FPR.
    window: u64,
    fpp: f64,
    /// Physical slices; slice `(base + i) % (k + l)` is the `i`-th newest.
    slices: Vec<BitVec>,
    /// Physical index of the newest slice.
    base: usize,
    /// Insertions into the current generation (`1..=g` once anything was inserted).
    count: u64,
    /// Insertions ever (the generation, base and count follow from it).
    inserted: u64,
}

impl CountWindowFilter {
    /// A filter that remembers each of the last `window` insertions, with an FPR of at most
    /// `fpp` at its fullest, sized as the age-partitioned filter paper does
    /// ([`sizing::age_partitioned_for`]); XXH3 hashing.
    pub fn new(window: u64, fpp: f64) -> Result<Self> {
        Self::with_hashing(window, fpp, Hashing::Xxh3)
    }

    /// Like [`new`](Self::new) with another hash function (keyed SipHash for elements an
    /// adversary chooses).
    pub fn with_hashing(window: u64, fpp: f64, hashing: Hashing) -> Result<Self> {
        let shape = sizing::age_partitioned_for(window, fpp)?;
        Self::from_shape(shape, window, fpp, hashing)
    }

    /// An empty filter of exactly this shape, remembering `window` (at most the shape's
    /// [`window`](AgePartitioned::window)) at target `fpp` (recorded, not checked).
    pub fn from_shape(
        shape: AgePartitioned,
        window: u64,
        fpp: f64,
        hashing: Hashing,
    ) -> Result<Self> {
        let slices = check_shape(&shape, window)?;
        let slices = (0..slices)
            .map(|_| BitVec::zeros(shape.slice_bits))
            .collect::<Result<Vec<_>>>()?;
        Self::from_parts(shape, window, fpp, hashing, slices, 0)
    }

    /// A filter from its slices (in physical order) and its count of insertions ever, for
    /// example read from a file.
    pub(crate) fn from_parts(
        shape: AgePartitioned,
        window: u64,
        fpp: f64,
        hashing: Hashing,
        slices: Vec<BitVec>,
        inserted: u64,
    ) -> Result<Self> {
        let h = check_shape(&shape, window)?;
        if slices.len() != h || slices.iter().any(|s| s.len() != shape.slice_bits) {
            return Err(Error::InvalidParameters(format!(
                "a count window of {h} slices of {} bits needs exactly that many slices of that size",
                shape.slice_bits
            )));
        }
        let shifts = inserted.saturating_sub(1) / shape.generation;
        Ok(CountWindowFilter {
            base: ((h as u64 - shifts % h as u64) % h as u64) as usize,
            count: inserted - shifts * shape.generation,
            shape,
            hashing,
            window,
            fpp,
            slices,
            inserted,
        })
    }

    /// The shape: `k`, `l`, generation size and slice size.
    pub fn shape(&self) -> &AgePartitioned {
        &self.shape
    }

    /// The hash function.
    pub fn hashing(&self) -> &Hashing {
        &self.hashing
    }

    /// The window asked for: this many last insertions are always found.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// The target FPR.
    pub fn fpp(&self) -> f64 {
        self.fpp
    }

    /// How many of the last insertions are always found: `l · g` (at least
    /// [`window`](Self::window)).
    pub fn guaranteed_window(&self) -> u64 {
        self.shape.window()
    }

    /// After this many later insertions an element has no bit left in the filter:
    /// `(k + l) · g`.
    pub fn forgotten_after(&self) -> u64 {
        self.shape.forgotten_after()
    }

    /// Insertions ever made.
    pub fn inserted(&self) -> u64 {
        self.inserted
    }

    /// The slices in physical order (for the file format).
    pub(crate) fn slices(&self) -> &[BitVec] {
        &self.slices
    }

    /// The fill ratio of each slice, newest first.
    pub fn slice_fills(&self) -> Vec<f64> {
        let m = self.shape.slice_bits as f64;
        self.by_age().map(|s| s.count_ones() as f64 / m).collect()
    }

    /// The slices, newest first.
    fn by_age(&self) -> impl Iterator<Item = &BitVec> {
        let h = self.slices.len();
        (0..h).map(move |i| &self.slices[(self.base + i) % h])
    }

    fn digest(&self, bytes: &[u8]) -> Digest {
        let [h1, h2] = self.hashing.hash128(bytes);
        Digest {
            h1,
            h2,
            ..Digest::default()
        }
    }

    /// The element's position in physical slice `j`: the `j`-th probe of enhanced double
    /// hashing ([`Scheme::EnhancedDouble`](crate::Scheme::EnhancedDouble): `x₀ = h1, y₀ = h2, x₊ = x + y, y₊ = y + i`), in
    /// closed form `x_j = h1 + j·h2 + j(j-1)(j-2)/6` (wrapping), reduced to the slice's bits.
    #[inline(always)]
    fn position(&self, d: &Digest, j: usize) -> u64 {
        let j = j as u64;
        let cubic = j * j.saturating_sub(1) * j.saturating_sub(2) / 6;
        let x = d.h1.wrapping_add(j.wrapping_mul(d.h2)).wrapping_add(cubic);
        reduce(x, self.shape.slice_bits)
    }

    /// The physical slice of age `age` (`age < k + l`).
    #[inline(always)]
    fn physical(&self, age: usize) -> usize {
        let j = self.base + age;
        if j >= self.slices.len() {
            j - self.slices.len()
        } else {
            j
        }
    }

    /// Whether `k` consecutive slices (by age) have the element's bit. Any run of `k` ages
    /// contains an age `≡ k - 1 (mod k)`, so only those anchors are read first (about
    /// `(k + l) / k` words, prefetched together); a run is then measured around each anchor
    /// that has the bit.
    fn contains_digest(&self, d: &Digest) -> bool {
        let h = self.slices.len();
        let k = self.shape.k as usize;
        let hit = |age: usize| {
            let j = self.physical(age);
            self.slices[j].get(self.position(d, j))
        };
        self.prefetch_anchors(d);
        for anchor in (k - 1..h).step_by(k) {
            if !hit(anchor) {
                continue;
            }
            let mut run = 1;
            let mut a = anchor;
            while run < k && a > 0 && hit(a - 1) {
                a -= 1;
                run += 1;
            }
            let mut b = anchor + 1;
            while run < k && b < h && hit(b) {
                b += 1;
                run += 1;
            }
            if run >= k {
                return true;
            }
        }
        false
    }

    /// Starts loading the words of the anchors (ages `≡ k - 1 (mod k)`) and of their
    /// neighbours, the probes a query of a non-member mostly reads.
    #[inline]
    fn prefetch_anchors(&self, d: &Digest) {
        let (h, k) = (self.slices.len(), self.shape.k as usize);
        for anchor in (k - 1..h).step_by(k) {
            for age in anchor.saturating_sub(1)..(anchor + 2).min(h) {
                let j = self.physical(age);
                prefetch(&self.slices[j].as_words()[(self.position(d, j) >> 6) as usize]);
            }
        }
    }

    /// Starts a new generation when the current one is full.
    fn turn_over(&mut self) {
        if self.count == self.shape.generation {
            let h = self.slices.len();
            self.base = (self.base + h - 1) % h;
            self.slices[self.base].clear();
            self.count = 0;
        }
    }

    /// Records an element in the `k` newest slices.
    fn insert_digest(&mut self, d: &Digest) {
        self.turn_over();
        for age in 0..self.shape.k as usize {
            let j = self.physical(age);
            let p = self.position(d, j);
            self.slices[j].set(p);
        }
        self.count += 1;
        self.inserted += 1;
    }

    /// Inserts an element (it counts as one of the last insertions again even if it was
    /// there); returns `true` if it was not found before.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_bytes(|b| self.insert_bytes(b))
    }

    fn insert_bytes(&mut self, bytes: &[u8]) -> bool {
        let d = self.digest(bytes);
        let new = !self.contains_digest(&d);
        self.insert_digest(&d);
        new
    }

    /// Whether the element may be among the remembered insertions (always `true` for each of
    /// the last [`guaranteed_window`](Self::guaranteed_window) insertions).
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_bytes(|b| self.contains_digest(&self.digest(b)))
    }

    /// Inserts the element; returns whether it was (probably) there before.
    pub fn check_and_insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        !self.insert(key)
    }

    /// Inserts every element of `keys`, in order.
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        for k in keys {
            k.with_bytes(|b| {
                let d = self.digest(b);
                self.insert_digest(&d);
            });
        }
    }

    /// Tests every element of `keys`: hashes a group of them and starts loading their
    /// words before testing any, so that the memory loads of a group overlap.
    pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Vec<bool> {
        const GROUP: usize = 8;
        let mut out = Vec::with_capacity(keys.len());
        let mut digests = [Digest::default(); GROUP];
        for group in keys.chunks(GROUP) {
            for (d, k) in digests.iter_mut().zip(group) {
                *d = k.with_bytes(|b| self.digest(b));
                self.prefetch_anchors(d);
            }
            out.extend(
                digests[..group.len()]
                    .iter()
                    .map(|d| self.contains_digest(d)),
            );
        }
        out
    }

    /// Estimated number of distinct elements among the remembered generations (the current
    /// one and the `l` before it), from the fill of every `k`-th slice (each holds `k`
    /// generations; Swamidass–Baldi with one bit per element).
    pub fn estimated_len(&self) -> f64 {
        let (k, gens) = (self.shape.k as usize, self.shape.l as usize + 1);
        let m = self.shape.slice_bits;
        let mut total = 0.0;
        let mut covered = 0;
        for (age, slice) in self.by_age().enumerate() {
            if covered >= gens {
                break;
            }
            // The slice at age k-1, 2k-1, ... holds the k generations after the last counted.
            if (age + 1) % k == 0 {
                let share = (gens - covered).min(k) as f64 / k as f64;
                total += math::estimate_count(m, 1, slice.count_ones()) * share;
                covered += k;
            }
        }
        total
    }

    /// The FPR given the slices' current fills ([`sizing::run_probability`]).
    pub fn estimated_fpp(&self) -> f64 {
        sizing::run_probability(&self.slice_fills(), self.shape.k)
    }

    /// Bytes of memory held by the slices.
    pub fn memory_bytes(&self) -> usize {
        self.slices.iter().map(BitVec::memory_bytes).sum()
    }

    /// Forgets everything (the window starts again from nothing).
    pub fn clear(&mut self) {
        self.slices.iter_mut().for_each(BitVec::clear);
        self.base = 0;
        self.count = 0;
        self.inserted = 0;
    }
}

impl fmt::Debug for CountWindowFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountWindowFilter")
            .field("window", &self.window)
            .field("shape", &self.shape)
            .field("hashing", &self.hashing)
            .field("inserted", &self.inserted)
            .finish()
    }
}

/// Checks a shape and window; returns the number of slices.
fn check_shape(shape: &AgePartitioned, window: u64) -> Result<usize> {
    let h = shape.slices();
    let bad = |why: String| Err(Error::InvalidParameters(why));
    if shape.k == 0 || shape.l == 0 || h > MAX_SLICES {
        return bad(format!(
            "a count window needs k ≥ 1, l ≥ 1 and k + l ≤ {MAX_SLICES} (got k = {}, l = {})",
            shape.k, shape.l
        ));
    }
    if shape.generation == 0 || shape.slice_bits == 0 || !shape.slice_bits.is_multiple_of(64) {
        return bad(format!(
            "a count window needs generations of at least one insertion and slices of whole words (got {} and {} bits)",
            shape.generation, shape.slice_bits
        ));
    }
    if window == 0 || window > shape.window() {
        return bad(format!(
            "a window of {window} insertions does not fit l·g = {}",
            shape.window()
        ));
    }
    math::check_bits_hashes(shape.bits(), u64::from(shape.k))?;
    Ok(h as usize)
}

impl Filter for CountWindowFilter {
    fn kind(&self) -> Kind {
        Kind::CountWindow
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        Ok(self.insert_bytes(bytes))
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.contains_digest(&self.digest(bytes))
    }
    fn params(&self) -> Params {
        Params {
            bits: self.shape.bits(),
            hashes: self.shape.k,
        }
    }
    fn estimated_len(&self) -> f64 {
        CountWindowFilter::estimated_len(self)
    }
    fn estimated_fpp(&self) -> f64 {
        CountWindowFilter::estimated_fpp(self)
    }
    fn memory_bytes(&self) -> usize {
        CountWindowFilter::memory_bytes(self)
    }
    fn clear(&mut self) {
        CountWindowFilter::clear(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Scheme;

    #[test]
    fn closed_form_positions_are_the_probing_schemes() {
        let f = CountWindowFilter::new(10_000, 0.01).unwrap();
        for key in 0..100u64 {
            let d = key.with_bytes(|b| f.digest(b));
            let mut j = 0;
            Scheme::EnhancedDouble.for_each_position(
                &d,
                f.shape.slices(),
                f.shape.slice_bits,
                |p| {
                    assert_eq!(f.position(&d, j), p, "slice {j}");
                    j += 1;
                    true
                },
            );
            assert_eq!(j, f.slices.len());
        }
    }
}
