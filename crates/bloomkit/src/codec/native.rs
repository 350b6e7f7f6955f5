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

use super::Reader;
use crate::blocked::BlockedBloomFilter;
use crate::classic::BloomFilter;
use crate::counting::CountingBloomFilter;
use crate::error::{Error, Result};
use crate::filter::AnyFilter;
use crate::hash::Hashing;
use crate::math::Params;
use crate::probe::blocked::{BlockLayout, BLOCK_BITS};
use crate::probe::Scheme;
use crate::scalable::{Layer, ScalableBloomFilter, ScalableConfig};
use crate::spec::Spec;
use crate::storage::{CounterWidth, Counters};

const FORMAT: &str = "bloomkit";

/// The first eight bytes of every native file.
pub const MAGIC: [u8; 8] = *b"BLOOMKIT";
/// The format version this build writes and reads.
pub const VERSION: u16 = 1;
/// Size of the fixed header.
pub const HEADER_LEN: usize = 128;
/// Size of one entry of the layer table.
pub const LAYER_ENTRY_LEN: usize = 32;
/// Alignment of every payload section (a cache line; a multiple of the word size).
pub const ALIGN: usize = 64;
/// The layer table may hold at most this many entries (a scalable filter doubling from one
/// element reaches 2⁶⁴ elements in 64 layers).
pub const MAX_LAYERS: u32 = 4096;

/// Kind codes.
const KIND_CLASSIC: u16 = 1;
const KIND_COUNTING: u16 = 2;
const KIND_SCALABLE: u16 = 3;
const KIND_BLOCKED: u16 = 4;

/// Scheme codes of the blocked layouts (the scheme byte of a blocked filter).
const SCHEME_BLOCKED_BITS: u8 = 6;
const SCHEME_BLOCKED_SPLIT: u8 = 7;
const SCHEME_BLOCKED_SPLIT256: u8 = 8;

/// The key encoding: bloomkit's stable keys, version 1 (see [`crate::key`]).
const KEY_ENCODING_V1: u8 = 1;

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

/// The numeric code of a probing scheme in the native format.
pub fn scheme_code(s: Scheme) -> u8 {
    match s {
        Scheme::EnhancedDouble => 1,
        Scheme::GuavaMitz64 => 2,
        Scheme::GuavaMitz32 => 3,
        Scheme::Go => 4,
        Scheme::Redisson => 5,
    }
}

fn scheme_from_code(c: u8) -> Option<Scheme> {
    Scheme::ALL.into_iter().find(|&s| scheme_code(s) == c)
}

/// The numeric code of a hash function and the fingerprint that identifies its key (SipHash:
/// [`crate::hash::SipKey::fingerprint`]; custom: XXH3-64 of its id; otherwise 0).
pub fn hashing_code(h: &Hashing) -> (u8, u64) {
    match h {
        Hashing::Xxh3 => (1, 0),
        Hashing::Murmur3 => (2, 0),
        Hashing::SipHash13(k) => (3, k.fingerprint()),
        Hashing::Highway => (4, 0),
        Hashing::Custom(c) => (5, xxhash_rust::xxh3::xxh3_64(c.id().as_bytes())),
    }
}

fn hashing_from_code(code: u8, fingerprint: u64, keys: &[Hashing], r: &Reader) -> Result<Hashing> {
    match code {
        1 => Ok(Hashing::Xxh3),
        2 => Ok(Hashing::Murmur3),
        4 => Ok(Hashing::Highway),
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
        other => Err(r.corrupt(format!("unknown hash function code {other}"))),
    }
}

struct LayerOut<'a> {
    positions: u64,
    hashes: u32,
    capacity: u64,
    inserted: u64,
    words: &'a [u64],
}

fn align_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

type SchemeAndHash<'a> = (u8, &'a Hashing);

fn of(spec: &Spec) -> SchemeAndHash<'_> {
    (scheme_code(spec.scheme()), spec.hashing())
}

