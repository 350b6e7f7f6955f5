//! `bloomkit add`.

use crate::commands::{for_each_batch, open, unchanged_note, BATCH};
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
    // A large add (full batches) to a Redis target goes through its bulk path.
    let mut bulk_used = false;
    let total = for_each_batch(items, format, quiet, |batch, _| {
        let bulk = t.has_bulk() && batch.len == BATCH;
        bulk_used |= bulk;
        t.insert_batch(batch.elements(), &mut new, bulk)?;
        added += new.iter().filter(|&&n| n).count() as u64;
        Ok(())
    })
    .map_err(|e| anyhow::anyhow!("{e:#} ({})", unchanged_note(&t)))?;
    t.save()?;
    if !quiet {
        let place = t.location().display();
        let path = if bulk_used { " (bulk path)" } else { "" };
        eprintln!(
            "added {total} items to {place}{path}: {added} new, {} probably already present",
            total - added
        );
    }
    Ok(ExitCode::SUCCESS)
}
