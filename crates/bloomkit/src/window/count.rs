//! [`CountWindowFilter`]: remembers the last `N` insertions (an age-partitioned Bloom filter).
//!
//! The filter is `k + l` slices. An element is inserted into the `k` newest slices; every `g`
//! insertions a new generation starts: the oldest slice is cleared and becomes the newest. A
//! query reports an element present when `k` consecutive slices (by age) all have it. So an
//! element inserted `l` or fewer generations ago is always found (its `k` slices are all still
//! there), one older than `k + l` generations has nothing left anywhere, and one in between is
//! found only by chance. In insertions: each of the last `l·g ≥ N` insertions is found, and an
//! element is certainly forgotten `(k + l)·g` insertions after it was last inserted
//! ([`guaranteed_window`](CountWindowFilter::guaranteed_window),
//! [`forgotten_after`](CountWindowFilter::forgotten_after)).
//!
//! Layouts ([`WindowLayout`]):
//! - **blocked** (new filters, `lanes.rs`): every slice of an element in one block of one to
//!   four cache lines (one at 1%), 8 bits per element in its slice (one per sub-lane, as in a
//!   split-block filter) and `k = 1`, sized by the model over block loads
//!   ([`sizing::blocked_age_partitioned_for`]); a query reads one block, an insert writes one
//!   lane of it;
//! - **blocked, positions over the lane** (files written by the first blocked layout,
//!   `lanes_fields.rs`): the same blocks with `b` positions per element drawn over the whole
//!   lane; read, updated and written back, never built for new filters;
//! - **one bit array per slice** (the paper's, `slices.rs`; [`from_shape`](CountWindowFilter::from_shape)
//!   and files written before the blocked layout): one bit per element in each of `k ≈ 10`
//!   slices, a query reading a word in several slices.
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

use super::ages::Ages;
use super::lanes::{LaneForm, Lanes};
use super::sizing::{self, AgePartitioned, BlockedAgePartitioned, LaneModel, LANES};
use super::slices::Slices;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::hash::Hashing;
use crate::key::Key;
use crate::kind::Kind;
use crate::math::{self, Params};
use crate::probe::blocked::touch_key;
use crate::probe::Digest;
use crate::storage::{BitVec, Block};
use std::fmt;

/// Batches shorter than this are done key by key (the pipeline's set-up costs more than it
/// gains on them).
const SMALL_BATCH: usize = 8;

/// At most this many slices (`k + l`).
pub const MAX_SLICES: u32 = sizing::MAX_K + sizing::MAX_L;

/// How a count window lays out its slices in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowLayout {
    /// One bit array per slice and one bit per element in each of its `k` slices (the
    /// paper's layout): a query reads a word in several slices.
    Slices,
    /// Every slice of an element in one block, one bit per element in each of the 8
    /// sub-lanes of its slice's lane ([`BlockedAgePartitioned`]; split lanes, what new
    /// filters use): a query reads one block.
    Blocked(BlockedAgePartitioned),
    /// The first blocked layout, which files written before split lanes hold: the same
    /// blocks, `b` positions per element drawn over the whole lane of its slice. Read,
    /// updated and written back as it is; never chosen for a new filter.
    BlockedFields(BlockedAgePartitioned),
}

/// The slices' memory, in one layout or another.
#[derive(Clone, PartialEq)]
enum Storage {
    Slices(Slices),
    /// Split lanes.
    Lanes(Lanes),
    /// Lanes of the fields form (the first blocked layout).
    Fields(Lanes),
}

/// A filter of the last `N` insertions. See the [module documentation](self).
#[derive(Clone, PartialEq)]
pub struct CountWindowFilter {
    shape: AgePartitioned,
    layout: WindowLayout,
    hashing: Hashing,
    /// The window asked for (`N`) and the target FPR.
    window: u64,
    fpp: f64,
    storage: Storage,
    ages: Ages,
}

impl CountWindowFilter {
    /// A filter that remembers each of the last `window` insertions, with an FPR of at most
    /// `fpp` at its fullest, in the blocked layout
    /// ([`sizing::blocked_age_partitioned_for`]); XXH3 hashing.
    pub fn new(window: u64, fpp: f64) -> Result<Self> {
        Self::with_hashing(window, fpp, Hashing::Xxh3)
    }

    /// Like [`new`](Self::new) with another hash function (keyed SipHash for elements an
    /// adversary chooses).
    pub fn with_hashing(window: u64, fpp: f64, hashing: Hashing) -> Result<Self> {
        let shape = sizing::blocked_age_partitioned_for(window, fpp)?;
        Self::from_blocked_shape(shape, window, fpp, hashing)
    }

