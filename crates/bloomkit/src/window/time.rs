//! [`TimeWindowFilter`]: remembers what was inserted within the last span of time.
//!
//! The window `T` is cut into `G` generations of `d = ⌈T / G⌉` milliseconds each, numbered
//! by the clock: the generation of time `t` is `⌊t / d⌋` (the same numbering on every machine,
//! so processes sharing a file agree on it). The filter keeps a ring of `G + 1` blocked filters
//! ([`BlockedBloomFilter`]), one per live generation: inserts go to the current generation
//! (the slot it replaces is cleared first), queries test every live generation. So
//!
//! - an element inserted at `t` is found at every `t' ≤ t + G·d` (its generation is at most
//!   `G` generations before the current one, still live): nothing inserted within the window
//!   is ever missed;
//! - at `t' > t + (G + 1)·d` (one window plus one generation later) its generation has left
//!   the ring, and the element is found only as a false positive of the generations inserted
//!   since.
//!
//! Each generation is sized for `⌈N / G⌉` elements (`N` = the expected insertions per window)
//! at the FPR `0.9 · (1 - (1 - p)^(1/(G + 1)))`, so that a query of all `G + 1` generations
//! stays within `p` ([`sizing::generation_fpp`], with a 10% margin).
//!
//! Time comes from an injected [`Clock`] ([`SystemClock`] by default). A clock that goes
//! backwards is taken as no time passing: the filter never moves to an older generation, so a
//! step back (an NTP correction) can never drop an element inside the window; inserts go on
//! into the newest generation until the clock passes it again.
//!
//! ```
//! use bloomkit::clock::ManualClock;
//! use bloomkit::window::TimeWindowFilter;
//! use std::{sync::Arc, time::Duration};
//! let day = Duration::from_secs(86_400);
//! let clock = Arc::new(ManualClock::new(0));
//! let mut seen = TimeWindowFilter::new(30 * day, 30, 100_000, 0.01)?.with_clock(clock.clone());
//! seen.insert("https://example.com/");
//! clock.advance(30 * day);
//! assert!(seen.contains("https://example.com/"), "within the window: always found");
//! clock.advance(2 * day);
//! assert!(!seen.contains("https://example.com/"), "a window and a generation later: forgotten");
//! # Ok::<(), bloomkit::Error>(())
//! ```

use super::sizing;
use crate::blocked::BlockedBloomFilter;
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::hash::Hashing;
use crate::key::Key;
use crate::kind::Kind;
use crate::math::Params;
use crate::spec::BlockSpec;
use std::sync::Arc;
use std::time::Duration;

/// At most this many generations per window.
pub const MAX_GENERATIONS: u32 = 1000;

/// The longest window, in milliseconds: 100 years of 365.25 days. Longer ones only arise from
/// mistaken units, and this bound keeps every time the windows compute (the oldest generation
/// read, a Redis generation's expiry) far inside 64-bit milliseconds.
pub const MAX_WINDOW_MS: u64 = 36_525 * 86_400_000;

/// A filter of the last span of time. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct TimeWindowFilter {
    /// The window, in milliseconds.
    window_ms: u64,
    /// Generations per window (`G`); the ring has `G + 1` slots.
    generations: u32,
    /// Length of a generation, in milliseconds.
    generation_ms: u64,
    /// Expected insertions per window and target FPR.
    capacity: u64,
    fpp: f64,
    /// The ring: slot `e % (G + 1)` holds generation `e`.
    slots: Vec<BlockedBloomFilter>,
    /// Per slot: its generation number plus one (0: never used).
    epochs: Vec<u64>,
    /// The newest generation ever current, plus one (0: none): time never goes back past it.
    newest: u64,
    clock: Arc<dyn Clock>,
}

impl PartialEq for TimeWindowFilter {
    /// Equal contents and parameters (the clocks are not compared).
    fn eq(&self, other: &Self) -> bool {
        self.window_ms == other.window_ms
            && self.generations == other.generations
            && self.generation_ms == other.generation_ms
            && self.capacity == other.capacity
            && self.fpp == other.fpp
            && self.slots == other.slots
            && self.epochs == other.epochs
            && self.newest == other.newest
    }
}

