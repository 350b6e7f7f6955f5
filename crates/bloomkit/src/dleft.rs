//! The d-left counting Bloom filter (Bonomi, Mitzenmacher, Panigrahy, Singh and Varghese,
//! 2006): removal and counting like a [`CountingBloomFilter`](crate::CountingBloomFilter) in
//! about half its memory.
//!
//! Instead of `k` counters per element, the filter stores one short *fingerprint* of each
//! element, with a small counter, in a hash table built by d-left hashing:
//!
//! - `d` sub-tables (4 by default) of `B` buckets; each bucket holds a fixed number of cells
//!   (8); a cell is a fingerprint remainder and a counter (2 bits), or empty.
//! - The element's hash gives its true fingerprint; a permutation per sub-table turns that into
//!   one bucket and one remainder per sub-table (`probe/dleft.rs`).
//! - **Insert**: if one of the element's `d` buckets already holds its remainder (the same
//!   element inserted before, or another element with the same true fingerprint), that cell's
//!   counter goes up. Otherwise the remainder goes into the least loaded of the `d` buckets,
//!   the leftmost sub-table on ties.
//! - **Contains / count**: the counter of the cell holding the element's remainder in one of
//!   its buckets (0 if none).
//! - **Remove**: that counter goes down, and the cell is emptied at zero.
//!
//! Because each sub-table's permutation is a bijection, a remainder in a bucket names exactly
//! one true fingerprint, and a fingerprint is stored in at most one cell: a removal can only
//! ever take the cell of its own fingerprint. A false positive happens when a query shares its
//! true fingerprint with a stored element: with `n` elements stored that is about
//! `n / (B · 2^r)`, 24 · 2⁻ʳ at the design load ([`DLeftParams`] has the sizing). At 1 % the
//! filter takes 18.7 bits per element (14-bit cells at 75 % load) where a 4-bit counting
//! filter takes 38.3.
//!
//! ## Limits
//! - **Full buckets.** An element whose `d` buckets are all full cannot be stored:
//!   [`DLeftCountingFilter::insert`] returns [`Error::Full`] and changes nothing. At the design
//!   capacity this is vanishingly rare (the most loaded bucket of d-left hashing stays within a
//!   small constant of the mean); well past it, it is the signal to build a larger filter.
//! - **Saturation.** A counter that reaches its maximum (3 with 2-bit counters) stays there, as
//!   in the counting filter: the fingerprint is never removed again. [`saturated`] counts such
//!   cells; [`DLeftParams::with_counter_bits`] gives wider counters.
//! - **Removing what was never inserted.** [`DLeftCountingFilter::remove`] refuses, with
//!   [`Error::NotPresent`], an element whose fingerprint is in none of its buckets. An element
//!   that was never inserted but shares its true fingerprint with one that was (a false
//!   positive) passes that check and takes the other's occurrence: remove only what your own
//!   records say you inserted.
//!
//! [`saturated`]: DLeftCountingFilter::saturated
//!
//! ```
//! use bloomkit::DLeftCountingFilter;
//! let mut sessions = DLeftCountingFilter::new(10_000, 0.01)?;
//! sessions.insert("s-1")?;
//! sessions.insert("s-2")?;
//! sessions.insert("s-2")?;
//! assert_eq!(sessions.count("s-2"), 2);
//! sessions.remove("s-1")?;
//! assert!(!sessions.contains("s-1"));
//! assert!(sessions.remove("never-seen").is_err()); // refused, nothing changed
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::hash::Hashing;
use crate::key::Key;
use crate::kind::Kind;
pub use crate::math::DLeftParams;
use crate::math::Params;
use crate::probe::dleft::DLeftProbe;
use crate::storage::PackedCells;

/// A d-left counting Bloom filter: fingerprints with small counters in `d` sub-tables.
#[derive(Clone, PartialEq)]
pub struct DLeftCountingFilter {
    params: DLeftParams,
    hashing: Hashing,
    probe: DLeftProbe,
    cells: PackedCells,
    /// Non-empty cells: the distinct fingerprints stored.
    occupied: u64,
}

/// Where an element's fingerprint is, or where it would go.
enum Slot {
    /// The cell that holds it, and its counter.
    Found { cell: u64, counter: u64 },
    /// Not stored: the first empty cell of its least loaded bucket (`None`: every bucket is
    /// full) and the remainder to store there.
    Absent { cell: Option<u64>, remainder: u64 },
}

impl DLeftCountingFilter {
    /// A filter for `capacity` elements at false-positive probability `fpp`, with the paper's
    /// shape ([`DLeftParams::for_capacity`]) and bloomkit's default hashing.
    pub fn new(capacity: u64, fpp: f64) -> Result<Self> {
        Self::from_params(
            DLeftParams::for_capacity(capacity, fpp)?,
            Hashing::default(),
        )
    }

    /// An empty filter of the given shape and hash function.
    pub fn from_params(params: DLeftParams, hashing: Hashing) -> Result<Self> {
        let params = params.validate()?;
        let cells = PackedCells::zeros(params.cells(), params.cell_bits())?;
        Ok(Self::assemble(params, hashing, cells, 0))
    }