    /// An empty filter of exactly this shape in the paper's layout (one bit array per slice,
    /// as [`sizing::age_partitioned_for`] sizes it), remembering `window` (at most the shape's
    /// [`window`](AgePartitioned::window)) at target `fpp` (recorded; it must be a
    /// probability, `0 < fpp < 1`).
    pub fn from_shape(
        shape: AgePartitioned,
        window: u64,
        fpp: f64,
        hashing: Hashing,
    ) -> Result<Self> {
        let slices = Slices::zeros(check_shape(&shape, window)?, shape.slice_bits)?;
        Self::assemble(
            shape,
            WindowLayout::Slices,
            (window, fpp),
            hashing,
            Storage::Slices(slices),
            0,
        )
    }

    /// An empty filter of exactly this blocked shape, remembering `window` (at most its
    /// `l·g`) at target `fpp` (recorded; it must be a probability, `0 < fpp < 1`).
    pub fn from_blocked_shape(
        shape: BlockedAgePartitioned,
        window: u64,
        fpp: f64,
        hashing: Hashing,
    ) -> Result<Self> {
        check_window(&shape.age_partitioned(), window)?;
        let lanes = Lanes::zeros(&shape)?;
        let layout = WindowLayout::Blocked(shape);
        let s = shape.age_partitioned();
        Self::assemble(s, layout, (window, fpp), hashing, Storage::Lanes(lanes), 0)
    }

    /// A filter in the paper's layout from its slices (in physical order) and its count of
    /// insertions ever, for example read from a file.
    pub(crate) fn from_parts(
        shape: AgePartitioned,
        (window, fpp): (u64, f64),
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
        let storage = Storage::Slices(Slices::from_vec(slices));
        Self::assemble(
            shape,
            WindowLayout::Slices,
            (window, fpp),
            hashing,
            storage,
            inserted,
        )
    }

    /// A filter in a blocked layout (split lanes with `split`, else the fields form) from
    /// its words (block after block) and its count of insertions ever, for example read from
    /// a file.
    pub(crate) fn from_blocked_parts(
        shape: BlockedAgePartitioned,
        split: bool,
        (window, fpp): (u64, f64),
        hashing: Hashing,
        (words, inserted): (&[u64], u64),
    ) -> Result<Self> {
        check_window(&shape.age_partitioned(), window)?;
        let (storage, layout) = if split {
            let lanes = Lanes::from_words(&shape, LaneForm::Split, words)?;
            (Storage::Lanes(lanes), WindowLayout::Blocked(shape))
        } else {
            let lanes = Lanes::from_words(&shape, LaneForm::Fields, words)?;
            (Storage::Fields(lanes), WindowLayout::BlockedFields(shape))
        };
        let s = shape.age_partitioned();
        Self::assemble(s, layout, (window, fpp), hashing, storage, inserted)
    }

    fn assemble(
        shape: AgePartitioned,
        layout: WindowLayout,
        (window, fpp): (u64, f64),
        hashing: Hashing,
        storage: Storage,
        inserted: u64,
    ) -> Result<Self> {
        // The target is only recorded, but it must be a probability: a NaN read from a file
        // would make the filter unequal to itself.
        math::check_fpp(fpp)?;
        Ok(CountWindowFilter {
            ages: Ages::after(inserted, shape.slices() as usize, shape.generation),
            shape,
            layout,
            hashing,
            window,
            fpp,
            storage,
        })
    }

    /// The shape: `k`, `l`, generation size and slice size (for the blocked layout: `k = 1`,
    /// `l = 3`, and the bits of one slice over all blocks).
    pub fn shape(&self) -> &AgePartitioned {
        &self.shape
    }

