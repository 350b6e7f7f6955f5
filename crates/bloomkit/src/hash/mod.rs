//! Hashing: from an element's key bytes to 128 bits (stage 2 of the pipeline).
//!
//! | [`Hashing`] | for |
//! |---|---|
//! | [`Hashing::Xxh3`] (default) | speed: XXH3-128, the fastest good 128-bit hash for short keys |
//! | [`Hashing::Murmur3`] | compatibility: MurmurHash3_x64_128, seed 0, as Guava and Go bits-and-blooms use |
//! | [`Hashing::SipHash13`] | untrusted input: keyed SipHash-1-3-128; without the key nobody can compute offline which elements collide or test positive |
//! | `Hashing::Highway` | Redisson compatibility: HighwayHash-128 with Redisson's fixed key (feature `redisson`, on by default) |
//! | [`Hashing::Custom`] | your own [`KeyHasher`] |
//!
//! ```
//! use bloomkit::hash::Hashing;
//! let [h1, _h2] = Hashing::Murmur3.hash128(b"hello");
//! assert_eq!(h1 as i64, -3758069500696749310); // Guava's murmur3_128().hashString("hello").asLong()
//! ```

mod murmur3;
mod xxh3;

pub use murmur3::murmur3_x64_128;
pub(crate) use murmur3::murmur3_x64_128_suffixed;
pub(crate) use xxh3::xxh3_64;

use siphasher::sip128::Hasher128;
use std::fmt;
use std::hash::Hasher;
use std::sync::Arc;

/// A 128-bit hash function over key bytes that a user can plug into any filter.
///
/// ```
/// use bloomkit::hash::{Hashing, KeyHasher};
/// use std::sync::Arc;
/// #[derive(Debug)]
/// struct Fnv;
/// impl KeyHasher for Fnv {
///     fn hash128(&self, bytes: &[u8]) -> [u64; 2] {
///         let mut h = 0xcbf29ce484222325u64;
///         for b in bytes { h = (h ^ u64::from(*b)).wrapping_mul(0x100000001b3); }
///         [h, h.rotate_left(32) | 1]
///     }
///     fn id(&self) -> String { "fnv1a-demo".into() }
/// }
/// let hashing = Hashing::Custom(Arc::new(Fnv));
/// assert_eq!(hashing.id(), "custom:fnv1a-demo");
/// ```
pub trait KeyHasher: Send + Sync + fmt::Debug {
    /// Hashes `bytes` to two 64-bit words. Both should be uniformly distributed.
    fn hash128(&self, bytes: &[u8]) -> [u64; 2];

    /// A stable name for this hash function (and its parameters, if any). Two filters are
    /// compatible only if their hashers have the same id; file formats record it.
    fn id(&self) -> String;
}

/// A SipHash key. Its `Debug` output shows a fingerprint, never the key.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SipKey([u8; 16]);

impl SipKey {
    /// Wraps 16 secret bytes.
    pub fn new(bytes: [u8; 16]) -> Self {
        SipKey(bytes)
    }

    /// The secret bytes.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// A 64-bit fingerprint that identifies the key without revealing it: SipHash-2-4 under
    /// the key of a fixed message. File formats store this to tell keys apart.
    pub fn fingerprint(&self) -> u64 {
        let mut h = siphasher::sip::SipHasher24::new_with_key(&self.0);
        h.write(b"bloomkit key fingerprint v1");
        h.finish()
    }
}

impl fmt::Debug for SipKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SipKey(fingerprint {:016x})", self.fingerprint())
    }
}

/// Redisson's fixed HighwayHash key.
#[cfg(feature = "redisson")]
pub const REDISSON_HIGHWAY_KEY: [u64; 4] = [
    0x9e37_79b9_7f4a_7c15,
    0xf39c_c060_5ced_c834,
    0x1082_276b_f3a2_7251,
    0xf86c_6a11_d0c1_8e95,
];

