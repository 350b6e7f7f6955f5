//! How a batch check reads its fields (an element's bits or counters) from one key: one
//! `BITFIELD_RO` subcommand per field, or one `GETRANGE` of the bytes that hold many fields.
//!
//! A field costs the server three arguments to parse and the client a number to parse, about
//! as much as copying [`FIELD_COST_BYTES`] bytes; a byte range costs a command and its bytes.
//! When a batch's fields lie close together, as in a small filter checked with a large batch
//! (in a 366 KB segment a batch of 1,000 elements has a field every few hundred bytes),
//! reading the bytes between them is the cheaper plan; in a large filter the fields lie far
//! apart and are read one by one. [`plan`] chooses per run of close fields; it sorts the fields
//! by offset, about 20 ns per field in a batch of 1,000 (under a tenth of a field read's cost
//! to the client). The answers are the same either way: each command reads the key at one
//! moment, and a key shorter than a range reads as zeros past its end, as `BITFIELD_RO` reads
//! it.

use crate::conn::Connection;
use crate::error::Result;
use crate::segments::{parse, push_decimal, unexpected, MAX_PER_COMMAND};
use redis::Value;

/// `width` bits (1 to 64) at bit `offset` of a key, in Redis bit order (bit 0 is the most
/// significant bit of byte 0); its value has the field's last bit as bit 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The first bit.
    pub offset: u64,
    /// Bits in the field, `1..=64`.
    pub width: u32,
}

impl Field {
    fn first_byte(self) -> u64 {
        self.offset / 8
    }

    fn last_byte(self) -> u64 {
        (self.offset + u64::from(self.width) - 1) / 8
    }
}

/// What reading one field costs, in bytes of a range read. Measured with a local redis-server
/// 7.0 and batches of 1,000 register-filter checks (2026-11-28, 2-core Intel Xeon): a
/// whole-segment range read was 1.8× as fast as field reads at 549 bytes per field, 1.5× at
/// 823 and 0.85× at 1,098, so a field costs about 1,000 bytes there; the figure is kept lower
/// so that ranges are chosen only where they clearly win.
pub const FIELD_COST_BYTES: u64 = 768;

/// What one more command costs, in bytes of a range read: runs of fields farther apart than
/// this are read by separate commands (or as fields).
pub const COMMAND_COST_BYTES: u64 = 4096;

/// The most bytes one range reads: a larger run of close fields is read in several ranges, so
/// that no single reply makes the server copy (and buffer) more than this at once.
pub const MAX_RANGE_BYTES: u64 = 1 << 20;

/// One read command of a check; its fields are indices into the caller's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// `BITFIELD_RO key GET …`: one subcommand per field (at most [`MAX_PER_COMMAND`]).
    Fields(Vec<usize>),
    /// `GETRANGE key first last`: the bytes `first..=last`, which hold these fields.
    Range {
        /// The first byte read.
        first: u64,
        /// The last byte read.
        last: u64,
        /// The fields in the range.
        idx: Vec<usize>,
    },
}

/// The reads of `fields` (all of one key) at the least cost by the model above: runs of fields
/// at most [`COMMAND_COST_BYTES`] apart become one range where that costs less than a field
/// each; every other field is read as a field, in the given order.
pub fn plan(fields: &[Field]) -> Vec<Read> {
    // (offset, index) pairs, sorted without reaching into `fields` for every comparison; the
    // fields read one by one are then taken in index order from `in_range`, without a second
    // sort (33 → 20 ns per field for 1,000 fields spread over 9 MB).
    let mut sorted: Vec<(u64, usize)> = fields.iter().map(|f| f.offset).zip(0..).collect();
    sorted.sort_unstable_by_key(|&(offset, _)| offset);
    let mut reads = Vec::new();
    let mut in_range = vec![false; fields.len()];
    let mut rest = &sorted[..];
    while let Some(&(_, head)) = rest.first() {
        // The run: each field within COMMAND_COST_BYTES of the end of those before it.
        let (first, mut last) = (fields[head].first_byte(), fields[head].last_byte());
        let mut end = 1;
        while let Some(&(_, next)) = rest.get(end) {
            let f = fields[next];
            if f.first_byte() > last + COMMAND_COST_BYTES
                || f.last_byte() >= first + MAX_RANGE_BYTES
            {
                break;
            }
            last = last.max(f.last_byte());
            end += 1;
        }
        let (run, after) = rest.split_at(end);
        if COMMAND_COST_BYTES + (last - first + 1) < run.len() as u64 * FIELD_COST_BYTES {
            let idx: Vec<usize> = run.iter().map(|&(_, i)| i).collect();
            for &i in &idx {
                in_range[i] = true;
            }
            reads.push(Read::Range { first, last, idx });
        }
        rest = after;
    }
    // The other fields one by one, in the caller's order.
    let mut one_by_one = (0..fields.len()).filter(|&i| !in_range[i]).peekable();
    while one_by_one.peek().is_some() {
        reads.push(Read::Fields(
            one_by_one.by_ref().take(MAX_PER_COMMAND).collect(),
        ));
    }
    reads
}