    /// How the slices are laid out in memory.
    pub fn layout(&self) -> WindowLayout {
        self.layout
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

    /// After this many later insertions an element has nothing left in the filter:
    /// `(k + l) · g`.
    pub fn forgotten_after(&self) -> u64 {
        self.shape.forgotten_after()
    }

    /// Insertions ever made.
    pub fn inserted(&self) -> u64 {
        self.ages.inserted
    }

    /// The slices' bit arrays in physical order, in the paper's layout (for the file format).
    pub(crate) fn slices(&self) -> Option<&[BitVec]> {
        match &self.storage {
            Storage::Slices(s) => Some(s.as_slice()),
            Storage::Lanes(_) | Storage::Fields(_) => None,
        }
    }

    /// The blocks' cache lines, in a blocked layout (for the file format).
    pub(crate) fn lines(&self) -> Option<&[Block]> {
        match &self.storage {
            Storage::Lanes(l) | Storage::Fields(l) => Some(l.as_lines()),
            Storage::Slices(_) => None,
        }
    }

    fn slice_count(&self) -> usize {
        self.shape.slices() as usize
    }

    /// The physical slice of age `age`.
    fn physical(&self, age: usize) -> usize {
        (self.ages.base + age) % self.slice_count()
    }

    fn slice_ones(&self, j: usize) -> u64 {
        match &self.storage {
            Storage::Slices(s) => s.slice_ones(j),
            Storage::Lanes(l) | Storage::Fields(l) => l.slice_ones(j),
        }
    }

    /// The fill ratio of each slice, newest first.
    pub fn slice_fills(&self) -> Vec<f64> {
        let m = self.shape.slice_bits as f64;
        (0..self.slice_count())
            .map(|age| self.slice_ones(self.physical(age)) as f64 / m)
            .collect()
    }

    /// The hash words of a key in the paper's layout (the 128-bit hash).
    #[inline(always)]
    fn hash(&self, bytes: &[u8]) -> [u64; 2] {
        self.hashing.hash128(bytes)
    }

    /// The hash of a key in the blocked layout (the 64-bit hash: for XXH3, `xxh3_64` inlined
    /// here).
    #[inline(always)]
    fn hash64(&self, bytes: &[u8]) -> u64 {
        self.hashing.hash64(bytes)
    }

    /// Whether the element with key bytes `bytes` is in `k` consecutive slices.
    #[inline(always)]
    fn contains_bytes(&self, bytes: &[u8]) -> bool {
        match &self.storage {
            Storage::Lanes(l) => l.contains(self.hash64(bytes)),
            Storage::Slices(s) => {
                let [h1, h2] = self.hash(bytes);
                s.contains(&digest(h1, h2), self.ages.base, self.shape.k as usize)
            }
            Storage::Fields(l) => l.contains_fields(self.hash(bytes)),
        }
    }

    /// Records an element in the `k` newest slices, starting a new generation first when the
    /// current one is full. With `test`, returns whether it was new: in the paper's layout
    /// found before the generation started, in the blocked one after (tested with the bits
    /// set, in one pass over its block); without, `false`.
    #[inline(always)]
    fn insert_bytes(&mut self, bytes: &[u8], test: bool) -> bool {
        let CountWindowFilter {
            storage,
            ages,
            hashing,
            ..
        } = self;
        if let Storage::Lanes(l) = storage {
            let h = hashing.hash64(bytes);
            if let Some(j) = ages.advance() {
                l.clear_slice(j);
            }
            return l.insert(h, ages.base, test);
        }
        self.insert_slices(bytes, test)
    }

    /// [`insert_bytes`](Self::insert_bytes) in the paper's layout or the fields form, out of
    /// line. In the paper's layout, with `test`, an element is new if it was not found before
    /// the generation started; in the fields form, after (as the split lanes do).
    #[inline(never)]
    fn insert_slices(&mut self, bytes: &[u8], test: bool) -> bool {
        let h = self.hash(bytes);
        let new = test && matches!(self.storage, Storage::Slices(_)) && !self.contains_bytes(bytes);
        let turned = self.ages.advance();
        let (base, k) = (self.ages.base, self.shape.k as usize);
        match &mut self.storage {
            Storage::Slices(s) => {
                if let Some(j) = turned {
                    s.clear_slice(j);
                }
                s.set(&digest(h[0], h[1]), base, k);
                new
            }
            Storage::Fields(l) | Storage::Lanes(l) => {
                if let Some(j) = turned {
                    l.clear_slice(j);
                }
                match l.form() {
                    LaneForm::Fields => l.insert_fields(h, base, test),
                    // Not reached: `insert_bytes` inserts into split lanes itself.
                    LaneForm::Split => l.insert(self.hashing.hash64(bytes), base, test),
                }
            }
        }
    }

    /// Inserts an element (it counts as one of the last insertions again even if it was
    /// there); returns `true` if it was not found before (in the blocked layout: among the
    /// slices left once this insertion has started a new generation, if it starts one).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_bytes(|b| self.insert_bytes(b, true))
    }

