//! The classic Bloom filter: one bit array, `k` probes anywhere in it.
//!
//! ```
//! use bloomkit::BloomFilter;
//! let mut seen = BloomFilter::new(1_000_000, 0.01).unwrap();
//! assert!(seen.insert("https://example.com/"));      // new
//! assert!(!seen.insert("https://example.com/"));     // already there
//! assert!(seen.contains("https://example.com/"));
//! assert!(!seen.contains("https://example.org/"));   // definitely not inserted
//! ```
//!
//! [`BloomFilter`] and its lock-free twin [`AtomicBloomFilter`](crate::AtomicBloomFilter)
//! (in [`crate::concurrent`]) are generated from one source, the `classic_filter!` macro
//! below: the same methods with the same code, over a [`BitVec`] or an
//! [`AtomicBitVec`](crate::storage::AtomicBitVec). Only the receivers of the bit-setting
//! methods differ (`&mut self` for the plain filter, `&self` for the atomic one). The probing
//! loop itself is `insert_positions` / `contains_positions`, which memory-mapped files
//! ([`crate::mmap`]) use too; batches (`insert_batch`, `contains_batch`) run them in a
//! pipeline (`insert_items` / `contains_items`) that prefetches each element's lines first.

use crate::error::Result;
use crate::filter::Filter;
use crate::key::Key;
use crate::math::Params;
use crate::probe::{mixed_double, Digest, Scheme};
use crate::spec::Spec;
use crate::storage::{in_core_cache, BitVec};
use std::fmt;

/// The false-positive probability used when a filter is built by [`FromIterator`].
pub const DEFAULT_FPP: f64 = 0.01;

/// Sets an element's `k` bits with `set` (which returns whether the bit was clear); `true` if
/// any was. The one insert loop of every classic storage.
///
/// bloomkit's default scheme is walked here, inline, with the "was any bit clear" flag in a
/// register: held in memory (as a closure passed out of line needs it), its store in every probe
/// would wait for that probe's cache miss and fill the CPU's store queue, which limits how many
/// elements' misses overlap.
#[inline(always)]
pub(crate) fn insert_positions(spec: &Spec, d: &Digest, mut set: impl FnMut(u64) -> bool) -> bool {
    if spec.scheme() == Scheme::MixedDouble {
        return mixed_double(d, spec.hashes(), spec.bits()).fold(false, |new, i| set(i) | new);
    }
    let mut new = false;
    spec.for_each_position(d, |i| {
        new |= set(i);
        true
    });
    new
}

/// Whether all of an element's `k` bits are set (`bit` reads one as 0 or 1), stopping at the
/// first clear one after the first [`READ_TOGETHER`]. The one query loop of every classic
/// storage.
#[inline(always)]
pub(crate) fn contains_positions(spec: &Spec, d: &Digest, bit: impl Fn(u64) -> u64) -> bool {
    let (k, m) = (spec.hashes(), spec.bits());
    if spec.scheme() == Scheme::MixedDouble && k >= READ_TOGETHER {
        let mut positions = mixed_double(d, k, m);
        // A sum of the bits, not `&&` nor `&` of booleans, which the compiler splits back into
        // one branch per bit.
        let set: u64 = positions
            .by_ref()
            .take(READ_TOGETHER as usize)
            .map(&bit)
            .sum();
        if set != u64::from(READ_TOGETHER) {
            return false;
        }
        return positions.all(|i| bit(i) != 0);
    }
    spec.scheme().for_each_position(d, k, m, |i| bit(i) != 0)
}

/// How many of an element's first bits a query of the default scheme reads before its first
/// branch on them, so that the CPU issues their loads at once whatever it predicts. In a full
/// filter half the bits are set, so for absent elements a branch per bit mispredicts often,
/// and each load issued only after such a branch resolves adds a whole cache miss to the
/// query. Three measured best (absent URL keys at n = 10⁷: 1.27× fastbloom's time with a
/// branch per bit, 1.04–1.09× reading two, 0.83–0.94× three, 0.84–0.89× four, which read
/// more for present u64 keys; `benches/interleaved.rs`, docs/BENCHMARKS.md).
const READ_TOGETHER: u32 = 3;

