//! The fixed part of a native file: the first [`HEADER_LEN`] bytes, field by field, as stored.
//!
//! This module only moves the fields between bytes and [`Fixed`]; what the values mean (a kind
//! code, a scheme code) and whether they fit together is checked by the caller.

use super::{newer, FORMAT, HEADER_LEN, KEY_ENCODING_V1, MAGIC, VERSION};
use crate::codec::Reader;
use crate::error::{Error, Result};
use crate::kind::Kind;

/// Bytes of [`HEADER_LEN`] that hold fields; the rest is zero padding.
const FIELDS_LEN: usize = 88;

/// The fixed header fields after the magic bytes and the version, exactly as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fixed {
    /// The format version (1, or 2 for what only version-2 readers know: docs/FORMAT.md).
    pub version: u16,
    /// The kind (stored as its [`Kind::code`]).
    pub kind: Kind,
    /// Probing scheme code (blocked filters: block layout code).
    pub scheme: u8,
    /// Hash function code.
    pub hashing: u8,
    /// Key encoding version.
    pub key_encoding: u8,
    /// Bits per counter (0 for bit arrays).
    pub counter_bits: u8,
    /// Fingerprint of the hash function's key (0 if it has none).
    pub fingerprint: u64,
    /// Entries in the layer table.
    pub layer_count: u32,
    /// Design (or scalable target) FPR; 0 if unknown.
    pub fpp: f64,
    /// Design (or scalable initial) capacity; 0 if unknown.
    pub capacity: u64,
    /// Scalable: capacity growth factor (0 otherwise).
    pub growth: u32,
    /// Scalable: layer limit (0 for none).
    pub max_layers: u32,
    /// Scalable: FPR tightening ratio (0 otherwise).
    pub tightening: f64,
    /// Scalable: capacity limit (0 for none).
    pub max_capacity: u64,
    /// Offset of the first payload section.
    pub payload_offset: u64,
    /// Length of the whole file, checksum included.
    pub file_len: u64,
}

impl Fixed {
    /// Reads the magic bytes, the version and the fixed fields, up to the end of the header.
    /// Checks the magic bytes, the version, the kind code and the key encoding only (an
    /// unknown kind or key encoding is a newer version's: [`Error::NewerVersion`]).
    pub fn read(r: &mut Reader) -> Result<Fixed> {
        let magic = r.take(8, "magic")?;
        if magic != MAGIC {
            return Err(r.corrupt("not a bloomkit filter (bad magic bytes)"));
        }
        let version = r.u16_le("version")?;
        if !(1..=VERSION).contains(&version) {
            return Err(Error::UnsupportedVersion {
                format: FORMAT,
                version: u64::from(version),
                supported: "1 and 2",
            });
        }
        let code = r.u16_le("kind")?;
        // The kind is checked here, before the rest is read, so that an unknown kind is
        // reported as such even in a short input.
        let kind =
            Kind::from_code(code).ok_or_else(|| newer(format!("unknown filter kind {code}")))?;
        let fixed = Fixed {
            version,
            kind,
            scheme: r.u8("scheme")?,
            hashing: r.u8("hashing")?,
            key_encoding: r.u8("key encoding")?,
            counter_bits: r.u8("counter width")?,
            fingerprint: r.u64_le("key fingerprint")?,
            layer_count: {
                let count = r.u32_le("layer count")?;
                r.u32_le("reserved")?;
                count
            },
            fpp: r.f64_le("fpp")?,
            capacity: r.u64_le("capacity")?,
            growth: r.u32_le("growth")?,
            max_layers: r.u32_le("max layers")?,
            tightening: r.f64_le("tightening")?,
            max_capacity: r.u64_le("max capacity")?,
            payload_offset: r.u64_le("payload offset")?,
            file_len: r.u64_le("file length")?,
        };
        r.take((HEADER_LEN - FIELDS_LEN) as u64, "header padding")?;
        if fixed.key_encoding != KEY_ENCODING_V1 {
            return Err(newer(format!(
                "unknown key encoding {}",
                fixed.key_encoding
            )));
        }
        Ok(fixed)
    }

    /// Appends the magic bytes, the version and the fields, padded to [`HEADER_LEN`].
    pub fn write(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.kind.code().to_le_bytes());
        out.extend_from_slice(&[
            self.scheme,
            self.hashing,
            self.key_encoding,
            self.counter_bits,
        ]);
        out.extend_from_slice(&self.fingerprint.to_le_bytes());
        out.extend_from_slice(&self.layer_count.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.fpp.to_le_bytes());
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.growth.to_le_bytes());
        out.extend_from_slice(&self.max_layers.to_le_bytes());
        out.extend_from_slice(&self.tightening.to_le_bytes());
        out.extend_from_slice(&self.max_capacity.to_le_bytes());
        out.extend_from_slice(&self.payload_offset.to_le_bytes());
        out.extend_from_slice(&self.file_len.to_le_bytes());
        debug_assert_eq!(out.len() - start, FIELDS_LEN);
        out.resize(start + HEADER_LEN, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_through_the_header() {
        let fixed = Fixed {
            version: 1,
            kind: Kind::Scalable,
            scheme: 1,
            hashing: 1,
            key_encoding: 1,
            counter_bits: 0,
            fingerprint: 0x0123_4567_89ab_cdef,
            layer_count: 2,
            fpp: 0.01,
            capacity: 1000,
            growth: 2,
            max_layers: 7,
            tightening: 0.5,
            max_capacity: 1 << 40,
            payload_offset: 192,
            file_len: 4096,
        };
        let mut out = Vec::new();
        fixed.write(&mut out);
        assert_eq!(out.len(), HEADER_LEN);
        let back = Fixed::read(&mut Reader::new(&out, FORMAT)).unwrap();
        assert_eq!(back, fixed);
    }
}
