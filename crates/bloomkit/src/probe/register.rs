//! Register-blocked probing: all `k` bits of an element in one 64-bit word.
//!
//! A filter whose bits live in a remote store (Redis) pays per round trip and per command, not
//! per bit. Putting every bit of an element into a single 64-bit word ("register blocking")
//! means a check reads one word and an add ORs one mask into one word, whatever `k` is.
//!
//! The filter's words are split into `segments` equal segments of `segment_words` words each
//! (a Redis string holds at most 2³² bits, so a large filter needs several). An element maps to
//! a [`RegisterProbe`]:
//!
//! - `g = ⌊h1 · W / 2⁶⁴⌋` where `W = segments · segment_words` (multiply-shift, see
//!   [`super::reduce`]); `segment = g / segment_words`, `word = g % segment_words`;
//! - the mask has exactly `k` distinct bits, taken from successive 6-bit fields of `h2`, most
//!   significant first (`bit = x >> 58`, then `x <<= 6`); when a 64-bit value is used up
//!   (10 fields) it is replaced by `x = splitmix64(x_original + 0x9E3779B97F4A7C15 · round)`.
//!   A field that repeats an already chosen bit is skipped.
//!
//! ## Bit order
//! The mask is in **Redis order**: mask bit `1 << (63 - j)` is bit offset `64·word + j` of the
//! segment, where Redis numbers bits most-significant first within each byte (bit `i` is byte
//! `i / 8`, mask `0x80 >> (i % 8)`). So the mask lines up with the word read as a big-endian
//! integer: `u64::from_be_bytes(segment[8·word .. 8·word + 8])`, which is also what
//! `BITFIELD key GET i64 #word` returns (as a signed integer; reinterpret the bits).
//!
//! In the block-layout family this is the one-word block: each layout (the 512-bit ones of
//! [`super::blocked`] and this one) says how an element marks and tests its block and what a
//! block holding `l` elements answers ([`crate::math::BlockModel`]); sizing is the one
//! block-load model and search of [`crate::math`].
//!
//! ## The price: memory
//! Blocking raises the FPR for a given `m` (words get unequal loads), so [`RegisterLayout::for_capacity`]
//! sizes the filter from the blocked model
//! `FPR = Σₗ Pois(l; n/W) · (1 − (1 − k/64)ˡ)ᵏ`. The model is an upper bound: it treats the
//! `k` tested bits of a word as independent, while an element's bits are distinct, which makes
//! "all `k` set" less likely (measured: 0.75–0.95 of the target at the chosen sizes). Each bit
//! costs a Redis subcommand on the add path, so sizing prefers the smallest `k` whose memory is
//! within 20 % of the smallest over all `k`. Cost: 14.7 bits per element at 1 % (k = 3; a
//! classic filter needs 9.6), 26.8 at 0.1 % (k = 5; classic 14.4), 7.1 at 5 % (k = 3;
//! classic 6.2).
//! Blocking in one word suits FPRs around 1 % and above; the tests measure it.

use super::{reduce, splitmix64, Digest};
use crate::error::{Error, Result};
use crate::math::BlockModel;

/// The largest `k` a register-blocked filter accepts: more than 24 of the 64 bits per element
/// would fill the words faster than they help.
pub const MAX_REGISTER_HASHES: u32 = 24;

/// The most bits one segment may hold: a Redis string is at most 2³² bits (512 MiB).
pub const MAX_SEGMENT_BITS: u64 = 1 << 32;

/// Where an element's bits are: one word of one segment, and the `k` bits inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegisterProbe {
    /// Segment index in `[0, segments)`.
    pub segment: u32,
    /// Word index inside the segment, in `[0, segment_words)`.
    pub word: u64,
    /// The element's `k` bits, in Redis order (see the module docs).
    pub mask: u64,
}