/// How many positions (cache lines) ahead of its probes a classic batch prefetches: the lines
/// of 16 elements at `k` = 7 (1 %), as many as the pipeline held when it kept elements, not
/// positions (4 to 16 elements measured alike, 32 slower: docs/BENCHMARKS.md). A batch keeps
/// `LINES_AHEAD / k` elements in flight; filters with more than `LINES_AHEAD` probes per
/// element (far past any useful `k`) run their batches one element after the other.
const LINES_AHEAD: usize = 16 * 7;

/// How many elements a classic batch keeps between prefetch and probe for `k` positions each
/// (`k <= LINES_AHEAD`).
fn elements_ahead(k: u32) -> usize {
    LINES_AHEAD / k as usize
}

/// Whether a classic batch over `spec` runs one element after the other: its bit array is in
/// the core's own cache ([`in_core_cache`]), where there are no misses to overlap and the
/// pipeline only costs instructions (see `storage/cache.rs`), or its `k` is beyond
/// [`LINES_AHEAD`].
fn one_by_one(spec: &Spec) -> bool {
    in_core_cache(spec.bits() / 8) || spec.hashes() as usize > LINES_AHEAD
}

/// The software pipeline of the classic batches: item `i` (a key, or a digest computed before)
/// is hashed by `digest`, its positions computed and kept in a ring, and the lines of its first
/// `early` positions prefetched, about [`LINES_AHEAD`] positions before `probe(i, positions)`
/// reads them back; half as far ahead, `middle(positions)` may prefetch more. The cache misses
/// of many elements overlap, and each position is computed once.
///
/// Holding the positions instead of the digest (the pipeline computed them a second time at
/// the probe, and a third for the two-stage query) took 0.85–0.94× the time for batch inserts
/// of URL keys and 0.79–0.92× for batch queries of present ones at n = 10⁶ and 3·10⁶ (1.2 and
/// 3.6 MB of bits), level for absent ones, which stop at their first bits (docs/BENCHMARKS.md,
/// "The classic filter's batches").
#[inline(always)]
fn ring_pipeline<T>(
    spec: &Spec,
    prefetch: impl Fn(u64),
    early: usize,
    items: &[T],
    digest: impl Fn(&T) -> Digest,
    middle: impl Fn(&[u64]),
    mut probe: impl FnMut(usize, &[u64]),
) {
    let (scheme, k, m) = (spec.scheme(), spec.hashes(), spec.bits());
    let width = k as usize;
    let ahead = elements_ahead(k);
    let half = ahead / 2;
    let mut ring = [0u64; LINES_AHEAD];
    let fill = |slot: &mut [u64], item: &T| {
        let d = digest(item);
        if scheme == Scheme::MixedDouble {
            for (j, (p, i)) in slot.iter_mut().zip(mixed_double(&d, k, m)).enumerate() {
                *p = i;
                if j < early {
                    prefetch(i);
                }
            }
        } else {
            let mut j = 0;
            scheme.for_each_position(&d, k, m, |i| {
                slot[j] = i;
                if j < early {
                    prefetch(i);
                }
                j += 1;
                true
            });
        }
    };
    let slots = ring[..ahead * width].chunks_exact_mut(width);
    for (slot, item) in slots.zip(&items[..items.len().min(ahead)]) {
        fill(slot, item);
    }
    let staged = early < width;
    if staged {
        let first = ring[..items.len().min(half) * width].chunks_exact(width);
        first.for_each(&middle);
    }
    // `at` is the ring offset of item `i`, `mid` that of item `i + half`; there is no middle
    // stage when every line is prefetched early.
    let end = ahead * width;
    let (mut at, mut mid) = (0, half * width);
    for i in 0..items.len() {
        if staged {
            if i + half < items.len() {
                middle(&ring[mid..mid + width]);
            }
            mid = if mid + width == end { 0 } else { mid + width };
        }
        let slot = &mut ring[at..at + width];
        probe(i, slot);
        if let Some(next) = items.get(i + ahead) {
            fill(slot, next);
        }
        at = if at + width == end { 0 } else { at + width };
    }
}

