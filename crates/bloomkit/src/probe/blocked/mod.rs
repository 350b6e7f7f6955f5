//! Cache-blocked probing: every probe of an element lands in one 512-bit block (a cache line).
//!
//! From an element's hash words `[h1, h2]` ([`BlockLayout::hash`]):
//! - the block is `⌊h1 · B / 2⁶⁴⌋` (multiply-shift range reduction over `B` blocks, any `B`);
//! - the positions inside the block come from `h2`, as an 8-word mask:
//!   - [`BlockLayout::Bits`]: `[h1, h2]` is the 128-bit hash; `k` positions of 9 bits each,
//!     taken from `h2` (7 per 64-bit word of hash; further words come from a SplitMix64 step),
//!     positions may coincide;
//!   - [`BlockLayout::SplitBlock`]: `h1 = h2` is one 64-bit hash ([`Hashing::hash64`]): its
//!     high bits pick the block, its low 32 bits `h32` the bits: exactly one bit in each of the
//!     8 words (`k = 8`), bit `(h32 · SALTᵢ mod 2³²) >> 26` of word `i` with eight odd
//!     salts (the layout of Parquet's split-block Bloom filter, widened to 64-bit words).
//!     The two parts are independent for any filter of fewer than 2³² blocks.
//!   - [`BlockLayout::SplitBlock256`]: Parquet's split-block layout in half a block. The same
//!     64-bit hash picks the block; bit 32 picks its lower or upper 256-bit half, and `h32` sets
//!     exactly one bit in each of that half's eight 32-bit words: bit `(h32 · SALTᵢ mod 2³²) >>
//!     27` of 32-bit word `i`, which is bits `32·(i mod 2) ..` of 64-bit word `4·half + i/2`.
//!     Half the vector work of `SplitBlock` per query, for 4–7 % more memory at the same FPR
//!     (smaller groups of bits fill less evenly).
//!
//! A query then loads one cache line and compares it with the mask; an insert ORs the mask in.
//!
//! ## Where the code is
//! - `portable.rs` defines every layout in plain Rust; `avx2.rs` holds the AVX2 kernels of the
//!   split-block layouts, the only code with vector intrinsics.
//! - `Path` is the choice between them, made once when a filter is built (from the layout, the
//!   hashing and the CPU), never per query: a query on a filter larger than the caches costs
//!   one memory load, and every instruction around it costs throughput.
//! - The probing loops (single key, and batches that hash a group of keys, prefetch their
//!   blocks, then probe) are written once over the storage traits of [`crate::storage`], so the
//!   plain, the atomic and the memory-mapped blocked filters run the same code.
//!
//! Blocking costs accuracy: blocks receive a Poisson-distributed number of elements, and an
//! overloaded block has a much higher FPR than the average. [`math::blocked_fpp`] computes the
//! exact expectation, `Σⱼ Poisson(j; n/B) · fpp_in_block(j)` (each layout gives its
//! `fpp_in_block` through [`BlockModel`]), and [`params_for`] searches for the
//! smallest filter whose expectation meets the target: the measured FPR then meets it too
//! (`tests/blocked.rs`), at the price of extra bits per element (`docs/BENCHMARKS.md`).

mod portable;
/// The split-block salts, which the count window's lanes use too (`window/lanes.rs`).
pub(crate) use portable::SALT;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;

use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::key::Key;
use crate::math::{self, check_fpp, BlockModel, MAX_BITS};
use crate::probe::reduce;
use crate::spec::BlockSpec;
use crate::storage::{cell, or_atomic, prefetch, AtomicBlock, BlockCell, BlocksMut, Ordering};
use std::f64::consts::LN_2;
use std::fmt;

/// Bits in one block.
pub const BLOCK_BITS: u64 = 512;

/// How the bits of an element are placed inside its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockLayout {
    /// `k` bits anywhere in the block.
    Bits(u32),
    /// One bit in each of the block's eight 64-bit words (`k = 8`).
    SplitBlock,
    /// One bit in each of the eight 32-bit words of one half of the block (`k = 8`): Parquet's
    /// 256-bit split block.
    SplitBlock256,
}

impl BlockLayout {
    /// Number of bits set per element.
    pub fn hashes(self) -> u32 {
        match self {
            BlockLayout::Bits(k) => k,
            BlockLayout::SplitBlock | BlockLayout::SplitBlock256 => 8,
        }
    }

    /// The layout's stable name: `split-block-256`, `split-block` or `bits-K`.
    ///
    /// ```
    /// use bloomkit::probe::blocked::BlockLayout;
    /// assert_eq!(BlockLayout::Bits(7).name(), "bits-7");
    /// assert_eq!(BlockLayout::from_name("split-block-256"), Some(BlockLayout::SplitBlock256));
    /// ```
    pub fn name(self) -> String {
        match self {
            BlockLayout::SplitBlock256 => "split-block-256".into(),
            BlockLayout::SplitBlock => "split-block".into(),
            BlockLayout::Bits(k) => format!("bits-{k}"),
        }
    }

