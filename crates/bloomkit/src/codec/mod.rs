//! Codecs: filters to bytes and back, in bloomkit's native format and in Guava's and Go's.
//!
//! | module | format |
//! |---|---|
//! | [`native`] | bloomkit's own: versioned, checksummed, every kind, 64-byte aligned payload for memory mapping (`docs/FORMAT.md`) |
//! | [`guava`] | Guava's `BloomFilter.writeTo` / `readFrom` |
//! | [`go`] | Go bits-and-blooms' `WriteTo` / `ReadFrom` and its JSON encoding |
//!
//! Every decoder checks each length against the input before allocating, so a hostile header
//! cannot make it allocate more than the input's own size justifies, and reports what is wrong
//! with a typed [`Error`].

pub mod go;
pub mod guava;
pub mod native;
#[cfg(feature = "serde")]
mod serde_support;

use crate::error::{Error, Result};

/// A bounds-checked cursor over encoded input.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    format: &'static str,
}

/// Reader methods `name(what)` that read one number of type `ty` with `ty::from_bytes`.
macro_rules! read_numbers {
    ($($name:ident: $ty:ident::$from:ident,)*) => {$(
        pub(crate) fn $name(&mut self, what: &'static str) -> Result<$ty> {
            Ok($ty::$from(self.array(what)?))
        }
    )*};
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], format: &'static str) -> Self {
        Reader {
            bytes,
            pos: 0,
            format,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        let available = self.remaining() as u64;
        if n > available {
            return Err(Error::Truncated {
                format: self.format,
                what,
                needed: n,
                available,
            });
        }
        let n = n as usize;
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N as u64, what)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    read_numbers! {
        u16_le: u16::from_le_bytes,
        u32_le: u32::from_le_bytes,
        u64_le: u64::from_le_bytes,
        f64_le: f64::from_le_bytes,
        i32_be: i32::from_be_bytes,
        u64_be: u64::from_be_bytes,
    }

    /// Reads `count` 64-bit words, big- or little-endian. The length is checked against the
    /// input before anything is allocated.
    pub(crate) fn words(
        &mut self,
        count: u64,
        big_endian: bool,
        what: &'static str,
    ) -> Result<Vec<u64>> {
        let bytes = self.take(count.saturating_mul(8), what)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| {
                let a: [u8; 8] = c.try_into().expect("8-byte chunk");
                if big_endian {
                    u64::from_be_bytes(a)
                } else {
                    u64::from_le_bytes(a)
                }
            })
            .collect())
    }

    pub(crate) fn corrupt(&self, reason: impl Into<String>) -> Error {
        Error::Corrupt {
            format: self.format,
            reason: reason.into(),
        }
    }

    /// Fails unless the input was read to its end.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(self.corrupt(format!(
                "{} unexpected bytes after the filter",
                self.remaining()
            )));
        }
        Ok(())
    }
}

/// A serialised form recognised by [`detect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    /// bloomkit's native format ([`native`]): starts with its magic bytes.
    Native,
    /// Guava's stream with strategy `MURMUR128_MITZ_64` ([`guava`]).
    Guava,
    /// Guava's stream with strategy `MURMUR128_MITZ_32` ([`guava`]).
    Guava32,
    /// Go bits-and-blooms' binary form ([`go::from_bytes`]).
    Go,
    /// Go bits-and-blooms' JSON form ([`go::from_json`]).
    GoJson,
}

impl Detected {
    /// A short description for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Detected::Native => "a bloomkit filter file",
            Detected::Guava => "a Guava BloomFilter stream (MURMUR128_MITZ_64)",
            Detected::Guava32 => "a Guava BloomFilter stream (MURMUR128_MITZ_32)",
            Detected::Go => "a Go bits-and-blooms binary filter",
            Detected::GoJson => "a Go bits-and-blooms JSON filter",
        }
    }
}

/// Recognises which serialised form `bytes` has, from its shape alone: the native magic;
/// Guava's strategy ordinal, hash count and word count that match the length exactly; Go's
/// `m`, `k` and bit-set length that match the length exactly; or a JSON object. `None` when
/// it looks like none of them. A match says only that the shape fits: decoding may still find
/// it corrupt.
///
/// ```
/// use bloomkit::codec::{detect, guava, Detected};
/// use bloomkit::{BloomFilter, Preset, Spec};
/// let f = BloomFilter::from_spec(Spec::preset(Preset::Guava, 100, 0.01)?)?;
/// assert_eq!(detect(&guava::to_bytes(&f)?), Some(Detected::Guava));
/// assert_eq!(detect(b"hello!"), None);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn detect(bytes: &[u8]) -> Option<Detected> {
    if bytes.starts_with(&native::MAGIC) {
        return Some(Detected::Native);
    }
    let len = bytes.len() as u64;
    if let Some((guava, described)) = guava_header(bytes) {
        if described == len {
            return Some(guava);
        }
    }
    if go_header(bytes) == Some(len) {
        return Some(Detected::Go);
    }
    let text = bytes.trim_ascii();
    if text.starts_with(b"{") && text.ends_with(b"}") {
        return Some(Detected::GoJson);
    }
    None
}

/// How many leading bytes [`described_len`] needs to see every header it reads (Go's `m`, `k`
/// and bit-set length are 24 bytes; Guava's header is 6).
pub const DESCRIBED_LEN_PREFIX: usize = 24;