/// The batch insert loop of every classic storage: [`ring_pipeline`] setting each element's
/// bits, all of its lines prefetched. The bits set are exactly those of inserting the items
/// one by one. The keys' own bytes are not prefetched (as the blocked filters' batches do):
/// with URL-like keys at n = 10⁷ that measured 0.76–1.08× by case, slower for queries of
/// present keys, whose `k` lines already fill the pipeline.
///
/// Some batches run one item after the other instead ([`one_by_one`]).
#[inline(always)]
pub(crate) fn insert_items<T>(
    spec: &Spec,
    prefetch: impl Fn(u64),
    mut set: impl FnMut(u64) -> bool,
    items: &[T],
    digest: impl Fn(&T) -> Digest,
) {
    if one_by_one(spec) {
        for item in items {
            insert_positions(spec, &digest(item), &mut set);
        }
        return;
    }
    let all = usize::MAX;
    ring_pipeline(
        spec,
        prefetch,
        all,
        items,
        digest,
        |_| {},
        |_, positions| {
            for &i in positions {
                set(i);
            }
        },
    );
}

/// Whether every bit at `positions` is set (`bit` reads one as 0 or 1), reading the first
/// [`READ_TOGETHER`] before the first branch, as [`contains_positions`] does.
#[inline(always)]
fn all_set(positions: &[u64], bit: impl Fn(u64) -> u64) -> bool {
    let (first, rest) = positions.split_at(positions.len().min(READ_TOGETHER as usize));
    let set: u64 = first.iter().map(|&i| bit(i)).sum();
    set == first.len() as u64 && rest.iter().all(|&i| bit(i) != 0)
}

/// Bit arrays larger than this (4 MiB) are queried in batches in two stages
/// ([`contains_items`]): beyond the core's own caches a line it need not fetch saves more than
/// the second stage costs. Measured on either side (`benches/interleaved.rs`, URL keys, absent /
/// present): at n = 10⁷ (12 MB) two stages took 0.71× / 1.05× the time of one, at n = 10⁶
/// (1.2 MB) 1.3× / 1.2×.
const TWO_STAGES_ABOVE_BITS: u64 = 32 << 20;

/// The batch query loop ([`ring_pipeline`] answering [`all_set`]); the answer for item `i`
/// goes to `out[i]` (items beyond `out.len()` are ignored).
///
/// For bit arrays beyond [`TWO_STAGES_ABOVE_BITS`] (and `k` above [`READ_TOGETHER`]) it runs
/// in two stages: an element's first [`READ_TOGETHER`] lines are prefetched first, and the
/// rest half as far ahead only if those first bits are all set (without a branch: otherwise the
/// first line is asked for again). Absent elements, most of which a query rejects on their
/// first bits, then fetch three lines instead of `k`.
///
/// Where [`one_by_one`] says so, items are queried one after the other, as [`insert_items`]
/// inserts.
#[inline(always)]
pub(crate) fn contains_items<T>(
    spec: &Spec,
    prefetch: impl Fn(u64) + Copy,
    bit: impl Fn(u64) -> u64,
    items: &[T],
    digest: impl Fn(&T) -> Digest,
    out: &mut [bool],
) {
    let items = &items[..items.len().min(out.len())];
    if one_by_one(spec) {
        for (o, item) in out.iter_mut().zip(items) {
            *o = contains_positions(spec, &digest(item), &bit);
        }
        return;
    }
    let probe = |j: usize, positions: &[u64]| out[j] = all_set(positions, &bit);
    let together = READ_TOGETHER as usize;
    if spec.bits() <= TWO_STAGES_ABOVE_BITS || spec.hashes() as usize <= together {
        return ring_pipeline(spec, prefetch, usize::MAX, items, digest, |_| {}, probe);
    }
    let second_stage = |positions: &[u64]| {
        let (first, rest) = positions.split_at(together);
        let all = first.iter().map(|&i| bit(i)).sum::<u64>() == u64::from(READ_TOGETHER);
        rest.iter()
            .for_each(|&i| prefetch(if all { i } else { first[0] }));
    };
    ring_pipeline(spec, prefetch, together, items, digest, second_stage, probe);
}