    /// The layout with this [`name`](Self::name), if any.
    pub fn from_name(name: &str) -> Option<BlockLayout> {
        match name {
            "split-block-256" => Some(BlockLayout::SplitBlock256),
            "split-block" => Some(BlockLayout::SplitBlock),
            _ => {
                let k: u32 = name.strip_prefix("bits-")?.parse().ok()?;
                (k > 0 && !name.starts_with("bits-0")).then_some(BlockLayout::Bits(k))
            }
        }
    }

    /// The hash words `[h1, h2]` of an element's key bytes: one 64-bit hash twice for the
    /// split-block layouts, the 128-bit hash for `Bits(k)`.
    #[inline(always)]
    pub fn hash(self, hashing: &Hashing, bytes: &[u8]) -> [u64; 2] {
        match self {
            BlockLayout::SplitBlock | BlockLayout::SplitBlock256 => {
                let h = hashing.hash64(bytes);
                [h, h]
            }
            BlockLayout::Bits(_) => hashing.hash128(bytes),
        }
    }

    /// The block (in `0..blocks`) and the 8-word mask of an element with hash `[h1, h2]`.
    #[inline(always)]
    pub fn locate(self, h1: u64, h2: u64, blocks: u64) -> (usize, [u64; 8]) {
        (reduce(h1, blocks) as usize, self.mask(h2))
    }

    /// The 8-word in-block mask for hash word `h2`.
    #[inline(always)]
    pub fn mask(self, h2: u64) -> [u64; 8] {
        match self {
            BlockLayout::SplitBlock => portable::split_mask(h2 as u32),
            BlockLayout::SplitBlock256 => portable::split256_mask(h2),
            BlockLayout::Bits(k) => portable::bits_mask(h2, k),
        }
    }

    /// Whether every bit of the element with in-block hash `h2` is set in `block` (portable
    /// code). Equivalent to comparing `block` with [`mask`](Self::mask), but tests the bits
    /// where they are instead of building the mask in memory first (which would make the CPU
    /// wait for the mask's stores before the comparison can load it).
    #[inline(always)]
    pub fn test(self, block: &[u64; 8], h2: u64) -> bool {
        match self {
            BlockLayout::SplitBlock => portable::split_test(block, h2 as u32),
            BlockLayout::SplitBlock256 => portable::split256_test(block, h2),
            BlockLayout::Bits(k) => portable::bits_test(block, h2, k),
        }
    }

    /// Sets the bits of the element with in-block hash `h2` in `block` (portable code); returns
    /// `true` if any of them was clear.
    #[inline(always)]
    pub fn set(self, block: &mut [u64; 8], h2: u64) -> bool {
        match self {
            BlockLayout::SplitBlock => portable::split_set(block, h2 as u32),
            BlockLayout::SplitBlock256 => portable::split256_set(block, h2),
            BlockLayout::Bits(k) => portable::bits_set(block, h2, k),
        }
    }
}

/// The in-block FPR of each layout, for sizing ([`math::blocked_fpp`]).
impl BlockModel for BlockLayout {
    fn fpp_in_block(&self, j: u64) -> f64 {
        match *self {
            BlockLayout::Bits(k) => {
                let kf = f64::from(k);
                // Each of the j·k sets hits a given bit with probability 1/512.
                let fill = -((kf * j as f64) * (-1.0 / BLOCK_BITS as f64).ln_1p()).exp_m1();
                fill.powf(kf)
            }
            BlockLayout::SplitBlock => {
                let fill = -((j as f64) * (-1.0 / 64.0f64).ln_1p()).exp_m1();
                fill.powi(8)
            }
            BlockLayout::SplitBlock256 => split256_fpp(j),
        }
    }
}

/// In-block FPR of one half of a half-block split block holding `i` elements.
fn half_block_fpp(i: u64) -> f64 {
    let fill = -((i as f64) * (-1.0 / 32.0f64).ln_1p()).exp_m1();
    fill.powi(8)
}

/// Loads below which [`split256_fpp`] reads logarithms and half-block FPRs from a table.
const SPLIT256_TABLE: u64 = 1024;

/// `(ln i, half_block_fpp(i))` for `i < SPLIT256_TABLE`, computed once per process: a size
/// search sums each of them many times (it made constructing a filter cost milliseconds).
/// They are the very values computed in place, so every sum is the same to the bit.
fn split256_table() -> &'static [(f64, f64)] {
    static TABLE: std::sync::OnceLock<Vec<(f64, f64)>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..SPLIT256_TABLE)
            .map(|i| ((i as f64).ln(), half_block_fpp(i)))
            .collect()
    })
}

