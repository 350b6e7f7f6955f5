//! The native body of a d-left counting filter (kind 9; `docs/FORMAT.md`, "d-left filters").
//!
//! The fixed header is the common one. In place of the layer table comes one 32-byte
//! *geometry* entry (buckets per sub-table, sub-tables, cells per bucket, remainder bits,
//! occupied cells); the header's counter-width byte holds the cells' counter bits. Then the
//! packed cells, padded to 64 bytes, and the checksum.

use super::fixed::Fixed;
use super::table::{align_up, payload_offset, write_payload, LayerOut, Words};
use super::{hashing_code, hashing_from_code, Decoded, Design, Hashed, FORMAT, KEY_ENCODING_V1};
use crate::any::AnyFilter;
use crate::codec::Reader;
use crate::dleft::{DLeftCountingFilter, DLeftParams};
use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::kind::Kind;
use crate::storage::PackedCells;
use std::io::{self, Write};

/// Length of the geometry entry (one layer-table entry's size).
const GEOMETRY_LEN: usize = super::LAYER_ENTRY_LEN;

/// Where the cells start: after the header and the geometry entry, aligned.
fn cells_offset() -> usize {
    payload_offset(1) as usize
}

/// The length of `f`'s native file.
pub(super) fn encoded_len(f: &DLeftCountingFilter) -> usize {
    cells_offset() + align_up(f.cells().as_words().len() * 8) + 8
}

/// Writes `f`'s native file: header, geometry, cells, checksum.
pub(super) fn write_to(
    f: &DLeftCountingFilter,
    design: Option<Design>,
    out: &mut impl Write,
) -> io::Result<()> {
    let p = f.params();
    let (hashing, fingerprint) = hashing_code(f.hashing());
    let fixed = Fixed {
        version: 1,
        kind: Kind::DLeft,
        scheme: 0,
        hashing,
        key_encoding: KEY_ENCODING_V1,
        counter_bits: p.counter_bits as u8,
        fingerprint,
        layer_count: 1,
        fpp: design.map_or(0.0, |d| d.fpp),
        capacity: design.map_or(0, |d| d.capacity),
        growth: 0,
        max_layers: 0,
        tightening: 0.0,
        max_capacity: 0,
        payload_offset: cells_offset() as u64,
        file_len: encoded_len(f) as u64,
    };
    let mut head = Vec::with_capacity(cells_offset());
    fixed.write(&mut head);
    head.extend_from_slice(&p.buckets.to_le_bytes());
    head.extend_from_slice(&p.tables.to_le_bytes());
    head.extend_from_slice(&p.cells_per_bucket.to_le_bytes());
    head.extend_from_slice(&p.remainder_bits.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    head.extend_from_slice(&f.len().to_le_bytes());
    head.resize(cells_offset(), 0);
    let mut hashed = Hashed {
        out,
        hasher: xxhash_rust::xxh3::Xxh3::new(),
    };
    hashed.write_all(&head)?;
    let cells = LayerOut {
        positions: p.cells(),
        hashes: p.tables,
        capacity: 0,
        inserted: 0,
        words: Words::Flat(f.cells().as_words()),
    };
    write_payload(&mut hashed, &[cells])?;
    let sum = hashed.hasher.digest();
    hashed.out.write_all(&sum.to_le_bytes())
}

/// Decodes a d-left file whose checksum has been verified.
pub(super) fn decode(bytes: &[u8], keys: &[Hashing]) -> Result<Decoded> {
    let mut r = Reader::new(bytes, FORMAT);
    let fixed = Fixed::read(&mut r)?;
    let file_len = bytes.len() as u64;
    check_fixed(&fixed, file_len, &r)?;
    let hashing = hashing_from_code(fixed.hashing, fixed.fingerprint, keys)?;
    let (params, occupied) = read_geometry(&mut r, &fixed)?;
    // validate() bounds the bits by what the platform can address; the cells must then fit
    // exactly between the geometry and the checksum, before anything is allocated.
    let words = params.bits().div_ceil(64);
    check_cells_end(words, file_len, &r)?;
    r.take(
        (cells_offset() - super::HEADER_LEN - GEOMETRY_LEN) as u64,
        "padding",
    )?;
    let words = r.words(words, false, "d-left cells")?;
    let corrupt = |e: Error| r.corrupt(e.to_string());
    let cells =
        PackedCells::from_words(words, params.cells(), params.cell_bits()).map_err(corrupt)?;
    let filter = DLeftCountingFilter::from_parts(params, hashing, cells).map_err(corrupt)?;
    if filter.len() != occupied {
        return Err(r.corrupt(format!(
            "the geometry says {occupied} occupied cells, the cells hold {}",
            filter.len()
        )));
    }
    let design = (fixed.capacity != 0 && fixed.fpp > 0.0 && fixed.fpp < 1.0).then_some(Design {
        capacity: fixed.capacity,
        fpp: fixed.fpp,
    });
    Ok(Decoded {
        filter: AnyFilter::DLeft(filter),
        design,
    })
}

/// Checks the fixed header fields of a d-left file of `file_len` bytes.
fn check_fixed(fixed: &Fixed, file_len: u64, r: &Reader) -> Result<()> {
    if fixed.scheme != 0 {
        return Err(super::newer(format!(
            "unknown d-left layout code {} (this version knows 0)",
            fixed.scheme
        )));
    }
    if fixed.layer_count != 1 {
        return Err(r.corrupt(format!(
            "{} layers for filter kind dleft",
            fixed.layer_count
        )));
    }
    super::check_file_len(fixed, file_len, r)?;
    if fixed.payload_offset != cells_offset() as u64 {
        return Err(r.corrupt(format!(
            "payload offset {} is not where the d-left geometry ends",
            fixed.payload_offset
        )));
    }
    Ok(())
}

/// Reads the d-left geometry after the fixed header; returns the checked parameters and the
/// number of occupied cells it states.
fn read_geometry(r: &mut Reader, fixed: &Fixed) -> Result<(DLeftParams, u64)> {
    let buckets = r.u64_le("d-left buckets")?;
    let tables = r.u32_le("d-left sub-tables")?;
    let cells_per_bucket = r.u32_le("d-left cells per bucket")?;
    let remainder_bits = r.u32_le("d-left remainder bits")?;
    let _reserved = r.u32_le("d-left reserved")?;
    let occupied = r.u64_le("d-left occupied cells")?;
    let params = DLeftParams {
        tables,
        buckets,
        cells_per_bucket,
        remainder_bits,
        counter_bits: u32::from(fixed.counter_bits),
    }
    .validate()
    .map_err(|e| r.corrupt(format!("d-left geometry: {e}")))?;
    Ok((params, occupied))
}

/// Checks that `words` words of cells, padded to the alignment, end exactly where the
/// checksum of a file of `file_len` bytes starts.
fn check_cells_end(words: u64, file_len: u64, r: &Reader) -> Result<()> {
    let end = (cells_offset() as u64)
        .checked_add(words.saturating_mul(8).div_ceil(64).saturating_mul(64))
        .and_then(|e| e.checked_add(8));
    match end {
        Some(end) if end == file_len => Ok(()),
        Some(end) if end < file_len => {
            Err(r.corrupt("payload does not end where the checksum starts"))
        }
        _ => Err(Error::Truncated {
            format: FORMAT,
            what: "d-left cells",
            needed: end.unwrap_or(u64::MAX),
            available: file_len,
        }),
    }
}