/// One live generation of a [`TimeWindowFilter`], as [`TimeWindowFilter::generations_live`]
/// reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Generation {
    /// Its number: it began at `number · generation_ms` ms since the epoch.
    pub number: u64,
    /// Generations before the current one (0: the current one).
    pub age: u64,
    /// Fraction of its bits set.
    pub fill: f64,
    /// Estimated distinct elements inserted into it.
    pub estimated_len: f64,
}

impl TimeWindowFilter {
    /// A filter that remembers what was inserted within `window`, cut into `generations`
    /// generations, for `capacity` insertions per window at FPR `fpp`; XXH3 hashing, the
    /// system clock. Each generation is sized for `capacity / generations` insertions (an
    /// even rate): a burst beyond that within one generation raises the FPR.
    pub fn new(window: Duration, generations: u32, capacity: u64, fpp: f64) -> Result<Self> {
        Self::with_hashing(window, generations, capacity, fpp, Hashing::Xxh3)
    }

    /// The bytes of memory a filter of these parameters would hold (its generations' blocks),
    /// without allocating them: for a caller that checks the machine's memory first. The same
    /// errors as [`new`](Self::new) for parameters it refuses.
    pub fn planned_bytes(
        window: Duration,
        generations: u32,
        capacity: u64,
        fpp: f64,
    ) -> Result<u64> {
        let (_, spec) = design(millis(window), generations, capacity, fpp)?;
        Ok(spec
            .blocks()
            .saturating_mul(64)
            .saturating_mul(u64::from(generations) + 1))
    }

    /// Like [`new`](Self::new) with another hash function.
    pub fn with_hashing(
        window: Duration,
        generations: u32,
        capacity: u64,
        fpp: f64,
        hashing: Hashing,
    ) -> Result<Self> {
        let window_ms = millis(window);
        let (generation_ms, spec) = design(window_ms, generations, capacity, fpp)?;
        let spec = spec.with_hashing(hashing);
        let slots = (0..=generations)
            .map(|_| BlockedBloomFilter::from_spec(spec.clone()))
            .collect::<Result<Vec<_>>>()?;
        let epochs = vec![0; slots.len()];
        let times = (window_ms, generations, generation_ms);
        Ok(Self::ring(times, (capacity, fpp), slots, epochs))
    }

    /// The filter of checked parts (the window and a generation in ms, the generations; the
    /// capacity and FPR), on the system clock; time never goes back past the newest
    /// generation in `epochs`.
    fn ring(
        (window_ms, generations, generation_ms): (u64, u32, u64),
        (capacity, fpp): (u64, f64),
        slots: Vec<BlockedBloomFilter>,
        epochs: Vec<u64>,
    ) -> Self {
        TimeWindowFilter {
            window_ms,
            generations,
            generation_ms,
            capacity,
            fpp,
            newest: epochs.iter().copied().max().unwrap_or(0),
            slots,
            epochs,
            clock: Arc::new(SystemClock),
        }
    }

    /// A filter from its parts, for example read from a file: `slots[i]` holds generation
    /// `epochs[i] - 1` (`epochs[i] = 0`: unused). Reads the system clock.
    pub(crate) fn from_parts(
        window_ms: u64,
        generations: u32,
        capacity: u64,
        fpp: f64,
        slots: Vec<BlockedBloomFilter>,
        epochs: Vec<u64>,
    ) -> Result<Self> {
        let (generation_ms, spec) = design(window_ms, generations, capacity, fpp)?;
        let ring = generations as usize + 1;
        let bad = |why: String| Err(Error::InvalidParameters(why));
        if slots.len() != ring || epochs.len() != ring {
            return bad(format!(
                "a time window of {generations} generations has {ring} slots, not {}",
                slots.len()
            ));
        }
        if slots.iter().any(|s| s.spec().blocks() != spec.blocks()) {
            return bad("every generation of a time window has the same size".into());
        }
        for (i, &e) in epochs.iter().enumerate() {
            if e != 0 && (e - 1) % ring as u64 != i as u64 {
                return bad(format!(
                    "generation {} cannot be in slot {i} of {ring}",
                    e - 1
                ));
            }
        }
        let times = (window_ms, generations, generation_ms);
        Ok(Self::ring(times, (capacity, fpp), slots, epochs))
    }

