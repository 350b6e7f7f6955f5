//! bloomkit's native format: versioned, checksummed, every filter kind, payload aligned for
//! memory mapping. The byte layout is specified in `docs/FORMAT.md`; this module is its
//! implementation.
//!
//! ```
//! use bloomkit::{BloomFilter, codec::native};
//! let mut f = BloomFilter::new(1000, 0.01)?;
//! f.insert("x");
//! let bytes = native::to_bytes(&f.clone().into(), None)?;
//! let back = native::from_bytes(&bytes, &[])?;
//! assert_eq!(back.filter, f.into());
//! # Ok::<(), bloomkit::Error>(())
//! ```

mod bitmap;
mod dleft;
mod fixed;
mod table;
mod window;

pub(crate) use bitmap::is_bitmap_file;
#[cfg(all(feature = "mmap", not(loom)))]
pub(crate) use bitmap::{
    parse_header as parse_bitmap_header, BitmapHeader, HEAD_LEN as BITMAP_HEAD_LEN,
};

pub(crate) use table::LayerEntry;

use super::Reader;
use crate::any::AnyFilter;
use crate::blocked::BlockedBloomFilter;
use crate::classic::BloomFilter;
use crate::counting::CountingBloomFilter;
use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::kind::Kind;
use crate::math::Params;
use crate::probe::blocked::{BlockLayout, BLOCK_BITS};
use crate::probe::Scheme;
use crate::scalable::{Layer, ScalableBloomFilter, ScalableConfig};
use crate::spec::{BlockSpec, Spec};
use crate::storage::{CounterWidth, Counters};
use fixed::Fixed;
use std::io::{self, Write};
use table::{LayerOut, Words};

const FORMAT: &str = "bloomkit";

/// The first eight bytes of every native file.
pub const MAGIC: [u8; 8] = *b"BLOOMKIT";
/// The newest format version this build reads (it reads every version from 1). It writes
/// version 1 for every file that a version-1 reader reads correctly, and version 2 only for
/// count windows in the blocked layout, which a version-1 reader would not know
/// (docs/FORMAT.md, "Versions"): so older readers refuse those with
/// [`Error::UnsupportedVersion`] rather than misread them.
pub const VERSION: u16 = 2;
/// Size of the fixed header.
pub const HEADER_LEN: usize = 128;
/// Size of one entry of the layer table.
pub const LAYER_ENTRY_LEN: usize = 32;
/// Alignment of every payload section (a cache line; a multiple of the word size).
pub const ALIGN: usize = 64;
/// Byte offset of the dirty mark in the header (the first word of its zero padding): `0` when
/// the trailing checksum covers the file, `1` while an in-place writer has the file open and
/// the checksum may be stale (see docs/FORMAT.md, "Sharing a file between processes").
/// Encoders always write `0`.
pub const DIRTY_MARK_OFFSET: usize = 88;
/// The layer table may hold at most this many entries (a scalable filter doubling from one
/// element reaches 2⁶⁴ elements in 64 layers).
pub const MAX_LAYERS: u32 = 4096;

/// Scheme codes of the blocked layouts (the scheme byte of a blocked filter).
const SCHEME_BLOCKED_BITS: u8 = 6;
const SCHEME_BLOCKED_SPLIT: u8 = 7;
const SCHEME_BLOCKED_SPLIT256: u8 = 8;

/// The scheme byte of a blocked filter (or a time window's generations) with this layout.
pub(super) fn block_layout_code(layout: BlockLayout) -> u8 {
    match layout {
        BlockLayout::Bits(_) => SCHEME_BLOCKED_BITS,
        BlockLayout::SplitBlock => SCHEME_BLOCKED_SPLIT,
        BlockLayout::SplitBlock256 => SCHEME_BLOCKED_SPLIT256,
    }
}

/// The key encoding: bloomkit's stable keys, version 1 (see [`crate::key`]).
const KEY_ENCODING_V1: u8 = 1;

