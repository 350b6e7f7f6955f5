//! A filter's spec: everything that decides which bits an element maps to.
//!
//! A [`Spec`] joins the pipeline's stages, key encoding ([`crate::key`]) → hashing
//! ([`Hashing`]) → probing ([`Scheme`]), with the size ([`Params`]: `m` bits, `k` hashes).
//! Storage is not part of it: the same spec drives a plain, an atomic or a memory-mapped
//! filter, a counting filter's counters, or bits kept in Redis. Two filters can be merged or
//! compared exactly when their specs are equal.
//!
//! Blocked filters place an element's bits differently (all in one block, see
//! [`crate::probe::blocked`]), so they have their own [`BlockSpec`]: number of blocks, in-block
//! layout and hashing, with the same roles (locate an element, check compatibility with a
//! typed [`Incompatibility`], a stable name).
//!
//! ```
//! use bloomkit::{Spec, Preset, Scheme, Hashing};
//! // bloomkit's own choice for a million elements at 1%.
//! let spec = Spec::for_capacity(1_000_000, 0.01).unwrap();
//! assert_eq!(spec.scheme(), Scheme::MixedDouble);
//! // Exactly what Guava 31.1 builds for BloomFilter.create(funnel, 1000, 0.01).
//! let guava = Spec::preset(Preset::Guava, 1000, 0.01).unwrap();
//! assert_eq!((guava.bits(), guava.hashes()), (9600, 7));
//! assert_eq!(guava.hashing(), &Hashing::Murmur3);
//! ```

use crate::error::{Error, Incompatibility, Result};
use crate::hash::Hashing;
use crate::key::Key;
use crate::math::{self, GuavaHashes, Params};
use crate::probe::blocked::{BlockLayout, BLOCK_BITS};
use crate::probe::{Digest, Scheme};
use std::fmt;

/// The families of filters bloomkit can build exactly: sizing, hashing and probing together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Preset {
    /// bloomkit's own: [`math::params_for`] sizing, XXH3, [`Scheme::MixedDouble`] probing.
    #[default]
    Bloomkit,
    /// bloomkit's own sizing and XXH3, hashed once to 64 bits ([`Scheme::EnhancedDouble64`]):
    /// the same size and FPR as [`Preset::Bloomkit`], cheaper to hash for string keys. Its
    /// bits differ from [`Preset::Bloomkit`]'s, and files name the scheme (native scheme
    /// code 10), so a filter keeps the preset it was made with.
    Bloomkit64,
    /// Guava 31.1 `BloomFilter.create` with `MURMUR128_MITZ_64` (strategy ordinal 1).
    Guava,
    /// Guava sizing with `MURMUR128_MITZ_32` (strategy ordinal 0).
    Guava32,
    /// Go bits-and-blooms `NewWithEstimates`.
    Go,
    /// Redisson `RBloomFilter.tryInit` (feature `redisson`).
    #[cfg(feature = "redisson")]
    Redisson,
}

impl Preset {
    /// Every preset this build has, in a fixed order.
    pub const ALL: &'static [Preset] = &[
        Preset::Bloomkit,
        Preset::Bloomkit64,
        Preset::Guava,
        Preset::Guava32,
        Preset::Go,
        #[cfg(feature = "redisson")]
        Preset::Redisson,
    ];

    /// The preset's sizing for (`n`, `p`).
    pub fn params(self, n: u64, p: f64) -> Result<Params> {
        match self {
            Preset::Bloomkit | Preset::Bloomkit64 => math::params_for(n, p),
            Preset::Guava | Preset::Guava32 => math::guava_params(n, p, GuavaHashes::V31),
            Preset::Go => math::go_params(n, p),
            #[cfg(feature = "redisson")]
            Preset::Redisson => math::redisson_params(n, p),
        }
    }

    /// The preset's probing scheme.
    pub fn scheme(self) -> Scheme {
        match self {
            Preset::Bloomkit => Scheme::MixedDouble,
            Preset::Bloomkit64 => Scheme::EnhancedDouble64,
            Preset::Guava => Scheme::GuavaMitz64,
            Preset::Guava32 => Scheme::GuavaMitz32,
            Preset::Go => Scheme::Go,
            #[cfg(feature = "redisson")]
            Preset::Redisson => Scheme::Redisson,
        }
    }

    /// The preset's hash function.
    pub fn hashing(self) -> Hashing {
        match self {
            Preset::Bloomkit | Preset::Bloomkit64 => Hashing::Xxh3,
            Preset::Guava | Preset::Guava32 | Preset::Go => Hashing::Murmur3,
            #[cfg(feature = "redisson")]
            Preset::Redisson => Hashing::Highway,
        }
    }
}

/// Size, hashing and probing of a filter: the complete rule from element to bit positions.
#[derive(Clone, PartialEq, Eq)]
pub struct Spec {
    params: Params,
    scheme: Scheme,
    hashing: Hashing,
}

