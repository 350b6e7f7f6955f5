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
