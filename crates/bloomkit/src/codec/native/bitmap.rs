//! The body of a bitmap file (kind `bitmap`, code 7) and of a two-bit map file (kind
//! `two-bit-map`, code 8): the key range and one payload per plane, each a dense bit array
//! (words, mappable in place) or roaring's portable serialization. The layout is in
//! `docs/FORMAT.md`, "Bitmaps".

use super::fixed::Fixed;
use super::table::{align_up, write_payload, LayerOut, Words};
use super::{Decoded, Design, Hashed, ALIGN, FORMAT, HEADER_LEN, KEY_ENCODING_V1};
use crate::any::AnyFilter;
use crate::bitmap::{Bitmap, BitmapForm, KeyRange, Store, TwoBitMap};
use crate::codec::Reader;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::storage::BitVec;
use roaring::RoaringTreemap;
use std::io::{self, Write};

/// Bytes of the bitmap section after the fixed header: range, count, plane lengths.
const SECTION_LEN: usize = 64;
/// Where the first plane starts.
pub(crate) const PAYLOAD_OFFSET: usize = HEADER_LEN + SECTION_LEN;
/// Bytes a reader needs to place the planes (the header and the bitmap section).
#[cfg_attr(not(feature = "mmap"), allow(dead_code))]
pub(crate) const HEAD_LEN: usize = PAYLOAD_OFFSET;

/// The scheme byte of a bitmap file: its form.
const FORM_DENSE: u8 = 1;
const FORM_ROARING: u8 = 2;

/// The counter-width byte: bits per integer.
fn bits_per_integer(kind: Kind) -> u8 {
    if kind == Kind::TwoBitMap {
        2
    } else {
        1
    }
}

/// Whether a file of this kind is a bitmap file (read by this module).
pub(crate) fn is_bitmap_kind(kind: Kind) -> bool {
    matches!(kind, Kind::Bitmap | Kind::TwoBitMap)
}

/// Whether `bytes` (a whole file or its start) declares a bitmap kind.
pub(crate) fn is_bitmap_file(bytes: &[u8]) -> bool {
    bytes.len() >= 12
        && Kind::from_code(u16::from_le_bytes([bytes[10], bytes[11]])).is_some_and(is_bitmap_kind)
}

/// A bitmap kind's parts, borrowed for writing.
struct Parts<'a> {
    kind: Kind,
    range: KeyRange,
    count: u64,
    planes: Vec<&'a Store>,
}