/// Encodes a filter. `design` records the capacity and FPR it was sized for (scalable filters
/// record their own configuration and ignore it).
pub fn to_bytes(filter: &AnyFilter, design: Option<Design>) -> Result<Vec<u8>> {
    let blocked_words: Vec<u64>;
    let (kind, spec, counter_bits, layers, config): (
        u16,
        SchemeAndHash,
        u8,
        Vec<LayerOut>,
        Option<&ScalableConfig>,
    ) = match filter {
        AnyFilter::Blocked(f) => {
            blocked_words = f.words().collect();
            let code = match f.layout() {
                BlockLayout::Bits(_) => SCHEME_BLOCKED_BITS,
                BlockLayout::SplitBlock => SCHEME_BLOCKED_SPLIT,
                BlockLayout::SplitBlock256 => SCHEME_BLOCKED_SPLIT256,
            };
            (
                KIND_BLOCKED,
                (code, f.hashing()),
                0,
                vec![LayerOut {
                    positions: f.bits(),
                    hashes: f.layout().hashes(),
                    capacity: design.map_or(0, |d| d.capacity),
                    inserted: u64::MAX,
                    words: &blocked_words,
                }],
                None,
            )
        }
        AnyFilter::Classic(f) => (
            KIND_CLASSIC,
            of(f.spec()),
            0,
            vec![LayerOut {
                positions: f.bits(),
                hashes: f.hashes(),
                capacity: design.map_or(0, |d| d.capacity),
                inserted: u64::MAX,
                words: f.as_words(),
            }],
            None,
        ),
        AnyFilter::Counting(f) => (
            KIND_COUNTING,
            of(f.spec()),
            f.width().bits() as u8,
            vec![LayerOut {
                positions: f.spec().bits(),
                hashes: f.spec().hashes(),
                capacity: design.map_or(0, |d| d.capacity),
                inserted: u64::MAX,
                words: f.counters().as_words(),
            }],
            None,
        ),
        AnyFilter::Scalable(f) => (
            KIND_SCALABLE,
            of(f.layers()[0].filter().spec()),
            0,
            f.layers()
                .iter()
                .map(|l: &Layer| LayerOut {
                    positions: l.filter().bits(),
                    hashes: l.filter().hashes(),
                    capacity: l.capacity(),
                    inserted: l.inserted(),
                    words: l.filter().as_words(),
                })
                .collect(),
            Some(f.config()),
        ),
    };
    let (scheme_byte, hashing) = spec;
    let (hash_code, fingerprint) = hashing_code(hashing);
    let table_end = HEADER_LEN + LAYER_ENTRY_LEN * layers.len();
    let payload_offset = align_up(table_end);
    let payload_len: usize = layers.iter().map(|l| align_up(l.words.len() * 8)).sum();
    let total = payload_offset + payload_len + 8;

    let mut out = Vec::new();
    out.try_reserve_exact(total).map_err(|_| Error::Alloc {
        bytes: total as u64,
    })?;
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.push(scheme_byte);
    out.push(hash_code);
    out.push(KEY_ENCODING_V1);
    out.push(counter_bits);
    out.extend_from_slice(&fingerprint.to_le_bytes());
    out.extend_from_slice(&(layers.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    let (fpp, capacity) = match (config, design) {
        (Some(c), _) => (c.fpp, c.initial_capacity),
        (None, Some(d)) => (d.fpp, d.capacity),
        (None, None) => (0.0, 0),
    };
    out.extend_from_slice(&fpp.to_le_bytes());
    out.extend_from_slice(&capacity.to_le_bytes());
    out.extend_from_slice(&config.map_or(0, |c| c.growth).to_le_bytes());
    out.extend_from_slice(&config.and_then(|c| c.max_layers).unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&config.map_or(0.0, |c| c.tightening).to_le_bytes());
    out.extend_from_slice(
        &config
            .and_then(|c| c.max_capacity)
            .unwrap_or(0)
            .to_le_bytes(),
    );
    out.extend_from_slice(&(payload_offset as u64).to_le_bytes());
    out.extend_from_slice(&(total as u64).to_le_bytes());
    out.resize(HEADER_LEN, 0);
    for l in &layers {
        out.extend_from_slice(&l.positions.to_le_bytes());
        out.extend_from_slice(&l.hashes.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&l.capacity.to_le_bytes());
        out.extend_from_slice(&l.inserted.to_le_bytes());
    }
    out.resize(payload_offset, 0);
    for l in &layers {
        for w in l.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.resize(align_up(out.len()), 0);
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    debug_assert_eq!(out.len(), total);
    Ok(out)
}

/// The parsed header and layer table of a native file, before any payload is read.
#[derive(Debug, Clone)]
pub struct Header {
    /// Kind code (1 classic, 2 counting, 3 scalable, 4 blocked).
    pub kind: u16,
    /// The spec shared by all layers, with the first layer's size (not for blocked filters,
    /// whose probing is not a [`Scheme`]).
    pub spec: Option<Spec>,
    /// The in-block layout of a blocked filter.
    pub block_layout: Option<BlockLayout>,
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

/// One entry of the layer table, with the position of its payload.
#[derive(Debug, Clone, Copy)]
pub struct LayerEntry {
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

/// Parses and checks the header and layer table; `file_len` is the whole input's length.
/// Does not read the payload or verify the checksum.
pub fn parse_header(bytes: &[u8], file_len: u64, keys: &[Hashing]) -> Result<Header> {
    let mut r = Reader::new(bytes, FORMAT);
    let magic: [u8; 8] = r.take(8, "magic")?.try_into().expect("8 bytes");
    if magic != MAGIC {
        return Err(r.corrupt("not a bloomkit filter (bad magic bytes)"));
    }
    let version = r.u16_le("version")?;
    if version != VERSION {
        return Err(Error::UnsupportedVersion {
            format: FORMAT,
            version: u64::from(version),
            supported: "1",
        });
    }
    let kind = r.u16_le("kind")?;
    if !(KIND_CLASSIC..=KIND_BLOCKED).contains(&kind) {
        return Err(r.corrupt(format!("unknown filter kind {kind}")));
    }
    let scheme_c = r.u8("scheme")?;
    let hash_c = r.u8("hashing")?;
    let key_enc = r.u8("key encoding")?;
    let counter_bits = r.u8("counter width")?;
    let fingerprint = r.u64_le("key fingerprint")?;
    let layer_count = r.u32_le("layer count")?;
    let _reserved = r.u32_le("reserved")?;
    let fpp = r.f64_le("fpp")?;
    let capacity = r.u64_le("capacity")?;
    let growth = r.u32_le("growth")?;
    let max_layers = r.u32_le("max layers")?;
    let tightening = r.f64_le("tightening")?;
    let max_capacity = r.u64_le("max capacity")?;
    let payload_offset = r.u64_le("payload offset")?;
    let total = r.u64_le("file length")?;
    r.take((HEADER_LEN - 88) as u64, "header padding")?;

    let scheme = match kind {
        KIND_BLOCKED => None,
        _ => Some(
            scheme_from_code(scheme_c)
                .ok_or_else(|| r.corrupt(format!("unknown probing scheme code {scheme_c}")))?,
        ),
    };
    if kind == KIND_BLOCKED
        && !matches!(
            scheme_c,
            SCHEME_BLOCKED_BITS | SCHEME_BLOCKED_SPLIT | SCHEME_BLOCKED_SPLIT256
        )
    {
        return Err(r.corrupt(format!("unknown blocked layout code {scheme_c}")));
    }
    if key_enc != KEY_ENCODING_V1 {
        return Err(r.corrupt(format!("unknown key encoding {key_enc}")));
    }
    let width = match (kind, counter_bits) {
        (KIND_COUNTING, 4 | 8) => u64::from(counter_bits),
        (KIND_CLASSIC | KIND_SCALABLE | KIND_BLOCKED, 0) => 1,
        _ => {
            return Err(r.corrupt(format!(
                "counter width {counter_bits} does not fit filter kind {kind}"
            )))
        }
    };
    if total != file_len {
        return Err(if total > file_len {
            Error::Truncated {
                format: FORMAT,
                what: "file",
                needed: total,
                available: file_len,
            }
        } else {
            r.corrupt(format!("header says {total} bytes, input has {file_len}"))
        });
    }
    let layers_ok = match kind {
        KIND_SCALABLE => (1..=MAX_LAYERS).contains(&layer_count),
        _ => layer_count == 1,
    };
    if !layers_ok {
        return Err(r.corrupt(format!("{layer_count} layers for filter kind {kind}")));
    }
    let hashing = hashing_from_code(hash_c, fingerprint, keys, &r)?;

    let table_end = HEADER_LEN as u64 + LAYER_ENTRY_LEN as u64 * u64::from(layer_count);
    if payload_offset != table_end.div_ceil(ALIGN as u64) * ALIGN as u64 {
        return Err(r.corrupt(format!(
            "payload offset {payload_offset} is not where the layer table ends"
        )));
    }
    let mut layers = Vec::new();
    let mut offset = payload_offset;
    for _ in 0..layer_count {
        let positions = r.u64_le("layer bits")?;
        let hashes = r.u32_le("layer hashes")?;
        let _reserved = r.u32_le("layer reserved")?;
        let cap = r.u64_le("layer capacity")?;
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
        layers.push(LayerEntry {
            params,
            capacity: cap,
            inserted,
            offset: offset as usize,
            words: words as usize,
        });
        offset = end;
    }
    if offset + 8 != file_len {
        return Err(r.corrupt("payload does not end where the checksum starts"));
    }
    let block_layout = if kind == KIND_BLOCKED {
        let first = layers[0].params;
        if first.bits % BLOCK_BITS != 0 {
            return Err(r.corrupt(format!(
                "{} bits is not a whole number of blocks",
                first.bits
            )));
        }
        let split = match scheme_c {
            SCHEME_BLOCKED_SPLIT => Some(BlockLayout::SplitBlock),
            SCHEME_BLOCKED_SPLIT256 => Some(BlockLayout::SplitBlock256),
            _ => None,
        };
        Some(match split {
            Some(layout) => {
                if first.hashes != 8 {
                    return Err(r.corrupt("a split-block filter sets 8 bits per element"));
                }
                layout
            }
            None => BlockLayout::Bits(first.hashes),
        })
    } else {
        None
    };
    let spec = match scheme {
        Some(scheme) => Some(Spec::new(layers[0].params, scheme, hashing.clone())?),
        None => None,
    };
    Ok(Header {
        kind,
        spec,
        block_layout,
        hashing,
        counter_bits,
        fpp,
        capacity,
        growth,
        max_layers,
        tightening,
        max_capacity,
        layers,
    })
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
    let header = parse_header(bytes, bytes.len() as u64, keys)?;
    let words_of = |e: &LayerEntry| -> Vec<u64> {
        bytes[e.offset..e.offset + e.words * 8]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    };
    let design = (header.capacity != 0 && header.fpp > 0.0 && header.fpp < 1.0).then_some(Design {
        capacity: header.capacity,
        fpp: header.fpp,
    });
    let corrupt = |e: Error| Error::Corrupt {
        format: FORMAT,
        reason: e.to_string(),
    };
    let spec = || header.spec.clone().expect("bit-array kinds have a spec");
    let filter = match header.kind {
        KIND_BLOCKED => {
            let e = &header.layers[0];
            let layout = header.block_layout.expect("blocked kinds have a layout");
            AnyFilter::Blocked(
                BlockedBloomFilter::from_words(&words_of(e), layout, header.hashing.clone())
                    .map_err(corrupt)?,
            )
        }
        KIND_CLASSIC => {
            let e = &header.layers[0];
            AnyFilter::Classic(BloomFilter::from_words(spec(), words_of(e)).map_err(corrupt)?)
        }
        KIND_COUNTING => {
            let e = &header.layers[0];
            let width = if header.counter_bits == 4 {
                CounterWidth::Four
            } else {
                CounterWidth::Eight
            };
            let counters =
                Counters::from_words(words_of(e), e.params.bits, width).map_err(corrupt)?;
            AnyFilter::Counting(CountingBloomFilter::from_parts(spec(), counters).map_err(corrupt)?)
        }
        _ => {
            let config = ScalableConfig {
                initial_capacity: header.capacity,
                fpp: header.fpp,
                growth: header.growth,
                tightening: header.tightening,
                max_layers: (header.max_layers != 0).then_some(header.max_layers),
                max_capacity: (header.max_capacity != 0).then_some(header.max_capacity),
                hashing: header.hashing.clone(),
            };
            let mut layers = Vec::with_capacity(header.layers.len());
            for e in &header.layers {
                let spec = Spec::new(e.params, spec().scheme(), header.hashing.clone())?;
                let filter = BloomFilter::from_words(spec, words_of(e)).map_err(corrupt)?;
                layers.push(Layer::from_parts(filter, e.capacity, e.inserted));
            }
            let f = ScalableBloomFilter::from_parts(config, layers).map_err(corrupt)?;
            return Ok(Decoded {
                filter: AnyFilter::Scalable(f),
                design: None,
            });
        }
    };
    Ok(Decoded { filter, design })
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