/// The whole length, in bytes, of the Guava or Go binary filter whose header `prefix` starts
/// with (the longer when both shapes fit), or `None` when it starts with neither header. It
/// reads at most [`DESCRIBED_LEN_PREFIX`] bytes, so a reader of a stream can tell from its
/// first bytes how much more to read, and refuse an endless or hostile input after its header
/// instead of after filling the memory. The shapes are those [`detect`] recognises: where
/// `described_len` gives the input's exact length, `detect` names the format.
///
/// ```
/// use bloomkit::codec::{described_len, guava};
/// use bloomkit::{BloomFilter, Preset, Spec};
/// let bytes = guava::to_bytes(&BloomFilter::from_spec(Spec::preset(Preset::Guava, 100, 0.01)?)?)?;
/// assert_eq!(described_len(&bytes[..24]), Some(bytes.len() as u64));
/// assert_eq!(described_len(b"hello!"), None);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub fn described_len(prefix: &[u8]) -> Option<u64> {
    let guava = guava_header(prefix).map(|(_, len)| len);
    guava.max(go_header(prefix))
}

/// Guava's stream header: strategy ordinal (0 or 1), hash count (≥ 1) and word count (> 0,
/// big-endian `i32`); the form it names and the stream's whole length.
fn guava_header(bytes: &[u8]) -> Option<(Detected, u64)> {
    let &[strategy, hashes, w0, w1, w2, w3, ..] = bytes else {
        return None;
    };
    let words = i32::from_be_bytes([w0, w1, w2, w3]);
    if strategy > 1 || hashes < 1 || words <= 0 {
        return None;
    }
    let form = if strategy == 0 {
        Detected::Guava32
    } else {
        Detected::Guava
    };
    Some((form, 6 + 8 * words as u64))
}

/// Go's binary header: `m` (> 0), `k` (a `u32`, ≥ 1) and the bit set's length (= `m`), each a
/// big-endian `u64`; the filter's whole length.
fn go_header(bytes: &[u8]) -> Option<u64> {
    let word = |i: usize| Some(u64::from_be_bytes(bytes.get(i..i + 8)?.try_into().ok()?));
    let (m, k, set) = (word(0)?, word(8)?, word(16)?);
    if m == 0 || !(1..=u64::from(u32::MAX)).contains(&k) || set != m {
        return None;
    }
    m.div_ceil(64).checked_mul(8)?.checked_add(24)
}

#[cfg(test)]
mod detect_tests {
    use super::*;
    use crate::{AnyFilter, BloomFilter, Preset, Spec};

    #[test]
    fn described_len_reads_the_length_from_the_first_bytes() {
        let g = BloomFilter::from_spec(Spec::preset(Preset::Guava, 1000, 0.01).unwrap()).unwrap();
        let go = BloomFilter::from_spec(Spec::preset(Preset::Go, 1000, 0.01).unwrap()).unwrap();
        for bytes in [guava::to_bytes(&g).unwrap(), go::to_bytes(&go).unwrap()] {
            let prefix = &bytes[..DESCRIBED_LEN_PREFIX];
            assert_eq!(described_len(prefix), Some(bytes.len() as u64));
            assert!(detect(&bytes).is_some());
        }
        // Too short for any header, or no header's shape.
        assert_eq!(described_len(b"\x01\x07\x00\x00\x00"), None);
        assert_eq!(described_len(b"hello, world, and more!!"), None);
        assert_eq!(described_len(&[0u8; 24]), None);
        // A Go header that claims the most bits there can be: a length, no overflow.
        let mut huge = Vec::new();
        for w in [u64::MAX, 7, u64::MAX] {
            huge.extend_from_slice(&w.to_be_bytes());
        }
        assert_eq!(described_len(&huge), Some((1u64 << 58) * 8 + 24));
        // A Go k beyond u32 is no Go header.
        huge[8..16].copy_from_slice(&(1u64 << 32).to_be_bytes());
        assert_eq!(described_len(&huge), None);
    }

    #[test]
    fn every_format_is_recognised_and_garbage_is_not() {
        let g = BloomFilter::from_spec(Spec::preset(Preset::Guava, 1000, 0.01).unwrap()).unwrap();
        let g32 =
            BloomFilter::from_spec(Spec::preset(Preset::Guava32, 1000, 0.01).unwrap()).unwrap();
        let go = BloomFilter::from_spec(Spec::preset(Preset::Go, 1000, 0.01).unwrap()).unwrap();
        let native_bytes = native::to_bytes(&AnyFilter::from(go.clone()), None).unwrap();
        assert_eq!(detect(&native_bytes), Some(Detected::Native));
        assert_eq!(detect(&guava::to_bytes(&g).unwrap()), Some(Detected::Guava));
        assert_eq!(
            detect(&guava::to_bytes(&g32).unwrap()),
            Some(Detected::Guava32)
        );
        assert_eq!(detect(&go::to_bytes(&go).unwrap()), Some(Detected::Go));
        #[cfg(feature = "go-json")]
        assert_eq!(
            detect(go::to_json(&go).unwrap().as_bytes()),
            Some(Detected::GoJson)
        );
        for garbage in [
            &b""[..],
            b"abcdef",
            b"\x01\x07\x00\x00\x00\x09short",
            &[0u8; 40],
        ] {
            assert_eq!(detect(garbage), None, "{garbage:?}");
        }
    }
}
