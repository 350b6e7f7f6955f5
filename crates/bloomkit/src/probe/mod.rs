//! Probing: from a 128-bit hash to `k` bit positions in `[0, m)` (stage 3 of the pipeline).
//!
//! Each [`Scheme`] is one named, exact rule. `m` can be any size; nothing is forced to a power
//! of two.
//!
//! | scheme | rule (all arithmetic wrapping on 64 bits unless said) |
//! |---|---|
//! | [`Scheme::MixedDouble`] (default) | `x = h1, y = h2 \| 1`; for each `i`: position `⌊mix(x)·m / 2⁶⁴⌋` with `mix(x) = (x ⊕ (x ≫ 32))·0xd6e8feb86659fd93`, then `x += y` |
//! | [`Scheme::EnhancedDouble`] (the default before `mixed-double`) | `x = h1, y = h2`; for `i` in `0..k`: position `⌊x·m / 2⁶⁴⌋`, then `x += y`, `y += i` |
//! | [`Scheme::EnhancedDouble64`] | [`Scheme::EnhancedDouble`] on a digest made from one 64-bit hash `h` ([`Hashing::hash64`](crate::Hashing::hash64)): `h1 = h`, `h2 = lo ⊕ hi` of the 128-bit product `h · 0x9e3779b97f4a7c15` |
//! | [`Scheme::GuavaMitz64`] | `c = h1`; for each `i`: `(c & i64::MAX) % m`, then `c += h2` |
//! | [`Scheme::GuavaMitz32`] | `a = low32(h1), b = high32(h1)` as `i32`; for `i` in `1..=k`: `x = a + i·b` (wrapping `i32`), `!x` if negative, `x % m` |
//! | [`Scheme::Go`] | `h = [h1, h2, h3, h4]` where `h3, h4` hash the key followed by byte 1; `(h[i%2] + i·h[2 + ((i + i%2) % 4)/2]) % m` |
//! | [`Scheme::Redisson`] | `c = h1`; for each `i`: `(c & i64::MAX) % m`, then `c += h2` if `i` is even, else `c += h1` |
//!
//! bloomkit's default is double hashing over 64-bit words, each probe's word mixed before
//! Lemire's multiply-shift range reduction (the position is the high half of the 128-bit
//! product `mix(x)·m`: one multiplication instead of a 20–90 cycle `%`).
//!
//! Why the mix: without it (`enhanced-double`, the default of files written before), the
//! positions are the points `frac(h1/2⁶⁴ + i·h2/2⁶⁴)` of one arithmetic progression on the
//! unit circle, scaled by `m`, and the enhanced term `y += i` moves a point by far less than one
//! bit there. When the step `h2/2⁶⁴` falls within about `1/(m·k)` of a fraction with a small
//! denominator `q` (0, 1/2, 1/3, …), the `k` probes land on about `q` bits, and an absent key
//! that probes 1 or 2 bits of a half-full filter is a false positive about half the time. That
//! adds roughly `2/(m·k)` to the false-positive rate, nothing beside `p` for large filters at
//! common rates, but hundreds of times `p` for a small filter at a low rate: measured, 1.9·10⁻⁴
//! for 20 keys at a target of 5·10⁻⁷ (`m` = 640, `k` = 20), 5·10⁻⁶ for 1,000 keys at the same
//! target, which also broke the compound bound of scalable filters that start small.
//! `x ⊕ (x ≫ 32)` is not linear in `x` over wrapping addition, and the multiplication carries
//! every bit of it into the high bits the reduction reads, so the probes of one key behave as
//! independent; `y` is odd, so the `k` words differ. Measured against the `k`-independent-probes
//! theory: 2.0·10⁻⁷ for the 20 keys above (theory 2.2·10⁻⁷), and the whole grid of
//! `tests/fpr.rs`, which now also holds small filters at low rates. Files name their scheme, so
//! filters written with `enhanced-double` keep it, and their FPR.

pub mod blocked;

pub mod dleft;
pub mod register;

use std::fmt;

/// The hash words of one element, as the probing schemes consume them.
///
/// `h3` and `h4` are only computed for schemes that need them ([`Scheme::needs_wide_digest`]);
/// otherwise they are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Digest {
    /// First 64 bits of the 128-bit hash.
    pub h1: u64,
    /// Second 64 bits of the 128-bit hash.
    pub h2: u64,
    /// First 64 bits of the hash of the key followed by byte 1 (Go scheme only).
    pub h3: u64,
    /// Second 64 bits of the hash of the key followed by byte 1 (Go scheme only).
    pub h4: u64,
}