impl<'a> Parts<'a> {
    fn of(filter: &'a AnyFilter) -> Option<Parts<'a>> {
        Some(match filter {
            AnyFilter::Bitmap(b) => Parts {
                kind: Kind::Bitmap,
                range: b.range(),
                count: b.len(),
                planes: vec![b.store()],
            },
            AnyFilter::TwoBitMap(m) => {
                let (once, more) = m.stores();
                Parts {
                    kind: Kind::TwoBitMap,
                    range: m.range(),
                    count: m.len(),
                    planes: vec![once, more],
                }
            }
            _ => return None,
        })
    }

    fn form(&self) -> BitmapForm {
        self.planes[0].form()
    }

    /// Each plane's payload length in bytes.
    fn plane_lens(&self) -> Vec<usize> {
        self.planes
            .iter()
            .map(|p| match p {
                Store::Dense { bits, .. } => bits.as_words().len() * 8,
                Store::Roaring(r) => r.serialized_size(),
            })
            .collect()
    }

    fn total(&self, lens: &[usize]) -> usize {
        PAYLOAD_OFFSET + lens.iter().map(|&l| align_up(l)).sum::<usize>() + 8
    }
}

/// The length of a bitmap kind's file, or `None` for the other kinds.
pub(super) fn encoded_len(filter: &AnyFilter) -> Option<u64> {
    let parts = Parts::of(filter)?;
    Some(parts.total(&parts.plane_lens()) as u64)
}

/// Writes a bitmap kind's file (`None` for the other kinds): header, bitmap section, planes,
/// checksum. A dense plane is written from the bitmap's own words.
pub(super) fn write_to(
    filter: &AnyFilter,
    design: Option<Design>,
    out: &mut impl Write,
) -> Option<io::Result<()>> {
    let parts = Parts::of(filter)?;
    Some(write_parts(&parts, design, out))
}

fn write_parts(parts: &Parts, design: Option<Design>, out: &mut impl Write) -> io::Result<()> {
    let lens = parts.plane_lens();
    let total = parts.total(&lens);
    let fixed = Fixed {
        version: 1,
        kind: parts.kind,
        scheme: match parts.form() {
            BitmapForm::Dense => FORM_DENSE,
            BitmapForm::Roaring => FORM_ROARING,
        },
        hashing: 0,
        key_encoding: KEY_ENCODING_V1,
        counter_bits: bits_per_integer(parts.kind),
        fingerprint: 0,
        layer_count: parts.planes.len() as u32,
        fpp: 0.0,
        capacity: design.map_or(0, |d| d.capacity),
        growth: 0,
        max_layers: 0,
        tightening: 0.0,
        max_capacity: 0,
        payload_offset: PAYLOAD_OFFSET as u64,
        file_len: total as u64,
    };
    let mut head = Vec::with_capacity(PAYLOAD_OFFSET);
    fixed.write(&mut head);
    head.extend_from_slice(&parts.range.start().to_le_bytes());
    head.extend_from_slice(&parts.range.end().to_le_bytes());
    head.extend_from_slice(&parts.count.to_le_bytes());
    for i in 0..2 {
        let len = lens.get(i).copied().unwrap_or(0) as u64;
        head.extend_from_slice(&len.to_le_bytes());
    }
    head.resize(PAYLOAD_OFFSET, 0);
    let mut hashed = Hashed {
        out,
        hasher: xxhash_rust::xxh3::Xxh3::new(),
    };
    hashed.write_all(&head)?;
    for (plane, &len) in parts.planes.iter().zip(&lens) {
        match plane {
            Store::Dense { bits, .. } => {
                let layer = LayerOut {
                    positions: bits.len(),
                    hashes: 0,
                    capacity: 0,
                    inserted: 0,
                    words: Words::Flat(bits.as_words()),
                };
                write_payload(&mut hashed, &[layer])?;
            }
            Store::Roaring(r) => {
                r.serialize_into(&mut hashed)?;
                hashed.write_all(&[0u8; ALIGN][..align_up(len) - len])?;
            }
        }
    }
    let sum = hashed.hasher.digest();
    hashed.out.write_all(&sum.to_le_bytes())
}

/// The parsed header and bitmap section of a bitmap file.
#[derive(Debug, Clone)]
pub(crate) struct BitmapHeader {
    /// `bitmap` or `two-bit-map`.
    pub kind: Kind,
    /// Dense or roaring.
    pub form: BitmapForm,
    /// The integers it can hold.
    pub range: KeyRange,
    /// Design capacity (0 if unknown).
    pub capacity: u64,
    /// Integers present (distinct integers seen, for a two-bit map).
    pub count: u64,
    /// Per plane: byte offset and byte length of its payload.
    pub planes: Vec<(usize, usize)>,
}

/// Checks the fixed header fields of a bitmap file of `file_len` bytes; returns its form and
/// number of planes.
fn check_fixed(fixed: &Fixed, file_len: u64, r: &Reader) -> Result<(BitmapForm, u32)> {
    let kind = fixed.kind;
    if !is_bitmap_kind(kind) {
        return Err(r.corrupt(format!("a {kind} file is not a bitmap")));
    }
    let form = match fixed.scheme {
        FORM_DENSE => BitmapForm::Dense,
        FORM_ROARING => BitmapForm::Roaring,
        other => return Err(super::newer(format!("unknown bitmap form code {other}"))),
    };
    let planes = if kind == Kind::TwoBitMap { 2 } else { 1 };
    if fixed.counter_bits != bits_per_integer(kind)
        || fixed.layer_count != planes
        || fixed.hashing != 0
    {
        return Err(r.corrupt(format!(
            "a {kind} file has {} bits per integer in {} planes and no hash function",
            bits_per_integer(kind),
            planes
        )));
    }
    super::check_file_len(fixed, file_len, r)?;
    if fixed.payload_offset != PAYLOAD_OFFSET as u64 {
        return Err(r.corrupt(format!(
            "a {kind} file's payload starts at {PAYLOAD_OFFSET}, not {}",
            fixed.payload_offset
        )));
    }
    Ok((form, planes))
}

/// Parses and checks the header and bitmap section (`bytes` holds at least the first
/// [`HEAD_LEN`] bytes of a file of `file_len` bytes); places the planes, checking that they
/// end exactly at the checksum. Does not read the planes or verify the checksum.
pub(crate) fn parse_header(bytes: &[u8], file_len: u64) -> Result<BitmapHeader> {
    let mut r = Reader::new(bytes, FORMAT);
    let fixed = Fixed::read(&mut r)?;
    let (form, planes) = check_fixed(&fixed, file_len, &r)?;
    let start = i128::from_le_bytes(r.take(16, "range start")?.try_into().expect("16"));
    let end = i128::from_le_bytes(r.take(16, "range end")?.try_into().expect("16"));
    let range = KeyRange::new(start, end).map_err(|e| r.corrupt(e.to_string()))?;
    let count = r.u64_le("integer count")?;
    let lens = [r.u64_le("plane length")?, r.u64_le("plane length")?];
    let dense_len = BitmapForm::dense_bytes(range);
    let mut offset = PAYLOAD_OFFSET as u64;
    let mut placed = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        if i as u32 >= planes {
            if len != 0 {
                return Err(r.corrupt("a length is given for a plane the kind does not have"));
            }
            continue;
        }
        if form == BitmapForm::Dense && Some(len) != dense_len {
            return Err(r.corrupt(format!(
                "a dense plane of range {range} has {} bytes, not {len}",
                dense_len.map_or_else(|| "no".to_string(), |d| d.to_string())
            )));
        }
        let end = len
            .checked_add(ALIGN as u64 - 1)
            .map(|l| l / ALIGN as u64 * ALIGN as u64)
            .and_then(|l| l.checked_add(offset))
            .filter(|&e| e <= file_len.saturating_sub(8))
            .ok_or(Error::Truncated {
                format: FORMAT,
                what: "bitmap plane",
                needed: offset.saturating_add(len).saturating_add(8),
                available: file_len,
            })?;
        placed.push((offset as usize, len as usize));
        offset = end;
    }
    if offset + 8 != file_len {
        return Err(r.corrupt("the planes do not end where the checksum starts"));
    }
    let width = u128::from(planes) * range.width();
    if u128::from(count) > width {
        return Err(r.corrupt(format!("{count} integers in a range of {}", range.width())));
    }
    Ok(BitmapHeader {
        kind: fixed.kind,
        form,
        range,
        capacity: fixed.capacity,
        count,
        planes: placed,
    })
}

