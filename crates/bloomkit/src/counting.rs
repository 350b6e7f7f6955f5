//! The counting Bloom filter: counters instead of bits, so elements can be removed and their
//! frequency estimated.
//!
//! Each element maps to `k` counters through the same [`Spec`] as a classic filter (same key
//! encoding, hashing and probing). Insert adds one to each; remove subtracts one; an element
//! tests present when all its counters are non-zero; its *count* is the minimum of its counters
//! (the spectral Bloom filter estimate: never below the true number of insertions, higher only
//! when other elements share all of its counters).
//!
//! ## Memory
//! With 4-bit counters (the default) a counting filter takes 4× the memory of a classic filter
//! with the same `m`: 38.3 bits per element at 1% instead of 9.6. 8-bit counters take 8×.
//! 4-bit counters overflow with probability below 1.4e-15 per counter at the optimal load
//! (Fan et al., 2000), and an overflowing counter saturates rather than wraps.
//!
//! ## Saturation
//! A counter that reaches its maximum (15 or 255) stays there: it is neither incremented nor
//! decremented again. Past that point the true count is unknown; decrementing it could bring it
//! to zero while elements that map to it are still present, which would be a false negative.
//! A saturated counter costs a little accuracy (it never returns to zero), never correctness.
//!
//! ## Minimal increase (Cohen and Matias, 2003)
//! [`CountingBloomFilter::with_minimal_increase`] switches insertion to the spectral Bloom
//! filter's *minimal increase*: only the element's smallest counters go up (those equal to the
//! minimum); the others already exceed it. Every counter of an element still stays at or above
//! its true count, so [`CountingBloomFilter::count`] never under-estimates, and counters that
//! other elements inflated are not inflated further: on skewed streams the over-estimates
//! fall sharply (`docs/COUNTING.md` has the figures). The price is removal: decrementing an
//! element's counters could take a counter that another element relies on below that
//! element's count, so a minimal-increase filter refuses [`remove`](CountingBloomFilter::remove)
//! with [`Error::Unsupported`]. The choice is stored in the filter's file.
//!
//! ```
//! use bloomkit::CountingBloomFilter;
//! let mut words = CountingBloomFilter::new(1000, 0.01)?.with_minimal_increase();
//! for _ in 0..3 {
//!     words.insert("the");
//! }
//! assert!(words.count("the") >= 3);
//! assert!(words.remove("the").is_err()); // minimal increase cannot remove
//! # Ok::<(), bloomkit::Error>(())
//! ```
//!
//! ## The hazard of removing what was never inserted
//! [`CountingBloomFilter::remove`] refuses, with [`Error::NotPresent`], an element one of whose
//! counters is zero: such an element was certainly never inserted. But an element that was never
//! inserted and happens to be a *false positive* passes that check, and removing it decrements
//! counters that belong to other elements: some of them may then test absent. The filter cannot
//! tell a false positive from a member, so no API can make arbitrary removal safe.
//!
//! The safe pattern: remove only elements you know you inserted, according to a record of your
//! own (the database row being deleted, the session that expired, the subscriber list), not
//! according to the filter. The filter answers "maybe present" for membership tests; your
//! record answers "was inserted" for removals.
//!
//! ```
//! use bloomkit::CountingBloomFilter;
//! let mut sessions = CountingBloomFilter::new(10_000, 0.01)?;
//! sessions.insert("s-1");
//! sessions.insert("s-2");
//! sessions.insert("s-2");
//! assert_eq!(sessions.count("s-2"), 2);
//! sessions.remove("s-1")?;                      // "s-1" is known to have been inserted
//! assert!(!sessions.contains("s-1"));
//! assert!(sessions.remove("never-seen").is_err()); // refused, nothing changed
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::classic::BloomFilter;
use crate::error::{Error, Incompatibility, Result};
use crate::filter::Filter;
use crate::key::Key;
use crate::math::{self, Params};
use crate::probe::Digest;
use crate::spec::Spec;
use crate::storage::{CounterWidth, Counters};
use std::fmt;