/// In-block FPR of a half-block split block holding `j` elements: each element lands in either
/// half, a binomial split, summed over the splits within `12√(j/4) + 30` of `j/2` (all of them
/// up to a few hundred elements; beyond, the rest weighs under 10⁻³⁰).
fn split256_fpp(j: u64) -> f64 {
    let table = split256_table();
    let ln = |x: u64| {
        table
            .get(x as usize)
            .map_or_else(|| (x as f64).ln(), |t| t.0)
    };
    let half_fpp = |x: u64| {
        table
            .get(x as usize)
            .map_or_else(|| half_block_fpp(x), |t| t.1)
    };
    let spread = 12.0 * (j as f64 / 4.0).sqrt() + 30.0;
    let lo = (j as f64 / 2.0 - spread).max(0.0) as u64;
    let hi = ((j as f64 / 2.0 + spread).ceil() as u64).min(j);
    // log C(j, i) - j ln 2, accumulated term by term from i = lo.
    let mut log_c = if lo == 0 {
        -(j as f64) * LN_2
    } else {
        math::ln_factorial(j)
            - math::ln_factorial(lo)
            - math::ln_factorial(j - lo)
            - (j as f64) * LN_2
    };
    let mut total = 0.0;
    for i in lo..=hi {
        if i > lo {
            log_c += ln(j - i + 1) - ln(i);
        }
        total += log_c.exp() * half_fpp(i);
    }
    total
}

impl fmt::Display for BlockLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// One implementation of the in-block probes: the portable one ([`BlockLayout`]) or a vector
/// kernel (`avx2.rs`).
pub(crate) trait Kernel: Copy {
    /// Whether every bit of in-block hash `h2` is set in `block`.
    fn test(self, block: &[u64; 8], h2: u64) -> bool;
    /// Sets the bits of `h2`; `true` if any was clear.
    fn set(self, block: &mut [u64; 8], h2: u64) -> bool;
    /// [`set`](Self::set) for a single insert, whose block was not prefetched and is usually
    /// not in the cache: by default `set`. The vector kernels override it with word-by-word
    /// writes (see `avx2.rs`).
    #[inline(always)]
    fn set_single(self, block: &mut [u64; 8], h2: u64) -> bool {
        self.set(block, h2)
    }
    /// The bits of `h2` as an 8-word mask.
    fn mask(self, h2: u64) -> [u64; 8];
    /// [`test`](Self::test) on atomic words, each read with a relaxed load: by default all
    /// eight, compared with the mask in one fold (no early exit, as the vector kernels).
    #[inline(always)]
    fn test_atomic(self, block: &AtomicBlock, h2: u64) -> bool {
        let mut missing = 0u64;
        for (w, m) in block.0.iter().zip(self.mask(h2)) {
            missing |= m & !w.load(Ordering::Relaxed);
        }
        missing == 0
    }
    /// [`set`](Self::set) on an atomic block: by default relaxed loads of all eight, then a
    /// `fetch_or` on each word that gains bits ([`or_atomic`]).
    #[inline(always)]
    fn set_atomic(self, block: &AtomicBlock, h2: u64) -> bool {
        or_atomic(&block.0, self.mask(h2))
    }
}

impl Kernel for BlockLayout {
    #[inline(always)]
    fn test(self, block: &[u64; 8], h2: u64) -> bool {
        BlockLayout::test(self, block, h2)
    }
    #[inline(always)]
    fn set(self, block: &mut [u64; 8], h2: u64) -> bool {
        BlockLayout::set(self, block, h2)
    }
    #[inline(always)]
    fn mask(self, h2: u64) -> [u64; 8] {
        BlockLayout::mask(self, h2)
    }
    #[inline(always)]
    fn set_atomic(self, block: &AtomicBlock, h2: u64) -> bool {
        if self == BlockLayout::SplitBlock256 {
            // Only the element's half holds bits: load and update its four words alone.
            let (half, _) = portable::half_of(h2);
            let m = self.mask(h2);
            let h = 4 * half;
            return or_atomic(block.half(half), [m[h], m[h + 1], m[h + 2], m[h + 3]]);
        }
        or_atomic(&block.0, self.mask(h2))
    }
}

/// Sets an element's bits, by its hash words, with kernel `p`.
#[inline(always)]
pub(crate) fn insert_at<S: BlocksMut, P: Kernel>(blocks: &mut S, p: P, h1: u64, h2: u64) -> bool {
    let i = reduce(h1, blocks.cells().len() as u64) as usize;
    // SAFETY: `reduce(h, n) < n` for every `h` when `n > 0`, and a filter always has blocks.
    unsafe { blocks.update(i, |w| p.set_single(w, h2), |w| p.set_atomic(w, h2)) }
}

/// Tests an element, by its hash words, with kernel `p`.
#[inline(always)]
pub(crate) fn contains_at<B: BlockCell, P: Kernel>(blocks: &[B], p: P, h1: u64, h2: u64) -> bool {
    let i = reduce(h1, blocks.len() as u64) as usize;
    // SAFETY: as in `insert_at`.
    unsafe { cell(blocks, i) }.probe(|w| p.test(w, h2), |w| p.test_atomic(w, h2))
}