impl RegisterProbe {
    /// The bit offsets inside the segment (Redis numbering), in increasing order.
    ///
    /// ```
    /// use bloomkit::probe::register::RegisterProbe;
    /// let p = RegisterProbe { segment: 0, word: 2, mask: (1 << 63) | 1 };
    /// assert_eq!(p.bit_offsets().collect::<Vec<_>>(), [128, 191]);
    /// ```
    pub fn bit_offsets(&self) -> impl Iterator<Item = u64> + '_ {
        let base = self.word * 64;
        let mut rest = self.mask;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let j = rest.leading_zeros();
            rest &= !(1u64 << (63 - j));
            Some(base + u64::from(j))
        })
    }

    /// The byte offset of the word inside its segment.
    pub fn byte_offset(&self) -> u64 {
        self.word * 8
    }
}

/// The shape of a register-blocked filter: how many segments, how many 64-bit words each, and
/// how many bits per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegisterLayout {
    segments: u32,
    segment_words: u64,
    hashes: u32,
}

/// The `k`-bit mask that the register scheme derives from `h2` (see the module docs).
#[inline]
pub fn register_mask(h2: u64, k: u32) -> u64 {
    let mut mask = 0u64;
    let mut chosen = 0u32;
    let mut x = h2;
    let mut fields = 0u32;
    let mut round = 0u64;
    while chosen < k {
        if fields == 10 {
            round += 1;
            // The mix of `h2 + round · γ` is the SplitMix64 output for state
            // `h2 + (round − 1) · γ`.
            x = splitmix64(h2.wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(round - 1)));
            fields = 0;
        }
        let bit = 1u64 << (63 - (x >> 58));
        x <<= 6;
        fields += 1;
        if mask & bit == 0 {
            mask |= bit;
            chosen += 1;
        }
    }
    mask
}

