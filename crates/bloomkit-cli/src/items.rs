//! Items: how a line of input (or an argument) becomes an element's bytes, and the streaming
//! reader that cuts standard input into checked batches.
//!
//! Every command that changes a filter parses a whole batch before applying any of it, so a
//! bad line never leaves a batch half-applied (and file targets are saved only at the very
//! end, so a bad line anywhere leaves the file untouched).

pub use crate::sources::{Source, Sources};
use anyhow::{bail, Result};
use bloomkit::key::{Key, Utf16};
use clap::ValueEnum;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

/// How an input line becomes an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ItemFormat {
    /// The line's bytes, as they are (UTF-8 for text; Guava's stringFunnel(UTF_8)).
    Utf8,
    /// The line as UTF-16LE code units (Guava's unencodedCharsFunnel).
    Utf16le,
    /// A decimal 32-bit integer, 4 bytes little-endian (Guava's integerFunnel).
    I32,
    /// A decimal 64-bit integer, 8 bytes little-endian (Guava's longFunnel).
    I64,
    /// Hexadecimal digits, decoded to raw bytes (Guava's byteArrayFunnel).
    Hex,
}

impl ItemFormat {
    /// Encodes one line (without its line ending) into the element's bytes.
    pub fn encode(self, line: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        match self {
            ItemFormat::Utf8 => out.extend_from_slice(line),
            ItemFormat::Utf16le => {
                let s = std::str::from_utf8(line)
                    .map_err(|e| format!("not valid UTF-8 ({e}), so it has no UTF-16 form"))?;
                Utf16(s).encode(out);
            }
            ItemFormat::I32 => {
                let v: i32 = number(line)?
                    .parse()
                    .map_err(|e| format!("not a 32-bit integer ({e})"))?;
                v.encode(out);
            }
            ItemFormat::I64 => {
                let v: i64 = number(line)?
                    .parse()
                    .map_err(|e| format!("not a 64-bit integer ({e})"))?;
                v.encode(out);
            }
            ItemFormat::Hex => {
                let digits = std::str::from_utf8(line)
                    .map_err(|_| "not hexadecimal".to_string())?
                    .trim();
                if digits.len() % 2 != 0 {
                    return Err(format!(
                        "not whole bytes of hexadecimal (an odd number of digits, {})",
                        digits.len()
                    ));
                }
                for pair in digits.as_bytes().chunks_exact(2) {
                    let hi = hex_digit(pair[0])?;
                    let lo = hex_digit(pair[1])?;
                    out.push(hi << 4 | lo);
                }
            }
        }
        Ok(())
    }
}

fn number(line: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(line)
        .map(str::trim)
        .map_err(|_| "not a decimal number".to_string())
}

fn hex_digit(c: u8) -> Result<u8, String> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(format!(
            "not hexadecimal ({:?} is not a hex digit)",
            c as char
        )),
    }
}

/// One parsed batch: the original lines (for printing) and the encoded elements. A batch
/// holds items of one source only.
#[derive(Default)]
pub struct Batch {
    /// Raw lines, without their line endings.
    pub lines: Vec<Vec<u8>>,
    /// Encoded elements, one per line.
    pub elements: Vec<Vec<u8>>,
    /// Each line's number in its source (1-based; skipped empty lines are counted).
    pub numbers: Vec<u64>,
    /// Number of lines used (only the first `len` entries of the vectors are valid).
    pub len: usize,
    /// Bytes of the lines used.
    pub bytes: usize,
    /// Where the lines come from.
    pub origin: Origin,
}

impl Batch {
    fn push(&mut self, line: &[u8], number: u64, format: ItemFormat) -> Result<(), String> {
        if self.len == self.lines.len() {
            self.lines.push(Vec::new());
            self.elements.push(Vec::new());
            self.numbers.push(0);
        }
        let l = &mut self.lines[self.len];
        l.clear();
        l.extend_from_slice(line);
        format.encode(line, &mut self.elements[self.len])?;
        self.numbers[self.len] = number;
        self.len += 1;
        self.bytes += line.len();
        Ok(())
    }

    /// The batch's (line, element) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.lines[..self.len]
            .iter()
            .zip(&self.elements[..self.len])
            .map(|(l, e)| (l.as_slice(), e.as_slice()))
    }

    /// The encoded elements.
    pub fn elements(&self) -> &[Vec<u8>] {
        &self.elements[..self.len]
    }

    /// Where item `i` of the batch is, for messages: `line 3`, `argument 2`, `line 3 of
    /// urls.txt`.
    pub fn position(&self, i: usize) -> String {
        self.origin
            .position(self.numbers.get(i).copied().unwrap_or_default())
    }
}

