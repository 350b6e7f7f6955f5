//! `bloomkit add`.

use crate::cli::Update;
use crate::commands::{finish, write_policy};
use crate::stream::{self, End, BATCH};
use crate::target::{Context, Location, Target};
use anyhow::Result;
use std::process::ExitCode;

pub(crate) fn run(args: &Update, ctx: &Context, quiet: bool) -> Result<ExitCode> {
    let mut t = Target::open_for_update(&Location::parse(&args.target)?, ctx)?;
    let mut new = Vec::new();
    let mut added = 0u64;
    // A large add (full batches) to a Redis target goes through its bulk path.
    let mut bulk_used = false;
    let policy = write_policy(&t, &args.item_args, &args.save, false);
    let mut outcome = stream::run(
        &args.items,
        args.item_args.format_for(t.kind()),
        quiet,
        policy,
        |chunk| {
            let bulk = t.has_bulk() && chunk.len() == BATCH;
            bulk_used |= bulk;
            t.insert_chunk(chunk, &mut new, bulk)?;
            added += new.iter().filter(|&&n| n).count() as u64;
            Ok(())
        },
    );
    let code = finish(&t, &mut outcome)?;
    let total = outcome.applied;
    if !quiet {
        let place = t.location().display();
        let stopped = match outcome.end {
            End::Signal(s) => format!(" (stopped by signal {s}; everything read was saved)"),
            _ => String::new(),
        };
        let path = if bulk_used { " (bulk path)" } else { "" };
        eprintln!(
            "added {total} items to {place}{path}: {added} new, {} probably already present{stopped}",
            total - added
        );
    }
    Ok(code.unwrap_or(ExitCode::SUCCESS))
}
