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
    } else {
        bloomkit::file::write_atomic(output, &bytes)
            .map_err(|e| anyhow!("writing {}: {e}", output.display()))?;
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

pub(crate) fn import(
    file: &Path,
    format: Format,
    target: &str,
    force: bool,
    _ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let bytes = if file.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut b)
            .context("reading standard input")?;
        b
    } else {
        std::fs::read(file).with_context(|| format!("reading {}", file.display()))?
    };
    let filter = match format {
        Format::Guava | Format::Guava32 => guava::from_bytes(&bytes),
        Format::Go => go::from_bytes(&bytes),
        Format::GoJson => go::from_json(&bytes),
    }
    .map_err(|e| anyhow!("{}: {e}", file.display()))?;
    let mut t = Target::replace(&location, filter.into(), None, force)?;
    t.save()?;
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