/// Set in a counting filter's counter-width byte when it inserts by minimal increase
/// ([`CountingBloomFilter::with_minimal_increase`]): `0x84` or `0x88`. Readers that predate it
/// refuse the width, rather than allow the removals it forbids.
const MINIMAL_INCREASE: u8 = 0x80;

/// What a filter was designed for, when known (kept in the header for `info`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// Elements the filter was sized for.
    pub capacity: u64,
    /// The target false-positive probability.
    pub fpp: f64,
}

/// A decoded native file.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The filter.
    pub filter: AnyFilter,
    /// Its design capacity and FPR, if recorded.
    pub design: Option<Design>,
}

/// The error for a code (kind, layout, scheme, hash function, key encoding) this build does not
/// know: added by a newer version ([`Error::NewerVersion`]).
pub(super) fn newer(what: String) -> Error {
    Error::NewerVersion {
        format: FORMAT,
        what,
    }
}

/// The numeric code of a probing scheme in the native format.
pub(crate) fn scheme_code(s: Scheme) -> u8 {
    match s {
        Scheme::EnhancedDouble => 1,
        Scheme::GuavaMitz64 => 2,
        Scheme::GuavaMitz32 => 3,
        Scheme::Go => 4,
        Scheme::Redisson => 5,
        Scheme::EnhancedDouble64 => 10,
        Scheme::MixedDouble => 12,
    }
}

fn scheme_from_code(c: u8) -> Option<Scheme> {
    Scheme::ALL.into_iter().find(|&s| scheme_code(s) == c)
}

/// The numeric code of a hash function and the fingerprint that identifies its key (SipHash:
/// [`crate::hash::SipKey::fingerprint`]; custom: XXH3-64 of its id; otherwise 0).
pub(crate) fn hashing_code(h: &Hashing) -> (u8, u64) {
    match h {
        Hashing::Xxh3 => (1, 0),
        Hashing::Murmur3 => (2, 0),
        Hashing::SipHash13(k) => (3, k.fingerprint()),
        #[cfg(feature = "redisson")]
        Hashing::Highway => (4, 0),
        Hashing::Custom(c) => (5, xxhash_rust::xxh3::xxh3_64(c.id().as_bytes())),
    }
}

fn hashing_from_code(code: u8, fingerprint: u64, keys: &[Hashing]) -> Result<Hashing> {
    match code {
        1 => Ok(Hashing::Xxh3),
        2 => Ok(Hashing::Murmur3),
        #[cfg(feature = "redisson")]
        4 => Ok(Hashing::Highway),
        #[cfg(not(feature = "redisson"))]
        4 => Err(Error::FeatureDisabled {
            feature: "redisson",
            needed_for: "a filter hashed with HighwayHash (Redisson's layout)",
        }),
        3 | 5 => keys
            .iter()
            .find(|k| hashing_code(k) == (code, fingerprint))
            .cloned()
            .ok_or_else(|| {
                Error::MissingKey(if code == 3 {
                    format!("siphash13:{fingerprint:016x}")
                } else {
                    format!("custom hasher with fingerprint {fingerprint:016x}")
                })
            }),
        other => Err(newer(format!("unknown hash function code {other}"))),
    }
}

/// What a filter contributes to its file, before the layout is computed.
struct Parts<'a> {
    kind: Kind,
    /// Scheme code (blocked filters: block layout code).
    scheme: u8,
    hashing: &'a Hashing,
    counter_bits: u8,
    layers: Vec<LayerOut<'a>>,
    config: Option<&'a ScalableConfig>,
    /// The design and kind-specific header fields of an expiring filter.
    extra: Option<Extra>,
}

/// Header fields an expiring filter fills itself (see `window.rs`).
struct Extra {
    capacity: u64,
    fpp: f64,
    growth: u32,
    max_layers: u32,
    max_capacity: u64,
}

impl<'a> Parts<'a> {
    /// A filter of one layer: every kind but scalable.
    fn single(
        kind: Kind,
        scheme: u8,
        hashing: &'a Hashing,
        counter_bits: u8,
        layer: LayerOut<'a>,
    ) -> Self {
        Parts {
            kind,
            scheme,
            hashing,
            counter_bits,
            layers: vec![layer],
            config: None,
            extra: None,
        }
    }

