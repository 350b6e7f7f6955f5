//! Go bits-and-blooms' binary (`WriteTo`, `MarshalBinary`, `GobEncode`) and JSON encodings,
//! bit-exact.
//!
//! Binary (big-endian): `u64 m`, `u64 k`, `u64` bitset length in bits (= m), then
//! `ceil(m / 64)` words. JSON: `{"m":M,"k":K,"b":"..."}` where `b` is the padded URL-safe
//! base64 of the bitset's own binary form (its `u64` length in bits, then its words). The JSON
//! functions need the feature `go-json` (on by default).
//!
//! ```
//! use bloomkit::{BloomFilter, Hashing, Scheme, Spec, codec::go};
//! let spec = Spec::with_bits(100, 3)?.with_scheme(Scheme::Go).with_hashing(Hashing::Murmur3);
//! let mut f = BloomFilter::from_spec(spec)?;
//! f.insert("hello");
//! # #[cfg(feature = "go-json")]
//! assert_eq!(go::to_json(&f)?, r#"{"m":100,"k":3,"b":"AAAAAAAAAGQAACAAAAAAQAAAAAQAAAAA"}"#);
//! assert_eq!(go::from_bytes(&go::to_bytes(&f)?)?, f);
//! # Ok::<(), bloomkit::Error>(())
//! ```

use super::Reader;
use crate::classic::BloomFilter;
use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::math::Params;
use crate::probe::Scheme;
use crate::spec::Spec;
#[cfg(feature = "go-json")]
use base64::Engine;

fn check_go(f: &BloomFilter, format: &'static str) -> Result<()> {
    if f.spec().scheme() != Scheme::Go || f.spec().hashing() != &Hashing::Murmur3 {
        return Err(Error::NotRepresentable {
            format,
            reason: format!(
                "filter uses {} with {:?}, not Go's scheme with murmur3",
                f.spec().scheme(),
                f.spec().hashing()
            ),
        });
    }
    Ok(())
}

fn bitset_bytes(f: &BloomFilter, out: &mut Vec<u8>) {
    out.extend_from_slice(&f.bits().to_be_bytes());
    for w in f.as_words() {
        out.extend_from_slice(&w.to_be_bytes());
    }
}

/// Writes `f` as Go's `WriteTo` does. The filter must use [`Scheme::Go`] and Murmur3.
pub fn to_bytes(f: &BloomFilter) -> Result<Vec<u8>> {
    check_go(f, "go")?;
    let mut out = Vec::with_capacity(24 + f.as_words().len() * 8);
    out.extend_from_slice(&f.bits().to_be_bytes());
    out.extend_from_slice(&u64::from(f.hashes()).to_be_bytes());
    bitset_bytes(f, &mut out);
    Ok(out)
}

fn build(m: u64, k: u64, words: Vec<u64>, format: &'static str) -> Result<BloomFilter> {
    let corrupt = |e: Error| Error::Corrupt {
        format,
        reason: e.to_string(),
    };
    let hashes = u32::try_from(k).map_err(|_| Error::Corrupt {
        format,
        reason: format!("{k} hash functions"),
    })?;
    let spec =
        Spec::new(Params { bits: m, hashes }, Scheme::Go, Hashing::Murmur3).map_err(corrupt)?;
    BloomFilter::from_words(spec, words).map_err(corrupt)
}

/// Reads the bitset part: `u64` length in bits (must equal `m`), then the words.
fn read_bitset(r: &mut Reader, m: u64) -> Result<Vec<u64>> {
    let len = r.u64_be("bitset length")?;
    if len != m {
        return Err(r.corrupt(format!(
            "bitset holds {len} bits but the filter has m = {m}"
        )));
    }
    if m == 0 {
        return Err(r.corrupt("m = 0"));
    }
    let words = r.words(m.div_ceil(64), true, "bitset words")?;
    r.finish()?;
    Ok(words)
}

/// Reads Go's binary form. Trailing bytes are an error.
pub fn from_bytes(bytes: &[u8]) -> Result<BloomFilter> {
    let mut r = Reader::new(bytes, "go");
    let m = r.u64_be("m")?;
    let k = r.u64_be("k")?;
    let words = read_bitset(&mut r, m)?;
    build(m, k, words, "go")
}

/// Writes Go's JSON form.
#[cfg(feature = "go-json")]
pub fn to_json(f: &BloomFilter) -> Result<String> {
    check_go(f, "go-json")?;
    let mut bits = Vec::with_capacity(8 + f.as_words().len() * 8);
    bitset_bytes(f, &mut bits);
    Ok(format!(
        r#"{{"m":{},"k":{},"b":"{}"}}"#,
        f.bits(),
        f.hashes(),
        base64::engine::general_purpose::URL_SAFE.encode(bits)
    ))
}

/// Reads Go's JSON form.
#[cfg(feature = "go-json")]
pub fn from_json(json: &[u8]) -> Result<BloomFilter> {
    const FORMAT: &str = "go-json";
    let corrupt = |reason: String| Error::Corrupt {
        format: FORMAT,
        reason,
    };
    let value: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| corrupt(format!("invalid JSON: {e}")))?;
    let field = |name: &str| {
        value
            .get(name)
            .ok_or_else(|| corrupt(format!("missing field \"{name}\"")))
    };
    let number = |name: &str| {
        field(name)?
            .as_u64()
            .ok_or_else(|| corrupt(format!("field \"{name}\" is not an unsigned integer")))
    };
    let (m, k) = (number("m")?, number("k")?);
    let b = field("b")?
        .as_str()
        .ok_or_else(|| corrupt("field \"b\" is not a string".into()))?;
    // The decoded bytes are smaller than the JSON text: allocation is bounded by the input.
    let bits = base64::engine::general_purpose::URL_SAFE
        .decode(b.as_bytes())
        .map_err(|e| corrupt(format!("invalid base64 in \"b\": {e}")))?;
    let mut r = Reader::new(&bits, FORMAT);
    let words = read_bitset(&mut r, m)?;
    build(m, k, words, FORMAT)
}

/// Go's `ApproximatedSize()`: `floor(-m/k · ln(1 - X/m) + 0.5)`.
pub fn approximated_size(f: &BloomFilter) -> u64 {
    let m = f.bits() as f64;
    let x = -m / f64::from(f.hashes()) * (1.0 - f.count_ones() as f64 / m).ln();
    (x + 0.5).floor() as u64
}
