//! How a check reads its elements' words from one segment key: one `BITFIELD_RO` field per
//! element, or one `GETRANGE` of the bytes that hold many elements' words.
//!
//! A field costs the server three arguments to parse and the client a number to parse, about
//! as much as copying [`FIELD_COST_BYTES`] bytes; a byte range costs a command and its bytes.
//! When a batch's words lie close together, as in a small filter checked with a large batch
//! (every word of a 366 KB segment is within a few hundred bytes of a batch's next one when
//! 1,000 elements are checked), reading the bytes between them is the cheaper plan; in a large
//! filter the words lie far apart and every element is read as a field. [`plan`] chooses per
//! run of close words; the answers are the same either way (the command reads the segment at
//! one moment in both cases; a key shorter than the range reads as zeros past its end, as
//! `BITFIELD_RO` reads it).

use crate::error::Result;
use crate::segments::{check_command, parse, unexpected, Span, MAX_PER_COMMAND};
use bloomkit::probe::register::RegisterProbe;
use redis::Value;

/// What reading one field costs, in bytes of a range read. Measured with a local redis-server
/// 7.0 and batches of 1,000 (2026-11-28, 2-core Intel Xeon): a whole-segment range read was
/// 1.8× as fast as field reads at 549 bytes per element, 1.5× at 823 and 0.85× at 1,098, so
/// a field costs about 1,000 bytes there; the figure is kept lower so that ranges are chosen
/// only where they clearly win.
pub const FIELD_COST_BYTES: u64 = 768;

/// What one more command costs, in bytes of a range read: runs of words farther apart than this
/// are read by separate commands (or as fields).
pub const COMMAND_COST_BYTES: u64 = 4096;

/// One read command of a check: its elements are indices into the batch's probes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// `BITFIELD_RO key GET …`: one field per element (at most [`MAX_PER_COMMAND`]).
    Fields(Vec<usize>),
    /// `GETRANGE key 8·first 8·last+7`: words `first..=last`, which hold these elements'.
    Range {
        /// The first word read.
        first: u64,
        /// The last word read.
        last: u64,
        /// The elements whose words are in the range.
        idx: Vec<usize>,
    },
}

/// The reads that check the elements `idx` (all in one segment) at the least cost by the model
/// above: runs of words at most [`COMMAND_COST_BYTES`] apart become one range where that costs
/// less than a field each; every other element is read as a field.
pub fn plan(probes: &[RegisterProbe], idx: &[usize]) -> Vec<Read> {
    let mut sorted = idx.to_vec();
    sorted.sort_unstable_by_key(|&i| probes[i].word);
    let mut reads = Vec::new();
    let mut fields = Vec::new();
    let mut rest = &sorted[..];
    while let Some(&head) = rest.first() {
        // The run of words, each within COMMAND_COST_BYTES of the one before.
        let mut end = 1;
        while end < rest.len()
            && (probes[rest[end]].word - probes[rest[end - 1]].word) * 8 <= COMMAND_COST_BYTES
        {
            end += 1;
        }
        let (run, after) = rest.split_at(end);
        let (first, last) = (probes[head].word, probes[run[end - 1]].word);
        let range_cost = COMMAND_COST_BYTES + (last - first + 1) * 8;
        if range_cost < run.len() as u64 * FIELD_COST_BYTES {
            reads.push(Read::Range {
                first,
                last,
                idx: run.to_vec(),
            });
        } else {
            fields.extend_from_slice(run);
        }
        rest = after;
    }
    // Fields in the batch's order (as the caller gave them), in commands of MAX_PER_COMMAND.
    fields.sort_unstable();
    reads.extend(
        fields
            .chunks(MAX_PER_COMMAND)
            .map(|c| Read::Fields(c.to_vec())),
    );
    reads
}

impl Read {
    /// The command on segment key `key`.
    pub fn command(&self, key: &str, probes: &[RegisterProbe]) -> redis::Cmd {
        match self {
            Read::Fields(idx) => check_command(
                key,
                idx.iter().map(|&i| {
                    let s = Span::of(&probes[i]);
                    (s.width, s.offset)
                }),
                idx.len(),
            ),
            Read::Range { first, last, .. } => {
                let mut cmd = redis::cmd("GETRANGE");
                cmd.arg(key).arg(first * 8).arg(last * 8 + 7);
                cmd
            }
        }
    }

