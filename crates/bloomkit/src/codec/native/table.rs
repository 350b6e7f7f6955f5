//! The layer table and the payload layout of a native file.
//!
//! After the fixed header come one [`LAYER_ENTRY_LEN`]-byte entry per layer, zero padding up to
//! the next [`ALIGN`] boundary, then each layer's words, each section padded to [`ALIGN`], then
//! the 8-byte checksum.

use super::{ALIGN, FORMAT, HEADER_LEN, LAYER_ENTRY_LEN};
use crate::codec::Reader;
use crate::error::{Error, Result};
use crate::math::Params;
use crate::storage::Block;
use std::io::{self, Write};

/// One entry of the layer table, with the position of its payload.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LayerEntry {
    /// Bits (or counters) and hash functions.
    pub params: Params,
    /// Capacity the layer was sized for (0 if unknown).
    pub capacity: u64,
    /// New elements inserted (`u64::MAX` if not tracked).
    pub inserted: u64,
    /// Offset of the payload from the start of the file (a multiple of 64).
    pub offset: usize,
    /// Number of 64-bit words of payload.
    pub words: usize,
}

/// One layer to be written: its table entry's values and its words.
pub(super) struct LayerOut<'a> {
    /// Bits (or counters).
    pub positions: u64,
    /// Hash functions.
    pub hashes: u32,
    /// Capacity the layer was sized for (0 if unknown).
    pub capacity: u64,
    /// New elements inserted (`u64::MAX` if not tracked).
    pub inserted: u64,
    /// The payload.
    pub words: Words<'a>,
}

/// A layer's payload words, borrowed from the filter (never copied: a file is written from
/// the filter's own memory, so saving needs no second copy of a large filter).
pub(super) enum Words<'a> {
    /// Plain words.
    Flat(&'a [u64]),
    /// Blocks of eight words.
    Blocks(&'a [Block]),
}

impl Words<'_> {
    /// Number of words.
    pub fn len(&self) -> usize {
        match self {
            Words::Flat(w) => w.len(),
            Words::Blocks(b) => b.len() * 8,
        }
    }

    /// The words as consecutive slices, in order.
    fn slices(&self) -> Box<dyn Iterator<Item = &[u64]> + '_> {
        match self {
            Words::Flat(w) => Box::new(std::iter::once(*w)),
            Words::Blocks(b) => Box::new(b.iter().map(|b| &b.0[..])),
        }
    }
}

/// `n` rounded up to the next multiple of [`ALIGN`].
pub(super) fn align_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// Where the payload starts: after the header and a table of `layer_count` entries, aligned.
pub(super) fn payload_offset(layer_count: u64) -> u64 {
    let table_end = HEADER_LEN as u64 + LAYER_ENTRY_LEN as u64 * layer_count;
    table_end.div_ceil(ALIGN as u64) * ALIGN as u64
}

/// Appends the layer table, padded to where the payload starts.
pub(super) fn write_table(out: &mut Vec<u8>, layers: &[LayerOut]) {
    for l in layers {
        out.extend_from_slice(&l.positions.to_le_bytes());
        out.extend_from_slice(&l.hashes.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&l.capacity.to_le_bytes());
        out.extend_from_slice(&l.inserted.to_le_bytes());
    }
    out.resize(align_up(out.len()), 0);
}

/// Writes every layer's words to `out`, each section padded to [`ALIGN`], through a small
/// staging buffer (little-endian on every machine).
pub(super) fn write_payload(out: &mut impl Write, layers: &[LayerOut]) -> io::Result<()> {
    const STAGE_WORDS: usize = 8192;
    let mut stage = Vec::with_capacity(STAGE_WORDS * 8);
    for l in layers {
        for slice in l.words.slices() {
            for chunk in slice.chunks(STAGE_WORDS) {
                stage.clear();
                for w in chunk {
                    stage.extend_from_slice(&w.to_le_bytes());
                }
                out.write_all(&stage)?;
            }
        }
        let len = l.words.len() * 8;
        out.write_all(&[0u8; ALIGN][..align_up(len) - len])?;
    }
    Ok(())
}

/// Reads `count` table entries and places each layer's payload, checking each against
/// `file_len` before going on. `width` is the bits per position (1, or the counter width);
/// `payload_offset` is where the first section starts.
pub(super) fn read_table(
    r: &mut Reader,
    count: u32,
    width: u64,
    payload_offset: u64,
    file_len: u64,
) -> Result<Vec<LayerEntry>> {
    let mut layers = Vec::new();
    let mut offset = payload_offset;
    for _ in 0..count {
        let (entry, end) = read_entry(r, width, offset, file_len)?;
        layers.push(entry);
        offset = end;
    }
    if offset + 8 != file_len {
        return Err(r.corrupt("payload does not end where the checksum starts"));
    }
    Ok(layers)
}

/// Reads one table entry whose payload starts at `offset`; returns it and where its section
/// ends.
fn read_entry(r: &mut Reader, width: u64, offset: u64, file_len: u64) -> Result<(LayerEntry, u64)> {
    let positions = r.u64_le("layer bits")?;
    let hashes = r.u32_le("layer hashes")?;
    let _reserved = r.u32_le("layer reserved")?;
    let capacity = r.u64_le("layer capacity")?;
    let inserted = r.u64_le("layer inserted")?;
    let params = Params {
        bits: positions,
        hashes,
    }
    .validate()
    .map_err(|e| r.corrupt(format!("layer parameters: {e}")))?;
    let words = positions
        .checked_mul(width)
        .map(|b| b.div_ceil(64))
        .ok_or_else(|| r.corrupt("layer size overflows"))?;
    let end = words
        .checked_mul(8)
        .and_then(|b| b.checked_add(ALIGN as u64 - 1))
        .map(|b| b / ALIGN as u64 * ALIGN as u64)
        .and_then(|b| b.checked_add(offset))
        .ok_or_else(|| r.corrupt("layer size overflows"))?;
    if end > file_len.saturating_sub(8) {
        return Err(Error::Truncated {
            format: FORMAT,
            what: "layer payload",
            needed: end + 8,
            available: file_len,
        });
    }
    let entry = LayerEntry {
        params,
        capacity,
        inserted,
        offset: offset as usize,
        words: words as usize,
    };
    Ok((entry, end))
}