    fn of(filter: &'a AnyFilter, design: Option<Design>) -> Self {
        let capacity = design.map_or(0, |d| d.capacity);
        let layer = |positions, hashes, words| LayerOut {
            positions,
            hashes,
            capacity,
            inserted: u64::MAX,
            words,
        };
        match filter {
            AnyFilter::Blocked(f) => {
                let code = block_layout_code(f.spec().layout());
                let words = Words::Blocks(f.as_blocks());
                let l = layer(f.bits(), f.spec().hashes(), words);
                Parts::single(Kind::Blocked, code, f.hashing(), 0, l)
            }
            AnyFilter::Classic(f) => {
                let l = layer(f.bits(), f.hashes(), Words::Flat(f.as_words()));
                let spec = f.spec();
                Parts::single(
                    Kind::Classic,
                    scheme_code(spec.scheme()),
                    spec.hashing(),
                    0,
                    l,
                )
            }
            AnyFilter::Counting(f) => {
                let spec = f.spec();
                let words = Words::Flat(f.counters().as_words());
                let l = layer(spec.bits(), spec.hashes(), words);
                let flag = if f.is_minimal_increase() {
                    MINIMAL_INCREASE
                } else {
                    0
                };
                let bits = f.width().bits() as u8 | flag;
                Parts::single(
                    Kind::Counting,
                    scheme_code(spec.scheme()),
                    spec.hashing(),
                    bits,
                    l,
                )
            }
            AnyFilter::Scalable(f) => Parts::scalable(f),
            AnyFilter::Bitmap(_) | AnyFilter::TwoBitMap(_) => {
                unreachable!("bitmap kinds are written by bitmap.rs")
            }
            AnyFilter::CountWindow(f) => window::count_parts(f),
            AnyFilter::TimeWindow(f) => window::time_parts(f),
            // `encoded_len` and `write_to` hand d-left filters to `dleft.rs` first.
            AnyFilter::DLeft(_) => unreachable!("d-left filters have their own body"),
        }
    }

    fn scalable(f: &'a ScalableBloomFilter) -> Self {
        let spec = f.layers()[0].filter().spec();
        let layers = f
            .layers()
            .iter()
            .map(|l: &Layer| LayerOut {
                positions: l.filter().bits(),
                hashes: l.filter().hashes(),
                capacity: l.capacity(),
                inserted: l.inserted(),
                words: Words::Flat(l.filter().as_words()),
            })
            .collect();
        Parts {
            kind: Kind::Scalable,
            scheme: scheme_code(spec.scheme()),
            hashing: spec.hashing(),
            counter_bits: 0,
            layers,
            config: Some(f.config()),
            extra: None,
        }
    }

    /// The fixed header fields for a file of `file_len` bytes whose payload starts at
    /// `payload_offset`.
    fn fixed(&self, design: Option<Design>, payload_offset: usize, file_len: usize) -> Fixed {
        let (hashing, fingerprint) = hashing_code(self.hashing);
        let config = self.config;
        let (fpp, capacity) = match (config, design, &self.extra) {
            (_, _, Some(e)) => (e.fpp, e.capacity),
            (Some(c), _, _) => (c.fpp, c.initial_capacity),
            (None, Some(d), _) => (d.fpp, d.capacity),
            (None, None, _) => (0.0, 0),
        };
        let extra = self.extra.as_ref();
        Fixed {
            version: window::version_of(self.kind, self.scheme),
            kind: self.kind,
            scheme: self.scheme,
            hashing,
            key_encoding: KEY_ENCODING_V1,
            counter_bits: self.counter_bits,
            fingerprint,
            layer_count: self.layers.len() as u32,
            fpp,
            capacity,
            growth: extra.map_or(config.map_or(0, |c| c.growth), |e| e.growth),
            max_layers: extra.map_or(config.and_then(|c| c.max_layers).unwrap_or(0), |e| {
                e.max_layers
            }),
            tightening: config.map_or(0.0, |c| c.tightening),
            max_capacity: extra.map_or(config.and_then(|c| c.max_capacity).unwrap_or(0), |e| {
                e.max_capacity
            }),
            payload_offset: payload_offset as u64,
            file_len: file_len as u64,
        }
    }
}