/// Which hash function turns key bytes into the 128 bits that probing starts from.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Hashing {
    /// XXH3-128 (the default). `h1` is the low 64 bits, `h2` the high.
    #[default]
    Xxh3,
    /// MurmurHash3_x64_128 with seed 0 (Guava, Go bits-and-blooms).
    Murmur3,
    /// Keyed SipHash-1-3 with 128-bit output, for elements an adversary may choose.
    SipHash13(SipKey),
    /// HighwayHash-128 with Redisson's fixed key [`REDISSON_HIGHWAY_KEY`] (feature `redisson`).
    #[cfg(feature = "redisson")]
    Highway,
    /// A user-supplied hash function.
    Custom(Arc<dyn KeyHasher>),
}

impl Hashing {
    /// Keyed SipHash-1-3 with the given 16-byte secret.
    pub fn siphash(key: [u8; 16]) -> Self {
        Hashing::SipHash13(SipKey::new(key))
    }

    /// Hashes key bytes to `[h1, h2]`.
    #[inline(always)]
    pub fn hash128(&self, bytes: &[u8]) -> [u64; 2] {
        // The default hash is inlined into every filter's hot path; the others are a call.
        if let Hashing::Xxh3 = self {
            let h = xxhash_rust::xxh3::xxh3_128(bytes);
            return [h as u64, (h >> 64) as u64];
        }
        self.hash128_other(bytes)
    }

    /// Hashes key bytes to 64 bits: XXH3-64 for [`Hashing::Xxh3`], the first word of
    /// [`hash128`](Self::hash128) otherwise. The split-block layout needs no more than that,
    /// and XXH3-64 costs less than XXH3-128.
    ///
    /// ```
    /// use bloomkit::Hashing;
    /// assert_eq!(Hashing::Murmur3.hash64(b"x"), Hashing::Murmur3.hash128(b"x")[0]);
    /// ```
    #[inline(always)]
    pub fn hash64(&self, bytes: &[u8]) -> u64 {
        if let Hashing::Xxh3 = self {
            return xxh3::xxh3_64(bytes);
        }
        self.hash128_other(bytes)[0]
    }

    #[inline]
    fn hash128_other(&self, bytes: &[u8]) -> [u64; 2] {
        match self {
            Hashing::Xxh3 => {
                let h = xxhash_rust::xxh3::xxh3_128(bytes);
                [h as u64, (h >> 64) as u64]
            }
            Hashing::Murmur3 => murmur3_x64_128(bytes),
            Hashing::SipHash13(key) => {
                let mut h = siphasher::sip128::SipHasher13::new_with_key(&key.0);
                h.write(bytes);
                let out = h.finish128();
                [out.h1, out.h2]
            }
            #[cfg(feature = "redisson")]
            Hashing::Highway => {
                use highway::HighwayHash;
                highway::HighwayHasher::new(highway::Key(REDISSON_HIGHWAY_KEY)).hash128(bytes)
            }
            Hashing::Custom(h) => h.hash128(bytes),
        }
    }

    /// Hashes `bytes ++ [suffix]` (Go bits-and-blooms' second hash uses suffix `1`).
    #[inline]
    pub fn hash128_suffixed(&self, bytes: &[u8], suffix: u8) -> [u64; 2] {
        match self {
            Hashing::Murmur3 => murmur3_x64_128_suffixed(bytes, suffix),
            other => {
                let mut joined = Vec::with_capacity(bytes.len() + 1);
                joined.extend_from_slice(bytes);
                joined.push(suffix);
                other.hash128(&joined)
            }
        }
    }

    /// A stable name: `xxh3`, `murmur3`, `siphash13:<fingerprint>`, `highway-redisson`, or
    /// `custom:<id>`.
    pub fn id(&self) -> String {
        match self {
            Hashing::Xxh3 => "xxh3".into(),
            Hashing::Murmur3 => "murmur3".into(),
            Hashing::SipHash13(k) => format!("siphash13:{:016x}", k.fingerprint()),
            #[cfg(feature = "redisson")]
            Hashing::Highway => "highway-redisson".into(),
            Hashing::Custom(h) => format!("custom:{}", h.id()),
        }
    }
}