/// Where a batch's items come from, for messages.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// `argument`, `line` or `item` (NUL-separated).
    what: &'static str,
    /// The `-f` file, if any (standard input and arguments have none).
    path: Option<Arc<str>>,
}

impl Origin {
    /// The position of item `number` (1-based) of this source.
    pub fn position(&self, number: u64) -> String {
        match &self.path {
            Some(p) => format!("{} {number} of {p}", self.what),
            None => format!("{} {number}", self.what),
        }
    }
}

/// A batch ends once its lines hold this many bytes (so a batch of long lines stays small).
const MAX_BATCH_BYTES: usize = 4 << 20;

/// The source being read.
enum Current {
    Args(std::vec::IntoIter<String>),
    Stream(BufReader<Box<dyn Read + Send>>),
}

/// Reads items in batches of at most `max` lines, source after source (see
/// [`Sources`]); a batch also ends early when the input has nothing more buffered, so an
/// interactive pipe gets answers line by line. No line (or argument) may be longer than
/// `max_line` bytes: memory stays bounded whatever the input (`/dev/zero` has no line end
/// at all).
pub struct ItemReader {
    sources: std::collections::VecDeque<Source>,
    current: Option<(Current, Origin)>,
    format: ItemFormat,
    separator: u8,
    skip_empty: bool,
    max: usize,
    max_line: usize,
    /// Items read so far, over all sources.
    count: u64,
    /// The number of the last item read in the current source.
    number: u64,
    buf: Vec<u8>,
    /// Bytes consumed so far (for progress).
    pub bytes_read: u64,
}

impl ItemReader {
    /// Reads `sources` in order.
    pub fn new(sources: Sources, max: usize, max_line: usize) -> Self {
        ItemReader {
            format: sources.format,
            separator: sources.separator,
            skip_empty: sources.skip_empty,
            sources: sources.list.into(),
            current: None,
            max: max.max(1),
            max_line,
            count: 0,
            number: 0,
            buf: Vec::new(),
            bytes_read: 0,
        }
    }

    /// Number of items read so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Fills `batch` with the next items (of one source); returns false at the end of the
    /// input. A line that does not parse is an error naming it; the batch is then not to be
    /// applied.
    pub fn next_batch(&mut self, batch: &mut Batch) -> Result<bool> {
        batch.len = 0;
        batch.bytes = 0;
        loop {
            if self.current.is_none() {
                match self.sources.pop_front() {
                    None => return Ok(false),
                    Some(source) => {
                        let what = if self.separator == 0 { "item" } else { "line" };
                        let (current, origin, first) = match source {
                            Source::Args { first, items } => (
                                Current::Args(items.into_iter()),
                                Origin {
                                    what: "argument",
                                    path: None,
                                },
                                first,
                            ),
                            Source::Stream { path, reader } => (
                                Current::Stream(BufReader::with_capacity(64 * 1024, reader)),
                                Origin { what, path },
                                1,
                            ),
                        };
                        self.number = first - 1;
                        self.current = Some((current, origin));
                    }
                }
            }
            let more = self.fill(batch)?;
            if batch.len > 0 {
                if let Some((_, origin)) = &self.current {
                    batch.origin = origin.clone();
                }
            }
            if !more {
                self.current = None;
            }
            if batch.len > 0 {
                return Ok(true);
            }
        }
    }

    /// Adds items of the current source to `batch`; false once the source is exhausted.
    fn fill(&mut self, batch: &mut Batch) -> Result<bool> {
        let Some((current, origin)) = &mut self.current else {
            return Ok(false);
        };
        while batch.len < self.max && batch.bytes < MAX_BATCH_BYTES {
            let line: &[u8] = match current {
                Current::Args(it) => match it.next() {
                    Some(a) => {
                        self.buf.clear();
                        self.buf.extend_from_slice(a.as_bytes());
                        &self.buf
                    }
                    None => return Ok(false),
                },
                Current::Stream(r) => {
                    if batch.len > 0 && r.buffer().is_empty() {
                        // Nothing more without blocking: hand over what we have.
                        return Ok(true);
                    }
                    self.buf.clear();
                    let n = read_line(r, &mut self.buf, self.max_line, self.separator).map_err(
                        |e| match &origin.path {
                            Some(p) => anyhow::anyhow!("reading {p}: {e}"),
                            None => anyhow::anyhow!("reading standard input: {e}"),
                        },
                    )?;
                    if self.buf.len() > self.max_line + 2 {
                        bail!(
                            "{} is longer than the maximum line length, {} bytes (raise it with --max-line-length)",
                            origin.position(self.number + 1),
                            self.max_line
                        );
                    }
                    if n == 0 {
                        return Ok(false);
                    }
                    self.bytes_read += n as u64;
                    let mut l = self.buf.as_slice();
                    if let Some(s) = l.strip_suffix(&[self.separator]) {
                        l = if self.separator == b'\n' {
                            s.strip_suffix(b"\r").unwrap_or(s)
                        } else {
                            s
                        };
                    }
                    l
                }
            };
            self.number += 1;
            if line.len() > self.max_line {
                bail!(
                    "{} is longer than the maximum line length, {} bytes (raise it with --max-line-length)",
                    origin.position(self.number),
                    self.max_line
                );
            }
            if line.is_empty() && self.skip_empty {
                continue;
            }
            self.count += 1;
            if let Err(e) = batch.push(line, self.number, self.format) {
                let shown = String::from_utf8_lossy(line);
                let shown: String = shown.chars().take(60).collect();
                bail!(
                    "{}: '{shown}' is {e} (--items {})",
                    origin.position(self.number),
                    self.format
                        .to_possible_value()
                        .map_or("?".into(), |v| v.get_name().to_string())
                );
            }
        }
        Ok(true)
    }
}

