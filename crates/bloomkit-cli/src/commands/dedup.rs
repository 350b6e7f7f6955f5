//! `bloomkit dedup`: a first-seen filter for a stream of lines.

use crate::cli::{Kind, SchemeName, Sizing};
use crate::commands::{for_each_batch, unchanged_note};
use crate::items::ItemFormat;
use crate::target::{Context, Location, NewFilter, Target};
use anyhow::{anyhow, bail, Result};
use std::io::Write;
use std::process::ExitCode;

pub(crate) fn run(
    target: &str,
    sizing: &Sizing,
    kind: Option<Kind>,
    format: ItemFormat,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let mut t = if Target::exists(&location)? {
        Target::open(&location, ctx)?
    } else {
        let (Some(capacity), Some(fpp)) = (sizing.capacity, sizing.fpp) else {
            bail!(
                "{}: no such filter; give --capacity N and --fpp P to create it",
                location.display()
            );
        };
        let new = NewFilter {
            capacity,
            fpp,
            kind,
            scheme: SchemeName::Default,
        };
        Target::create(&location, new, false, ctx)?
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut new = Vec::new();
    let mut kept = 0u64;
    let total = for_each_batch(&[], format, quiet, |batch, _| {
        t.insert_batch(batch.elements(), &mut new, false)?;
        for ((line, _), &n) in batch.iter().zip(&new) {
            if n {
                kept += 1;
                out.write_all(line)?;
                out.write_all(b"\n")?;
            }
        }
        out.flush()?;
        Ok(())
    })
    .map_err(|e| anyhow!("{e:#} ({})", unchanged_note(&t)))?;
    t.save()?;
    if !quiet {
        eprintln!(
            "dedup {}: {total} lines read, {kept} new lines written, {} dropped as seen before",
            location.display(),
            total - kept
        );
    }
    Ok(ExitCode::SUCCESS)
}
