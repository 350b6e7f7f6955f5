//! Integer streams for `sort-unique` and `singles`: decimal integers read one per line (or per
//! NUL-terminated item, `-0`) from the shared item sources (`crate::sources`: files, `-f`,
//! standard input), kept in a pair of bitmaps split by sign, and printed ascending.
//!
//! Any integer from `i64::MIN` to `u64::MAX` is accepted, or those of `--range`. No single
//! bitmap range holds all of them (a range is at most 2⁶⁴ wide), so negative integers go to a
//! bitmap of the negative `i64`s and the others to one of every `u64` (with `--range`, of the
//! range's negative and non-negative parts); printing the first and then the second gives
//! ascending numeric order. Without `--range` the bitmaps are roaring, so memory follows the
//! distinct integers; with it (and `-n`) the form is chosen as for a bitmap file (dense when
//! the integers are at least one in 16 of the range).

use crate::cli::Integers;
use crate::sources::{Source, Sources};
use crate::summary::{Output, Summary};
use anyhow::{anyhow, bail, Result};
use bloomkit::bitmap::{Bitmap, BitmapForm, KeyRange, TwoBitMap};
use std::io::{BufRead, BufReader, Read, Write};

/// Integers gathered before they are sorted and merged into the bitmaps at once (2 MiB of
/// them): a roaring container then takes all of a batch's integers in one rewrite, instead
/// of one insertion (a shift of its sorted array) per integer.
const BATCH: usize = 1 << 18;

/// Bytes of the input and output buffers.
const IO_BUFFER: usize = 1 << 18;

/// Bytes of a line shown in an error message.
const SHOWN: usize = 40;

/// The state kept for a stream of integers: what `sort-unique` and `singles` differ in.
pub trait Tally: Sized {
    /// An empty tally of the integers of `range`, in the form chosen for `expected` of them
    /// (roaring when `None`).
    fn new(range: KeyRange, expected: Option<u64>) -> Result<Self>;
    /// Records a batch of integers of the range, ascending.
    fn record<V: Copy + Into<i128>>(&mut self, values: &[V]) -> Result<()>;
    /// The integers to print, ascending.
    fn output(&self) -> Box<dyn Iterator<Item = i128> + '_>;
    /// How many integers [`output`](Tally::output) gives.
    fn output_len(&self) -> u64;
    /// Bytes of memory held.
    fn memory_bytes(&self) -> usize;
}

/// [`Tally`] for a bitmap kind whose output is `$output` (`$output_len` of them).
macro_rules! tally {
    ($ty:ident, $output:ident, $output_len:ident) => {
        impl Tally for $ty {
            fn new(range: KeyRange, expected: Option<u64>) -> Result<Self> {
                Ok(match expected {
                    Some(n) => $ty::new(range, n)?,
                    None => $ty::with_form(range, BitmapForm::Roaring)?,
                })
            }
            fn record<V: Copy + Into<i128>>(&mut self, values: &[V]) -> Result<()> {
                self.insert_sorted(values)?;
                Ok(())
            }
            fn output(&self) -> Box<dyn Iterator<Item = i128> + '_> {
                Box::new(self.$output())
            }
            fn output_len(&self) -> u64 {
                self.$output_len()
            }
            fn memory_bytes(&self) -> usize {
                $ty::memory_bytes(self)
            }
        }
    };
}

// sort-unique prints every integer seen; singles those seen once.
tally!(Bitmap, iter, len);
tally!(TwoBitMap, singles, singles_len);

/// A tally for each sign (`None` for a sign the range excludes), with the batches not yet
/// recorded.
struct BySign<T> {
    /// The declared range, if any.
    range: Option<KeyRange>,
    negative: Option<T>,
    other: Option<T>,
    negative_batch: Vec<i64>,
    other_batch: Vec<u64>,
}

impl<T: Tally> BySign<T> {
    fn new(range: Option<KeyRange>, expected: Option<u64>) -> Result<Self> {
        let (negative, other) = match range {
            None => (Some(KeyRange::NEGATIVE_I64), Some(KeyRange::U64)),
            Some(r) => (
                KeyRange::new(r.start(), r.end().min(0)).ok(),
                KeyRange::new(r.start().max(0), r.end()).ok(),
            ),
        };
        Ok(BySign {
            range,
            negative: negative.map(|r| T::new(r, expected)).transpose()?,
            other: other.map(|r| T::new(r, expected)).transpose()?,
            negative_batch: Vec::new(),
            other_batch: Vec::new(),
        })
    }