    /// A filter from its parts (for example read from a file): there must be exactly
    /// `params.cells()` cells of `params.cell_bits()` bits, and every cell with a zero counter
    /// must be all zero.
    pub fn from_parts(params: DLeftParams, hashing: Hashing, cells: PackedCells) -> Result<Self> {
        let params = params.validate()?;
        if cells.len() != params.cells() || cells.width() != params.cell_bits() {
            return Err(Error::InvalidParameters(format!(
                "{} cells of {} bits for a d-left shape of {} cells of {} bits",
                cells.len(),
                cells.width(),
                params.cells(),
                params.cell_bits()
            )));
        }
        let counter_mask = (1u64 << params.counter_bits) - 1;
        let mut occupied = 0;
        for i in 0..cells.len() {
            let cell = cells.get(i);
            if cell & counter_mask != 0 {
                occupied += 1;
            } else if cell != 0 {
                return Err(Error::InvalidParameters(format!(
                    "cell {i} has a remainder but a zero counter"
                )));
            }
        }
        Ok(Self::assemble(params, hashing, cells, occupied))
    }

    fn assemble(params: DLeftParams, hashing: Hashing, cells: PackedCells, occupied: u64) -> Self {
        DLeftCountingFilter {
            probe: DLeftProbe::new(params.buckets, params.remainder_bits),
            params,
            hashing,
            cells,
            occupied,
        }
    }

    /// The filter's shape.
    pub fn params(&self) -> DLeftParams {
        self.params
    }

    /// The hash function.
    pub fn hashing(&self) -> &Hashing {
        &self.hashing
    }

    /// The cells (a cell is `counter | remainder << counter_bits`; 0 when empty).
    pub fn cells(&self) -> &PackedCells {
        &self.cells
    }

    /// The largest count a cell holds (`2^counter_bits − 1`); a counter there is saturated.
    pub fn counter_max(&self) -> u8 {
        ((1u32 << self.params.counter_bits) - 1) as u8
    }

    #[inline]
    fn counter_mask(&self) -> u64 {
        u64::from(self.counter_max())
    }

    /// Looks an element up by its encoded bytes.
    fn slot(&self, bytes: &[u8]) -> Slot {
        let [h1, h2] = self.hashing.hash128(bytes);
        let fp = self.probe.fingerprint(h1, h2);
        let (per_bucket, cb) = (
            u64::from(self.params.cells_per_bucket),
            self.params.counter_bits,
        );
        let mask = self.counter_mask();
        // (load, first empty cell, remainder) of the least loaded bucket so far.
        let mut best: Option<(u64, Option<u64>, u64)> = None;
        for table in 0..self.params.tables {
            let (bucket, remainder) = self.probe.locate(fp, table);
            let base = (u64::from(table) * self.params.buckets + bucket) * per_bucket;
            let (mut load, mut empty) = (0, None);
            for cell in base..base + per_bucket {
                let v = self.cells.get(cell);
                if v & mask == 0 {
                    empty = empty.or(Some(cell));
                } else if v >> cb == remainder {
                    return Slot::Found {
                        cell,
                        counter: v & mask,
                    };
                } else {
                    load += 1;
                }
            }
            // Strictly less: ties go to the leftmost sub-table.
            if best.is_none_or(|(l, _, _)| load < l) {
                best = Some((load, empty, remainder));
            }
        }
        let (_, cell, remainder) = best.expect("at least one sub-table");
        Slot::Absent { cell, remainder }
    }

    fn insert_bytes(&mut self, bytes: &[u8]) -> Result<bool> {
        match self.slot(bytes) {
            Slot::Found { cell, counter } => {
                if counter < self.counter_mask() {
                    self.cells.set(cell, self.cells.get(cell) + 1);
                }
                Ok(false)
            }
            Slot::Absent {
                cell: Some(cell),
                remainder,
            } => {
                self.cells
                    .set(cell, (remainder << self.params.counter_bits) | 1);
                self.occupied += 1;
                Ok(true)
            }
            Slot::Absent { cell: None, .. } => Err(Error::Full(format!(
                "all {} buckets this element can go to are full ({} cells each; {} distinct \
                 elements stored in {} cells): create the d-left filter with a larger capacity",
                self.params.tables,
                self.params.cells_per_bucket,
                self.occupied,
                self.params.cells()
            ))),
        }
    }

    fn count_bytes(&self, bytes: &[u8]) -> u8 {
        match self.slot(bytes) {
            Slot::Found { counter, .. } => counter as u8,
            Slot::Absent { .. } => 0,
        }
    }