/// The batch insert loop, a software pipeline: item `i` (a key, or hash words computed
/// before) is hashed by `hash` and its block prefetched [`AHEAD`] items before its bits are
/// set, so that every item's block has the time of `AHEAD` other items' work to arrive
/// (hashing a URL-like key takes about as long as a memory load). Calls `on_new(i, new)` for
/// item `i`.
#[inline(always)]
pub(crate) fn insert_loop<S: BlocksMut, T, P: Kernel>(
    mut blocks: S,
    p: P,
    items: &[T],
    touch: impl Fn(&T),
    hash: impl Fn(&T) -> [u64; 2],
    mut on_new: impl FnMut(usize, bool),
) {
    let n = blocks.cells().len() as u64;
    pipeline_touching(
        &mut blocks,
        items,
        touch,
        #[inline(always)]
        |blocks, item| {
            let [h1, h2] = hash(item);
            let i = reduce(h1, n) as usize;
            // SAFETY: `reduce(h, n) < n` (see `insert_at`).
            prefetch(unsafe { cell(blocks.cells(), i) });
            (i, h2)
        },
        #[inline(always)]
        |blocks, j, (i, h2)| {
            // SAFETY: `i` came from `reduce(_, n)` above.
            let new = unsafe { blocks.update(i, |w| p.set(w, h2), |w| p.set_atomic(w, h2)) };
            on_new(j, new);
        },
    );
}

/// The batch query loop (the pipeline of [`insert_loop`]); answers go to `out[i]` for key `i`
/// (keys beyond `out.len()` are ignored).
#[inline(always)]
pub(crate) fn contains_loop<B: BlockCell, T, P: Kernel>(
    blocks: &[B],
    p: P,
    items: &[T],
    touch: impl Fn(&T),
    hash: impl Fn(&T) -> [u64; 2],
    out: &mut [bool],
) {
    let n = blocks.len() as u64;
    let items = &items[..items.len().min(out.len())];
    pipeline_touching(
        out,
        items,
        touch,
        #[inline(always)]
        |_, item| {
            let [h1, h2] = hash(item);
            let i = reduce(h1, n) as usize;
            // SAFETY: `reduce(h, n) < n` (see `insert_at`).
            prefetch(unsafe { cell(blocks, i) });
            (i, h2)
        },
        #[inline(always)]
        |out, j, (i, h2)| {
            // SAFETY: `i` came from `reduce(_, n)` above; `j < items.len() <= out.len()`.
            unsafe {
                *out.get_unchecked_mut(j) =
                    cell(blocks, i).probe(|w| p.test(w, h2), |w| p.test_atomic(w, h2));
            }
        },
    );
}

/// How many keys ahead of its probe a batch hashes a key and prefetches its block: for 8-byte
/// keys (a few ns each) still more than a memory load's latency at n = 10⁸; for URL-like keys
/// 32 and 64 measured the same.
pub(crate) const AHEAD: usize = 64;

/// The batch pipeline: runs `locate` on every key in order and `probe(i, located)` on key `i`'s
/// result [`AHEAD`] keys later (the last `AHEAD` keys are probed at the end); both get `state`
/// (the blocks, or the answers). It also calls `touch` on each key `AHEAD` keys before `locate`
/// (`2·AHEAD` before its probe): for keys whose bytes lie elsewhere in memory (heap strings)
/// `touch` prefetches them ([`touch_key`]), so that hashing finds them in the cache instead of
/// waiting for each (measured: batches of URL-like keys 7–22 % faster at n = 10⁷); callers with
/// hashes pass `|_| {}`. The blocked filters and the count windows use it. (The classic filter,
/// whose elements touch `k` lines each, has its own pipeline that keeps their positions:
/// `ring_pipeline` in `classic.rs`.)
#[inline(always)]
pub(crate) fn pipeline_touching<T: ?Sized, K, L: Copy + Default>(
    state: &mut T,
    keys: &[K],
    touch: impl Fn(&K),
    locate: impl Fn(&T, &K) -> L,
    mut probe: impl FnMut(&mut T, usize, L),
) {
    let mut ring = [L::default(); AHEAD];
    let (head, rest) = keys.split_at(keys.len().min(AHEAD));
    for key in rest.iter().take(AHEAD) {
        touch(key);
    }
    for (slot, key) in ring.iter_mut().zip(head) {
        *slot = locate(state, key);
    }
    for (i, key) in rest.iter().enumerate() {
        // `i % AHEAD` is the slot of key `i`, and of key `i + AHEAD` after it.
        let slot = i % AHEAD;
        if let Some(later) = rest.get(i + AHEAD) {
            touch(later);
        }
        let next = locate(state, key);
        probe(state, i, ring[slot]);
        ring[slot] = next;
    }
    for j in rest.len()..keys.len() {
        probe(state, j, ring[j % AHEAD]);
    }
}

/// Prefetches the bytes of `key` where they lie in memory apart from the key itself (a heap
/// string's: [`Key::bytes_in_place`]); nothing for other keys.
#[inline(always)]
pub(crate) fn touch_key<K: Key + ?Sized>(key: &K) {
    if let Some(bytes) = key.bytes_in_place() {
        prefetch(bytes.as_ptr());
    }
}