    /// Whether the element may be among the remembered insertions (always `true` for each of
    /// the last [`guaranteed_window`](Self::guaranteed_window) insertions).
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_bytes(|b| self.contains_bytes(b))
    }

    /// Inserts the element; returns whether it was (probably) there before.
    pub fn check_and_insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        !self.insert(key)
    }

    /// Inserts every element of `keys`, in order, without testing them first. In the blocked
    /// layout each key is hashed and its block prefetched
    /// [`AHEAD`](crate::probe::blocked) keys before its bits are set, as the blocked filters'
    /// batches do.
    #[inline]
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        // A few keys gain nothing from the pipeline (which would set up its ring for them).
        if keys.len() < SMALL_BATCH {
            for k in keys {
                k.with_bytes(|b| self.insert_bytes(b, false));
            }
            return;
        }
        self.insert_pipelined(keys);
    }

    /// [`insert_batch`](Self::insert_batch) of many keys, out of line.
    #[inline(never)]
    fn insert_pipelined<K: Key>(&mut self, keys: &[K]) {
        let hashing = &self.hashing;
        match &mut self.storage {
            Storage::Lanes(l) => l.insert_batch(&mut self.ages, keys, touch_key, |k| {
                k.with_bytes(|b| hashing.hash64(b))
            }),
            Storage::Slices(_) | Storage::Fields(_) => {
                for k in keys {
                    k.with_bytes(|b| self.insert_slices(b, false));
                }
            }
        }
    }

    /// Tests every element of `keys`. In the blocked layout, keys are hashed and their
    /// blocks prefetched well ahead of their test (the blocked filters' pipeline); in the
    /// paper's layout, a group of keys is hashed and their anchor words prefetched before
    /// any is tested.
    pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Vec<bool> {
        let mut out = vec![false; keys.len()];
        match &self.storage {
            Storage::Lanes(_) if keys.len() < SMALL_BATCH => {
                for (o, k) in out.iter_mut().zip(keys) {
                    *o = self.contains(k);
                }
            }
            Storage::Fields(l) => {
                for (o, k) in out.iter_mut().zip(keys) {
                    *o = l.contains_fields(k.with_bytes(|b| self.hash(b)));
                }
            }
            Storage::Lanes(l) => l.contains_batch(
                keys,
                touch_key,
                |k| k.with_bytes(|b| self.hash64(b)),
                &mut out,
            ),
            Storage::Slices(s) => self.contains_batch_slices(s, keys, &mut out),
        }
        out
    }

    fn contains_batch_slices<K: Key>(&self, s: &Slices, keys: &[K], out: &mut [bool]) {
        const GROUP: usize = 8;
        let (base, k) = (self.ages.base, self.shape.k as usize);
        let mut digests = [Digest::default(); GROUP];
        for (group, answers) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            for (d, key) in digests.iter_mut().zip(group) {
                let [h1, h2] = key.with_bytes(|b| self.hash(b));
                *d = digest(h1, h2);
                s.prefetch_anchors(d, base, k);
            }
            for (a, d) in answers.iter_mut().zip(&digests) {
                *a = s.contains(d, base, k);
            }
        }
    }

    /// Estimated number of distinct elements among the remembered generations (the current
    /// one and the `l` before it), from the fill of every `k`-th slice (each holds `k`
    /// generations; Swamidass–Baldi with the bits an element sets in a slice).
    pub fn estimated_len(&self) -> f64 {
        let (k, gens) = (self.shape.k as usize, self.shape.l as usize + 1);
        let per_element = match self.lane_model() {
            None => 1.0,
            Some((model, _)) => model.mean_distinct(),
        };
        let m = self.shape.slice_bits;
        let mut total = 0.0;
        let mut covered = 0;
        for age in 0..self.slice_count() {
            if covered >= gens {
                break;
            }
            // The slice at age k-1, 2k-1, ... holds the k generations after the last counted.
            if (age + 1) % k == 0 {
                let share = (gens - covered).min(k) as f64 / k as f64;
                let ones = self.slice_ones(self.physical(age));
                total += math::estimate_count(m, 1, ones) / per_element * share;
                covered += k;
            }
        }
        total
    }

    /// The FPR at the fullest (just before a generation starts) that the layout's model gives
    /// for this shape: [`AgePartitioned::expected_fpp`] in the paper's layout,
    /// [`BlockedAgePartitioned::expected_fpp`] in the blocked one. Sizing keeps it at most the
    /// target.
    pub fn expected_fpp(&self) -> f64 {
        match self.layout {
            WindowLayout::Slices => self.shape.expected_fpp(),
            WindowLayout::Blocked(b) => b.expected_fpp(),
            WindowLayout::BlockedFields(b) => {
                let model = LaneModel::fields(b.lane_bits, b.bits_per_element);
                b.expected_fpp_with(&model)
            }
        }
    }

    /// The model of one lane and the blocked shape, in a blocked layout.
    fn lane_model(&self) -> Option<(LaneModel, BlockedAgePartitioned)> {
        match self.layout {
            WindowLayout::Slices => None,
            WindowLayout::Blocked(b) => Some((LaneModel::new(b.lane_bits, b.bits_per_element), b)),
            WindowLayout::BlockedFields(b) => {
                Some((LaneModel::fields(b.lane_bits, b.bits_per_element), b))
            }
        }
    }

    /// The FPR given the slices' current fills: [`sizing::run_probability`] of the fills in
    /// the paper's layout; in the blocked layout, the mean over blocks of
    /// `1 - ∏ (1 - E[fill^D])` over the block's lanes ([`LaneModel`]).
    pub fn estimated_fpp(&self) -> f64 {
        let (Storage::Lanes(l) | Storage::Fields(l), Some((model, shape))) =
            (&self.storage, self.lane_model())
        else {
            return sizing::run_probability(&self.slice_fills(), self.shape.k);
        };
        let (mut sum, mut miss) = (0.0, 1.0);
        l.for_each_lane_fill(|_, slice, fill| {
            miss *= 1.0 - model.fpp_from_fill(fill);
            if slice + 1 == LANES as usize {
                sum += 1.0 - miss;
                miss = 1.0;
            }
        });
        sum / shape.blocks as f64
    }

    /// Bytes of memory held by the slices.
    pub fn memory_bytes(&self) -> usize {
        match &self.storage {
            Storage::Slices(s) => s.memory_bytes(),
            Storage::Lanes(l) | Storage::Fields(l) => l.memory_bytes(),
        }
    }

    /// Forgets everything (the window starts again from nothing).
    pub fn clear(&mut self) {
        match &mut self.storage {
            Storage::Slices(s) => s.clear(),
            Storage::Lanes(l) | Storage::Fields(l) => l.clear(),
        }
        self.ages = Ages::after(0, self.slice_count(), self.shape.generation);
    }
}

