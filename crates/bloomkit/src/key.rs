//! Key encoding: the stable bytes an element stands for (stage 1 of the pipeline).
//!
//! A Bloom filter stores hashes of elements, so the bytes that an element is hashed from must
//! never change: not between platforms (endianness, pointer width), not between bloomkit
//! versions, not between the process that built a filter and the one that reads it years later.
//! [`Key`] is that contract. It plays the role of Guava's `Funnel`.
//!
//! | element | encoding |
//! |---|---|
//! | `str`, `String` | its UTF-8 bytes (Guava `stringFunnel(UTF_8)`) |
//! | `[u8]`, `Vec<u8>`, `[u8; N]` | the bytes themselves (Guava `byteArrayFunnel`) |
//! | `u8`…`u128`, `i8`…`i128` | fixed width, little-endian (`i32` = Guava `integerFunnel`, `i64` = `longFunnel`) |
//! | `usize`, `isize` | as `u64`/`i64`, so that 32- and 64-bit platforms agree |
//! | `bool` | one byte, 0 or 1 |
//! | `char` | its scalar value as `u32`, little-endian |
//! | [`Utf16`] | UTF-16 code units, little-endian (Guava `unencodedCharsFunnel`) |
//! | tuples, [`Composite`] | each part as a `u64` little-endian length and then its bytes |
//! | [`StdHash`] | **not portable**: see its docs |
//!
//! A test in this crate pins the bit positions of fixed keys, so a change of encoding cannot
//! slip in unnoticed.
//!
//! ```
//! use bloomkit::key::{Key, Composite};
//! assert_eq!(7u32.to_key_bytes(), vec![7, 0, 0, 0]);
//! assert_eq!("hi".to_key_bytes(), b"hi".to_vec());
//! // A composite key: a user id and a URL.
//! let k = Composite::new().u64(42).str("https://example.com/");
//! assert_eq!(k.as_bytes().len(), 8 + 8 + 8 + 20);
//! ```

use std::hash::{Hash, Hasher};

/// An element that can be stored in a filter: anything with a stable byte encoding.
///
/// Implement [`Key::encode`] for your own types by appending a stable encoding (for example,
/// the keys of a struct's fields through [`Composite`]). Override [`Key::with_bytes`] when the
/// bytes already exist somewhere, to avoid the copy.
pub trait Key {
    /// Appends this element's stable encoding to `out`.
    fn encode(&self, out: &mut Vec<u8>);

    /// Calls `f` with the encoding. The default builds it in a temporary buffer; borrowed and
    /// fixed-size types hand over their bytes without allocating.
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let mut buf = Vec::new();
        self.encode(&mut buf);
        f(&buf)
    }

    /// The encoding where it already lies in memory apart from the value itself (the bytes of a
    /// `str`, `String`, `[u8]` or `Vec<u8>`, through references and boxes), or `None` (the
    /// default) for elements whose encoding is built when asked or held inline. Batches use it
    /// to prefetch the bytes of keys they will hash soon; it changes no answer.
    #[inline(always)]
    fn bytes_in_place(&self) -> Option<&[u8]> {
        None
    }

    /// The encoding as a new vector (handy in tests and for debugging).
    fn to_key_bytes(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf);
        buf
    }
}

/// A reference or a box encodes as the key it points to.
macro_rules! key_through_pointer {
    ($($ptr:ty),*) => {$(
        impl<K: Key + ?Sized> Key for $ptr {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                (**self).encode(out)
            }
            #[inline(always)]
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                (**self).with_bytes(f)
            }
            #[inline(always)]
            fn bytes_in_place(&self) -> Option<&[u8]> {
                (**self).bytes_in_place()
            }
        }
    )*};
}

key_through_pointer!(&K, Box<K>);

macro_rules! borrowed_bytes {
    ($($t:ty => $conv:ident),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(self.$conv());
            }
            #[inline(always)]
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(self.$conv())
            }
            #[inline(always)]
            fn bytes_in_place(&self) -> Option<&[u8]> {
                Some(self.$conv())
            }
        }
    )*};
}

borrowed_bytes! {
    str => as_bytes,
    String => as_bytes,
    [u8] => as_ref,
    Vec<u8> => as_slice,
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

macro_rules! little_endian {
    ($($t:ty => $as:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&(*self as $as).to_le_bytes());
            }
            #[inline]
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(&(*self as $as).to_le_bytes())
            }
        }
    )*};
}