/// Encodes a filter. `design` records the capacity and FPR it was sized for (scalable filters
/// record their own configuration and ignore it).
pub fn to_bytes(filter: &AnyFilter, design: Option<Design>) -> Result<Vec<u8>> {
    let total = encoded_len(filter, design);
    let mut out = Vec::new();
    out.try_reserve_exact(total as usize)
        .map_err(|_| Error::Alloc { bytes: total })?;
    write_to(filter, design, &mut out).map_err(|source| Error::Io {
        context: "encoding a filter in memory".into(),
        source,
    })?;
    debug_assert_eq!(out.len() as u64, total);
    Ok(out)
}

/// The length in bytes of `filter`'s native file.
pub fn encoded_len(filter: &AnyFilter, design: Option<Design>) -> u64 {
    if let Some(len) = bitmap::encoded_len(filter) {
        return len;
    }
    if let AnyFilter::DLeft(f) = filter {
        return dleft::encoded_len(f) as u64;
    }
    Layout::of(&Parts::of(filter, design)).total as u64
}

/// Where a file's payload starts and how long the file is.
struct Layout {
    payload_offset: usize,
    total: usize,
}

impl Layout {
    fn of(parts: &Parts) -> Layout {
        let payload_offset = table::payload_offset(parts.layers.len() as u64) as usize;
        let payload_len: usize = parts
            .layers
            .iter()
            .map(|l| table::align_up(l.words.len() * 8))
            .sum();
        Layout {
            payload_offset,
            total: payload_offset + payload_len + 8,
        }
    }
}

/// Writes `filter`'s native file to `out` as a stream, the same bytes as [`to_bytes`] without
/// holding them in memory: the header and layer table, then the payload straight from the
/// filter's words, then the checksum of everything written (so saving a large filter needs no
/// second copy of it).
pub fn write_to(
    filter: &AnyFilter,
    design: Option<Design>,
    out: &mut impl Write,
) -> io::Result<()> {
    if let Some(written) = bitmap::write_to(filter, design, out) {
        return written;
    }
    if let AnyFilter::DLeft(f) = filter {
        return dleft::write_to(f, design, out);
    }
    let parts = Parts::of(filter, design);
    let layout = Layout::of(&parts);
    let mut head = Vec::with_capacity(layout.payload_offset);
    parts
        .fixed(design, layout.payload_offset, layout.total)
        .write(&mut head);
    table::write_table(&mut head, &parts.layers);
    debug_assert_eq!(head.len(), layout.payload_offset);
    let mut hashed = Hashed {
        out,
        hasher: xxhash_rust::xxh3::Xxh3::new(),
    };
    hashed.write_all(&head)?;
    table::write_payload(&mut hashed, &parts.layers)?;
    let sum = hashed.hasher.digest();
    hashed.out.write_all(&sum.to_le_bytes())
}

/// A writer that checksums what passes through it (XXH3-64, seed 0: the trailer's hash).
struct Hashed<'w, W: Write> {
    out: &'w mut W,
    hasher: xxhash_rust::xxh3::Xxh3,
}

impl<W: Write> Write for Hashed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The parsed header and layer table of a native file, before any payload is read.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    /// The kind of filter.
    pub kind: Kind,
    /// The spec shared by all layers, with the first layer's size (not for blocked filters,
    /// whose probing is not a [`Scheme`]).
    pub spec: Option<Spec>,
    /// The blocks, layout and hashing of a blocked filter.
    pub block_spec: Option<BlockSpec>,
    /// The scheme byte (blocked kinds: the block layout; count windows: their layout).
    pub scheme: u8,
    /// The hash function.
    pub hashing: Hashing,
    /// 0 for bit arrays, else 4 or 8.
    pub counter_bits: u8,
    /// Design FPR (0 if unknown).
    pub fpp: f64,
    /// Design (or initial) capacity (0 if unknown).
    pub capacity: u64,
    /// Scalable configuration fields.
    growth: u32,
    max_layers: u32,
    tightening: f64,
    max_capacity: u64,
    /// Per layer: params, capacity, inserted, byte offset and word count of its payload.
    pub layers: Vec<LayerEntry>,
}

