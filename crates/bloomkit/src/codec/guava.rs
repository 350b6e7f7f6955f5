//! Guava's `BloomFilter.writeTo` / `BloomFilter.readFrom` stream, bit-exact.
//!
//! Layout (big-endian): `i8` strategy ordinal (0 = `MURMUR128_MITZ_32`, 1 = `MURMUR128_MITZ_64`),
//! `u8` number of hash functions, `i32` number of 64-bit words, then the words. The funnel is not
//! recorded: elements must be encoded as the Java side's funnel does (see [`crate::key`]).
//!
//! ```
//! use bloomkit::{BloomFilter, Preset, Spec, codec::guava};
//! let mut f = BloomFilter::from_spec(Spec::preset(Preset::Guava, 10, 0.01)?)?;
//! f.insert("hello");
//! let stream = guava::to_bytes(&f)?;
//! assert_eq!(stream.len(), 6 + 2 * 8);
//! assert_eq!(guava::from_bytes(&stream)?, f);
//! # Ok::<(), bloomkit::Error>(())
//! ```

use super::Reader;
use crate::classic::BloomFilter;
use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::math::Params;
use crate::probe::Scheme;
use crate::spec::Spec;

const FORMAT: &str = "guava";

fn not_representable(reason: impl Into<String>) -> Error {
    Error::NotRepresentable {
        format: FORMAT,
        reason: reason.into(),
    }
}

/// Writes `f` as Guava's `writeTo` does. The filter must use Murmur3 with a Guava scheme and a
/// whole number of 64-bit words (as every filter built with [`crate::Preset::Guava`] or
/// [`crate::Preset::Guava32`] does).
pub fn to_bytes(f: &BloomFilter) -> Result<Vec<u8>> {
    let ordinal: u8 = match f.spec().scheme() {
        Scheme::GuavaMitz32 => 0,
        Scheme::GuavaMitz64 => 1,
        other => {
            return Err(not_representable(format!(
                "probing scheme {other} is not Guava's"
            )))
        }
    };
    if f.spec().hashing() != &Hashing::Murmur3 {
        return Err(not_representable(format!(
            "hashing {:?} is not Guava's murmur3_128",
            f.spec().hashing()
        )));
    }
    if !f.bits().is_multiple_of(64) {
        return Err(not_representable(format!(
            "{} bits is not a whole number of 64-bit words",
            f.bits()
        )));
    }
    let words = f.as_words();
    if words.len() > i32::MAX as usize {
        return Err(not_representable("more than 2^31 - 1 words"));
    }
    if f.hashes() > 255 {
        return Err(not_representable("more than 255 hash functions"));
    }
    let mut out = Vec::with_capacity(6 + words.len() * 8);
    out.push(ordinal);
    out.push(f.hashes() as u8);
    out.extend_from_slice(&(words.len() as i32).to_be_bytes());
    for w in words {
        out.extend_from_slice(&w.to_be_bytes());
    }
    Ok(out)
}

/// Reads a Guava stream. The result answers `contains` exactly as Guava's `mightContain` does
/// for elements encoded as the Java funnel encodes them. Trailing bytes are an error.
pub fn from_bytes(bytes: &[u8]) -> Result<BloomFilter> {
    let mut r = Reader::new(bytes, FORMAT);
    let ordinal = r.u8("strategy ordinal")?;
    let scheme = match ordinal {
        0 => Scheme::GuavaMitz32,
        1 => Scheme::GuavaMitz64,
        other => {
            return Err(Error::UnsupportedVersion {
                format: FORMAT,
                version: u64::from(other),
                supported: "strategy ordinals 0 and 1",
            })
        }
    };
    let hashes = r.u8("number of hash functions")?;
    if hashes == 0 {
        return Err(r.corrupt("zero hash functions"));
    }
    let words = r.i32_be("word count")?;
    if words <= 0 {
        return Err(r.corrupt(format!("word count {words} is not positive")));
    }
    let data = r.words(words as u64, true, "bit array")?;
    r.finish()?;
    let spec = Spec::new(
        Params {
            bits: words as u64 * 64,
            hashes: u32::from(hashes),
        },
        scheme,
        Hashing::Murmur3,
    )?;
    BloomFilter::from_words(spec, data)
}

/// Guava's `expectedFpp()`: `(bitCount / bitSize)^k`.
pub fn expected_fpp(f: &BloomFilter) -> f64 {
    // powf, like Java's Math.pow (powi may differ in the last bit).
    (f.count_ones() as f64 / f.bits() as f64).powf(f64::from(f.hashes()))
}

/// Guava's `approximateElementCount()`: `-ln(1 - X/m) · m / k`, rounded half up.
pub fn approximate_element_count(f: &BloomFilter) -> u64 {
    let m = f.bits() as f64;
    let x = -(-(f.count_ones() as f64) / m).ln_1p() * m / f64::from(f.hashes());
    (x + 0.5).floor() as u64
}
