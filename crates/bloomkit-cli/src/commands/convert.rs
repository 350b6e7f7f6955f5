//! `bloomkit export` and `bloomkit import`: Guava's and Go's formats.

use crate::cli::Format;
use crate::commands::open;
use crate::summary::{report_written, Output, Summary};
use crate::target::{Context, Location, Target};
use anyhow::{anyhow, bail, Context as _, Result};
use bloomkit::codec::{described_len, detect, go, guava, Detected, DESCRIBED_LEN_PREFIX};
use bloomkit::{AnyFilter, Filter, Scheme};
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Guava => "guava",
        Format::Guava32 => "guava32",
        Format::Go => "go",
        Format::GoJson => "go-json",
    }
}

pub(crate) fn export(
    target: &str,
    format: Format,
    output: Option<&Path>,
    force: bool,
    ctx: &Context,
    out: &Output,
) -> Result<ExitCode> {
    let output = output.unwrap_or(Path::new("-"));
    let to_stdout = output.as_os_str() == "-";
    let special = bloomkit::sharing::special_file(output)
        .filter(|k| k.starts_with("a FIFO") || k.starts_with("a character device"));
    if output.is_dir() {
        bail!(
            "{}: it is a directory; give -o the path of a file",
            output.display()
        );
    }
    // Exporting a filter over its own file would replace it with the foreign stream, and the
    // native file's design (capacity, fpp) with it: not even --force does that.
    if let (false, Location::File(source)) = (to_stdout, Location::parse(target)?) {
        if same_file(&source, output) {
            bail!(
                "{}: it is the filter being exported; give -o another path",
                output.display()
            );
        }
    }
    // A regular file is replaced only with --force, as create, merge and import do.
    if !to_stdout && !force && special.is_none() && output.exists() {
        bail!(
            "{}: the file exists (use --force to replace it)",
            output.display()
        );
    }
    let t = open(target, ctx)?;
    let (filter, _) = t.snapshot()?;
    let f = match filter {
        AnyFilter::Classic(f) => f,
        other => bail!(
            "{target}: a {} filter cannot be exported to {}; only classic filters can",
            other.kind(),
            format_name(format)
        ),
    };
    let wanted = match format {
        Format::Guava => Some(Scheme::GuavaMitz64),
        Format::Guava32 => Some(Scheme::GuavaMitz32),
        Format::Go | Format::GoJson => Some(Scheme::Go),
    };
    if wanted != Some(f.spec().scheme()) {
        let scheme = match format {
            Format::Guava => "guava",
            Format::Guava32 => "guava32",
            Format::Go | Format::GoJson => "go",
        };
        bail!(
            "{target}: this filter maps elements with {} ({}), not as {} does; create the filter with --scheme {scheme} to export it as {}",
            crate::target::scheme_name(f.spec()),
            f.spec().scheme().name(),
            format_name(format),
            format_name(format)
        );
    }
    let bytes = match format {
        Format::Guava | Format::Guava32 => guava::to_bytes(&f),
        Format::Go => go::to_bytes(&f),
        Format::GoJson => go::to_json(&f).map(String::into_bytes),
    }
    .map_err(|e| anyhow!("{target}: {e}"))?;
    if to_stdout {
        let mut o = crate::stdout::lock();
        o.write_all(&bytes)?;
        o.flush()?;
    } else if let Some(kind) = special {
        // /dev/stdout, /dev/null, a named pipe: write into it, never replace the node.
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .open(output)
            .with_context(|| format!("opening {} ({kind})", output.display()))?;
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .with_context(|| format!("writing {}", output.display()))?;
    } else {
        // A regular file is replaced atomically (through a symbolic link, keeping its mode
        // and owner); a directory, socket or block device is refused.
        crate::commands::check_parent(output)?;
        bloomkit::file::write_atomic(output, &bytes).map_err(|e| anyhow!("{e}"))?;
        if out.text() {
            crate::shown::say!(
                "exported {target} as {} to {} ({} bytes)",
                format_name(format),
                output.display(),
                bytes.len()
            );
        }
    }
    Summary::new("export", target)
        .set("format", format_name(format))
        .set("output", output.display().to_string())
        .set("bytes", bytes.len())
        .print(out, to_stdout || special.is_some())?;
    Ok(ExitCode::SUCCESS)
}