/// A Bloom filter of packed saturating counters (4-bit by default).
#[derive(Clone, PartialEq, Eq)]
pub struct CountingBloomFilter {
    spec: Spec,
    counters: Counters,
    /// Inserts by minimal increase (and so cannot remove).
    minimal_increase: bool,
}

impl CountingBloomFilter {
    /// A filter for `capacity` elements at false-positive probability `fpp`, with bloomkit's
    /// default sizing, hashing and probing, and 4-bit counters.
    pub fn new(capacity: u64, fpp: f64) -> Result<Self> {
        Self::from_spec(Spec::for_capacity(capacity, fpp)?, CounterWidth::Four)
    }

    /// An empty filter with the given spec (`m` counters, `k` hashes) and counter width.
    pub fn from_spec(spec: Spec, width: CounterWidth) -> Result<Self> {
        let counters = Counters::zeros(spec.bits(), width)?;
        Ok(CountingBloomFilter {
            spec,
            counters,
            minimal_increase: false,
        })
    }

    /// A filter from its parts (for example read from a file). There must be exactly
    /// `spec.bits()` counters.
    pub fn from_parts(spec: Spec, counters: Counters) -> Result<Self> {
        if counters.len() != spec.bits() {
            return Err(Error::InvalidParameters(format!(
                "{} counters for a spec of {} positions",
                counters.len(),
                spec.bits()
            )));
        }
        Ok(CountingBloomFilter {
            spec,
            counters,
            minimal_increase: false,
        })
    }

    /// The same filter, inserting from now on by minimal increase (see the module docs): more
    /// accurate counts, no removal. The switch is one-way: the counters of a filter that
    /// inserted by minimal increase no longer support removal.
    pub fn with_minimal_increase(mut self) -> Self {
        self.minimal_increase = true;
        self
    }

    /// Whether the filter inserts by minimal increase (and so refuses removals).
    pub fn is_minimal_increase(&self) -> bool {
        self.minimal_increase
    }

    /// The filter's spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Counter width.
    pub fn width(&self) -> CounterWidth {
        self.counters.width()
    }

