//! `bloomkit add`.

use crate::cli::Update;
use crate::commands::{finish, plural, write_policy};
use crate::items::Sources;
use crate::stream::{self, End, BATCH};
use crate::summary::{check_health, Output, Summary};
use crate::target::{Context, Location, Target};
use anyhow::Result;
use std::process::ExitCode;

pub(crate) fn run(args: &Update, ctx: &Context, out: &Output) -> Result<ExitCode> {
    let mut sources = Sources::new(&args.items, &args.item_args, out)?;
    let mut t = Target::open_for_update(&Location::parse(&args.target)?, ctx)?;
    sources.set_format(args.item_args.format_for(t.kind()));
    let mut new = Vec::new();
    let mut added = 0u64;
    // A large add (full batches) to a Redis target goes through its bulk path.
    let mut bulk_used = false;
    let policy = write_policy(&t, &args.item_args, &args.save, false);
    let mut outcome = stream::run(sources, out.progress, policy, |chunk| {
        let bulk = t.has_bulk() && chunk.len() == BATCH;
        bulk_used |= bulk;
        t.insert_chunk(chunk, &mut new, bulk)?;
        added += new.iter().filter(|&&n| n).count() as u64;
        Ok(())
    });
    let code = finish(&t, &mut outcome)?;
    let total = outcome.applied;
    let signal = match outcome.end {
        End::Signal(s) => Some(s),
        _ => None,
    };
    let place = t.location().display();
    if out.text() {
        let stopped = match signal {
            Some(s) => format!(" (stopped by signal {s}; everything read was saved)"),
            None => String::new(),
        };
        let path = if bulk_used { " (bulk path)" } else { "" };
        // A bitmap knows; a Bloom filter's "present" may be a false positive.
        let exact = matches!(t.kind(), bloomkit::Kind::Bitmap | bloomkit::Kind::TwoBitMap);
        let present = if exact {
            "already present"
        } else {
            "probably already present"
        };
        crate::shown::say!(
            "added {} to {place}{path}: {added} new, {} {present}{stopped}",
            plural(total, "item", "items"),
            total - added
        );
    }
    // Not when nothing changed (the add that passed the capacity warned already) and no JSON
    // is wanted. (A mapped file's state comes from the pass that seals it.)
    if !out.quiet && (added > 0 || out.json) {
        let d = check_health(&t, out)?;
        Summary::new("add", &place)
            .set("items", total)
            .set("new", added)
            .set("present", total - added)
            .set("bulk_path", bulk_used)
            .set("signal", signal)
            .filter(&d)
            .print(out, false)?;
    }
    Ok(code.unwrap_or(ExitCode::SUCCESS))
}