/// Reads an import's input (`name` in messages): first the few bytes that hold a Guava or Go
/// header, then only as many more as the headers they could be describe (plus one, so that
/// extra bytes are seen), so an endless, huge or hostile input is refused after its header
/// rather than after filling the memory. Only JSON, whose length no header gives, is read up to
/// the memory available.
fn read_input(mut input: impl Read, name: &str) -> Result<Input> {
    let mut bytes = Vec::new();
    let whole = read_up_to(&mut input, &mut bytes, DESCRIBED_LEN_PREFIX as u64, name)?;
    let available = crate::memory::available()?.unwrap_or(u64::MAX);
    match justified_len(&bytes) {
        Justified::Nothing => return Ok(Input { bytes, whole }),
        Justified::Unknown => {
            if !read_up_to(&mut input, &mut bytes, available, name)? {
                bail!(
                    "{name}: more than {} bytes, too large to hold in memory",
                    bytes.len()
                );
            }
        }
        Justified::Header(len) if len > available => bail!(
            "{name}: its header describes a filter of {} bytes, more than this \
             machine has available ({})",
            len,
            crate::commands::human_bytes(available)
        ),
        Justified::Header(len) => {
            if !read_up_to(&mut input, &mut bytes, len.saturating_add(1), name)? {
                bail!(
                    "{name}: more bytes follow the {len} that its header describes; \
                     give a single filter, whole"
                );
            }
        }
    }
    Ok(Input { bytes, whole: true })
}

/// An import's input as read.
struct Input {
    bytes: Vec<u8>,
    /// Whether `bytes` is all of it (not only the first bytes, which were enough to refuse it).
    whole: bool,
}

/// How much of an input its first bytes justify reading.
#[derive(Debug, PartialEq)]
enum Justified {
    /// The length the Guava or Go header it starts with gives ([`described_len`]).
    Header(u64),
    /// No header gives it: JSON, read up to the memory available.
    Unknown,
    /// Nothing more: the first bytes are no header any format has, and the
    /// decoder says what is wrong with them.
    Nothing,
}

/// Every format is considered, whatever `--format` says: an input in another format is read
/// whole, so that the error can name the format it is in.
fn justified_len(prefix: &[u8]) -> Justified {
    let first = prefix.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_none_or(|&b| b == b'{') {
        return Justified::Unknown;
    }
    described_len(prefix).map_or(Justified::Nothing, Justified::Header)
}