    /// Adds one occurrence of an element. Returns `true` if it was new (some counter was zero).
    ///
    /// Every counter of the element goes up by one or, with minimal increase, only those equal
    /// to the smallest of them (a counter shared by two of its probes goes up once).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let d = self.spec.digest(key);
        if self.minimal_increase {
            let min = self.min_counter(&d);
            let counters = &mut self.counters;
            // After its increment a counter exceeds `min`, so a repeated probe skips it.
            self.spec.for_each_position(&d, |i| {
                if counters.get(i) == min {
                    counters.increment(i);
                }
                true
            });
            return min == 0;
        }
        let counters = &mut self.counters;
        let mut new = false;
        self.spec.for_each_position(&d, |i| {
            new |= counters.increment(i) == 0;
            true
        });
        new
    }

    /// Whether the element may be present (all its counters are non-zero).
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        let d = self.spec.digest(key);
        self.contains_digest(&d)
    }

    fn contains_digest(&self, d: &Digest) -> bool {
        let counters = &self.counters;
        self.spec.for_each_position(d, |i| counters.get(i) != 0)
    }

    /// The estimated number of times the element was inserted (minus removals): the minimum
    /// of its counters. Never below the true count; equal to the counter maximum when
    /// saturated (read it as "at least").
    pub fn count<K: Key + ?Sized>(&self, key: &K) -> u8 {
        self.min_counter(&self.spec.digest(key))
    }

    fn min_counter(&self, d: &Digest) -> u8 {
        let mut min = u8::MAX;
        let counters = &self.counters;
        self.spec.for_each_position(d, |i| {
            min = min.min(counters.get(i));
            min != 0
        });
        min
    }

    /// Removes one occurrence of an element.
    ///
    /// Refused with [`Error::NotPresent`], changing nothing, when the element cannot be
    /// present: one of its counters is zero (or, where two of its probes share a counter, is
    /// below the number of probes that share it). Saturated counters are left as they are.
    /// See the module docs for the hazard of removing a false positive.
    ///
    /// A filter that inserts by minimal increase refuses every removal with
    /// [`Error::Unsupported`].
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        if self.minimal_increase {
            return Err(Error::Unsupported {
                operation: "remove",
                kind: "minimal-increase counting",
            });
        }
        let d = self.spec.digest(key);
        let mut positions = Vec::with_capacity(self.spec.hashes() as usize);
        self.spec.for_each_position(&d, |i| {
            positions.push(i);
            true
        });
        positions.sort_unstable();
        let max = self.counters.width().max();
        for run in positions.chunk_by(|a, b| a == b) {
            let value = self.counters.get(run[0]);
            if value != max && usize::from(value) < run.len() {
                return Err(Error::NotPresent);
            }
        }
        for &i in &positions {
            self.counters.decrement(i);
        }
        Ok(())
    }

    /// Adds every element of `other`, counter by counter (saturating). Specs, counter widths
    /// and insertion modes (minimal increase or not) must be equal.
    pub fn union(&mut self, other: &CountingBloomFilter) -> Result<()> {
        self.check_compatible(other)?;
        self.counters.saturating_add(&other.counters);
        Ok(())
    }

    fn check_compatible(&self, other: &CountingBloomFilter) -> Result<()> {
        self.spec.check_compatible(&other.spec)?;
        if self.width() != other.width() {
            return Err(Error::Incompatible(Incompatibility::Kind(
                format!("{}-bit counting", self.width().bits()),
                format!("{}-bit counting", other.width().bits()),
            )));
        }
        if self.minimal_increase != other.minimal_increase {
            let mode = |mi| {
                if mi {
                    "minimal-increase counting"
                } else {
                    "counting"
                }
            };
            return Err(Error::Incompatible(Incompatibility::Kind(
                mode(self.minimal_increase).into(),
                mode(other.minimal_increase).into(),
            )));
        }
        Ok(())
    }

    /// The classic filter with the same spec whose bit `i` is set where counter `i` is
    /// non-zero: it answers `contains` exactly as this filter does, in a quarter (or an eighth)
    /// of the memory, but can no longer remove.
    pub fn to_bloom_filter(&self) -> BloomFilter {
        let m = self.spec.bits();
        let mut words = vec![0u64; m.div_ceil(64) as usize];
        for i in 0..m {
            if self.counters.get(i) != 0 {
                words[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        BloomFilter::from_words(self.spec.clone(), words)
            .expect("words built for exactly this spec")
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.counters.clear();
    }

    /// Number of non-zero counters.
    pub fn count_nonzero(&self) -> u64 {
        self.counters.count_nonzero()
    }

    /// Estimated number of distinct elements present (from the non-zero counters, as
    /// [`math::estimate_count`] does from set bits).
    pub fn estimated_len(&self) -> f64 {
        math::estimate_count(self.spec.bits(), self.spec.hashes(), self.count_nonzero())
    }

    /// Estimated false-positive probability given the non-zero counters.
    pub fn estimated_fpp(&self) -> f64 {
        let fill = self.count_nonzero() as f64 / self.spec.bits() as f64;
        math::fpp_from_fill(fill, self.spec.hashes())
    }

    /// Bytes of heap memory used by the counters.
    pub fn memory_bytes(&self) -> usize {
        self.counters.memory_bytes()
    }
}

impl fmt::Debug for CountingBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountingBloomFilter")
            .field("spec", &self.spec)
            .field("counter_bits", &self.width().bits())
            .field("minimal_increase", &self.minimal_increase)
            .finish()
    }
}

impl Filter for CountingBloomFilter {
    fn kind(&self) -> crate::Kind {
        crate::Kind::Counting
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        Ok(self.insert(bytes))
    }
    fn remove_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        self.remove(bytes)
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.contains(bytes)
    }
    fn params(&self) -> Params {
        self.spec.params()
    }
    fn estimated_len(&self) -> f64 {
        CountingBloomFilter::estimated_len(self)
    }
    crate::filter::inherent_filter_methods!(CountingBloomFilter);
}