    /// The same filter reading time from `clock` (a [`ManualClock`](crate::clock::ManualClock)
    /// in tests and simulations).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The window.
    pub fn window(&self) -> Duration {
        Duration::from_millis(self.window_ms)
    }

    /// Generations per window (`G`; the filter keeps `G + 1`).
    pub fn generations(&self) -> u32 {
        self.generations
    }

    /// Length of one generation.
    pub fn generation_length(&self) -> Duration {
        Duration::from_millis(self.generation_ms)
    }

    /// Expected insertions per window.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Target FPR.
    pub fn fpp(&self) -> f64 {
        self.fpp
    }

    /// The spec of each generation's blocked filter.
    pub fn generation_spec(&self) -> &BlockSpec {
        self.slots[0].spec()
    }

    /// The hash function.
    pub fn hashing(&self) -> &Hashing {
        self.slots[0].hashing()
    }

    /// The ring's slots and their generation numbers plus one (for the file format).
    pub(crate) fn slots(&self) -> (&[BlockedBloomFilter], &[u64]) {
        (&self.slots, &self.epochs)
    }

    /// The current generation's number: the clock's, or the newest one seen if the clock
    /// went back.
    pub fn current_generation(&self) -> u64 {
        let now = self.clock.now_ms() / self.generation_ms;
        now.max(self.newest.saturating_sub(1))
    }

    /// The slots whose generation is live at generation `current`.
    fn live(&self, current: u64) -> impl Iterator<Item = usize> + '_ {
        let oldest = current.saturating_sub(u64::from(self.generations));
        self.epochs
            .iter()
            .enumerate()
            .filter(move |(_, &e)| e > oldest && e <= current + 1)
            .map(|(i, _)| i)
    }

    /// The live generations, newest first, with their fill.
    pub fn generations_live(&self) -> Vec<Generation> {
        let current = self.current_generation();
        let mut out: Vec<Generation> = self
            .live(current)
            .map(|i| {
                let s = &self.slots[i];
                Generation {
                    number: self.epochs[i] - 1,
                    age: current - (self.epochs[i] - 1),
                    fill: s.count_ones() as f64 / s.bits() as f64,
                    estimated_len: s.estimated_len(),
                }
            })
            .collect();
        out.sort_by_key(|g| g.age);
        out
    }

    fn contains_hash(&self, current: u64, [h1, h2]: [u64; 2]) -> bool {
        self.live(current)
            .any(|i| self.slots[i].contains_hash(h1, h2))
    }

    /// Makes the current generation's slot hold it (clearing the generation it held).
    fn rotate(&mut self) -> usize {
        let current = self.current_generation();
        let slot = (current % self.slots.len() as u64) as usize;
        if self.epochs[slot] != current + 1 {
            self.slots[slot].clear();
            self.epochs[slot] = current + 1;
        }
        self.newest = self.newest.max(current + 1);
        slot
    }

    fn insert_hash(&mut self, h: [u64; 2]) -> bool {
        let slot = self.rotate();
        let new = !self.contains_hash(self.current_generation(), h);
        self.slots[slot].insert_hash(h[0], h[1]);
        new
    }

    /// Inserts an element into the current generation (renewing it if it was there); returns
    /// `true` if it was not found in the window before.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = self.slots[0].hash(key);
        self.insert_hash(h)
    }

    /// Whether the element may have been inserted within the window (always `true` if it
    /// was).
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.current_generation(), self.slots[0].hash(key))
    }

    /// Inserts the element; returns whether it was (probably) there before.
    pub fn check_and_insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        !self.insert(key)
    }

    /// Inserts every element of `keys` into the current generation (the clock is read once).
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        let slot = self.rotate();
        self.slots[slot].insert_batch(keys);
    }

    /// Tests every element of `keys` (the clock is read once; each live generation is tested
    /// with its prefetching batch path).
    pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Vec<bool> {
        let mut out = vec![false; keys.len()];
        let mut part = vec![false; keys.len()];
        for i in self.live(self.current_generation()) {
            self.slots[i].contains_batch_into(keys, &mut part);
            out.iter_mut().zip(&part).for_each(|(o, &p)| *o |= p);
        }
        out
    }

    /// Estimated number of distinct elements inserted within the live generations (an element
    /// inserted in two generations counts twice).
    pub fn estimated_len(&self) -> f64 {
        let current = self.current_generation();
        self.live(current)
            .map(|i| self.slots[i].estimated_len())
            .sum()
    }

    /// The FPR of a query given the live generations' bits: `1 - ∏(1 - pᵢ)`.
    pub fn estimated_fpp(&self) -> f64 {
        let current = self.current_generation();
        1.0 - self
            .live(current)
            .map(|i| 1.0 - self.slots[i].estimated_fpp())
            .product::<f64>()
    }

    /// Bytes of memory held by all generations.
    pub fn memory_bytes(&self) -> usize {
        self.slots
            .iter()
            .map(BlockedBloomFilter::memory_bytes)
            .sum()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(BlockedBloomFilter::clear);
        self.epochs.fill(0);
        self.newest = 0;
    }
}