/// The hash words of `key` for a split-block layout with XXH3 hashing (equal to
/// [`BlockSpec::hash`] for those), with XXH3-64 inlined into the batch loop: passed as a
/// function item, or as a closure not forced inline, the hash stays a call. (The single-key
/// paths call `xxhash_rust`'s function instead: inlined there, the larger loop body measured
/// 3–6 % slower one key at a time, `scripts/before-after/run`.)
#[inline(always)]
#[allow(clippy::redundant_closure)]
fn xxh3_words<K: Key + ?Sized>(key: &K) -> [u64; 2] {
    let h = key.with_bytes(
        #[inline(always)]
        |bytes| crate::hash::xxh3_64(bytes),
    );
    [h, h]
}

/// The code path of a filter's operations, decided once when the filter is built (a function
/// of the layout, the hashing and the CPU, so it never makes two equal filters differ). A
/// query then costs one predictable branch on a plain field, instead of a CPU-feature test, a
/// layout test and a hashing test each time.
///
/// An AVX2 path serves atomic blocks only where its kernels may read them with vector loads
/// ([`Path::for_cells`]): the AVX2 entry points require it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// Portable code for any layout and hashing.
    Portable,
    /// Split-block layout on an AVX2 CPU.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Split-block layout on an AVX2 CPU with XXH3 hashing: the key hash (`xxh3_64`) is
    /// inlined into the caller.
    #[cfg(target_arch = "x86_64")]
    Avx2Xxh3,
    /// Half-block split-block layout on an AVX2 CPU.
    #[cfg(target_arch = "x86_64")]
    Avx2Half,
    /// Half-block split-block layout on an AVX2 CPU with XXH3 hashing (inlined, as
    /// [`Path::Avx2Xxh3`]).
    #[cfg(target_arch = "x86_64")]
    Avx2HalfXxh3,
}

impl Path {
    /// The fastest path this CPU runs for `layout` and `hashing`.
    pub(crate) fn new(layout: BlockLayout, hashing: &Hashing) -> Path {
        #[cfg(target_arch = "x86_64")]
        if avx2::available() {
            let xxh3 = matches!(hashing, Hashing::Xxh3);
            match (layout, xxh3) {
                (BlockLayout::SplitBlock, true) => return Path::Avx2Xxh3,
                (BlockLayout::SplitBlock, false) => return Path::Avx2,
                (BlockLayout::SplitBlock256, true) => return Path::Avx2HalfXxh3,
                (BlockLayout::SplitBlock256, false) => return Path::Avx2Half,
                (BlockLayout::Bits(_), _) => {}
            }
        }
        let _ = (layout, hashing);
        Path::Portable
    }

    /// [`new`](Self::new) for blocks of type `B`: atomic blocks get an AVX2 path only where
    /// the AVX2 kernels may read them with vector loads (Intel and AMD CPUs,
    /// `avx2::atomic_vector_loads`), the portable path on other CPUs. (Under loom the kernels
    /// read atomic blocks word by word, on any path.)
    pub(crate) fn for_cells<B: BlockCell>(layout: BlockLayout, hashing: &Hashing) -> Path {
        let path = Path::new(layout, hashing);
        #[cfg(all(target_arch = "x86_64", not(loom)))]
        if B::ATOMIC && path != Path::Portable && !avx2::atomic_vector_loads() {
            return Path::Portable;
        }
        path
    }

    /// Adds an element; returns `true` if it was new.
    #[inline(always)]
    pub(crate) fn insert<S: BlocksMut, K: Key + ?Sized>(
        self,
        spec: &BlockSpec,
        mut blocks: S,
        key: &K,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        match self {
            Path::Avx2Xxh3 => {
                // Equal to `spec.hash(key)[0]` for this layout and hashing.
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: the path is an AVX2 one only when the CPU has AVX2 (`Path::new`), and
                // for atomic blocks only where they may be read with vector loads (`for_cells`).
                return unsafe { avx2::insert(&mut blocks, h) };
            }
            Path::Avx2HalfXxh3 => {
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: as above.
                return unsafe { avx2::insert256(&mut blocks, h) };
            }
            _ => {}
        }
        self.insert_other(spec, blocks, key)
    }

    /// [`insert`](Self::insert) for the paths other than the default ones, out of line so that
    /// `insert` stays small enough to inline into callers' loops.
    #[inline(never)]
    fn insert_other<S: BlocksMut, K: Key + ?Sized>(
        self,
        spec: &BlockSpec,
        blocks: S,
        key: &K,
    ) -> bool {
        let [h1, h2] = spec.hash(key);
        self.insert_hash(spec.layout(), blocks, h1, h2)
    }