    /// The tallies, negative integers' first.
    fn tallies(&self) -> impl Iterator<Item = &T> {
        self.negative.iter().chain(self.other.iter())
    }

    /// Adds the integer `±magnitude` of input line `line` (refused outside the range).
    #[inline]
    fn push(&mut self, line: u64, negative: bool, magnitude: u64) -> Result<()> {
        if let Some(range) = self.range {
            let v = if negative {
                -i128::from(magnitude)
            } else {
                i128::from(magnitude)
            };
            if !range.contains(v) {
                bail!("line {line}: integer {v} is outside the range {range} (END excluded)");
            }
        }
        if negative && magnitude != 0 {
            // magnitude <= 2^63, checked by the parser: wrapping_neg maps 2^63 to i64::MIN.
            self.negative_batch.push((magnitude as i64).wrapping_neg());
            if self.negative_batch.len() == BATCH {
                self.flush_negative()?;
            }
        } else {
            self.other_batch.push(magnitude);
            if self.other_batch.len() == BATCH {
                self.flush_other()?;
            }
        }
        Ok(())
    }

    fn flush_negative(&mut self) -> Result<()> {
        flush(&mut self.negative_batch, self.negative.as_mut())
    }

    fn flush_other(&mut self) -> Result<()> {
        flush(&mut self.other_batch, self.other.as_mut())
    }
}

/// Sorts `batch`, records it in `tally` (none when the range excludes its sign) and empties it.
fn flush<T: Tally, V: Ord + Copy + Into<i128>>(
    batch: &mut Vec<V>,
    tally: Option<&mut T>,
) -> Result<()> {
    batch.sort_unstable();
    if let Some(t) = tally {
        t.record(batch)?;
    }
    batch.clear();
    Ok(())
}

/// What one line turned out to be.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Only spaces so far.
    Start,
    /// After the sign.
    Sign,
    /// In the digits.
    Digits,
    /// Spaces after the digits.
    After,
    /// Not an integer (the reason).
    Invalid(&'static str),
}

/// Parses decimal integer lines, byte by byte, across buffer boundaries.
struct Lines {
    /// What ends a line: `\n`, or NUL (`-0`; a newline is then a space).
    separator: u8,
    /// Whether empty lines are skipped (`--skip-empty`) rather than invalid.
    skip_empty: bool,
    /// Empty lines skipped.
    empty: u64,
    state: State,
    negative: bool,
    magnitude: u64,
    /// Lines finished so far in the current input.
    line: u64,
    /// The start of the current line, for messages.
    shown: Vec<u8>,
}

impl Lines {
    fn new(separator: u8, skip_empty: bool) -> Self {
        Lines {
            separator,
            skip_empty,
            empty: 0,
            state: State::Start,
            negative: false,
            magnitude: 0,
            line: 0,
            shown: Vec::with_capacity(SHOWN),
        }
    }

    /// Feeds `bytes`; calls `value(negative, magnitude)` for each integer line and
    /// `invalid(line, text, reason)` for each other line.
    #[inline]
    fn feed(
        &mut self,
        bytes: &[u8],
        value: &mut impl FnMut(u64, bool, u64) -> Result<()>,
        invalid: &mut impl FnMut(u64, &[u8], &str) -> Result<()>,
    ) -> Result<()> {
        for &b in bytes {
            if b == self.separator {
                self.end_line(value, invalid)?;
                continue;
            }
            if self.shown.len() < SHOWN {
                self.shown.push(b);
            }
            self.state = match (self.state, b) {
                (State::Invalid(why), _) => State::Invalid(why),
                (State::Digits, b'0'..=b'9') => {
                    match self
                        .magnitude
                        .checked_mul(10)
                        .and_then(|m| m.checked_add(u64::from(b - b'0')))
                    {
                        Some(m) => {
                            self.magnitude = m;
                            State::Digits
                        }
                        None => State::Invalid("beyond the 64-bit integers"),
                    }
                }
                (State::Start | State::Sign, b'0'..=b'9') => {
                    self.magnitude = u64::from(b - b'0');
                    State::Digits
                }
                (State::Start, b'-') => {
                    self.negative = true;
                    State::Sign
                }
                (State::Start, b'+') => State::Sign,
                (State::Start, b' ' | b'\t' | b'\r' | b'\n') => State::Start,
                (State::Digits | State::After, b' ' | b'\t' | b'\r' | b'\n') => State::After,
                _ => State::Invalid("not a decimal integer"),
            };
        }
        Ok(())
    }