/// Appends from `input` to `bytes` until it holds `limit` bytes or the input ends; whether the
/// input ended. Memory that cannot be had is an error, not an abort.
fn read_up_to(input: &mut impl Read, bytes: &mut Vec<u8>, limit: u64, name: &str) -> Result<bool> {
    // Never more at a time than is still wanted: the first read asks for a header's few bytes.
    let wanted = limit.saturating_sub(bytes.len() as u64);
    let mut chunk = vec![0u8; wanted.min(1 << 20) as usize];
    while (bytes.len() as u64) < limit {
        let want = (limit - bytes.len() as u64).min(chunk.len() as u64) as usize;
        let n = match input.read(&mut chunk[..want]) {
            Ok(0) => return Ok(true),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {name}")),
        };
        if bytes.try_reserve(n).is_err() {
            bail!(
                "{name}: more than {} bytes, too large to hold in memory",
                bytes.len()
            );
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    Ok(false)
}

/// The CLI format of a detected one (`None` for bloomkit's own).
fn cli_format(d: Detected) -> Option<Format> {
    match d {
        Detected::Native => None,
        Detected::Guava => Some(Format::Guava),
        Detected::Guava32 => Some(Format::Guava32),
        Detected::Go => Some(Format::Go),
        Detected::GoJson => Some(Format::GoJson),
    }
}

/// What to say about a file that is not in the format it was said (or found) to be in.
fn looks_like(file: &Path, input: &Input) -> String {
    let bytes = &input.bytes[..];
    match detect(bytes) {
        Some(Detected::Native) => format!(
            "it is a bloomkit filter file already: use it as it is, or copy it (cp {} ...)",
            crate::shown::path_arg(file)
        ),
        Some(d) => format!(
            "it looks like {} (--format {})",
            d.describe(),
            cli_format(d).map_or("?", format_name)
        ),
        None => format!(
            "its {}{} bytes look like no format bloomkit reads (Guava, Go binary, Go JSON)",
            if input.whole { "" } else { "first " },
            bytes.len()
        ),
    }
}

pub(crate) fn import(
    file: &Path,
    format: Option<Format>,
    target: &str,
    force: bool,
    ctx: &Context,
    out: &Output,
) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let input = if file.as_os_str() == "-" {
        read_input(std::io::stdin().lock(), "standard input")?
    } else {
        // A regular file only (a FIFO would block, /dev/zero never end), no larger than the
        // memory available, and read no further than its header describes.
        crate::memory::ensure_loadable(file)?;
        let opened = bloomkit::file::open_regular(file, "reading").map_err(|e| anyhow!("{e}"))?;
        read_input(opened, &file.display().to_string())?
    };
    let name = if file.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        file.display().to_string()
    };
    let bytes = &input.bytes[..];
    let detected = detect(bytes);
    let format = match (format, detected) {
        (Some(f), _) => f,
        (None, Some(d)) => match cli_format(d) {
            Some(f) => f,
            None => bail!("{}: {}", name, looks_like(file, &input)),
        },
        (None, None) => bail!(
            "{}: {}; give --format if you know it",
            name,
            looks_like(file, &input)
        ),
    };
    let filter = match format {
        Format::Guava | Format::Guava32 => guava::from_bytes(bytes),
        Format::Go => go::from_bytes(bytes),
        Format::GoJson => go::from_json(bytes),
    }
    .map_err(|e| {
        // Name the real problem: the file is in another format than the one given.
        if detected.and_then(cli_format) != Some(format) {
            anyhow!(
                "{}: not a {} filter ({e}); {}",
                name,
                format_name(format),
                looks_like(file, &input)
            )
        } else {
            anyhow!("{name}: {e}")
        }
    })?;
    // Guava's two strategies share one stream format: the one given must be the stream's.
    let strategy = match filter.spec().scheme() {
        Scheme::GuavaMitz64 => Some(Format::Guava),
        Scheme::GuavaMitz32 => Some(Format::Guava32),
        _ => None,
    };
    if let Some(actual) = strategy.filter(|&actual| actual != format) {
        bail!(
            "{name}: not a {} filter: its strategy is {}'s (give --format {})",
            format_name(format),
            format_name(actual),
            format_name(actual)
        );
    }
    if let Location::File(path) = &location {
        crate::commands::check_parent(path)?;
    }
    let t = Target::replace(&location, filter.into(), None, force, ctx)?;
    let summary = Summary::new("import", &location.display())
        .set("file", file.display().to_string())
        .set("format", format_name(format));
    report_written(&t, out, summary, |d| {
        format!(
            "imported {} ({}) into {}: {} bits, {} hashes, about {}",
            file.display(),
            format_name(format),
            location.display(),
            d.bits,
            d.hashes,
            crate::commands::plural(d.estimated_items.round() as u64, "item", "items")
        )
    })
}

/// Whether two paths name one existing file (through links or other spellings).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        #[cfg(unix)]
        (Ok(x), Ok(y)) => {
            use std::os::unix::fs::MetadataExt;
            (x.dev(), x.ino()) == (y.dev(), y.ino())
        }
        #[cfg(not(unix))]
        (Ok(_), Ok(_)) => {
            matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
        }
        _ => false,
    }
}