    /// Whether the element may be present.
    #[inline(always)]
    pub(crate) fn contains<B: BlockCell, K: Key + ?Sized>(
        self,
        spec: &BlockSpec,
        blocks: &[B],
        key: &K,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        match self {
            Path::Avx2Xxh3 => {
                // Equal to `spec.hash(key)[0]` for this layout and hashing.
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: the path is an AVX2 one only when the CPU has AVX2 (`Path::new`), and
                // for atomic blocks only where they may be read with vector loads (`for_cells`).
                return unsafe { avx2::contains(blocks, h) };
            }
            Path::Avx2HalfXxh3 => {
                let h = key.with_bytes(xxhash_rust::xxh3::xxh3_64);
                // SAFETY: as above.
                return unsafe { avx2::contains256(blocks, h) };
            }
            _ => {}
        }
        self.contains_other(spec, blocks, key)
    }

    /// [`contains`](Self::contains) for the other paths, out of line (as `insert_other`).
    #[inline(never)]
    fn contains_other<B: BlockCell, K: Key + ?Sized>(
        self,
        spec: &BlockSpec,
        blocks: &[B],
        key: &K,
    ) -> bool {
        let [h1, h2] = spec.hash(key);
        self.contains_hash(spec.layout(), blocks, h1, h2)
    }

