//! `bloomkit add`.

use crate::commands::{for_each_batch, open, unchanged_note};
use crate::items::ItemFormat;
use crate::target::Context;
use anyhow::Result;
use std::process::ExitCode;

pub(crate) fn run(
    target: &str,
    items: &[String],
    format: ItemFormat,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let mut t = open(target, ctx)?;
    let mut new = Vec::new();
    let mut added = 0u64;
    let total = for_each_batch(items, format, quiet, |batch, _| {
        t.insert_batch(batch.elements(), &mut new)?;
        added += new.iter().filter(|&&n| n).count() as u64;
        Ok(())
    })
    .map_err(|e| anyhow::anyhow!("{e:#} ({})", unchanged_note(&t)))?;
    t.save()?;
    if !quiet {
        eprintln!(
            "added {total} items to {}: {added} new, {} probably already present",
            t.location().display(),
            total - added
        );
    }
    Ok(ExitCode::SUCCESS)
}
