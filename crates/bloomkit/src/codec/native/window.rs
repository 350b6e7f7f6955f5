//! The bodies of the two expiring kinds in the native format: `count-window` (kind 5) and
//! `time-window` (kind 6). docs/FORMAT.md, "Count-window filters" and "Time-window filters",
//! specifies them; the header and layer table are the common ones.
//!
//! | field | count-window, one bit array per slice | count-window, blocked (version 2) | time-window |
//! |---|---|---|---|
//! | scheme byte | 1 (enhanced double hashing; the `j`-th probe goes to slice `j`) | 11 (split lanes, new filters) or 9 (positions over the lane, the first blocked layout) | the generations' block layout (6, 7, 8 as for blocked filters) |
//! | capacity, fpp | the window `N` (insertions) and the target FPR | the same | insertions per window and the target FPR |
//! | growth (u32) | `k` | `k` (1) | `G`, generations per window |
//! | max layers (u32) | `l` | `l` (3) | 0 |
//! | max capacity (u64) | `g`, insertions per generation | the same | the window in milliseconds |
//! | tightening (f64) | 0 | 0 | 0 |
//! | layer table | `k + l` slices in physical order: bits = slice bits, hashes = 1, capacity = 0, inserted = insertions ever (equal in every entry) | one entry, the blocks (4 lanes each; scheme 11: interleaved by word, scheme 9: one after another): bits = all bits, hashes = bits per element in its lane (scheme 11: 8, one per sub-lane), capacity = lane bits (128, 256, 512), inserted = insertions ever | `G + 1` ring slots: bits and hashes of the generation's blocked filter, capacity = its capacity, inserted = its generation number plus one (0: unused) |

use super::block_layout_code;
use super::{corrupt, newer, scheme_code, words_of, Extra, Header, LayerOut, Parts, Words, FORMAT};
use crate::any::AnyFilter;
use crate::blocked::BlockedBloomFilter;
use crate::codec::Reader;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::probe::Scheme;
use crate::storage::BitVec;
use crate::window::count::MAX_SLICES;
use crate::window::sizing::LANES;
use crate::window::time::MAX_GENERATIONS;
use crate::window::{
    AgePartitioned, BlockedAgePartitioned, CountWindowFilter, TimeWindowFilter, WindowLayout,
};

/// The scheme byte of a count window in the first blocked layout, positions over the lane
/// (format version 2; read and written back, no longer built).
const SCHEME_BLOCKED_AGE_PARTITIONED: u8 = 9;
/// The scheme byte of a count window in split lanes (format version 2; new filters).
const SCHEME_SPLIT_LANES: u8 = 11;

/// Whether a scheme byte is one of a blocked count window.
fn blocked_count(scheme: u8) -> bool {
    matches!(scheme, SCHEME_BLOCKED_AGE_PARTITIONED | SCHEME_SPLIT_LANES)
}

/// The format version a file needs: 2 for a count window in a blocked layout (a version-1
/// reader would not know schemes 9 and 11), else 1.
pub(super) fn version_of(kind: Kind, scheme: u8) -> u16 {
    if kind == Kind::CountWindow && blocked_count(scheme) {
        2
    } else {
        1
    }
}

/// The probing scheme of a count window's scheme byte: enhanced double hashing (one bit array
/// per slice), or `None` for a blocked layout (version 2 files only). Any other code is a
/// newer version's.
pub(super) fn count_scheme(version: u16, code: u8, r: &Reader) -> Result<Option<Scheme>> {
    match code {
        _ if blocked_count(code) && version >= 2 => Ok(None),
        _ if blocked_count(code) => Err(r.corrupt(format!(
            "a count window in a blocked layout (scheme {code}) in a version-1 file"
        ))),
        _ if code == scheme_code(Scheme::EnhancedDouble) => Ok(Some(Scheme::EnhancedDouble)),
        _ => Err(newer(format!("unknown count-window layout code {code}"))),
    }
}

/// The layer counts each expiring kind may have (a count window: one in the blocked layout,
/// `k + l` otherwise, which `decode_count` checks).
pub(super) fn layers_ok(kind: Kind, count: u32) -> bool {
    match kind {
        Kind::CountWindow => (1..=MAX_SLICES).contains(&count),
        _ => (2..=MAX_GENERATIONS + 1).contains(&count),
    }
}

/// What a count-window filter writes.
pub(super) fn count_parts(f: &CountWindowFilter) -> Parts<'_> {
    let shape = f.shape();
    let (scheme, layers) = match (f.layout(), f.slices(), f.lines()) {
        (WindowLayout::Blocked(b) | WindowLayout::BlockedFields(b), _, Some(lines)) => {
            let layer = LayerOut {
                positions: shape.bits(),
                hashes: b.bits_per_element,
                capacity: u64::from(b.lane_bits),
                inserted: f.inserted(),
                words: Words::Blocks(lines),
            };
            let scheme = match f.layout() {
                WindowLayout::BlockedFields(_) => SCHEME_BLOCKED_AGE_PARTITIONED,
                _ => SCHEME_SPLIT_LANES,
            };
            (scheme, vec![layer])
        }
        (_, slices, _) => {
            let layers = slices
                .unwrap_or_default()
                .iter()
                .map(|s| LayerOut {
                    positions: s.len(),
                    hashes: 1,
                    capacity: 0,
                    inserted: f.inserted(),
                    words: Words::Flat(s.as_words()),
                })
                .collect();
            (scheme_code(Scheme::EnhancedDouble), layers)
        }
    };
    let extra = Extra {
        capacity: f.window(),
        fpp: f.fpp(),
        growth: shape.k,
        max_layers: shape.l,
        max_capacity: shape.generation,
    };
    window_parts(Kind::CountWindow, scheme, f.hashing(), layers, extra)
}