/// A rule that turns a [`Digest`] into `k` positions in `[0, m)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Scheme {
    /// bloomkit's default before [`Scheme::MixedDouble`]: enhanced double hashing with
    /// multiply-shift range reduction. Its false-positive rate exceeds the theory by about
    /// `2/(m·k)` (see the [module docs](self)): keep it only for filters that have it.
    EnhancedDouble,
    /// Guava's `MURMUR128_MITZ_64` (strategy ordinal 1; Guava's default since version 17).
    GuavaMitz64,
    /// Guava's `MURMUR128_MITZ_32` (strategy ordinal 0).
    GuavaMitz32,
    /// Go bits-and-blooms' `location` (v2 and v3).
    Go,
    /// Redisson `RBloomFilter`'s alternating double hashing.
    Redisson,
    /// Enhanced double hashing from one 64-bit hash: the key is hashed once to 64 bits (XXH3-64
    /// with the default hashing, which costs about half of XXH3-128 on keys of 17 to 128
    /// bytes) and the second word derived from it ([`Scheme::hashes_once`]). A filter's
    /// positions differ from [`Scheme::EnhancedDouble`]'s, so this is a scheme of its own,
    /// named in files; existing filters keep theirs. Its probes walk the same unmixed
    /// progression as [`Scheme::EnhancedDouble`]'s, with the same excess of about `2/(m·k)`
    /// over the theory (see the [module docs](self)): for filters of millions of bits at
    /// common rates it is nothing, for small filters at low rates use the default.
    EnhancedDouble64,
    /// bloomkit's default: double hashing with each probe's word mixed before multiply-shift
    /// range reduction (see the [module docs](self)).
    #[default]
    MixedDouble,
}

impl Digest {
    /// The digest of [`Scheme::EnhancedDouble64`], made of one 64-bit hash `h`: `h` and its
    /// [`second_word`].
    #[inline(always)]
    pub(crate) fn of_one_hash(h: u64) -> Digest {
        Digest {
            h1: h,
            h2: second_word(h),
            ..Digest::default()
        }
    }
}

/// The second digest word of [`Scheme::EnhancedDouble64`]: the XOR of the halves of the
/// 128-bit product of `h` and 2⁶⁴/φ (one multiplication; every bit of `h` reaches the high
/// bits that multiply-shift reduction reads).
#[inline(always)]
pub(crate) fn second_word(h: u64) -> u64 {
    let p = u128::from(h) * 0x9e37_79b9_7f4a_7c15u128;
    p as u64 ^ (p >> 64) as u64
}

/// One SplitMix64 step (Steele, Lea & Flood): the output for state `x`, that is the mix of
/// `x + 0x9e3779b97f4a7c15`. Stretches hash bits where a layout needs more than it was given
/// (the `Bits(k)` blocks past seven positions, the register layout past ten).
#[inline(always)]
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Lemire's multiply-shift reduction of a uniform 64-bit `x` to `[0, m)`.
#[inline(always)]
pub fn reduce(x: u64, m: u64) -> u64 {
    ((u128::from(x) * u128::from(m)) >> 64) as u64
}

/// The positions of [`Scheme::EnhancedDouble`] (and [`Scheme::EnhancedDouble64`]) in `[0, m)`.
#[inline(always)]
pub(crate) fn enhanced_double(d: &Digest, k: u32, m: u64) -> impl Iterator<Item = u64> {
    let (mut x, mut y) = (d.h1, d.h2);
    (0..u64::from(k)).map(move |i| {
        let p = reduce(x, m);
        x = x.wrapping_add(y);
        y = y.wrapping_add(i);
        p
    })
}

/// The positions of [`Scheme::MixedDouble`], the default, in `[0, m)`: an iterator, so that a
/// filter's loop over them keeps its state in registers (the classic filter's insert and query
/// use it directly).
#[inline(always)]
pub(crate) fn mixed_double(d: &Digest, k: u32, m: u64) -> impl Iterator<Item = u64> {
    let (mut x, y) = (d.h1, d.h2 | 1);
    (0..k).map(move |_| {
        let p = reduce((x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93), m);
        x = x.wrapping_add(y);
        p
    })
}

impl Scheme {
    /// Every scheme, in a fixed order (for tests and tools).
    pub const ALL: [Scheme; 7] = [
        Scheme::EnhancedDouble,
        Scheme::GuavaMitz64,
        Scheme::GuavaMitz32,
        Scheme::Go,
        Scheme::Redisson,
        Scheme::EnhancedDouble64,
        Scheme::MixedDouble,
    ];