/// A classic Bloom filter over plain memory.
///
/// Its [`Spec`] fixes size, hashing and probing; with [`crate::Preset::Guava`] or
/// [`crate::Preset::Go`] it sets exactly the bits those libraries set for the same elements.
///
/// ```
/// use bloomkit::{BloomFilter, Spec, Preset};
/// let f = BloomFilter::from_spec(Spec::preset(Preset::Go, 1000, 0.01)?)?;
/// assert_eq!(f.bits(), 9586);
/// let mut a = BloomFilter::new(100, 0.01)?;
/// let mut b = BloomFilter::new(100, 0.01)?;
/// a.insert("x");
/// b.insert("y");
/// a.union(&b)?;
/// assert!(a.contains("x") && a.contains("y"));
/// assert!(a.union(&BloomFilter::new(100, 0.5)?).is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct BloomFilter {
    spec: Spec,
    bits: BitVec,
}

/// The methods of [`BloomFilter`] and [`AtomicBloomFilter`](crate::AtomicBloomFilter): one
/// source, so the two cannot drift. `$name` is the type, `$bits` its bit array; `$($mut)?` is
/// `mut` for the plain filter (its inserts take `&mut self`) and empty for the atomic one.
macro_rules! classic_filter {
    ($name:ident, $bits:ty, $($mut:ident)?) => {
        impl $name {
            /// A filter for `capacity` elements at false-positive probability `fpp`, with
            /// bloomkit's default sizing, hashing and probing.
            pub fn new(capacity: u64, fpp: f64) -> Result<Self> {
                Self::from_spec(Spec::for_capacity(capacity, fpp)?)
            }

            /// A filter of exactly `bits` bits and `hashes` hash functions, with bloomkit's
            /// default hashing and probing.
            pub fn with_params(bits: u64, hashes: u32) -> Result<Self> {
                Self::from_spec(Spec::with_bits(bits, hashes)?)
            }

            /// An empty filter with the given spec.
            pub fn from_spec(spec: Spec) -> Result<Self> {
                let bits = <$bits>::zeros(spec.bits())?;
                Ok($name { spec, bits })
            }

            /// A filter with the given spec and bits (for example read from a file). `words`
            /// must be exactly `ceil(m / 64)` words with no bit set at or past `m`.
            pub fn from_words(spec: Spec, words: Vec<u64>) -> Result<Self> {
                let bits = <$bits>::from_words(words, spec.bits())?;
                Ok($name { spec, bits })
            }

            /// The filter's spec.
            #[inline]
            pub fn spec(&self) -> &Spec {
                &self.spec
            }

            /// Number of bits, `m`.
            #[inline]
            pub fn bits(&self) -> u64 {
                self.spec.bits()
            }

            /// Number of hash functions, `k`.
            #[inline]
            pub fn hashes(&self) -> u32 {
                self.spec.hashes()
            }

            /// Adds an element. Returns `true` if it was new, that is, if any of its bits was
            /// clear (two threads adding the same element at once may both see `true`).
            #[inline]
            pub fn insert<K: Key + ?Sized>(&$($mut)? self, key: &K) -> bool {
                let d = self.spec.digest(key);
                self.insert_digest(&d)
            }

            /// Whether the element may have been added: `false` is certain, `true` is right
            /// except with the filter's false-positive probability.
            #[inline]
            pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
                let d = self.spec.digest(key);
                self.contains_digest(&d)
            }

            /// Adds an element and says whether it was (probably) present before: the
            /// first-seen test of a deduplicating pipeline in one step. Equal to `!insert(key)`.
            #[inline]
            pub fn check_and_insert<K: Key + ?Sized>(&$($mut)? self, key: &K) -> bool {
                !self.insert(key)
            }

            /// Adds an element given its digest (see [`Spec::digest`]).
            #[inline]
            pub fn insert_digest(&$($mut)? self, d: &Digest) -> bool {
                insert_positions(&self.spec, d, self.bits.setter())
            }

            /// Tests an element given its digest.
            #[inline]
            pub fn contains_digest(&self, d: &Digest) -> bool {
                contains_positions(&self.spec, d, self.bits.getter())
            }

            /// Adds every element of `keys`, a group at a time: each element is hashed and the
            /// cache lines of its `k` bits prefetched several elements before its bits are set,
            /// so that the memory loads of many elements overlap (much faster than one
            /// [`insert`](Self::insert) after another once the filter is larger than the CPU's
            /// caches). Sets exactly the bits those single inserts set.
            ///
            /// ```
            #[doc = concat!("let ", $(stringify!($mut),)? " f = bloomkit::", stringify!($name), "::new(1000, 0.01)?;")]
            /// f.insert_batch(&["a", "b", "c"]);
            /// assert_eq!(f.contains_batch(&["a", "c", "zzz"]), vec![true, true, false]);
            /// # Ok::<(), bloomkit::Error>(())
            /// ```
            pub fn insert_batch<K: Key>(&$($mut)? self, keys: &[K]) {
                let spec = &self.spec;
                let prefetch = self.bits.prefetcher();
                crate::classic::insert_items(spec, prefetch, self.bits.setter(), keys, |k| spec.digest(k));
            }

            /// Adds elements by their digests (each from [`Spec::digest`] of this filter's
            /// spec), a group at a time as [`insert_batch`](Self::insert_batch) does: for
            /// callers that hash elsewhere, such as a binding that hashes while it holds its
            /// interpreter's lock.
            pub fn insert_digest_batch(&$($mut)? self, digests: &[Digest]) {
                let prefetch = self.bits.prefetcher();
                crate::classic::insert_items(&self.spec, prefetch, self.bits.setter(), digests, |d| *d);
            }

            /// Tests every element of `keys` (hash, prefetch, then probe, a group at a time,
            /// as [`insert_batch`](Self::insert_batch)); the answers of
            /// [`contains`](Self::contains), in order.
            pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Vec<bool> {
                let mut out = vec![false; keys.len()];
                self.contains_batch_into(keys, &mut out);
                out
            }

            /// Like [`contains_batch`](Self::contains_batch), writing into `out` (`out.len()`
            /// must equal `keys.len()`; extra entries on either side are ignored).
            pub fn contains_batch_into<K: Key>(&self, keys: &[K], out: &mut [bool]) {
                let spec = &self.spec;
                let (prefetch, get) = (self.bits.prefetcher(), self.bits.getter());
                crate::classic::contains_items(spec, prefetch, get, keys, |k| spec.digest(k), out);
            }

            /// Tests elements by their digests into `out` (as
            /// [`contains_batch_into`](Self::contains_batch_into)).
            pub fn contains_digest_batch_into(&self, digests: &[Digest], out: &mut [bool]) {
                let (prefetch, get) = (self.bits.prefetcher(), self.bits.getter());
                crate::classic::contains_items(&self.spec, prefetch, get, digests, |d| *d, out);
            }

            /// The element's `k` bit positions, in probe order.
            pub fn positions<K: Key + ?Sized>(&self, key: &K) -> Vec<u64> {
                self.spec.positions(key)
            }

            /// Adds every element of `other` (bitwise OR). Both filters must have equal specs.
            pub fn union(&$($mut)? self, other: &$name) -> Result<()> {
                self.spec.check_compatible(&other.spec)?;
                self.bits.union_with(other.bits.words());
                Ok(())
            }

            /// Keeps only bits set in both filters (bitwise AND). Both filters must have equal
            /// specs.
            ///
            /// Every element in both sets stays present; the result's false-positive rate is at
            /// most that of either input, though it is higher than a filter built from the
            /// intersection.
            pub fn intersect(&mut self, other: &$name) -> Result<()> {
                self.spec.check_compatible(&other.spec)?;
                self.bits.intersect_with(other.bits.words());
                Ok(())
            }

            /// Removes every element.
            pub fn clear(&mut self) {
                self.bits.clear();
            }

            /// Whether no element was ever added (no bit is set).
            pub fn is_empty(&self) -> bool {
                self.count_ones() == 0
            }

            /// Number of set bits (reads every word).
            pub fn count_ones(&self) -> u64 {
                self.bits.count_ones()
            }

            /// Fraction of bits set.
            pub fn fill_ratio(&self) -> f64 {
                self.count_ones() as f64 / self.bits() as f64
            }

            /// Estimated number of distinct elements added (see
            /// [`estimate_count`](crate::math::estimate_count)).
            pub fn estimated_len(&self) -> f64 {
                crate::math::estimate_count(self.bits(), self.hashes(), self.count_ones())
            }

            /// The probability, given the bits set now, that an element never added tests
            /// positive: `fill^k` (see [`fpp_from_fill`](crate::math::fpp_from_fill)).
            pub fn estimated_fpp(&self) -> f64 {
                crate::math::fpp_from_fill(self.fill_ratio(), self.hashes())
            }

            /// The bit array's words (a copy).
            pub fn to_words(&self) -> Vec<u64> {
                self.bits.to_words()
            }

            /// Bytes of heap memory used by the bits.
            pub fn memory_bytes(&self) -> usize {
                self.bits.memory_bytes()
            }
        }

        impl fmt::Debug for $name {
            /// Shows the spec and the fill, never the bits themselves.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("spec", &self.spec)
                    .field("set_bits", &self.count_ones())
                    .finish()
            }
        }

        crate::classic::filter_impl!($name, Classic);
    };
}
pub(crate) use classic_filter;

