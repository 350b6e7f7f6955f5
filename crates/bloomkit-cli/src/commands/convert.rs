//! `bloomkit export` and `bloomkit import`: Guava's and Go's formats.

use crate::cli::Format;
use crate::commands::open;
use crate::target::{Context, Location, Target};
use anyhow::{anyhow, bail, Context as _, Result};
use bloomkit::codec::{go, guava};
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
    output: &Path,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
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
    if output.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes)?;
        out.flush()?;
    } else if let Some(kind) = bloomkit::sharing::special_file(output)
        .filter(|k| k.starts_with("a FIFO") || k.starts_with("a character device"))
    {
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
        bloomkit::file::write_atomic(output, &bytes).map_err(|e| anyhow!("{e}"))?;
        if !quiet {
            eprintln!(
                "exported {target} as {} to {} ({} bytes)",
                format_name(format),
                output.display(),
                bytes.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads standard input whole; memory that cannot be had is an error, not an abort (the input
/// may be endless, as `/dev/zero` is).
fn read_stdin() -> Result<Vec<u8>> {
    let mut input = std::io::stdin().lock();
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("reading standard input"),
        };
        if bytes.try_reserve(n).is_err() {
            bail!(
                "standard input: more than {} bytes, too large to hold in memory",
                bytes.len()
            );
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

pub(crate) fn import(
    file: &Path,
    format: Format,
    target: &str,
    force: bool,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let bytes = if file.as_os_str() == "-" {
        read_stdin()?
    } else {
        // A regular file only (a FIFO would block, /dev/zero never end), read up to its size.
        bloomkit::file::read_regular(file).map_err(|e| anyhow!("{e}"))?
    };
    let filter = match format {
        Format::Guava | Format::Guava32 => guava::from_bytes(&bytes),
        Format::Go => go::from_bytes(&bytes),
        Format::GoJson => go::from_json(&bytes),
    }
    .map_err(|e| anyhow!("{}: {e}", file.display()))?;
    let t = Target::replace(&location, filter.into(), None, force, ctx)?;
    if !quiet {
        let d = t.describe()?;
        eprintln!(
            "imported {} ({}) into {}: {} bits, {} hashes, about {:.0} items",
            file.display(),
            format_name(format),
            location.display(),
            d.bits,
            d.hashes,
            d.estimated_items
        );
    }
    Ok(ExitCode::SUCCESS)
}