impl RegisterLayout {
    /// A layout with `words` 64-bit words in total (rounded up to fill equal segments of at most
    /// `max_segment_bits` bits each) and `hashes` bits per element.
    ///
    /// ```
    /// use bloomkit::probe::register::RegisterLayout;
    /// let l = RegisterLayout::new(1000, 7, 1 << 12)?; // 64,000 bits, 4,096-bit segments
    /// assert_eq!(l.segments(), 16);
    /// assert!(l.bits() >= 64_000);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn new(words: u64, hashes: u32, max_segment_bits: u64) -> Result<Self> {
        if words == 0 {
            return Err(Error::ZeroBits);
        }
        if hashes == 0 {
            return Err(Error::ZeroHashes);
        }
        if hashes > MAX_REGISTER_HASHES {
            return Err(Error::TooManyHashes {
                hashes: hashes.into(),
                max: MAX_REGISTER_HASHES,
            });
        }
        if !(64..=MAX_SEGMENT_BITS).contains(&max_segment_bits) {
            return Err(Error::InvalidParameters(format!(
                "segment size must be between 64 and 2^32 bits, got {max_segment_bits}"
            )));
        }
        let max_words = max_segment_bits / 64;
        let segments = words.div_ceil(max_words);
        let segments = u32::try_from(segments).map_err(|_| Error::TooLarge {
            bits: words.saturating_mul(64),
            limit: "more than 2^32 segments",
        })?;
        let segment_words = words.div_ceil(u64::from(segments));
        Ok(RegisterLayout {
            segments,
            segment_words,
            hashes,
        })
    }

    /// A layout from its stored shape: exactly `segments` segments of `segment_words` words.
    pub fn from_shape(segments: u32, segment_words: u64, hashes: u32) -> Result<Self> {
        if segments == 0 || segment_words == 0 {
            return Err(Error::ZeroBits);
        }
        if segment_words.saturating_mul(64) > MAX_SEGMENT_BITS {
            return Err(Error::TooLarge {
                bits: segment_words.saturating_mul(64),
                limit: "a segment holds at most 2^32 bits",
            });
        }
        let l = RegisterLayout::new(segment_words, hashes, MAX_SEGMENT_BITS)?;
        Ok(RegisterLayout { segments, ..l })
    }

    /// A layout whose *modelled* FPR after `n` elements (an upper bound, see the module docs)
    /// is at most `p`, with segments of at most `max_segment_bits` bits: the smallest `k` whose
    /// size is within 20 % of the smallest size over all `k` (fewer bits per element make adds
    /// cheaper).
    ///
    /// ```
    /// use bloomkit::probe::register::{RegisterLayout, MAX_SEGMENT_BITS};
    /// let l = RegisterLayout::for_capacity(1_000_000, 0.01, MAX_SEGMENT_BITS)?;
    /// let bits_per_element = l.bits() as f64 / 1e6;
    /// assert!(bits_per_element > 9.6 && bits_per_element < 15.0);
    /// # Ok::<(), bloomkit::Error>(())
    /// ```
    pub fn for_capacity(n: u64, p: f64, max_segment_bits: u64) -> Result<Self> {
        let p = crate::math::check_fpp(p)?;
        let n = n.max(1);
        // Smallest W per k: the one blocked size search, over 64-bit blocks.
        let classic_words = crate::math::optimal_bits(n, p.min(crate::math::MAX_BLOCKED_FPP))? / 64;
        let max_words = crate::math::MAX_BITS / 64;
        let sizes: Vec<(u32, u64)> = (1..=MAX_REGISTER_HASHES)
            .filter_map(|k| {
                let w = crate::math::blocks_for(&Register(k), n, p, classic_words, max_words)?;
                Some((k, w))
            })
            .collect();
        // Each bit costs a Redis subcommand on the add path, so take the smallest k whose size
        // is within 20 % of the smallest size (at 1 %: k = 3 with 14.7 bits per element instead
        // of k = 5 with 12.4; adds set 3 bits instead of 5).
        let min_words = sizes.iter().map(|&(_, w)| w).min();
        let best = min_words.and_then(|m| {
            sizes
                .iter()
                .find(|&&(_, w)| w as f64 <= 1.20 * m as f64)
                .map(|&(k, w)| (w, k))
        });
        let (words, k) = best.ok_or(Error::InvalidParameters(format!(
            "no register-blocked layout reaches p = {p}"
        )))?;
        RegisterLayout::new(words, k, max_segment_bits)
    }

    /// The layout's stable name in the block-layout family: `register` (the 512-bit layouts
    /// are `split-block-256`, `split-block` and `bits-K`).
    pub fn name(&self) -> &'static str {
        "register"
    }

    /// Number of segments.
    pub fn segments(&self) -> u32 {
        self.segments
    }

    /// 64-bit words per segment.
    pub fn segment_words(&self) -> u64 {
        self.segment_words
    }

    /// Bits per segment (`64 · segment_words`).
    pub fn segment_bits(&self) -> u64 {
        self.segment_words * 64
    }

    /// Total words (`segments · segment_words`).
    pub fn words(&self) -> u64 {
        u64::from(self.segments) * self.segment_words
    }

    /// Total bits, `m`.
    pub fn bits(&self) -> u64 {
        self.words() * 64
    }

    /// Bits set per element, `k`.
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Where the element with this digest lives.
    #[inline]
    pub fn probe(&self, d: &Digest) -> RegisterProbe {
        let g = reduce(d.h1, self.words());
        RegisterProbe {
            segment: (g / self.segment_words) as u32,
            word: g % self.segment_words,
            mask: register_mask(d.h2, self.hashes),
        }
    }

    /// The modelled FPR after `n` distinct elements ([`crate::math::blocked_fpp`]).
    pub fn expected_fpp(&self, n: u64) -> f64 {
        crate::math::blocked_fpp(&Register(self.hashes), self.words(), n)
    }

    /// Element count estimated from the number of set bits (the classic Swamidass–Baldi
    /// estimate is exact in expectation for this layout too, since a word's zero fraction is
    /// `E[(1 − k/64)^L] = e^(−k·n/m)` for a Poisson load `L`).
    pub fn estimate_count(&self, set_bits: u64) -> f64 {
        crate::math::estimate_count(self.bits(), self.hashes, set_bits)
    }
}

/// The register layout with `k` bits per element as a block model: a 64-bit block holding `l`
/// elements answers positive with probability `(1 − (1 − k/64)ˡ)ᵏ` (an upper bound, see the
/// module docs).
#[derive(Debug, Clone, Copy)]
struct Register(u32);