/// [`Filter`] for a filter type with the inherent methods of `classic_filter!` or
/// `blocked_filter!` (the bit-array filters, plain or atomic); `$kind` is its kind's name.
macro_rules! filter_impl {
    ($name:ident, $kind:ident) => {
        impl Filter for $name {
            fn kind(&self) -> crate::Kind {
                crate::Kind::$kind
            }
            fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
                Ok(self.insert(bytes))
            }
            fn contains_encoded(&self, bytes: &[u8]) -> bool {
                self.contains(bytes)
            }
            fn params(&self) -> Params {
                self.spec.params()
            }
            fn estimated_len(&self) -> f64 {
                $name::estimated_len(self)
            }
            fn estimated_fpp(&self) -> f64 {
                $name::estimated_fpp(self)
            }
            fn memory_bytes(&self) -> usize {
                $name::memory_bytes(self)
            }
            fn clear(&mut self) {
                $name::clear(self)
            }
        }
    };
}
pub(crate) use filter_impl;

classic_filter!(BloomFilter, BitVec, mut);

impl BloomFilter {
    /// The bit array, as 64-bit words, least significant bit first.
    #[inline]
    pub fn as_words(&self) -> &[u64] {
        self.bits.as_words()
    }

    /// The bit array itself.
    #[inline]
    pub fn as_bitvec(&self) -> &BitVec {
        &self.bits
    }