/// Decodes one plane's payload.
fn decode_plane(header: &BitmapHeader, payload: &[u8]) -> Result<Store> {
    let corrupt = |reason: String| Error::Corrupt {
        format: FORMAT,
        reason,
    };
    let width = header.range.width();
    match header.form {
        BitmapForm::Dense => {
            let words = Reader::new(payload, FORMAT).words(
                payload.len() as u64 / 8,
                false,
                "bitmap plane",
            )?;
            let bits =
                BitVec::from_words(words, width as u64).map_err(|e| corrupt(e.to_string()))?;
            Ok(Store::from_bits(bits))
        }
        BitmapForm::Roaring => {
            let mut rest = payload;
            let r = RoaringTreemap::deserialize_from(&mut rest)
                .map_err(|e| corrupt(format!("roaring plane: {e}")))?;
            if !rest.is_empty() {
                return Err(corrupt(format!(
                    "{} bytes after the roaring plane",
                    rest.len()
                )));
            }
            if r.max().is_some_and(|m| u128::from(m) >= width) {
                return Err(corrupt(format!(
                    "the roaring plane holds integers past the range {}",
                    header.range
                )));
            }
            Ok(Store::Roaring(r))
        }
    }
}

/// Decodes a bitmap file whose checksum was verified.
pub(super) fn decode(bytes: &[u8]) -> Result<Decoded> {
    let header = parse_header(bytes, bytes.len() as u64)?;
    let mut planes = header
        .planes
        .iter()
        .map(|&(at, len)| decode_plane(&header, &bytes[at..at + len]))
        .collect::<Result<Vec<Store>>>()?;
    let count: u64 = planes.iter().map(Store::len).sum();
    let corrupt = |reason: String| Error::Corrupt {
        format: FORMAT,
        reason,
    };
    if count != header.count {
        return Err(corrupt(format!(
            "the header counts {} integers, the planes hold {count}",
            header.count
        )));
    }
    let filter = if header.kind == Kind::TwoBitMap {
        let more = planes.pop().expect("two planes");
        let once = planes.pop().expect("two planes");
        if !once.is_disjoint(&more) {
            return Err(corrupt(
                "an integer is marked both 'once' and 'more than once'".into(),
            ));
        }
        AnyFilter::TwoBitMap(TwoBitMap::from_stores(header.range, once, more))
    } else {
        let store = planes.pop().expect("one plane");
        AnyFilter::Bitmap(Bitmap::from_store(header.range, store))
    };
    let design = (header.capacity != 0).then_some(Design {
        capacity: header.capacity,
        fpp: 0.0,
    });
    Ok(Decoded { filter, design })
}