    /// Ends the current line (at a newline or at the end of the input).
    fn end_line(
        &mut self,
        value: &mut impl FnMut(u64, bool, u64) -> Result<()>,
        invalid: &mut impl FnMut(u64, &[u8], &str) -> Result<()>,
    ) -> Result<()> {
        self.line += 1;
        if self.skip_empty && self.shown.is_empty() {
            self.empty += 1;
            return Ok(());
        }
        let state = match self.state {
            State::Digits | State::After if self.negative && self.magnitude > 1 << 63 => {
                State::Invalid("below the 64-bit integers")
            }
            State::Start => State::Invalid("an empty line"),
            State::Sign => State::Invalid("not a decimal integer"),
            s => s,
        };
        match state {
            State::Invalid(why) => invalid(self.line, &self.shown, why)?,
            _ => value(self.line, self.negative, self.magnitude)?,
        }
        self.state = State::Start;
        self.negative = false;
        self.magnitude = 0;
        self.shown.clear();
        Ok(())
    }

    /// Ends the input: a last line without a newline counts.
    fn finish(
        &mut self,
        value: &mut impl FnMut(u64, bool, u64) -> Result<()>,
        invalid: &mut impl FnMut(u64, &[u8], &str) -> Result<()>,
    ) -> Result<()> {
        if self.state != State::Start || !self.shown.is_empty() {
            self.end_line(value, invalid)?;
        }
        Ok(())
    }
}

/// Lines read, and lines skipped: not integers (with `--skip-invalid`), empty (with
/// `--skip-empty`).
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    lines: u64,
    skipped: u64,
    empty: u64,
}

/// Reads every integer of one source into `tally`.
fn read_source<T: Tally>(
    source: Source,
    sources: &Sources,
    tally: &mut BySign<T>,
    skip_invalid: bool,
) -> Result<Counts> {
    let mut lines = Lines::new(sources.separator, sources.skip_empty);
    let what = if sources.separator == 0 {
        "item"
    } else {
        "line"
    };
    let mut skipped = 0u64;
    let (name, reader): (String, Box<dyn Read>) = match source {
        Source::Stream { path, reader } => (
            path.map_or_else(|| "standard input".to_string(), |p| p.to_string()),
            reader,
        ),
        // Only item commands have item arguments; integers come in files and streams.
        Source::Args { items, .. } => ("arguments".to_string(), {
            let mut bytes = Vec::new();
            for item in items {
                bytes.extend_from_slice(item.as_bytes());
                bytes.push(sources.separator);
            }
            Box::new(std::io::Cursor::new(bytes))
        }),
    };
    let mut value = |line: u64, negative: bool, magnitude: u64| {
        tally
            .push(line, negative, magnitude)
            .map_err(|e| anyhow!("{name}: {e}"))
    };
    let mut invalid = |line: u64, text: &[u8], why: &str| {
        if skip_invalid {
            skipped += 1;
            return Ok(());
        }
        let text = String::from_utf8_lossy(text);
        let more = if text.len() >= SHOWN { "…" } else { "" };
        bail!("{name}: {what} {line}: '{text}{more}' is not an integer: {why} (use --skip-invalid to skip such lines)")
    };
    let mut reader = BufReader::with_capacity(IO_BUFFER, reader);
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(anyhow!("reading {name}: {e}")),
        };
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        lines.feed(buf, &mut value, &mut invalid)?;
        reader.consume(n);
    }
    lines.finish(&mut value, &mut invalid)?;
    Ok(Counts {
        lines: lines.line,
        skipped,
        empty: lines.empty,
    })
}

/// Writes decimal integers, each ended by `end` (a newline, or NUL with `-0`), through a
/// large buffer.
struct DecimalOut<W: Write> {
    out: W,
    buf: Vec<u8>,
    end: u8,
}

impl<W: Write> DecimalOut<W> {
    fn new(out: W, end: u8) -> Self {
        DecimalOut {
            out,
            buf: Vec::with_capacity(IO_BUFFER),
            end,
        }
    }

    #[inline]
    fn write(&mut self, v: i128) -> std::io::Result<()> {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        self.buf.push(self.end);
        if self.buf.len() >= IO_BUFFER - 32 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()
    }
}