impl PartialEq for Hashing {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Hashing::SipHash13(a), Hashing::SipHash13(b)) => a == b,
            (Hashing::Custom(a), Hashing::Custom(b)) => Arc::ptr_eq(a, b) || a.id() == b.id(),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

impl Eq for Hashing {}

impl fmt::Debug for Hashing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(h: [u64; 2]) -> String {
        h.iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Guava 31.1 `Hashing.murmur3_128().hashBytes(..).toString()` (`crates/bloomkit/tests/data/vectors.txt`).
    #[test]
    fn murmur3_matches_guava() {
        let cases: [(&str, &str); 7] = [
            ("", "00000000000000000000000000000000"),
            ("a", "897859f6655555855a890e51483ab5e6"),
            ("hello", "029bbd41b3a7d8cb191dae486a901e5b"),
            (
                "The quick brown fox jumps over the lazy dog",
                "6c1b07bc7bbc4be347939ac4a93c437a",
            ),
            ("0123456789abcde", "5123bfc0f6d52da6f04c547c0cf5cc4f"),
            ("0123456789abcdef", "a7d14acf946de04bda08a7635c5bc387"),
            ("é中😀", "d33ba89f0e080d6d489a2a345e360a3a"),
        ];
        for (input, want) in cases {
            assert_eq!(
                hex(Hashing::Murmur3.hash128(input.as_bytes())),
                want,
                "{input:?}"
            );
        }
        // Integer and long funnels (little-endian bytes).
        assert_eq!(
            hex(murmur3_x64_128(&42i32.to_le_bytes())),
            "cf346e1ce6486f2816b8bc2b6a3dd2e2"
        );
        assert_eq!(
            hex(murmur3_x64_128(&(-1i64).to_le_bytes())),
            "73edba1a7ab2e4a0af464a6bc9122169"
        );
    }

    /// Redisson's HighwayHash-128 outputs (`crates/bloomkit/tests/data/vectors.txt`).
    #[cfg(feature = "redisson")]
    #[test]
    fn highway_matches_redisson() {
        let cases: [(&str, [u64; 2]); 5] = [
            ("", [0xb7aad9c226c6a36b, 0xb2d4e4a63557bca6]),
            ("a", [0xab0bc04b5da94740, 0xa0462b5aca912353]),
            ("hello", [0x7fd1d0bcd0c085e1, 0x70f5d2de26f6a7d9]),
            (
                "0123456789abcdef0123456789abcdef",
                [0xd3c86bd01f2269fd, 0xcfa12b16012f2c58],
            ),
            (
                "The quick brown fox jumps over the lazy dog",
                [0x17d81754fbb58a62, 0xc44a3d2c615db388],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                Hashing::Highway.hash128(input.as_bytes()),
                want,
                "{input:?}"
            );
        }
    }

    #[test]
    fn siphash_depends_on_key_and_hides_it() {
        let a = Hashing::siphash([1; 16]);
        let b = Hashing::siphash([2; 16]);
        assert_ne!(a.hash128(b"x"), b.hash128(b"x"));
        assert_eq!(a.hash128(b"x"), Hashing::siphash([1; 16]).hash128(b"x"));
        assert_ne!(a, b);
        let shown = format!("{a:?}");
        assert!(shown.starts_with("siphash13:"), "{shown}");
        assert!(!shown.contains("0101010101"), "{shown}");
    }

    #[test]
    fn suffixed_hash_is_hash_of_concatenation() {
        #[allow(unused_mut)]
        let mut all = vec![Hashing::Xxh3, Hashing::Murmur3, Hashing::siphash([7; 16])];
        #[cfg(feature = "redisson")]
        all.push(Hashing::Highway);
        for h in all {
            assert_eq!(h.hash128_suffixed(b"abc", 1), h.hash128(b"abc\x01"));
        }
    }
}