    /// Gives up the words.
    pub fn into_words(self) -> Vec<u64> {
        self.bits.into_words()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, Incompatibility};
    use crate::hash::Hashing;
    use crate::probe::Scheme;

    #[test]
    fn basic_operations() {
        let mut f = BloomFilter::new(1000, 0.01).unwrap();
        assert!(f.is_empty());
        assert!(f.insert("a"));
        assert!(!f.insert("a"));
        assert!(f.check_and_insert("a"));
        assert!(!f.check_and_insert("b"));
        assert!(f.contains("b"));
        assert!(!f.is_empty());
        assert!(f.count_ones() <= 2 * u64::from(f.hashes()));
        assert!((f.estimated_len() - 2.0).abs() < 0.5);
        f.clear();
        assert!(f.is_empty() && !f.contains("a"));
    }

    #[test]
    fn incompatible_filters_are_refused() {
        let base = Spec::with_bits(1024, 4).unwrap();
        let mut a = BloomFilter::from_spec(base.clone()).unwrap();
        let cases = [
            (Spec::with_bits(2048, 4).unwrap(), "bits"),
            (Spec::with_bits(1024, 5).unwrap(), "hashes"),
            (base.clone().with_scheme(Scheme::Go), "scheme"),
            (base.clone().with_hashing(Hashing::Murmur3), "hashing"),
            (
                base.clone().with_hashing(Hashing::siphash([9; 16])),
                "hashing",
            ),
        ];
        for (spec, what) in cases {
            let b = BloomFilter::from_spec(spec).unwrap();
            let err = a.union(&b).unwrap_err();
            let ok = matches!(
                (&err, what),
                (Error::Incompatible(Incompatibility::Bits(..)), "bits")
                    | (Error::Incompatible(Incompatibility::Hashes(..)), "hashes")
                    | (Error::Incompatible(Incompatibility::Scheme(..)), "scheme")
                    | (Error::Incompatible(Incompatibility::Hashing(..)), "hashing")
            );
            assert!(ok, "{what}: {err}");
            assert!(a.intersect(&b).is_err());
        }
        let b = BloomFilter::from_spec(base).unwrap();
        assert!(a.union(&b).is_ok());
    }