    /// Adds an element by its hash words.
    #[inline(always)]
    pub(crate) fn insert_hash<S: BlocksMut>(
        self,
        layout: BlockLayout,
        mut blocks: S,
        h1: u64,
        h2: u64,
    ) -> bool {
        match self {
            Path::Portable => insert_at(&mut blocks, layout, h1, h2),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: an AVX2 path only when the CPU has AVX2, for atomic blocks only where
            // they may be read with vector loads (`Path::new`, `Path::for_cells`).
            Path::Avx2 | Path::Avx2Xxh3 => unsafe { avx2::insert(&mut blocks, h1) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: an AVX2 path only when the CPU has AVX2, for atomic blocks only where
            // they may be read with vector loads (`Path::new`, `Path::for_cells`).
            Path::Avx2Half | Path::Avx2HalfXxh3 => unsafe { avx2::insert256(&mut blocks, h1) },
        }
    }

    /// Tests an element by its hash words.
    #[inline(always)]
    pub(crate) fn contains_hash<B: BlockCell>(
        self,
        layout: BlockLayout,
        blocks: &[B],
        h1: u64,
        h2: u64,
    ) -> bool {
        match self {
            Path::Portable => contains_at(blocks, layout, h1, h2),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: an AVX2 path only when the CPU has AVX2, for atomic blocks only where
            // they may be read with vector loads (`Path::new`, `Path::for_cells`).
            Path::Avx2 | Path::Avx2Xxh3 => unsafe { avx2::contains(blocks, h1) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: an AVX2 path only when the CPU has AVX2, for atomic blocks only where
            // they may be read with vector loads (`Path::new`, `Path::for_cells`).
            Path::Avx2Half | Path::Avx2HalfXxh3 => unsafe { avx2::contains256(blocks, h1) },
        }
    }

    /// Adds every element of `keys` (see [`insert_loop`]); `on_new(i, new)` for key `i`.
    pub(crate) fn insert_batch<S: BlocksMut, K: Key>(
        self,
        spec: &BlockSpec,
        blocks: S,
        keys: &[K],
        on_new: impl FnMut(usize, bool),
    ) {
        if self.inlines_xxh3() {
            return self.insert_items(
                spec.layout(),
                blocks,
                keys,
                touch_key,
                #[inline(always)]
                |k| xxh3_words(k),
                on_new,
            );
        }
        self.insert_items(
            spec.layout(),
            blocks,
            keys,
            touch_key,
            |k| spec.hash(k),
            on_new,
        );
    }

    /// Tests every element of `keys` into `out` (see [`contains_loop`]).
    pub(crate) fn contains_batch<B: BlockCell, K: Key>(
        self,
        spec: &BlockSpec,
        blocks: &[B],
        keys: &[K],
        out: &mut [bool],
    ) {
        if self.inlines_xxh3() {
            return self.contains_items(
                spec.layout(),
                blocks,
                keys,
                touch_key,
                #[inline(always)]
                |k| xxh3_words(k),
                out,
            );
        }
        self.contains_items(
            spec.layout(),
            blocks,
            keys,
            touch_key,
            |k| spec.hash(k),
            out,
        );
    }

    /// Whether this path hashes keys with `xxh3_64` inlined ([`xxh3_words`]) rather than
    /// through [`BlockSpec::hash`].
    #[inline(always)]
    fn inlines_xxh3(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if matches!(self, Path::Avx2Xxh3 | Path::Avx2HalfXxh3) {
            return true;
        }
        false
    }

    /// Adds every item, hashed by `hash` (keys, or hash words computed before).
    #[inline(always)]
    pub(crate) fn insert_items<S: BlocksMut, T>(
        self,
        layout: BlockLayout,
        blocks: S,
        items: &[T],
        touch: impl Fn(&T),
        hash: impl Fn(&T) -> [u64; 2],
        on_new: impl FnMut(usize, bool),
    ) {
        if self != Path::Portable {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a path other than `Portable` is chosen only when the CPU has AVX2, only
            // for the split-block layouts, and for atomic blocks only where they may be read
            // with vector loads (`Path::for_cells`).
            return unsafe { avx2::insert_batch(layout, blocks, items, touch, hash, on_new) };
        }
        insert_loop(blocks, layout, items, touch, hash, on_new);
    }

    /// Tests every item, hashed by `hash`, into `out`.
    #[inline(always)]
    pub(crate) fn contains_items<B: BlockCell, T>(
        self,
        layout: BlockLayout,
        blocks: &[B],
        items: &[T],
        touch: impl Fn(&T),
        hash: impl Fn(&T) -> [u64; 2],
        out: &mut [bool],
    ) {
        if self != Path::Portable {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `insert_items`.
            return unsafe { avx2::contains_batch(layout, blocks, items, touch, hash, out) };
        }
        contains_loop(blocks, layout, items, touch, hash, out);
    }
}

/// The smallest blocked filter (number of blocks, layout) whose expected FPR after `n`
/// insertions is at most `p`, trying the `k` values around the classic optimum and the
/// split-block layout when `split_block` is true. `n = 0` is treated as 1.
pub fn params_for(n: u64, p: f64, split_block: bool) -> Result<(u64, BlockLayout)> {
    let k_opt = (-check_fpp(p)?.log2()).round().max(1.0) as u32;
    let candidates: Vec<BlockLayout> = if split_block {
        vec![BlockLayout::SplitBlock]
    } else {
        (k_opt.saturating_sub(2).max(1)..=k_opt + 3)
            .map(BlockLayout::Bits)
            .collect()
    };
    params_for_layouts(n, p, &candidates)
}

/// The parameters [`BlockedBloomFilter::new`](crate::BlockedBloomFilter::new) uses: the
/// fastest layout whose size for `n` at `p` is at most 10% over the most compact `Bits(k)`
/// layout's (the half-block split-block layout first, then the split-block one), else the
/// compact layout.
///
/// ```
/// use bloomkit::probe::blocked::{default_params, BlockLayout};
/// let (blocks, layout) = default_params(1_000_000, 0.01)?;
/// assert_eq!(layout, BlockLayout::SplitBlock256);
/// assert!(blocks * 512 < 11 * 1_000_000); // about 10.5 bits per element
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn default_params(n: u64, p: f64) -> Result<(u64, BlockLayout)> {
    let (compact, compact_layout) = params_for(n, p, false)?;
    // Searched only up to the largest size accepted (`blocks as f64 <= compact as f64 * 1.10`).
    let limit = ((compact as f64 * 1.10).floor() as u64).min(MAX_BITS / BLOCK_BITS);
    for fast in [BlockLayout::SplitBlock256, BlockLayout::SplitBlock] {
        if let Some(params) = params_within(n, p, &[fast], limit)? {
            return Ok(params);
        }
    }
    Ok((compact, compact_layout))
}

/// The smallest blocked filter (number of blocks, layout) among `candidates` whose expected FPR
/// after `n` insertions is at most `p` ([`math::blocks_for`], starting from the classic
/// optimum, which a blocked filter never beats). `n = 0` is treated as 1.
pub fn params_for_layouts(
    n: u64,
    p: f64,
    candidates: &[BlockLayout],
) -> Result<(u64, BlockLayout)> {
    params_within(n, p, candidates, MAX_BITS / BLOCK_BITS)?.ok_or(Error::TooLarge {
        bits: u64::MAX,
        limit: "no blocked filter within this platform's size limit meets that FPR (a classic \
                filter reaches rates this low in far fewer bits)",
    })
}

/// [`params_for_layouts`] among sizes of at most `max_blocks` blocks (`None`: no candidate
/// meets `p` within them). The first candidate of the smallest size wins; after the first,
/// each is searched only below the best size so far (one model evaluation for a candidate
/// that cannot beat it).
fn params_within(
    n: u64,
    p: f64,
    candidates: &[BlockLayout],
    max_blocks: u64,
) -> Result<Option<(u64, BlockLayout)>> {
    let p = check_fpp(p)?;
    // The search starts at the classic size for the target it searches for.
    let ln_p = p.min(math::MAX_BLOCKED_FPP).ln();
    let classic = (-(n.max(1) as f64) * ln_p / (LN_2 * LN_2) / BLOCK_BITS as f64).floor() as u64;
    let mut best: Option<(u64, BlockLayout)> = None;
    for &layout in candidates {
        let max = best.map_or(max_blocks, |(blocks, _)| blocks - 1);
        if let Some(blocks) = math::blocks_for(&layout, n, p, classic, max) {
            best = Some((blocks, layout));
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::splitmix64;

    #[test]
    fn masks_have_the_right_bits() {
        for h in [0u64, 1, u64::MAX, 0x0123_4567_89ab_cdef] {
            let m = BlockLayout::SplitBlock.mask(h);
            assert!(m.iter().all(|w| w.count_ones() == 1));
            // One bit in each 32-bit word of one half, none in the other.
            let m = BlockLayout::SplitBlock256.mask(h);
            let half = ((h >> 32) & 1) as usize;
            for (i, w) in m.iter().enumerate() {
                if i / 4 == half {
                    assert_eq!((w & 0xffff_ffff).count_ones(), 1);
                    assert_eq!((w >> 32).count_ones(), 1);
                } else {
                    assert_eq!(*w, 0);
                }
            }
            for k in [1, 7, 8, 20] {
                let m = BlockLayout::Bits(k).mask(h);
                let ones: u32 = m.iter().map(|w| w.count_ones()).sum();
                assert!(ones >= 1 && ones <= k);
            }
        }
        // Different hashes spread over all words.
        let mut seen = [false; 8];
        for h in 0..1000u64 {
            for (i, w) in BlockLayout::Bits(3).mask(splitmix64(h)).iter().enumerate() {
                seen[i] |= *w != 0;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    /// The portable `test` and `set` (direct bit tests) agree with the mask. (The AVX2 kernels
    /// are compared with these in `avx2.rs`.)
    #[test]
    fn direct_probes_agree_with_masks() {
        let layouts = [1, 3, 6, 7, 8, 9, 15, 16]
            .map(BlockLayout::Bits)
            .into_iter()
            .chain([BlockLayout::SplitBlock, BlockLayout::SplitBlock256]);
        for layout in layouts {
            for i in 0..3000u64 {
                let h2 = splitmix64(i);
                let fill = splitmix64(i ^ 0xdead_beef);
                // Blocks from empty to nearly full, so both answers occur.
                let block: [u64; 8] = std::array::from_fn(|w| {
                    let r = splitmix64(fill.wrapping_add(w as u64));
                    match i % 4 {
                        0 => 0,
                        1 => r & splitmix64(r),
                        2 => r | splitmix64(r),
                        _ => !0 ^ (1 << (r & 63)),
                    }
                });
                let mask = layout.mask(h2);
                let want = mask.iter().zip(&block).all(|(m, b)| m & !b == 0);
                assert_eq!(layout.test(&block, h2), want, "{layout:?} {h2:x}");
                let mut set = block;
                assert_eq!(layout.set(&mut set, h2), !want);
                let ored: [u64; 8] = std::array::from_fn(|w| block[w] | mask[w]);
                assert_eq!(set, ored);
                assert!(layout.test(&set, h2));
                // The portable atomic probes agree with the plain ones.
                let atomic = AtomicBlock::new(crate::storage::Block(block));
                assert_eq!(Kernel::test_atomic(layout, &atomic, h2), want);
                assert_eq!(Kernel::set_atomic(layout, &atomic, h2), !want);
                assert_eq!(atomic.load().0, ored, "{layout:?} {h2:x}");
            }
        }
    }

    /// Plain blocks take the CPU's fastest path; atomic blocks the same one where the AVX2
    /// kernels may read them with vector loads, the portable path elsewhere.
    #[test]
    fn atomic_blocks_take_an_avx2_path_only_with_atomic_vector_loads() {
        use crate::storage::Block;
        let hashing = Hashing::Xxh3;
        let layouts = [
            BlockLayout::SplitBlock,
            BlockLayout::SplitBlock256,
            BlockLayout::Bits(7),
        ];
        let fastest = layouts.map(|l| Path::new(l, &hashing));
        let plain = layouts.map(|l| Path::for_cells::<Block>(l, &hashing));
        let atomic = layouts.map(|l| Path::for_cells::<AtomicBlock>(l, &hashing));
        assert_eq!(plain, fastest);
        #[cfg(target_arch = "x86_64")]
        let atomic_fastest = avx2::atomic_vector_loads();
        #[cfg(not(target_arch = "x86_64"))]
        let atomic_fastest = true;
        assert_eq!(
            atomic,
            fastest.map(|p| if atomic_fastest { p } else { Path::Portable })
        );
    }

    #[test]
    fn sizing_meets_target() {
        for p in [0.1, 0.01, 0.001] {
            for n in [1000u64, 1_000_000] {
                let (blocks, layout) = params_for(n, p, false).unwrap();
                let expected_fpp = |l: BlockLayout, b, n| math::blocked_fpp(&l, b, n);
                assert!(expected_fpp(layout, blocks, n) <= p);
                assert!(expected_fpp(layout, blocks - 1, n) > p || blocks == 1);
                let (b2, l2) = params_for(n, p, true).unwrap();
                assert!(expected_fpp(l2, b2, n) <= p);
                let (b3, l3) = params_for_layouts(n, p, &[BlockLayout::SplitBlock256]).unwrap();
                assert!(expected_fpp(l3, b3, n) <= p);
                // Smaller groups of bits fill less evenly: more memory than SplitBlock.
                assert!(b3 >= b2, "{n} {p}");
            }
        }
        assert!(params_for(10, 2.0, false).is_err());
    }
}