/// Parses and checks the header and layer table; `file_len` is the whole input's length.
/// Does not read the payload or verify the checksum.
pub(crate) fn parse_header(bytes: &[u8], file_len: u64, keys: &[Hashing]) -> Result<Header> {
    let mut r = Reader::new(bytes, FORMAT);
    let fixed = Fixed::read(&mut r)?;
    // Kinds without a layer table (their payloads are laid out otherwise).
    if bitmap::is_bitmap_kind(fixed.kind) || fixed.kind == Kind::DLeft {
        return Err(not_mappable(fixed.kind));
    }
    let scheme = scheme_of(&fixed, &r)?;
    let width = check_fixed(&fixed, file_len, &r)?;
    let hashing = hashing_from_code(fixed.hashing, fixed.fingerprint, keys)?;
    let payload_offset = fixed.payload_offset;
    if payload_offset != table::payload_offset(u64::from(fixed.layer_count)) {
        return Err(r.corrupt(format!(
            "payload offset {payload_offset} is not where the layer table ends"
        )));
    }
    let count = fixed.layer_count;
    let layers = table::read_table(&mut r, count, width, payload_offset, file_len)?;
    let first = layers[0].params;
    let block_spec = match fixed.kind {
        Kind::Blocked | Kind::TimeWindow => {
            let layout = block_layout(fixed.scheme, first, &r)?;
            Some(BlockSpec::new(
                first.bits / BLOCK_BITS,
                layout,
                hashing.clone(),
            )?)
        }
        _ => None,
    };
    let spec = match scheme {
        Some(scheme) => Some(Spec::new(first, scheme, hashing.clone())?),
        None => None,
    };
    Ok(Header {
        kind: fixed.kind,
        scheme: fixed.scheme,
        spec,
        block_spec,
        hashing,
        counter_bits: fixed.counter_bits,
        fpp: fixed.fpp,
        capacity: fixed.capacity,
        growth: fixed.growth,
        max_layers: fixed.max_layers,
        tightening: fixed.tightening,
        max_capacity: fixed.max_capacity,
        layers,
    })
}

/// The probing scheme named by the scheme byte; `None` for blocked filters, whose scheme byte
/// names a block layout, and for count windows in the blocked layout (both checked to be
/// known ones here: an unknown code is a newer version's).
fn scheme_of(fixed: &Fixed, r: &Reader) -> Result<Option<Scheme>> {
    let code = fixed.scheme;
    if fixed.kind == Kind::CountWindow {
        return window::count_scheme(fixed.version, code, r);
    }
    if !matches!(fixed.kind, Kind::Blocked | Kind::TimeWindow) {
        return match scheme_from_code(code) {
            Some(s) => Ok(Some(s)),
            None => Err(newer(format!("unknown probing scheme code {code}"))),
        };
    }
    match code {
        SCHEME_BLOCKED_BITS | SCHEME_BLOCKED_SPLIT | SCHEME_BLOCKED_SPLIT256 => Ok(None),
        _ => Err(newer(format!("unknown blocked layout code {code}"))),
    }
}