/// The digest of hash words `[h1, h2]` for the paper's layout.
#[inline(always)]
fn digest(h1: u64, h2: u64) -> Digest {
    Digest {
        h1,
        h2,
        ..Digest::default()
    }
}

impl fmt::Debug for CountWindowFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountWindowFilter")
            .field("window", &self.window)
            .field("shape", &self.shape)
            .field("layout", &self.layout)
            .field("hashing", &self.hashing)
            .field("inserted", &self.ages.inserted)
            .finish()
    }
}

/// Checks a window against a shape's guaranteed window.
fn check_window(shape: &AgePartitioned, window: u64) -> Result<()> {
    if window == 0 || window > shape.window() {
        return Err(Error::InvalidParameters(format!(
            "a window of {window} insertions does not fit l·g = {}",
            shape.window()
        )));
    }
    Ok(())
}

/// Checks a shape of the paper's layout and a window; returns the number of slices.
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
    check_window(shape, window)?;
    math::check_bits_hashes(shape.bits(), u64::from(shape.k))?;
    Ok(h as usize)
}

impl Filter for CountWindowFilter {
    fn kind(&self) -> Kind {
        Kind::CountWindow
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        Ok(self.insert_bytes(bytes, true))
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.contains_bytes(bytes)
    }
    fn params(&self) -> Params {
        let hashes = match self.layout {
            WindowLayout::Slices => self.shape.k,
            WindowLayout::Blocked(b) | WindowLayout::BlockedFields(b) => b.bits_per_element,
        };
        Params {
            bits: self.shape.bits(),
            hashes,
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
        let shape = sizing::age_partitioned_for(10_000, 0.01).unwrap();
        let f = CountWindowFilter::from_shape(shape, 10_000, 0.01, Hashing::Xxh3).unwrap();
        let Storage::Slices(s) = &f.storage else {
            panic!("the paper's layout")
        };
        for key in 0..100u64 {
            let [h1, h2] = key.with_bytes(|b| f.hash(b));
            let d = digest(h1, h2);
            let mut j = 0;
            Scheme::EnhancedDouble.for_each_position(&d, shape.slices(), shape.slice_bits, |p| {
                assert_eq!(s.position(&d, j), p, "slice {j}");
                j += 1;
                true
            });
            assert_eq!(j, s.len());
        }
    }
}