/// The parts of an expiring filter: bit layers and the header fields it fills itself.
fn window_parts<'a>(
    kind: Kind,
    scheme: u8,
    hashing: &'a crate::hash::Hashing,
    layers: Vec<LayerOut<'a>>,
    extra: Extra,
) -> Parts<'a> {
    Parts {
        kind,
        scheme,
        hashing,
        counter_bits: 0,
        layers,
        config: None,
        extra: Some(extra),
    }
}

/// What a time-window filter writes.
pub(super) fn time_parts(f: &TimeWindowFilter) -> Parts<'_> {
    let (slots, epochs) = f.slots();
    let spec = f.generation_spec();
    let scheme = block_layout_code(spec.layout());
    let capacity = f.capacity().div_ceil(u64::from(f.generations()));
    let layers = slots
        .iter()
        .zip(epochs)
        .map(|(s, &e)| LayerOut {
            positions: s.bits(),
            hashes: spec.hashes(),
            capacity,
            inserted: e,
            words: Words::Blocks(s.as_blocks()),
        })
        .collect();
    let extra = Extra {
        capacity: f.capacity(),
        fpp: f.fpp(),
        growth: f.generations(),
        max_layers: 0,
        max_capacity: u64::try_from(f.window().as_millis()).unwrap_or(u64::MAX),
    };
    window_parts(Kind::TimeWindow, scheme, f.hashing(), layers, extra)
}

fn bad(reason: String) -> Error {
    Error::Corrupt {
        format: FORMAT,
        reason,
    }
}

/// Decodes an expiring filter whose header `parse_header` checked.
pub(super) fn decode(header: &Header, bytes: &[u8]) -> Result<AnyFilter> {
    Ok(match header.kind {
        Kind::CountWindow => AnyFilter::CountWindow(decode_count(header, bytes)?),
        _ => AnyFilter::TimeWindow(decode_time(header, bytes)?),
    })
}

fn decode_count(header: &Header, bytes: &[u8]) -> Result<CountWindowFilter> {
    if blocked_count(header.scheme) {
        return decode_blocked_count(header, bytes);
    }
    let (k, l, generation) = (header.growth, header.max_layers, header.max_capacity);
    let first = header.layers[0];
    if u64::from(k) + u64::from(l) != header.layers.len() as u64 {
        return Err(bad(format!(
            "a count window with k = {k} and l = {l} has {} slices, not {}",
            u64::from(k) + u64::from(l),
            header.layers.len()
        )));
    }
    let inserted = first.inserted;
    let mut slices = Vec::with_capacity(header.layers.len());
    for e in &header.layers {
        if e.params.bits != first.params.bits || e.params.hashes != 1 || e.inserted != inserted {
            return Err(bad(
                "the slices of a count window differ in size or insertion count".into(),
            ));
        }
        slices.push(BitVec::from_words(words_of(bytes, e), e.params.bits).map_err(corrupt)?);
    }
    let shape = AgePartitioned {
        k,
        l,
        generation,
        slice_bits: first.params.bits,
    };
    let design = (header.capacity, header.fpp);
    CountWindowFilter::from_parts(shape, design, header.hashing.clone(), slices, inserted)
        .map_err(corrupt)
}

/// Decodes a count window in a blocked layout (scheme 11 or 9): one layer entry for all the
/// blocks.
fn decode_blocked_count(header: &Header, bytes: &[u8]) -> Result<CountWindowFilter> {
    let (k, l) = (header.growth, header.max_layers);
    let e = &header.layers[0];
    if header.layers.len() != 1 || (k, l) != (1, LANES - 1) {
        return Err(bad(format!(
            "a blocked count window has k = 1, l = 3 and one layer entry (got k = {k}, l = {l}, {} entries)",
            header.layers.len()
        )));
    }
    let lane_bits = u32::try_from(e.capacity).unwrap_or(0);
    let block_bits = u64::from(lane_bits) * u64::from(LANES);
    if block_bits == 0 || !e.params.bits.is_multiple_of(block_bits) {
        return Err(bad(format!(
            "{} bits is not a whole number of blocks of 4 lanes of {lane_bits} bits",
            e.params.bits
        )));
    }
    let shape = BlockedAgePartitioned {
        generation: header.max_capacity,
        blocks: e.params.bits / block_bits,
        lane_bits,
        bits_per_element: e.params.hashes,
    };
    let design = (header.capacity, header.fpp);
    let words = words_of(bytes, e);
    let split = header.scheme == SCHEME_SPLIT_LANES;
    let hashing = header.hashing.clone();
    CountWindowFilter::from_blocked_parts(shape, split, design, hashing, (&words, e.inserted))
        .map_err(corrupt)
}

fn decode_time(header: &Header, bytes: &[u8]) -> Result<TimeWindowFilter> {
    let spec = header
        .block_spec
        .as_ref()
        .expect("time windows have a block spec");
    let mut slots = Vec::with_capacity(header.layers.len());
    let mut epochs = Vec::with_capacity(header.layers.len());
    for e in &header.layers {
        if e.params != header.layers[0].params {
            return Err(bad("the generations of a time window differ in size".into()));
        }
        let f = BlockedBloomFilter::from_words(
            &words_of(bytes, e),
            spec.layout(),
            spec.hashing().clone(),
        );
        slots.push(f.map_err(corrupt)?);
        epochs.push(e.inserted);
    }
    TimeWindowFilter::from_parts(
        header.max_capacity,
        header.growth,
        header.capacity,
        header.fpp,
        slots,
        epochs,
    )
    .map_err(corrupt)
}