little_endian! {
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, u128 => u128,
    i8 => i8, i16 => i16, i32 => i32, i64 => i64, i128 => i128,
    usize => u64, isize => i64,
}

impl Key for bool {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&[u8::from(*self)])
    }
}

impl Key for char {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&u32::from(*self).to_le_bytes());
    }
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&u32::from(*self).to_le_bytes())
    }
}

/// A string encoded as UTF-16 code units, little-endian, without a byte-order mark: the bytes
/// of Guava's `Funnels.unencodedCharsFunnel()`, which is what Java code that puts a `String`
/// as a `CharSequence` hashes.
///
/// ```
/// use bloomkit::key::{Key, Utf16};
/// assert_eq!(Utf16("hé").to_key_bytes(), vec![b'h', 0, 0xe9, 0]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utf16<'a>(pub &'a str);

impl Key for Utf16<'_> {
    fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.0.len() * 2);
        for unit in self.0.encode_utf16() {
            out.extend_from_slice(&unit.to_le_bytes());
        }
    }
}

/// Writes each part as a `u64` little-endian length followed by its bytes, so that the parts'
/// boundaries are part of the key: `("ab", "c")` and `("a", "bc")` are different keys.
fn encode_part<K: Key + ?Sized>(part: &K, out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[0; 8]);
    part.encode(out);
    let len = (out.len() - at - 8) as u64;
    out[at..at + 8].copy_from_slice(&len.to_le_bytes());
}

macro_rules! tuple_key {
    ($($name:ident)+) => {
        impl<$($name: Key),+> Key for ($($name,)+) {
            #[allow(non_snake_case)]
            fn encode(&self, out: &mut Vec<u8>) {
                let ($($name,)+) = self;
                $(encode_part($name, out);)+
            }
        }
    };
}

tuple_key!(A B);
tuple_key!(A B C);
tuple_key!(A B C D);
tuple_key!(A B C D E);
tuple_key!(A B C D E F);

/// A key built from several parts, encoded like a tuple (each part length-prefixed).
///
/// Use it for elements that are several values, or to implement [`Key`] for your own struct.
///
/// ```
/// use bloomkit::key::{Composite, Key};
/// struct Visit { user: u64, url: String }
/// impl Key for Visit {
///     fn encode(&self, out: &mut Vec<u8>) {
///         out.extend_from_slice(Composite::new().u64(self.user).str(&self.url).as_bytes());
///     }
/// }
/// let v = Visit { user: 7, url: "a".into() };
/// assert_eq!(v.to_key_bytes(), (7u64, "a").to_key_bytes());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Composite {
    bytes: Vec<u8>,
}

impl Composite {
    /// An empty composite key.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends any [`Key`] as the next part.
    pub fn part<K: Key + ?Sized>(mut self, part: &K) -> Self {
        encode_part(part, &mut self.bytes);
        self
    }

    /// Appends a string part.
    pub fn str(self, s: &str) -> Self {
        self.part(s)
    }

    /// Appends a byte-string part.
    pub fn bytes(self, b: &[u8]) -> Self {
        self.part(b)
    }

    /// Appends a `u64` part.
    pub fn u64(self, v: u64) -> Self {
        self.part(&v)
    }

    /// Appends an `i64` part.
    pub fn i64(self, v: i64) -> Self {
        self.part(&v)
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Key for Composite {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.bytes);
    }
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&self.bytes)
    }
}

/// Any `std::hash::Hash` type as a key: **in memory only, not portable**.
///
/// The bytes are whatever the type's `Hash` implementation feeds a hasher, which Rust does not
/// promise to keep stable across compiler versions, platforms (integers are written in native
/// byte order and `usize` in native width) or crate versions. Use it for a filter that lives
/// and dies inside one process; never save such a filter or share it with another program.
///
/// ```
/// use bloomkit::{BloomFilter, key::StdHash};
/// #[derive(Hash)]
/// struct Point { x: i32, y: i32 }
/// let mut f = BloomFilter::new(1000, 0.01).unwrap();
/// f.insert(&StdHash(Point { x: 1, y: 2 }));
/// assert!(f.contains(&StdHash(Point { x: 1, y: 2 })));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdHash<T: Hash>(pub T);