impl Spec {
    /// A spec from its parts, after checking the parameters.
    pub fn new(params: Params, scheme: Scheme, hashing: Hashing) -> Result<Self> {
        Ok(Spec {
            params: params.validate()?,
            scheme,
            hashing,
        })
    }

    /// bloomkit's default spec for `n` elements at FPR `p` (see [`math::params_for`]).
    pub fn for_capacity(n: u64, p: f64) -> Result<Self> {
        Self::preset(Preset::Bloomkit, n, p)
    }

    /// bloomkit's default hashing and probing with an explicit `m` and `k`.
    pub fn with_bits(bits: u64, hashes: u32) -> Result<Self> {
        Self::new(
            Params { bits, hashes },
            Scheme::default(),
            Hashing::default(),
        )
    }

    /// What `preset`'s library builds for `n` elements at FPR `p`.
    pub fn preset(preset: Preset, n: u64, p: f64) -> Result<Self> {
        Self::new(preset.params(n, p)?, preset.scheme(), preset.hashing())
    }

    /// The same spec with another probing scheme.
    pub fn with_scheme(mut self, scheme: Scheme) -> Self {
        self.scheme = scheme;
        self
    }

    /// The same spec with another hash function (for example [`Hashing::siphash`] for
    /// untrusted input).
    pub fn with_hashing(mut self, hashing: Hashing) -> Self {
        self.hashing = hashing;
        self
    }

    /// Number of bits, `m`.
    #[inline]
    pub fn bits(&self) -> u64 {
        self.params.bits
    }

    /// Number of hash functions, `k`.
    #[inline]
    pub fn hashes(&self) -> u32 {
        self.params.hashes
    }

    /// `m` and `k` together.
    #[inline]
    pub fn params(&self) -> Params {
        self.params
    }

    /// The probing scheme.
    #[inline]
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The hash function.
    #[inline]
    pub fn hashing(&self) -> &Hashing {
        &self.hashing
    }

    /// Hashes already-encoded key bytes to a [`Digest`].
    #[inline(always)]
    pub fn digest_bytes(&self, bytes: &[u8]) -> Digest {
        // The default pipeline (and the one-hash scheme with the default hashing) is inlined
        // into the caller's probe loop; every other one is a call.
        if matches!(self.hashing, Hashing::Xxh3) {
            if self.scheme == Scheme::MixedDouble {
                let [h1, h2] = Hashing::Xxh3.hash128(bytes);
                return Digest {
                    h1,
                    h2,
                    ..Digest::default()
                };
            }
            if self.scheme.hashes_once() {
                return Digest::of_one_hash(crate::hash::xxh3_64(bytes));
            }
        }
        self.digest_bytes_other(bytes)
    }

    /// [`digest_bytes`](Self::digest_bytes) of the pipelines that are not inlined.
    #[inline(never)]
    fn digest_bytes_other(&self, bytes: &[u8]) -> Digest {
        if self.scheme.hashes_once() {
            return Digest::of_one_hash(self.hashing.hash64(bytes));
        }
        let [h1, h2] = self.hashing.hash128(bytes);
        let [h3, h4] = if self.scheme.needs_wide_digest() {
            self.hashing.hash128_suffixed(bytes, 1)
        } else {
            [0, 0]
        };
        Digest { h1, h2, h3, h4 }
    }

    /// Encodes and hashes an element.
    #[inline(always)]
    pub fn digest<K: Key + ?Sized>(&self, key: &K) -> Digest {
        key.with_bytes(
            #[inline(always)]
            |b| self.digest_bytes(b),
        )
    }

    /// Walks the element's positions (see [`Scheme::for_each_position`]).
    #[inline]
    pub fn for_each_position(&self, d: &Digest, f: impl FnMut(u64) -> bool) -> bool {
        self.scheme
            .for_each_position(d, self.params.hashes, self.params.bits, f)
    }

    /// The `k` bit positions of an element, in probe order.
    ///
    /// ```
    /// let spec = bloomkit::Spec::with_bits(1000, 3).unwrap();
    /// let p = spec.positions("x");
    /// assert_eq!(p.len(), 3);
    /// assert!(p.iter().all(|&i| i < 1000));
    /// ```
    pub fn positions<K: Key + ?Sized>(&self, key: &K) -> Vec<u64> {
        self.scheme
            .positions(&self.digest(key), self.params.hashes, self.params.bits)
    }