/// Reads `fields` of `key` in one pipeline by the [`plan`], followed by `then` on the same
/// connection (a guard whose reply the caller checks, such as `EXISTS` of the key); calls
/// `each(i, value)` for every field `i` and returns `then`'s reply.
pub(crate) async fn read_then(
    conn: &Connection,
    key: &str,
    fields: &[Field],
    then: Option<redis::Cmd>,
    mut each: impl FnMut(usize, u64),
) -> Result<Option<Value>> {
    let reads = plan(fields);
    let mut pipe = redis::pipe();
    for r in &reads {
        pipe.add_command(r.command(key, fields));
    }
    let guarded = then.is_some();
    if let Some(cmd) = then {
        pipe.add_command(cmd);
    }
    let mut replies: Vec<Value> = conn.pipe(&pipe).await?;
    if replies.len() != reads.len() + usize::from(guarded) {
        return Err(unexpected("pipeline reply length"));
    }
    let last = if guarded { replies.pop() } else { None };
    for (r, v) in reads.iter().zip(replies) {
        r.decode(v, fields, &mut each)?;
    }
    Ok(last)
}

impl Read {
    /// The command on key `key`.
    pub fn command(&self, key: &str, fields: &[Field]) -> redis::Cmd {
        match self {
            Read::Fields(idx) => field_command(key, idx.iter().map(|&i| fields[i]), idx.len()),
            Read::Range { first, last, .. } => {
                let mut cmd = redis::cmd("GETRANGE");
                cmd.arg(key).arg(*first).arg(*last);
                cmd
            }
        }
    }

    /// Decodes the command's reply: calls `each(i, value)` for each of its fields `i`.
    pub fn decode(
        &self,
        reply: Value,
        fields: &[Field],
        mut each: impl FnMut(usize, u64),
    ) -> Result<()> {
        match self {
            Read::Fields(idx) => {
                let values: Vec<i64> = parse(reply)?;
                if values.len() != idx.len() {
                    return Err(unexpected("BITFIELD_RO reply length"));
                }
                for (&i, v) in idx.iter().zip(values) {
                    each(i, v as u64);
                }
            }
            Read::Range { first, last, idx } => {
                let bytes: Vec<u8> = parse(reply)?;
                if bytes.len() as u64 > last - first + 1 {
                    return Err(unexpected("GETRANGE reply length"));
                }
                for &i in idx {
                    each(i, value_in(&bytes, *first, fields[i]));
                }
            }
        }
        Ok(())
    }
}

/// The value of `field` in `bytes`, which start at byte `first` of the key; bytes past their
/// end read as zeros.
fn value_in(bytes: &[u8], first: u64, field: Field) -> u64 {
    // A field of up to 64 bits spans at most 9 bytes: take 16 from its first byte.
    let at = (field.first_byte() - first) as usize;
    let mut window = [0u8; 16];
    if let Some(have) = bytes.get(at..) {
        let n = have.len().min(16);
        window[..n].copy_from_slice(&have[..n]);
    }
    let skip = (field.offset % 8) as u32; // bits of the first byte before the field
    let x = u128::from_be_bytes(window) << skip;
    (x >> (128 - field.width)) as u64
}