    fn remove_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        let Slot::Found { cell, counter } = self.slot(bytes) else {
            return Err(Error::NotPresent);
        };
        if counter == self.counter_mask() {
            // Saturated: the true count is unknown, so the fingerprint stays.
        } else if counter == 1 {
            self.cells.set(cell, 0);
            self.occupied -= 1;
        } else {
            self.cells.set(cell, self.cells.get(cell) - 1);
        }
        Ok(())
    }

    /// Adds one occurrence of an element. Returns `true` if its fingerprint was new (a new cell
    /// was taken), `false` if an existing cell's counter went up (or stayed saturated).
    ///
    /// Fails with [`Error::Full`], changing nothing, when all of the element's buckets are full.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        key.with_bytes(|b| self.insert_bytes(b))
    }

    /// Whether the element may be present.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.count(key) != 0
    }

    /// The number of times the element was inserted, minus removals: the counter of its
    /// fingerprint's cell, 0 if none. Higher than the truth only for a false positive (another
    /// element with the same true fingerprint); equal to [`counter_max`](Self::counter_max)
    /// when saturated (read it as "at least").
    pub fn count<K: Key + ?Sized>(&self, key: &K) -> u8 {
        key.with_bytes(|b| self.count_bytes(b))
    }

    /// Removes one occurrence of an element.
    ///
    /// Refused with [`Error::NotPresent`], changing nothing, when the element's fingerprint is
    /// in none of its buckets (it was certainly never inserted). A saturated counter is left
    /// as it is. See the module docs for the hazard of removing a false positive.
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        key.with_bytes(|b| self.remove_bytes(b))
    }

    /// Distinct fingerprints stored (distinct elements, but for true-fingerprint collisions).
    pub fn len(&self) -> u64 {
        self.occupied
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.occupied == 0
    }

    /// Cells whose counter is saturated: fingerprints that will never be removed.
    pub fn saturated(&self) -> u64 {
        let max = self.counter_mask();
        (0..self.cells.len())
            .filter(|&i| self.cells.get(i) & max == max)
            .count() as u64
    }

    /// Fraction of cells in use.
    pub fn load(&self) -> f64 {
        self.occupied as f64 / self.params.cells() as f64
    }

    /// The false-positive probability with the fingerprints now stored.
    pub fn estimated_fpp(&self) -> f64 {
        self.params.expected_fpp(self.occupied)
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.cells.clear();
        self.occupied = 0;
    }

    /// Bytes of heap memory used by the cells.
    pub fn memory_bytes(&self) -> usize {
        self.cells.memory_bytes()
    }
}

impl Filter for DLeftCountingFilter {
    fn kind(&self) -> Kind {
        Kind::DLeft
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        self.insert_bytes(bytes)
    }
    fn remove_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        self.remove_bytes(bytes)
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.count_bytes(bytes) != 0
    }
    /// All cell bits, and `d` (the places an element is looked for) as the hash count.
    fn params(&self) -> Params {
        Params {
            bits: self.params.bits(),
            hashes: self.params.tables,
        }
    }
    fn estimated_len(&self) -> f64 {
        self.occupied as f64
    }
    crate::filter::inherent_filter_methods!(DLeftCountingFilter);
}

// Compile docs/COUNTING.md's examples as doctests so they cannot go stale.
#[doc = include_str!("../../../docs/COUNTING.md")]
#[cfg(doctest)]
pub struct CountingDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_set_refuses_and_changes_nothing() {
        // One bucket of two cells per table, two tables: room for exactly four fingerprints.
        let params = DLeftParams {
            tables: 2,
            buckets: 1,
            cells_per_bucket: 2,
            remainder_bits: 30,
            counter_bits: 2,
        };
        let mut f = DLeftCountingFilter::from_params(params, Hashing::Xxh3).unwrap();
        for i in 0..4u64 {
            assert!(f.insert(&i).unwrap());
        }
        let before = f.clone();
        let err = f.insert(&4u64).unwrap_err();
        assert!(matches!(err, Error::Full(_)), "{err}");
        assert!(err.to_string().contains("larger capacity"), "{err}");
        assert!(f == before);
        // A stored element still counts up when every bucket is full.
        assert!(!f.insert(&2u64).unwrap());
        assert_eq!(f.count(&2u64), 2);
        // Loads balance: two per table, ties to the left.
        assert_eq!(f.len(), 4);
    }

    #[test]
    fn saturated_counters_stay() {
        let params = DLeftParams::for_capacity(100, 0.01)
            .unwrap()
            .with_counter_bits(1)
            .unwrap();
        let mut f = DLeftCountingFilter::from_params(params, Hashing::Xxh3).unwrap();
        f.insert("x").unwrap();
        assert_eq!((f.count("x"), f.saturated()), (1, 1));
        f.remove("x").unwrap();
        assert_eq!(f.count("x"), 1);
        assert!(f.contains("x"));
    }

    #[test]
    fn cells_with_a_remainder_and_no_count_are_refused() {
        let f = DLeftCountingFilter::new(100, 0.01).unwrap();
        let p = f.params();
        let mut cells = PackedCells::zeros(p.cells(), p.cell_bits()).unwrap();
        cells.set(5, 1 << p.counter_bits);
        assert!(DLeftCountingFilter::from_parts(p, Hashing::Xxh3, cells).is_err());
        let short = PackedCells::zeros(p.cells() - 1, p.cell_bits()).unwrap();
        assert!(DLeftCountingFilter::from_parts(p, Hashing::Xxh3, short).is_err());
    }
}