#[cfg(test)]
mod tests {
    use super::super::{from_bytes, to_bytes};
    use super::*;

    fn samples() -> Vec<AnyFilter> {
        let mut out = Vec::new();
        for form in [BitmapForm::Dense, BitmapForm::Roaring] {
            let mut b = Bitmap::with_form(KeyRange::new(-100, 100_000).unwrap(), form).unwrap();
            b.insert_batch(&[-100i32, 0, 5, 99_999, 4096]).unwrap();
            out.push(b.into());
            let mut m = TwoBitMap::with_form(KeyRange::new(0, 70_000).unwrap(), form).unwrap();
            m.insert_batch(&[1u32, 2, 2, 69_999]).unwrap();
            out.push(m.into());
        }
        out
    }

    #[test]
    fn bitmap_files_round_trip_with_their_design() {
        for f in samples() {
            let design = Some(Design {
                capacity: 77,
                fpp: 0.0,
            });
            let bytes = to_bytes(&f, design).unwrap();
            assert_eq!(bytes.len() % 8, 0);
            assert_eq!(bytes.len() as u64, super::super::encoded_len(&f, design));
            let back = from_bytes(&bytes, &[]).unwrap();
            assert_eq!(back.filter, f);
            assert_eq!(back.design.unwrap().capacity, 77);
        }
    }

    /// A change to a file's bytes.
    type Change = Box<dyn Fn(&mut [u8])>;

    /// Re-seals `bytes` (fixes the checksum) after a change, so the structural checks run.
    fn resealed(mut bytes: Vec<u8>, change: impl FnOnce(&mut [u8])) -> Vec<u8> {
        change(&mut bytes);
        let body = bytes.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
        bytes
    }

    #[test]
    fn damaged_bitmap_files_give_typed_errors() {
        for f in samples() {
            let bytes = to_bytes(&f, None).unwrap();
            let mut flipped = bytes.clone();
            flipped[PAYLOAD_OFFSET] ^= 1;
            assert!(matches!(
                from_bytes(&flipped, &[]),
                Err(Error::Checksum { .. })
            ));
            let cases: Vec<(&str, Change)> = vec![
                ("count", Box::new(|b| b[160] ^= 1)),
                ("range", Box::new(|b| b[144..160].fill(0))),
                ("plane length", Box::new(|b| b[168] ^= 8)),
                ("second plane", Box::new(|b| b[176..184].fill(0xff))),
                (
                    "payload",
                    Box::new(|b| b[PAYLOAD_OFFSET..PAYLOAD_OFFSET + 64].fill(0xff)),
                ),
            ];
            for (what, change) in cases {
                let bad = resealed(bytes.clone(), change);
                match from_bytes(&bad, &[]) {
                    Err(Error::Corrupt { .. } | Error::Truncated { .. }) => {}
                    other => panic!("{what} of {f:?}: {other:?}"),
                }
            }
            // An unknown form is a newer version's.
            let form = resealed(bytes.clone(), |b| b[12] = 9);
            assert!(matches!(
                from_bytes(&form, &[]),
                Err(Error::NewerVersion { .. })
            ));
            for cut in [0, 10, 100, HEAD_LEN, bytes.len() - 1] {
                assert!(from_bytes(&bytes[..cut], &[]).is_err());
            }
        }
    }
}