/// Reads one line (with its `separator`, `\n` or NUL) into `buf`, but stops once `buf` holds
/// more than `max_line + 2` bytes (the caller reports the line as too long). Returns the bytes
/// consumed.
fn read_line(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max_line: usize,
    separator: u8,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(total);
        }
        let (take, done) = match available.iter().position(|&b| b == separator) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = (max_line + 3).saturating_sub(buf.len());
        let take = take.min(room);
        buf.extend_from_slice(&available[..take]);
        r.consume(take);
        total += take;
        if done && take > 0 && buf.last() == Some(&separator) || buf.len() > max_line + 2 {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: ItemFormat, s: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        f.encode(s.as_bytes(), &mut out).map(|_| out)
    }

    #[test]
    fn formats_match_guava_funnels() {
        assert_eq!(enc(ItemFormat::Utf8, "hé").unwrap(), "hé".as_bytes());
        assert_eq!(
            enc(ItemFormat::Utf16le, "hé").unwrap(),
            vec![b'h', 0, 0xe9, 0]
        );
        assert_eq!(enc(ItemFormat::I32, "-2").unwrap(), (-2i32).to_le_bytes());
        assert_eq!(enc(ItemFormat::I64, " 7 ").unwrap(), 7i64.to_le_bytes());
        assert_eq!(enc(ItemFormat::Hex, "00fF").unwrap(), vec![0, 255]);
        assert!(enc(ItemFormat::Hex, "0").is_err());
        assert!(enc(ItemFormat::Hex, "zz").is_err());
        assert!(enc(ItemFormat::I32, "3000000000").is_err());
        assert!(enc(ItemFormat::I64, "x").is_err());
    }

    #[test]
    fn reader_names_the_bad_line() {
        let input = b"1\n2\r\nx\n4\n".as_slice();
        let mut r = ItemReader::new(Sources::reader(input, ItemFormat::I64), 100, 10);
        let mut b = Batch::default();
        let err = r.next_batch(&mut b).unwrap_err().to_string();
        assert!(err.starts_with("line 3: 'x'"), "{err}");
    }

    #[test]
    fn reader_refuses_long_lines_without_reading_them_whole() {
        // An endless line: the reader stops after max_line + 3 bytes.
        let input = std::io::repeat(b'x');
        let mut r = ItemReader::new(Sources::reader(input, ItemFormat::Utf8), 100, 1000);
        let mut b = Batch::default();
        let err = r.next_batch(&mut b).unwrap_err().to_string();
        assert!(
            err.starts_with("line 1 is longer than the maximum line length, 1000 bytes"),
            "{err}"
        );
        // Exactly max_line bytes (with \r\n) is fine.
        let line = format!("{}\r\n{}\n", "y".repeat(1000), "z".repeat(1001));
        let mut r = ItemReader::new(
            Sources::reader(std::io::Cursor::new(line), ItemFormat::Utf8),
            1,
            1000,
        );
        assert!(r.next_batch(&mut b).unwrap());
        assert_eq!(b.iter().next().unwrap().0.len(), 1000);
        let err = r.next_batch(&mut b).unwrap_err().to_string();
        assert!(err.starts_with("line 2 is longer"), "{err}");
    }

    #[test]
    fn reader_strips_line_endings() {
        let input = b"a\r\nb\n\nc".as_slice();
        let mut r = ItemReader::new(Sources::reader(input, ItemFormat::Utf8), 100, 10);
        let mut b = Batch::default();
        let mut all = Vec::new();
        while r.next_batch(&mut b).unwrap() {
            all.extend(b.iter().map(|(l, _)| l.to_vec()));
        }
        assert_eq!(
            all,
            vec![b"a".to_vec(), b"b".to_vec(), b"".to_vec(), b"c".to_vec()]
        );
    }
}