    #[test]
    fn union_and_intersection() {
        let mut a = BloomFilter::new(10_000, 0.01).unwrap();
        let mut b = a.clone();
        for i in 0..1000u32 {
            a.insert(&i);
        }
        for i in 500..1500u32 {
            b.insert(&i);
        }
        let mut u = a.clone();
        u.union(&b).unwrap();
        assert!((0..1500u32).all(|i| u.contains(&i)));
        let mut n = a.clone();
        n.intersect(&b).unwrap();
        assert!((500..1000u32).all(|i| n.contains(&i)));
        assert_ne!(n, a);
    }

    #[test]
    fn debug_is_short() {
        let f = BloomFilter::new(10_000_000, 0.001).unwrap();
        let s = format!("{f:?}");
        assert!(s.len() < 200, "{s}");
        assert!(s.contains("set_bits: 0"), "{s}");
    }

    #[test]
    fn is_send_sync() {
        fn check<T: Send + Sync + Clone>() {}
        check::<BloomFilter>();
    }

    /// Batches set exactly the bits of single inserts and give the answers of single queries,
    /// for every probing scheme, for the plain and the atomic filter, by key and by digest,
    /// at lengths around the pipeline's distance for `k` = 1, 5, [`LINES_AHEAD`] (one element
    /// in flight) and one more (no pipeline), with the loop of filters in the core's cache and the pipeline of
    /// larger ones; an answer slice shorter than the keys gets the first answers only.
    #[test]
    fn batches_match_single_keys() {
        for in_cache in [true, false] {
            crate::storage::assuming_in_core_cache(in_cache, batches_match_single_keys_by_scheme);
        }
    }