/// A window in whole milliseconds, saturated (a longer one than `u64` holds is refused by
/// [`design`] as longer than [`MAX_WINDOW_MS`]).
fn millis(window: Duration) -> u64 {
    u64::try_from(window.as_millis()).unwrap_or(u64::MAX)
}

/// Checks a time window's parameters; returns its generation length and each generation's
/// blocked spec.
fn design(window_ms: u64, generations: u32, capacity: u64, fpp: f64) -> Result<(u64, BlockSpec)> {
    let bad = |why: String| Err(Error::InvalidParameters(why));
    if window_ms == 0 {
        return bad("a time window must be longer than zero".into());
    }
    if window_ms > MAX_WINDOW_MS {
        return bad(format!(
            "a time window lasts at most 100 years ({MAX_WINDOW_MS} ms), not {window_ms} ms"
        ));
    }
    if !(1..=MAX_GENERATIONS).contains(&generations) {
        return bad(format!(
            "a time window has 1 to {MAX_GENERATIONS} generations, not {generations}"
        ));
    }
    if capacity == 0 {
        return bad("a time window needs a capacity of at least one insertion per window".into());
    }
    if u64::from(generations) > capacity {
        return bad(format!(
            "{generations} generations for {capacity} insertions per window: more generations than elements (use at most {capacity})"
        ));
    }
    if u64::from(generations) > window_ms {
        return bad(format!(
            "{generations} generations in a window of {window_ms} ms: a generation must last at least 1 ms"
        ));
    }
    let generation_ms = window_ms.div_ceil(u64::from(generations));
    let per_generation = capacity.div_ceil(u64::from(generations));
    let p = sizing::generation_fpp(fpp, generations + 1)?;
    Ok((generation_ms, BlockSpec::for_capacity(per_generation, p)?))
}

impl Filter for TimeWindowFilter {
    fn kind(&self) -> Kind {
        Kind::TimeWindow
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        Ok(self.insert(bytes))
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.contains(bytes)
    }
    fn params(&self) -> Params {
        let spec = self.generation_spec();
        Params {
            bits: spec.bits() * self.slots.len() as u64,
            hashes: spec.hashes(),
        }
    }
    fn estimated_len(&self) -> f64 {
        TimeWindowFilter::estimated_len(self)
    }
    fn estimated_fpp(&self) -> f64 {
        TimeWindowFilter::estimated_fpp(self)
    }
    fn memory_bytes(&self) -> usize {
        TimeWindowFilter::memory_bytes(self)
    }
    fn clear(&mut self) {
        TimeWindowFilter::clear(self)
    }
}