impl BlockModel for Register {
    fn fpp_in_block(&self, load: u64) -> f64 {
        let keep = 1.0 - f64::from(self.0) / 64.0;
        (1.0 - keep.powf(load as f64)).powi(self.0 as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hashing, Key};

    fn digest(x: u64) -> Digest {
        let [h1, h2] = Hashing::Xxh3.hash128(&x.to_le_bytes());
        Digest {
            h1,
            h2,
            ..Digest::default()
        }
    }

    /// Pinned values, also given in docs/REDIS.md for clients in other languages.
    #[test]
    fn golden_probe() {
        let [h1, h2] = Hashing::Xxh3.hash128(b"hello");
        let d = Digest {
            h1,
            h2,
            ..Digest::default()
        };
        assert_eq!((h1, h2), (0xc779_cfaa_5e52_3818, 0xb5e9_c1ad_071b_3e7f));
        let p = RegisterLayout::from_shape(3, 1000, 4).unwrap().probe(&d);
        // g = ⌊h1·3000 / 2⁶⁴⌋ = 2337; 6-bit fields of h2: 45, 30, 39, 1 (offsets 64·337 + j).
        assert_eq!((p.segment, p.word), (2, 337));
        assert_eq!(p.mask, 0x4000_0002_0104_0000);
        assert_eq!(
            p.bit_offsets().collect::<Vec<_>>(),
            [21569, 21598, 21607, 21613]
        );
    }

    #[test]
    fn masks_have_exactly_k_distinct_bits() {
        for k in 1..=MAX_REGISTER_HASHES {
            for x in 0..200u64 {
                assert_eq!(register_mask(digest(x).h2, k).count_ones(), k);
            }
        }
        // A constant h2 repeats its 6-bit fields; the refill still yields k bits.
        assert_eq!(register_mask(0, 24).count_ones(), 24);
        assert_eq!(register_mask(u64::MAX, 9).count_ones(), 9);
    }

    #[test]
    fn probes_are_in_range_and_segments_are_used_evenly() {
        let l = RegisterLayout::new(10_000, 7, 64 * 1000).unwrap();
        assert_eq!(l.segments(), 10);
        assert_eq!(l.segment_words(), 1000);
        let mut per_segment = [0u32; 10];
        for x in 0..100_000u64 {
            let p = l.probe(&digest(x));
            assert!(p.word < 1000);
            per_segment[p.segment as usize] += 1;
        }
        // Each segment expects 10,000; binomial sd ≈ 95, so ±600 is > 6 sd.
        for c in per_segment {
            assert!((9_400..=10_600).contains(&c), "{per_segment:?}");
        }
    }

    #[test]
    fn segment_limits_and_bad_parameters() {
        let l = RegisterLayout::new(1 << 30, 8, MAX_SEGMENT_BITS).unwrap(); // 2^36 bits
        assert_eq!(l.segments(), 16);
        assert_eq!(l.segment_bits(), MAX_SEGMENT_BITS);
        assert!(matches!(
            RegisterLayout::new(0, 3, MAX_SEGMENT_BITS),
            Err(Error::ZeroBits)
        ));
        assert!(matches!(
            RegisterLayout::new(10, 0, MAX_SEGMENT_BITS),
            Err(Error::ZeroHashes)
        ));
        assert!(matches!(
            RegisterLayout::new(10, 25, MAX_SEGMENT_BITS),
            Err(Error::TooManyHashes { .. })
        ));
        assert!(RegisterLayout::new(10, 3, MAX_SEGMENT_BITS + 64).is_err());
        assert!(RegisterLayout::from_shape(1, (MAX_SEGMENT_BITS / 64) + 1, 3).is_err());
        assert!(matches!(
            RegisterLayout::for_capacity(10, 1.5, MAX_SEGMENT_BITS),
            Err(Error::InvalidFpp(_))
        ));
        let s = RegisterLayout::from_shape(3, 50, 5).unwrap();
        assert_eq!((s.segments(), s.segment_words(), s.hashes()), (3, 50, 5));
    }

    #[test]
    fn bit_offsets_follow_redis_order() {
        // Mask bit 1<<63 is the first bit of the word: Redis offset 64*word + 0, which is the
        // top bit (0x80) of the word's first byte; the word read big-endian lines up.
        let p = RegisterProbe {
            segment: 0,
            word: 1,
            mask: (1 << 63) | (1 << 56) | 1,
        };
        assert_eq!(p.bit_offsets().collect::<Vec<_>>(), [64, 71, 127]);
        let mut bytes = [0u8; 16];
        for off in p.bit_offsets() {
            bytes[(off / 8) as usize] |= 0x80 >> (off % 8);
        }
        let word = u64::from_be_bytes(bytes[8..16].try_into().unwrap());
        assert_eq!(word, p.mask);
        assert_eq!(p.byte_offset(), 8);
    }

    /// Inserts `n` elements into a local model of the layout and measures the FPR on
    /// `trials` absent elements.
    fn measured_fpp(n: u64, p: f64, trials: u64) -> (RegisterLayout, f64) {
        let l = RegisterLayout::for_capacity(n, p, MAX_SEGMENT_BITS).unwrap();
        let mut words = vec![0u64; l.words() as usize];
        let flat = |q: RegisterProbe| (u64::from(q.segment) * l.segment_words() + q.word) as usize;
        for i in 0..n {
            let q = l.probe(&i.with_bytes(|b| {
                let [h1, h2] = Hashing::Xxh3.hash128(b);
                Digest {
                    h1,
                    h2,
                    ..Digest::default()
                }
            }));
            words[flat(q)] |= q.mask;
        }
        let mut fp = 0u64;
        for i in n..n + trials {
            let q = l.probe(&digest(i));
            if words[flat(q)] & q.mask == q.mask {
                fp += 1;
            }
        }
        (l, fp as f64 / trials as f64)
    }

    #[test]
    fn measured_fpr_meets_the_target() {
        // 1,000,000 trials: at a true FPR of p the count has sd sqrt(p·1e6); the bound p is
        // what sizing promises (the model, an upper bound, aims at p), and we allow 4 sd of
        // noise: fp ≤ p·1e6 + 4·sqrt(p·1e6).
        for (n, p) in [(100_000u64, 0.01), (50_000, 0.001), (200_000, 0.05)] {
            let trials = 1_000_000u64;
            let (l, got) = measured_fpp(n, p, trials);
            let expect = p * trials as f64;
            let bound = (expect + 4.0 * expect.sqrt()) / trials as f64;
            assert!(
                got <= bound,
                "n={n} p={p}: measured {got} > {bound} ({l:?})"
            );
            // The memory price (14.7 bits/element at 1 %, 26.8 at 0.1 %, 7.1 at 5 %) stays
            // below 2x the classic optimum.
            let classic = crate::math::optimal_bits(n, p).unwrap() as f64;
            assert!(
                (l.bits() as f64) < 2.0 * classic,
                "{} bits vs classic {classic}",
                l.bits()
            );
            // The model is not wildly pessimistic either: measured ≥ 0.5·p.
            assert!(got > 0.5 * p, "n={n} p={p}: measured {got}");
        }
    }

    #[test]
    fn estimate_count_is_close() {
        let (l, _) = measured_fpp(1, 0.01, 1);
        assert!(l.estimate_count(0).abs() < 1e-9);
        let l = RegisterLayout::for_capacity(100_000, 0.01, MAX_SEGMENT_BITS).unwrap();
        let mut words = vec![0u64; l.words() as usize];
        for i in 0..100_000u64 {
            let q = l.probe(&digest(i));
            words[(u64::from(q.segment) * l.segment_words() + q.word) as usize] |= q.mask;
        }
        let ones: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
        let est = l.estimate_count(ones);
        // Standard error of this estimator at this load is well under 1 %; allow 2 %.
        assert!((est - 100_000.0).abs() < 2_000.0, "{est}");
    }
}