/// Checks that the fixed fields fit together and with the input's length; returns the bits
/// per position of the payload (1, or the counter width).
fn check_fixed(fixed: &Fixed, file_len: u64, r: &Reader) -> Result<u64> {
    let (kind, counter_bits) = (fixed.kind, fixed.counter_bits);
    let width = match (kind, counter_bits) {
        (Kind::Counting, 4 | 8) => u64::from(counter_bits),
        (Kind::Counting, 0x84 | 0x88) => u64::from(counter_bits & !MINIMAL_INCREASE),
        (
            Kind::Classic | Kind::Scalable | Kind::Blocked | Kind::CountWindow | Kind::TimeWindow,
            0,
        ) => 1,
        _ => {
            return Err(r.corrupt(format!(
                "counter width {counter_bits} does not fit filter kind {kind}"
            )))
        }
    };
    check_file_len(fixed, file_len, r)?;
    let layer_count = fixed.layer_count;
    let layers_ok = match kind {
        Kind::Scalable => (1..=MAX_LAYERS).contains(&layer_count),
        Kind::CountWindow | Kind::TimeWindow => window::layers_ok(kind, layer_count),
        _ => layer_count == 1,
    };
    if !layers_ok {
        return Err(r.corrupt(format!("{layer_count} layers for filter kind {kind}")));
    }
    Ok(width)
}

/// Checks the header's file length against the input's: a shorter input is truncated, a
/// longer one corrupt.
fn check_file_len(fixed: &Fixed, file_len: u64, r: &Reader) -> Result<()> {
    let total = fixed.file_len;
    if total == file_len {
        return Ok(());
    }
    Err(if total > file_len {
        Error::Truncated {
            format: FORMAT,
            what: "file",
            needed: total,
            available: file_len,
        }
    } else {
        r.corrupt(format!("header says {total} bytes, input has {file_len}"))
    })
}

/// The block layout of a blocked filter from its scheme byte and its (only) layer's size.
fn block_layout(code: u8, first: Params, r: &Reader) -> Result<BlockLayout> {
    if !first.bits.is_multiple_of(BLOCK_BITS) {
        return Err(r.corrupt(format!(
            "{} bits is not a whole number of blocks",
            first.bits
        )));
    }
    let split = match code {
        SCHEME_BLOCKED_SPLIT => BlockLayout::SplitBlock,
        SCHEME_BLOCKED_SPLIT256 => BlockLayout::SplitBlock256,
        _ => return Ok(BlockLayout::Bits(first.hashes)),
    };
    if first.hashes != 8 {
        return Err(r.corrupt("a split-block filter sets 8 bits per element"));
    }
    Ok(split)
}

/// Verifies the trailing checksum of a whole native file.
pub fn verify_checksum(bytes: &[u8]) -> Result<()> {
    if bytes.len() < 8 {
        return Err(Error::Truncated {
            format: FORMAT,
            what: "checksum",
            needed: 8,
            available: bytes.len() as u64,
        });
    }
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    let stored = u64::from_le_bytes(tail.try_into().expect("8 bytes"));
    let computed = xxhash_rust::xxh3::xxh3_64(body);
    if stored != computed {
        return Err(Error::Checksum {
            format: FORMAT,
            stored,
            computed,
        });
    }
    Ok(())
}

/// Decodes a native file, verifying its checksum. `keys` supplies the hash functions with
/// secrets (SipHash keys, custom hashers) that the file may name by fingerprint.
pub fn from_bytes(bytes: &[u8], keys: &[Hashing]) -> Result<Decoded> {
    if bytes.len() < HEADER_LEN + 8 {
        return Err(Error::Truncated {
            format: FORMAT,
            what: "header",
            needed: (HEADER_LEN + 8) as u64,
            available: bytes.len() as u64,
        });
    }
    if bytes[..8] != MAGIC {
        return Err(Error::Corrupt {
            format: FORMAT,
            reason: "not a bloomkit filter (bad magic bytes)".into(),
        });
    }
    verify_checksum(bytes)?;
    if is_bitmap_file(bytes) {
        return bitmap::decode(bytes);
    }
    if bytes[10..12] == Kind::DLeft.code().to_le_bytes() {
        return dleft::decode(bytes, keys);
    }
    let header = parse_header(bytes, bytes.len() as u64, keys)?;
    if header.kind == Kind::Scalable {
        let filter = AnyFilter::Scalable(decode_scalable(&header, bytes)?);
        return Ok(Decoded {
            filter,
            design: None,
        });
    }
    let design = (header.capacity != 0 && header.fpp > 0.0 && header.fpp < 1.0).then_some(Design {
        capacity: header.capacity,
        fpp: header.fpp,
    });
    let filter = match header.kind {
        Kind::CountWindow | Kind::TimeWindow => window::decode(&header, bytes)?,
        _ => decode_single(&header, bytes)?,
    };
    Ok(Decoded { filter, design })
}

