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
    // A large add (full batches) to a Redis target goes through its bulk path, which does not
    // report new elements one by one: count them from the filter's estimate instead.
    let mut bulk_from: Option<f64> = None;
    let total = for_each_batch(items, format, quiet, |batch, _| {
        let bulk = t.has_bulk() && batch.len == BATCH;
        if bulk && bulk_from.is_none() {
            bulk_from = Some(t.estimated_items()?);
        }
        t.insert_batch(batch.elements(), &mut new, bulk)?;
        added += new.iter().filter(|&&n| n).count() as u64;
        Ok(())
    })
    .map_err(|e| anyhow::anyhow!("{e:#} ({})", unchanged_note(&t)))?;
    t.save()?;
    if !quiet {
        let place = t.location().display();
        match bulk_from {
            None => eprintln!(
                "added {total} items to {place}: {added} new, {} probably already present",
                total - added
            ),
            Some(before) => {
                let after = t.estimated_items()?;
                eprintln!(
                    "added {total} items to {place} (bulk path): about {:.0} new by the filter's estimate",
                    (after - before).max(0.0)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