/// A `Hasher` that records the bytes it is fed.
struct ByteRecorder<'a>(&'a mut Vec<u8>);

impl Hasher for ByteRecorder<'_> {
    fn finish(&self) -> u64 {
        // Never used: the recorded bytes are hashed by the filter's own hasher.
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

impl<T: Hash> Key for StdHash<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.hash(&mut ByteRecorder(out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_encodings_are_fixed() {
        assert_eq!((-1i32).to_key_bytes(), vec![0xff; 4]);
        assert_eq!(0x0102_0304u32.to_key_bytes(), vec![4, 3, 2, 1]);
        assert_eq!(1i64.to_key_bytes(), vec![1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(5usize.to_key_bytes(), 5u64.to_key_bytes());
        assert_eq!((-5isize).to_key_bytes(), (-5i64).to_key_bytes());
        assert_eq!(true.to_key_bytes(), vec![1]);
        assert_eq!(false.to_key_bytes(), vec![0]);
        assert_eq!('é'.to_key_bytes(), vec![0xe9, 0, 0, 0]);
        assert_eq!(u128::MAX.to_key_bytes(), vec![0xff; 16]);
        assert_eq!([1u8, 2, 3].to_key_bytes(), vec![1, 2, 3]);
        assert_eq!(String::from("x").to_key_bytes(), b"x".to_vec());
        assert_eq!(Utf16("😀").to_key_bytes(), vec![0x3d, 0xd8, 0x00, 0xde]);
    }

    /// Keys whose bytes lie in memory of their own say where (the very bytes they hash, for
    /// the batches' prefetch); keys built on demand or held inline say nothing.
    #[test]
    fn bytes_in_place_are_the_encoding_where_there_are_any() {
        fn in_place<K: Key + ?Sized>(k: &K) -> Option<Vec<u8>> {
            k.bytes_in_place().map(|b| {
                assert_eq!(b, &k.to_key_bytes()[..]);
                b.to_vec()
            })
        }
        let url = "https://example.com/a/b";
        assert_eq!(in_place(url).as_deref(), Some(url.as_bytes()));
        assert_eq!(in_place(&url).as_deref(), Some(url.as_bytes()));
        assert_eq!(
            in_place(&String::from(url)).as_deref(),
            Some(url.as_bytes())
        );
        assert_eq!(
            in_place(&Box::<str>::from(url)).as_deref(),
            Some(url.as_bytes())
        );
        assert_eq!(in_place(&b"xyz"[..]), Some(b"xyz".to_vec()));
        assert_eq!(in_place(&vec![1u8, 2]), Some(vec![1, 2]));
        let s = String::from("in a String");
        assert_eq!(
            s.bytes_in_place().unwrap().as_ptr(),
            s.as_ptr(),
            "the heap bytes themselves"
        );
        assert_eq!(in_place(&7u64), None);
        assert_eq!(in_place(&[1u8, 2, 3]), None);
        assert_eq!(in_place(&("a", 1u32)), None);
        assert_eq!(in_place(&Utf16("x")), None);
    }

    #[test]
    fn with_bytes_agrees_with_encode() {
        fn check<K: Key + ?Sized>(k: &K) {
            let direct = k.with_bytes(|b| b.to_vec());
            assert_eq!(direct, k.to_key_bytes());
        }
        check("abc");
        check(&42u16);
        check(&-3i128);
        check(&'z');
        check(&true);
        check(&(1u8, "x"));
        check(&Composite::new().str("a").u64(1));
        check(&Utf16("ab"));
        check(&Box::new(9u32));
    }

    #[test]
    fn tuples_keep_part_boundaries() {
        assert_ne!(("ab", "c").to_key_bytes(), ("a", "bc").to_key_bytes());
        assert_eq!(
            ("ab", 1u8).to_key_bytes(),
            vec![2, 0, 0, 0, 0, 0, 0, 0, b'a', b'b', 1, 0, 0, 0, 0, 0, 0, 0, 1]
        );
        assert_eq!(
            Composite::new().str("ab").part(&1u8).as_bytes(),
            ("ab", 1u8).to_key_bytes().as_slice()
        );
    }
}