/// The words of one layer's payload (whose place `parse_header` checked).
fn words_of(bytes: &[u8], e: &LayerEntry) -> Vec<u64> {
    bytes[e.offset..e.offset + e.words * 8]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// The error for a valid file of a kind that cannot be memory-mapped as a filter.
pub(crate) fn not_mappable(kind: Kind) -> Error {
    Error::NotMappable { kind: kind.name() }
}

/// A payload the filter refuses, reported as a corrupt file.
fn corrupt(e: Error) -> Error {
    Error::Corrupt {
        format: FORMAT,
        reason: e.to_string(),
    }
}

/// Decodes a filter of one layer: classic, counting or blocked.
fn decode_single(header: &Header, bytes: &[u8]) -> Result<AnyFilter> {
    let e = &header.layers[0];
    let words = words_of(bytes, e);
    let spec = || header.spec.clone().expect("bit-array kinds have a spec");
    Ok(match header.kind {
        Kind::Blocked => {
            let spec = header
                .block_spec
                .as_ref()
                .expect("blocked kinds have a block spec");
            let f = BlockedBloomFilter::from_words(&words, spec.layout(), spec.hashing().clone());
            AnyFilter::Blocked(f.map_err(corrupt)?)
        }
        Kind::Classic => {
            AnyFilter::Classic(BloomFilter::from_words(spec(), words).map_err(corrupt)?)
        }
        // Counting: the only other kind of one layer (`parse_header` checked the count).
        _ => {
            let width = if header.counter_bits & !MINIMAL_INCREASE == 4 {
                CounterWidth::Four
            } else {
                CounterWidth::Eight
            };
            let counters = Counters::from_words(words, e.params.bits, width).map_err(corrupt)?;
            let f = CountingBloomFilter::from_parts(spec(), counters).map_err(corrupt)?;
            AnyFilter::Counting(if header.counter_bits & MINIMAL_INCREASE != 0 {
                f.with_minimal_increase()
            } else {
                f
            })
        }
    })
}

/// Decodes a scalable filter: its configuration from the fixed fields, a layer per entry.
fn decode_scalable(header: &Header, bytes: &[u8]) -> Result<ScalableBloomFilter> {
    let scheme = header
        .spec
        .as_ref()
        .expect("scalable filters have a spec")
        .scheme();
    let config = ScalableConfig {
        initial_capacity: header.capacity,
        fpp: header.fpp,
        growth: header.growth,
        tightening: header.tightening,
        max_layers: (header.max_layers != 0).then_some(header.max_layers),
        max_capacity: (header.max_capacity != 0).then_some(header.max_capacity),
        hashing: header.hashing.clone(),
        scheme,
    };
    let mut layers = Vec::with_capacity(header.layers.len());
    for e in &header.layers {
        let spec = Spec::new(e.params, scheme, header.hashing.clone())?;
        let filter = BloomFilter::from_words(spec, words_of(bytes, e)).map_err(corrupt)?;
        layers.push(Layer::from_parts(filter, e.capacity, e.inserted));
    }
    ScalableBloomFilter::from_parts(config, layers).map_err(corrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_aligned() {
        let f = BloomFilter::with_params(100, 3).unwrap();
        let bytes = to_bytes(&f.into(), None).unwrap();
        let h = parse_header(&bytes, bytes.len() as u64, &[]).unwrap();
        assert_eq!(h.layers[0].offset % ALIGN, 0);
        assert_eq!(bytes.len(), 192 + 64 + 8);
    }
}