/// The `BITFIELD_RO` command that reads `len` fields: `GET u<width> <offset>`, or
/// `GET i64 <offset>` for a whole 64-bit field (Redis has no `u64`; the value's bits are the
/// same).
pub fn field_command(key: &str, fields: impl IntoIterator<Item = Field>, len: usize) -> redis::Cmd {
    // Sized up front: about 3 + 3 + 10 bytes of arguments per field.
    let mut cmd = redis::Cmd::with_capacity(2 + 3 * len, 16 + key.len() + 18 * len);
    cmd.arg("BITFIELD_RO").arg(key);
    let mut num = Vec::with_capacity(20);
    for Field { offset, width } in fields {
        let mut ty = [b'i', b'6', b'4'];
        let ty: &[u8] = match width {
            64 => &ty,
            10.. => {
                ty = [b'u', b'0' + (width / 10) as u8, b'0' + (width % 10) as u8];
                &ty
            }
            _ => {
                ty[..2].copy_from_slice(&[b'u', b'0' + width as u8]);
                &ty[..2]
            }
        };
        num.clear();
        push_decimal(&mut num, offset);
        cmd.arg("GET").arg(ty).arg(&num[..]);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(offset: u64, width: u32) -> Field {
        Field { offset, width }
    }

    fn kinds(reads: &[Read]) -> Vec<(char, Vec<usize>)> {
        reads
            .iter()
            .map(|r| match r {
                Read::Fields(idx) => ('f', idx.clone()),
                Read::Range { idx, .. } => ('r', idx.clone()),
            })
            .collect()
    }

    #[test]
    fn far_apart_fields_are_fields_and_dense_runs_are_ranges() {
        // Fields 1 MB apart: fields, in the caller's order.
        let far: Vec<Field> = (0..10).rev().map(|i| field(i << 23, 3)).collect();
        let idx: Vec<usize> = (0..10).collect();
        assert_eq!(kinds(&plan(&far)), [('f', idx)]);
        // 64 fields in 2 KB: one range over their bytes.
        let dense: Vec<Field> = (0..64).map(|i| field(i * 256 + 5, 10)).collect();
        let idx: Vec<usize> = (0..64).collect();
        assert_eq!(
            plan(&dense),
            [Read::Range {
                first: 0,
                last: (63 * 256 + 5 + 9) / 8,
                idx
            }]
        );
        // A dense run and a far field: a range and a field.
        let mut both = dense.clone();
        both.push(field(80_000_000, 1));
        assert_eq!(
            kinds(&plan(&both)),
            [('r', (0..64).collect()), ('f', vec![64])]
        );
        // Far fields on both sides of a dense run, and out of offset order: the range, then
        // the far fields in the caller's order.
        let mut mixed = vec![field(90_000_000, 3)];
        mixed.extend(dense.iter().map(|f| field(f.offset + 40_000_000, f.width)));
        mixed.extend([field(10_000_000, 3), field(70_000_000, 3)]);
        assert_eq!(
            kinds(&plan(&mixed)),
            [('r', (1..65).collect()), ('f', vec![0, 65, 66])]
        );
    }

    #[test]
    fn long_runs_are_read_in_ranges_of_at_most_a_mebibyte() {
        // A field every 100 bytes over 3.5 MiB: one run, read in four ranges.
        let dense: Vec<Field> = (0..36_700).map(|i| field(i * 800, 8)).collect();
        let reads = plan(&dense);
        let mut covered = 0;
        for r in &reads {
            let Read::Range { first, last, idx } = r else {
                panic!("dense fields read one by one")
            };
            assert!(last - first < MAX_RANGE_BYTES, "{first}..={last}");
            for &i in idx {
                assert!(dense[i].first_byte() >= *first && dense[i].last_byte() <= *last);
            }
            covered += idx.len();
        }
        assert_eq!(reads.len(), 4);
        assert_eq!(covered, dense.len());
    }

    #[test]
    fn fields_are_split_into_commands() {
        let far: Vec<Field> = (0..600).map(|i| field(i * 800_000, 4)).collect();
        let sizes: Vec<usize> = plan(&far)
            .iter()
            .map(|r| match r {
                Read::Fields(i) => i.len(),
                Read::Range { .. } => unreachable!("far apart"),
            })
            .collect();
        assert_eq!(
            sizes,
            [MAX_PER_COMMAND, MAX_PER_COMMAND, 600 - 2 * MAX_PER_COMMAND]
        );
    }

    #[test]
    fn values_are_read_in_redis_bit_order_from_any_offset() {
        // Bytes of a key from byte 10 on; every field's value against a bit-by-bit reading.
        let bytes: Vec<u8> = (0..40u32).map(|i| (i * 37 + 11) as u8).collect();
        let bit = |o: u64| {
            let b = bytes.get((o / 8 - 10) as usize).copied().unwrap_or(0);
            u64::from(b >> (7 - o % 8) & 1)
        };
        for offset in 80..80 + 8 * 40 {
            for width in [1, 3, 4, 8, 13, 32, 63, 64] {
                let want = (0..u64::from(width)).fold(0, |v, j| v << 1 | bit(offset + j));
                let got = value_in(&bytes, 10, field(offset, width));
                assert_eq!(got, want, "offset {offset} width {width}");
            }
        }
    }

    #[test]
    fn a_short_reply_reads_as_zeros_past_its_end_and_a_long_one_is_refused() {
        let fields = [field(7, 1), field(64, 8), field(128, 64)];
        let read = Read::Range {
            first: 0,
            last: 23,
            idx: vec![0, 1, 2],
        };
        // 9 bytes: bit 7 set, byte 8 = 0xff, then nothing.
        let mut bytes = vec![0u8; 9];
        bytes[0] = 1;
        bytes[8] = 0xff;
        let mut got = [u64::MAX; 3];
        read.decode(Value::BulkString(bytes), &fields, |i, v| got[i] = v)
            .unwrap();
        assert_eq!(got, [1, 0xff, 0]);
        let long = Value::BulkString(vec![0; 25]);
        assert!(read.decode(long, &fields, |_, _| {}).is_err());
    }

    proptest::proptest! {
        /// Any fields, clustered or spread: the plan reads each field exactly once, every
        /// range holds the bytes of its fields and stays within the limits, and decoding a
        /// range reply gives each field's bits as a bit-by-bit reading of the key does.
        #[test]
        fn plans_cover_every_field_once_and_ranges_decode_as_bits(
            clusters in proptest::collection::vec((0u64..1 << 26, 1usize..40), 1..12),
            spread in 1u64..20_000,
            widths in proptest::collection::vec(1u32..=64, 1..8),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let mut x = seed | 1;
            let mut next = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let fields: Vec<Field> = clusters
                .iter()
                .flat_map(|&(at, n)| (0..n).map(move |j| (at, j)))
                .map(|(at, _)| field(at + next() % spread, widths[(next() % widths.len() as u64) as usize]))
                .collect();
            let reads = plan(&fields);
            let mut seen = vec![0u32; fields.len()];
            // A key of bytes from a hash of the position, read bit by bit for the truth.
            let byte_at = |b: u64| (b.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8;
            let bit = |o: u64| u64::from(byte_at(o / 8) >> (7 - o % 8) & 1);
            for r in &reads {
                match r {
                    Read::Fields(idx) => {
                        proptest::prop_assert!(idx.len() <= MAX_PER_COMMAND);
                        for &i in idx {
                            seen[i] += 1;
                        }
                    }
                    Read::Range { first, last, idx } => {
                        proptest::prop_assert!(last - first < MAX_RANGE_BYTES);
                        let bytes: Vec<u8> = (*first..=*last).map(byte_at).collect();
                        let mut got = Vec::new();
                        r.decode(Value::BulkString(bytes), &fields, |i, v| got.push((i, v)))
                            .unwrap();
                        proptest::prop_assert_eq!(got.len(), idx.len());
                        for (i, v) in got {
                            let f = fields[i];
                            proptest::prop_assert!(f.first_byte() >= *first && f.last_byte() <= *last);
                            let want = (0..u64::from(f.width)).fold(0, |v, j| v << 1 | bit(f.offset + j));
                            proptest::prop_assert_eq!(v, want);
                            seen[i] += 1;
                        }
                    }
                }
            }
            proptest::prop_assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
        }
    }

    #[test]
    fn field_command_arguments() {
        let fields = [
            field(130, 3),
            field(128, 64),
            field(7, 1),
            field(0, 10),
            field(99, 63),
        ];
        let cmd = field_command("k", fields, 5);
        let args: Vec<String> = cmd
            .args_iter()
            .map(|a| match a {
                redis::Arg::Simple(b) => String::from_utf8(b.to_vec()).unwrap(),
                _ => unreachable!("no cursor argument"),
            })
            .collect();
        let want = "BITFIELD_RO k GET u3 130 GET i64 128 GET u1 7 GET u10 0 GET u63 99";
        assert_eq!(args.join(" "), want);
    }
}
