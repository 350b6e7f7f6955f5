//! `bloomkit remove` (counting filters).

use crate::commands::{for_each_batch, open, unchanged_note};
use crate::items::ItemFormat;
use crate::target::Context;
use anyhow::{anyhow, bail, Result};
use std::process::ExitCode;

pub(crate) fn run(
    target: &str,
    items: &[String],
    format: ItemFormat,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let mut t = open(target, ctx)?;
    if t.kind() != bloomkit::Kind::Counting {
        bail!(
            "{}: a {} filter cannot remove items; only counting filters can (create one with --kind counting)",
            t.location().display(),
            t.kind()
        );
    }
    let what = if items.is_empty() { "line" } else { "argument" };
    let total = for_each_batch(items, format, quiet, |batch, first| {
        t.remove_batch(batch.elements()).map_err(|(i, e)| {
            let line = batch.iter().nth(i).map(|(l, _)| l).unwrap_or_default();
            anyhow!(
                "{what} {}: cannot remove '{}': {e:#}",
                first + i as u64,
                String::from_utf8_lossy(line)
            )
        })
    })
    .map_err(|e| anyhow!("{e:#} ({})", unchanged_note(&t)))?;
    t.save()?;
    if !quiet {
        eprintln!("removed {total} items from {}", t.location().display());
    }
    Ok(ExitCode::SUCCESS)
}