/// Prints what the tallies give, negative integers first.
fn print<T: Tally>(tally: &BySign<T>, mut out: DecimalOut<impl Write>) -> std::io::Result<()> {
    for t in tally.tallies() {
        for v in t.output() {
            out.write(v)?;
        }
    }
    out.flush()
}

/// Runs `sort-unique` (with [`Bitmap`]s) or `singles` (with [`TwoBitMap`]s): reads every
/// source, then prints what the tallies give, then the summary (a sentence, or with `--json`
/// a JSON object, on standard error: standard output carries the integers).
pub fn run<T: Tally>(command: &str, args: &Integers, out: &Output) -> Result<()> {
    let mut tally = BySign::<T>::new(args.range, args.capacity)?;
    let mut sources = Sources::files(&args.inputs, &args.sources, out)?;
    let mut counts = Counts::default();
    for source in std::mem::take(&mut sources.list) {
        let c = read_source(source, &sources, &mut tally, args.skip_invalid)?;
        counts.lines += c.lines;
        counts.skipped += c.skipped;
        counts.empty += c.empty;
    }
    tally.flush_negative()?;
    tally.flush_other()?;
    // `-q` prints nothing, as for every command: the exit status tells whether every line
    // was an integer in range.
    let printed = if out.quiet {
        Ok(())
    } else {
        // Printed integers end as the items read did (`-0`: NUL), as for every command.
        print(
            &tally,
            DecimalOut::new(crate::stdout::lock(), sources.separator),
        )
    };
    match printed {
        Ok(()) => {}
        // `... | head`: the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        Err(e) => return Err(e.into()),
    }
    let written: u64 = tally.tallies().map(T::output_len).sum();
    let memory: usize = tally.tallies().map(T::memory_bytes).sum();
    if out.text() {
        let mut skipped = String::new();
        if counts.skipped > 0 {
            skipped += &format!(", {} non-integer lines skipped", counts.skipped);
        }
        if counts.empty > 0 {
            skipped += &format!(", {} empty lines skipped", counts.empty);
        }
        crate::shown::say!(
            "{command}: {} lines read, {written} integers written{skipped}; bitmaps of {}",
            counts.lines,
            crate::commands::human_bytes(memory as u64)
        );
    }
    Summary::without_target(command)
        .set("lines", counts.lines)
        .set("written", written)
        .set("skipped", counts.skipped)
        .set("empty", counts.empty)
        .set("bytes", memory)
        .print(out, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &[u8]) -> Vec<Result<i128, (u64, String)>> {
        let mut got = Vec::new();
        let mut lines = Lines::new(b'\n', false);
        let mut bad = Vec::new();
        {
            let mut value = |_: u64, n: bool, m: u64| {
                got.push(if n { -i128::from(m) } else { i128::from(m) });
                Ok(())
            };
            let mut invalid = |l: u64, t: &[u8], _: &str| {
                bad.push((l, String::from_utf8_lossy(t).into_owned()));
                Ok(())
            };
            // Byte by byte: values split across buffers parse the same.
            for b in input {
                lines
                    .feed(std::slice::from_ref(b), &mut value, &mut invalid)
                    .unwrap();
            }
            lines.finish(&mut value, &mut invalid).unwrap();
        }
        got.into_iter()
            .map(Ok)
            .chain(bad.into_iter().map(Err))
            .collect()
    }

    #[test]
    fn lines_parse_as_integers_or_are_named() {
        let input = b"12\n -7 \r\n+3\n18446744073709551615\n-9223372036854775808\nx1\n\n1 2\n18446744073709551616\n-9223372036854775809\n-0\n5";
        let got = parse(input);
        let ok: Vec<i128> = got
            .iter()
            .filter_map(|r| r.as_ref().ok().copied())
            .collect();
        assert_eq!(ok, [12, -7, 3, u64::MAX as i128, i64::MIN as i128, 0, 5]);
        let bad: Vec<u64> = got
            .iter()
            .filter_map(|r| r.as_ref().err().map(|e| e.0))
            .collect();
        assert_eq!(bad, [6, 7, 8, 9, 10]);
    }

    #[test]
    fn integers_print_in_ascending_numeric_order() {
        let mut out = DecimalOut::new(Vec::new(), b'\n');
        for v in [i128::from(i64::MIN), -1, 0, 10, i128::from(u64::MAX)] {
            out.write(v).unwrap();
        }
        out.flush().unwrap();
        assert_eq!(
            String::from_utf8(out.out).unwrap(),
            "-9223372036854775808\n-1\n0\n10\n18446744073709551615\n"
        );
    }
}