    /// Decodes the command's reply: sets `present[i]` for each of its elements whose bits are
    /// all set (and leaves the others as they are).
    pub fn decode(
        &self,
        reply: Value,
        probes: &[RegisterProbe],
        present: &mut [bool],
    ) -> Result<()> {
        match self {
            Read::Fields(idx) => {
                let fields: Vec<i64> = parse(reply)?;
                if fields.len() != idx.len() {
                    return Err(unexpected("BITFIELD_RO reply length"));
                }
                for (&i, f) in idx.iter().zip(fields) {
                    let m = Span::of(&probes[i]).mask;
                    present[i] |= (f as u64) & m == m;
                }
            }
            Read::Range { first, last, idx } => {
                let bytes: Vec<u8> = parse(reply)?;
                if bytes.len() as u64 > (last - first + 1) * 8 {
                    return Err(unexpected("GETRANGE reply length"));
                }
                for &i in idx {
                    let p = &probes[i];
                    // Bytes past the key's end read as zeros (the key may be shorter).
                    let at = ((p.word - first) * 8) as usize;
                    let mut word = [0u8; 8];
                    if let Some(have) = bytes.get(at..) {
                        let n = have.len().min(8);
                        word[..n].copy_from_slice(&have[..n]);
                    }
                    present[i] |= u64::from_be_bytes(word) & p.mask == p.mask;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(word: u64) -> RegisterProbe {
        RegisterProbe {
            segment: 0,
            word,
            mask: 1,
        }
    }

    fn words(reads: &[Read]) -> Vec<(char, Vec<usize>)> {
        reads
            .iter()
            .map(|r| match r {
                Read::Fields(idx) => ('f', idx.clone()),
                Read::Range { idx, .. } => ('r', idx.clone()),
            })
            .collect()
    }

    #[test]
    fn far_apart_words_are_fields_and_dense_runs_are_ranges() {
        // Words 1 MB apart: fields, in the caller's order.
        let far: Vec<RegisterProbe> = (0..10).rev().map(|i| probe(i * 131_072)).collect();
        let idx: Vec<usize> = (0..10).collect();
        assert_eq!(words(&plan(&far, &idx)), [('f', idx.clone())]);
        // 64 elements in 2 KB: one range over them.
        let dense: Vec<RegisterProbe> = (0..64).map(|i| probe(i * 4)).collect();
        let idx: Vec<usize> = (0..64).collect();
        assert_eq!(
            plan(&dense, &idx),
            [Read::Range {
                first: 0,
                last: 252,
                idx: idx.clone()
            }]
        );
        // A dense run and a far element: a range and a field.
        let mut both = dense.clone();
        both.push(probe(10_000_000));
        let idx: Vec<usize> = (0..65).collect();
        assert_eq!(
            words(&plan(&both, &idx)),
            [('r', (0..64).collect()), ('f', vec![64])]
        );
    }

    #[test]
    fn fields_are_split_into_commands() {
        let far: Vec<RegisterProbe> = (0..600).map(|i| probe(i * 100_000)).collect();
        let idx: Vec<usize> = (0..600).collect();
        let sizes: Vec<usize> = plan(&far, &idx)
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
    fn a_short_key_reads_as_zeros_past_its_end() {
        let probes = [probe(0), probe(1), probe(2)];
        let read = Read::Range {
            first: 0,
            last: 2,
            idx: vec![0, 1, 2],
        };
        // 12 bytes: word 0 whole (its last bit set), word 1 half there, word 2 missing.
        let mut bytes = vec![0u8; 12];
        bytes[7] = 1;
        let mut present = [false; 3];
        read.decode(Value::BulkString(bytes), &probes, &mut present)
            .unwrap();
        assert_eq!(present, [true, false, false]);
        // A longer reply than the range asked for is refused.
        let long = Value::BulkString(vec![0xff; 25]);
        assert!(read.decode(long, &probes, &mut present).is_err());
    }
}