    fn batches_match_single_keys_by_scheme() {
        for scheme in Scheme::ALL {
            let hashing = if scheme == Scheme::Go {
                Hashing::Murmur3
            } else {
                Hashing::Xxh3
            };
            // About 8 bits per key at the longest batch (k = 5; fewer probes per bit for the
            // others): many answers of each kind.
            let most = LINES_AHEAD as u32;
            for (bits, k) in [(1601, 5), (1601, 1), (20_011, most), (20_011, most + 1)] {
                let spec = Spec::with_bits(bits, k)
                    .unwrap()
                    .with_scheme(scheme)
                    .with_hashing(hashing.clone());
                batches_match_single_keys_with(&spec);
            }
        }
    }

    fn batches_match_single_keys_with(spec: &Spec) {
        use crate::concurrent::AtomicBloomFilter;
        // Past `LINES_AHEAD` probes a batch runs one element after the other.
        let (scheme, ahead) = (spec.scheme(), elements_ahead(spec.hashes()).max(1));
        let lens = [0, 1, ahead - 1, ahead, ahead + 1, 2 * ahead + 3, 200];
        for len in lens {
            let keys: Vec<String> = (0..len).map(|i| format!("key-{i}")).collect();
            let probes: Vec<String> = (0..2 * len + 5).map(|i| format!("key-{i}")).collect();
            let digests: Vec<Digest> = keys.iter().map(|k| spec.digest(k)).collect();
            let mut single = BloomFilter::from_spec(spec.clone()).unwrap();
            keys.iter().for_each(|k| {
                single.insert(k);
            });
            let mut batch = BloomFilter::from_spec(spec.clone()).unwrap();
            batch.insert_batch(&keys);
            let mut by_digest = BloomFilter::from_spec(spec.clone()).unwrap();
            by_digest.insert_digest_batch(&digests);
            let atomic = AtomicBloomFilter::from_spec(spec.clone()).unwrap();
            atomic.insert_batch(&keys);
            let atomic_by_digest = AtomicBloomFilter::from_spec(spec.clone()).unwrap();
            atomic_by_digest.insert_digest_batch(&digests);
            let what = format!("{scheme} k = {} {len}", spec.hashes());
            assert_eq!(batch, single, "{what}");
            assert_eq!(by_digest, single, "{what}");
            assert_eq!(atomic.to_words(), single.to_words(), "{what}");
            assert_eq!(atomic_by_digest.to_words(), single.to_words(), "{what}");

            let want: Vec<bool> = probes.iter().map(|k| single.contains(k)).collect();
            assert!(want[..len].iter().all(|&a| a), "{what}");
            if len >= ahead {
                assert!(
                    !want[len..].iter().all(|&a| a),
                    "{what}: absent keys tested"
                );
            }
            let probe_digests: Vec<Digest> = probes.iter().map(|k| spec.digest(k)).collect();
            assert_eq!(batch.contains_batch(&probes), want, "{what}");
            assert_eq!(atomic.contains_batch(&probes), want, "{what}");
            let mut out = vec![false; probes.len()];
            single.contains_digest_batch_into(&probe_digests, &mut out);
            assert_eq!(out, want, "{what}");
            let mut out = vec![true; probes.len()];
            atomic.contains_digest_batch_into(&probe_digests, &mut out);
            assert_eq!(out, want, "{what}");
            // Answers for the first `len` probes only.
            let mut out = vec![false; len];
            batch.contains_batch_into(&probes, &mut out);
            assert_eq!(out, want[..len], "{what}");
            // More answer slots than keys: the extra ones are left alone.
            let mut out = vec![true; probes.len() + 3];
            atomic.contains_batch_into(&probes, &mut out);
            assert_eq!(out[..probes.len()], want, "{what}");
            assert!(out[probes.len()..].iter().all(|&a| a), "{what}");
        }
    }

    #[test]
    fn from_words_round_trip() {
        let mut f = BloomFilter::new(500, 0.01).unwrap();
        f.extend(["a", "b", "c"]);
        let g = BloomFilter::from_words(f.spec().clone(), f.as_words().to_vec()).unwrap();
        assert_eq!(f, g);
        assert!(BloomFilter::from_words(f.spec().clone(), vec![0; 3]).is_err());
    }
}