    /// The scheme's stable name: `enhanced-double`, `guava-mitz64`, `guava-mitz32`, `go`,
    /// `redisson`, `enhanced-double-64`, `mixed-double`.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::EnhancedDouble => "enhanced-double",
            Scheme::EnhancedDouble64 => "enhanced-double-64",
            Scheme::MixedDouble => "mixed-double",
            Scheme::GuavaMitz64 => "guava-mitz64",
            Scheme::GuavaMitz32 => "guava-mitz32",
            Scheme::Go => "go",
            Scheme::Redisson => "redisson",
        }
    }

    /// The scheme with this [`name`](Scheme::name), if any.
    pub fn from_name(name: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether the scheme needs `h3` and `h4` (a second hash of the key).
    #[inline]
    pub fn needs_wide_digest(self) -> bool {
        matches!(self, Scheme::Go)
    }

    /// Whether the scheme's digest comes from one 64-bit hash of the key
    /// ([`Scheme::EnhancedDouble64`]) rather than the 128-bit one.
    #[inline]
    pub fn hashes_once(self) -> bool {
        matches!(self, Scheme::EnhancedDouble64)
    }

    /// Calls `f` with each of the `k` positions in `[0, m)`, in probe order, until `f` returns
    /// `false`. Returns `false` if `f` stopped the walk, `true` if every position was visited.
    ///
    /// `m` must be at least 1.
    #[inline(always)]
    pub fn for_each_position(self, d: &Digest, k: u32, m: u64, f: impl FnMut(u64) -> bool) -> bool {
        debug_assert!(m > 0);
        // Only the default is walked inline: every other scheme's loop is out of line, so that
        // a caller's code stays small where it inlines a query.
        if self == Scheme::MixedDouble {
            return mixed_double(d, k, m).all(f);
        }
        self.for_each_position_other(d, k, m, f)
    }

    /// [`for_each_position`](Self::for_each_position) for every scheme but the default, out of
    /// line.
    #[inline(never)]
    fn for_each_position_other(
        self,
        d: &Digest,
        k: u32,
        m: u64,
        mut f: impl FnMut(u64) -> bool,
    ) -> bool {
        match self {
            Scheme::MixedDouble => unreachable!("the default is walked by for_each_position"),
            Scheme::EnhancedDouble | Scheme::EnhancedDouble64 => {
                return enhanced_double(d, k, m).all(f);
            }
            Scheme::GuavaMitz64 => {
                let mut c = d.h1;
                for _ in 0..k {
                    if !f((c & i64::MAX as u64) % m) {
                        return false;
                    }
                    c = c.wrapping_add(d.h2);
                }
            }
            Scheme::GuavaMitz32 => {
                let a = d.h1 as i32;
                let b = (d.h1 >> 32) as i32;
                for i in 1..=k {
                    let mut x = a.wrapping_add((i as i32).wrapping_mul(b));
                    if x < 0 {
                        x = !x;
                    }
                    if !f(x as u64 % m) {
                        return false;
                    }
                }
            }
            Scheme::Go => {
                let h = [d.h1, d.h2, d.h3, d.h4];
                for i in 0..u64::from(k) {
                    let loc = h[(i % 2) as usize]
                        .wrapping_add(i.wrapping_mul(h[2 + (((i + i % 2) % 4) / 2) as usize]));
                    if !f(loc % m) {
                        return false;
                    }
                }
            }
            Scheme::Redisson => {
                let mut c = d.h1;
                for i in 0..k {
                    if !f((c & i64::MAX as u64) % m) {
                        return false;
                    }
                    c = c.wrapping_add(if i % 2 == 0 { d.h2 } else { d.h1 });
                }
            }
        }
        true
    }

    /// The `k` positions as a vector (convenient; the filters use
    /// [`for_each_position`](Scheme::for_each_position), which does not allocate).
    pub fn positions(self, d: &Digest, k: u32, m: u64) -> Vec<u64> {
        let mut out = Vec::with_capacity(k as usize);
        self.for_each_position(d, k, m, |p| {
            out.push(p);
            true
        });
        out
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Hashing;

    /// `enhanced-double-64` positions of "https://example.com/" in 1000 bits, k = 7.
    const PINNED: [u64; 7] = [299, 447, 595, 742, 890, 38, 186];

    fn digest(hashing: &Hashing, bytes: &[u8], wide: bool) -> Digest {
        let [h1, h2] = hashing.hash128(bytes);
        let [h3, h4] = if wide {
            hashing.hash128_suffixed(bytes, 1)
        } else {
            [0, 0]
        };
        Digest { h1, h2, h3, h4 }
    }

    /// Go bits-and-blooms 3.3.1 `Locations(data, 4)` (raw, before `% m`).
    #[test]
    fn go_locations_match() {
        let cases: [(&str, [u64; 4]); 5] = [
            (
                "",
                [
                    0,
                    8613248517421295493,
                    17226497034842590986,
                    8100592207030843970,
                ],
            ),
            (
                "a",
                [
                    9607679276477937801,
                    7119426266501110842,
                    9044760519629676105,
                    12460773273929401863,
                ],
            ),
            (
                "hello",
                [
                    14688674573012802306,
                    13376297196575953845,
                    9862836706629027898,
                    9645822788820425343,
                ],
            ),
            (
                "0123456789abcde",
                [
                    11974462240020439889,
                    13251138349096082877,
                    8529514348063868139,
                    1533015916051162209,
                ],
            ),
            (
                "0123456789abcdef",
                [
                    5467490433528156583,
                    8297904649572320836,
                    2497773196781079675,
                    17620884472478571564,
                ],
            ),
        ];
        for (input, want) in cases {
            let d = digest(&Hashing::Murmur3, input.as_bytes(), true);
            // With m = u64::MAX the reduction `% m` leaves these values unchanged.
            assert_eq!(Scheme::Go.positions(&d, 4, u64::MAX), want, "{input:?}");
        }
        // New(100, 3) + Add("hello") sets bits 6, 45, 98.
        let d = digest(&Hashing::Murmur3, b"hello", true);
        let mut p = Scheme::Go.positions(&d, 3, 100);
        p.sort();
        assert_eq!(p, [6, 45, 98]);
    }

    /// Redisson `RBloomFilter` indexes for `tryInit(100, 0.01)` and `tryInit(1000, 0.03)`.
    #[cfg(feature = "redisson")]
    #[test]
    fn redisson_indexes_match() {
        let cases: [(&[u8], u32, u64, &[u64]); 3] = [
            (b"hello", 7, 958, &[635, 186, 859, 410, 125, 634, 349]),
            (b"hello", 5, 7298, &[6595, 980, 1089, 2772, 2881]),
            (b"world", 7, 958, &[93, 567, 698, 214, 345, 819, 950]),
        ];
        for (key, k, m, want) in cases {
            let d = digest(&Hashing::Highway, key, false);
            assert_eq!(Scheme::Redisson.positions(&d, k, m), want, "k={k} m={m}");
        }
    }

    /// Guava's `put("hello")` into a 128-bit, k = 7 filter (n = 10, p = 0.01).
    #[test]
    fn guava_indexes_match() {
        let d = digest(&Hashing::Murmur3, b"hello", false);
        for (scheme, want) in [
            (Scheme::GuavaMitz64, [2, 27, 52, 77, 102, 127, 24]),
            (Scheme::GuavaMitz32, [53, 23, 100, 78, 1, 52, 24]),
        ] {
            assert_eq!(scheme.positions(&d, 7, 128), want, "{scheme}");
        }
    }

    /// `enhanced-double-64` hashes once, to XXH3-64, and its positions are pinned: they are
    /// what files of scheme 10 hold.
    #[test]
    fn enhanced_double_64_is_pinned() {
        let spec = crate::Spec::with_bits(1000, 7)
            .unwrap()
            .with_scheme(Scheme::EnhancedDouble64);
        let d = spec.digest("https://example.com/");
        assert_eq!(d.h1, xxhash_rust::xxh3::xxh3_64(b"https://example.com/"));
        assert_eq!(d.h2, second_word(d.h1));
        assert_eq!(spec.positions("https://example.com/"), PINNED);
    }

    #[test]
    fn positions_are_in_range_and_walks_stop() {
        let d = digest(&Hashing::Xxh3, b"x", true);
        for scheme in Scheme::ALL {
            for m in [1u64, 2, 63, 64, 1000, u64::MAX] {
                let p = scheme.positions(&d, 20, m);
                assert_eq!(p.len(), 20);
                assert!(p.iter().all(|&i| i < m), "{scheme} m={m} {p:?}");
            }
            let mut seen = 0;
            assert!(!scheme.for_each_position(&d, 20, 1000, |_| {
                seen += 1;
                seen < 3
            }));
            assert_eq!(seen, 3);
            assert_eq!(Scheme::from_name(scheme.name()), Some(scheme));
        }
    }
}