    /// `Ok` if filters of `self` and `other` map every element to the same bits.
    pub fn check_compatible(&self, other: &Spec) -> Result<()> {
        let fail = |i| Err(Error::Incompatible(i));
        if self.params.bits != other.params.bits {
            return fail(Incompatibility::Bits(self.params.bits, other.params.bits));
        }
        if self.params.hashes != other.params.hashes {
            return fail(Incompatibility::Hashes(
                self.params.hashes,
                other.params.hashes,
            ));
        }
        if self.scheme != other.scheme {
            return fail(Incompatibility::Scheme(
                self.scheme.name().into(),
                other.scheme.name().into(),
            ));
        }
        if self.hashing != other.hashing {
            return fail(Incompatibility::Hashing(
                self.hashing.id(),
                other.hashing.id(),
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spec")
            .field("bits", &self.params.bits)
            .field("hashes", &self.params.hashes)
            .field("scheme", &self.scheme)
            .field("hashing", &self.hashing)
            .finish()
    }
}

/// Everything that decides which bits an element maps to in a blocked filter: the number of
/// 512-bit blocks, the in-block layout and the hash function. The blocked counterpart of
/// [`Spec`], shared by [`BlockedBloomFilter`](crate::BlockedBloomFilter), the atomic blocked
/// filter and memory-mapped blocked files.
///
/// ```
/// use bloomkit::{BlockSpec, Hashing, probe::blocked::BlockLayout};
/// let spec = BlockSpec::new(1000, BlockLayout::SplitBlock, Hashing::Xxh3)?;
/// assert_eq!(spec.name(), "split-block");
/// let (block, _in_block_hash) = spec.locate("x");
/// assert!(block < 1000);
/// let other = BlockSpec::new(1000, BlockLayout::Bits(7), Hashing::Xxh3)?;
/// assert!(spec.check_compatible(&other).is_err());
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSpec {
    blocks: u64,
    layout: BlockLayout,
    hashing: Hashing,
}

impl BlockSpec {
    /// A spec of exactly `blocks` blocks, after checking the size.
    pub fn new(blocks: u64, layout: BlockLayout, hashing: Hashing) -> Result<Self> {
        if blocks == 0 {
            return Err(Error::ZeroBits);
        }
        math::check_bits_hashes(
            blocks.saturating_mul(BLOCK_BITS),
            u64::from(layout.hashes()),
        )?;
        Ok(BlockSpec {
            blocks,
            layout,
            hashing,
        })
    }

    /// bloomkit's default blocked spec for `n` elements at FPR `p` (see
    /// [`BlockedBloomFilter::new`](crate::BlockedBloomFilter::new)).
    pub fn for_capacity(n: u64, p: f64) -> Result<Self> {
        let (blocks, layout) = crate::probe::blocked::default_params(n, p)?;
        Self::new(blocks, layout, Hashing::Xxh3)
    }

    /// The same spec with another hash function.
    pub fn with_hashing(mut self, hashing: Hashing) -> Self {
        self.hashing = hashing;
        self
    }

    /// Number of 512-bit blocks.
    #[inline]
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Number of bits (`512 ×` blocks).
    #[inline]
    pub fn bits(&self) -> u64 {
        self.blocks * BLOCK_BITS
    }

    /// The in-block layout.
    #[inline]
    pub fn layout(&self) -> BlockLayout {
        self.layout
    }

    /// Bits set per element, `k`.
    #[inline]
    pub fn hashes(&self) -> u32 {
        self.layout.hashes()
    }

    /// The hash function.
    #[inline]
    pub fn hashing(&self) -> &Hashing {
        &self.hashing
    }

    /// The layout's stable name: `split-block-256`, `split-block` or `bits-K`.
    pub fn name(&self) -> String {
        self.layout.name()
    }

    /// `m` and `k`.
    pub fn params(&self) -> Params {
        Params {
            bits: self.bits(),
            hashes: self.hashes(),
        }
    }

    /// The expected FPR after `n` distinct insertions ([`math::blocked_fpp`]).
    pub fn expected_fpp(&self, n: u64) -> f64 {
        math::blocked_fpp(&self.layout, self.blocks, n)
    }

    /// The hash words `[h1, h2]` of an element ([`BlockLayout::hash`]).
    #[inline(always)]
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> [u64; 2] {
        key.with_bytes(|b| self.layout.hash(&self.hashing, b))
    }

    /// The element's block (in `0..blocks`) and its in-block hash word.
    #[inline]
    pub fn locate<K: Key + ?Sized>(&self, key: &K) -> (u64, u64) {
        let [h1, h2] = self.hash(key);
        (crate::probe::reduce(h1, self.blocks), h2)
    }

    /// `Ok` if filters of `self` and `other` map every element to the same bits; otherwise
    /// the first difference, as [`Incompatibility::Bits`], [`Incompatibility::Layout`] or
    /// [`Incompatibility::Hashing`].
    pub fn check_compatible(&self, other: &BlockSpec) -> Result<()> {
        let fail = |i| Err(Error::Incompatible(i));
        if self.blocks != other.blocks {
            return fail(Incompatibility::Bits(self.bits(), other.bits()));
        }
        if self.layout != other.layout {
            return fail(Incompatibility::Layout(self.layout, other.layout));
        }
        if self.hashing != other.hashing {
            return fail(Incompatibility::Hashing(
                self.hashing.id(),
                other.hashing.id(),
            ));
        }
        Ok(())
    }
}
