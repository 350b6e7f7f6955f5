//! `bloomkit remove` (counting filters).

use crate::cli::Update;
use crate::commands::{finish, write_policy};
use crate::stream;
use crate::target::{Context, Location, Target};
use anyhow::{anyhow, bail, Result};
use std::process::ExitCode;

pub(crate) fn run(args: &Update, ctx: &Context, quiet: bool) -> Result<ExitCode> {
    let mut t = Target::open_for_update(&Location::parse(&args.target)?, ctx)?;
    if !matches!(t.kind(), bloomkit::Kind::Counting | bloomkit::Kind::Bitmap) {
        bail!(
            "{}: a {} filter cannot remove items; only counting filters and bitmaps can (create one with --kind counting)",
            t.location().display(),
            t.kind()
        );
    }
    let what = if args.items.is_empty() {
        "line"
    } else {
        "argument"
    };
    let policy = write_policy(&t, &args.item_args, &args.save, false);
    let mut outcome = stream::run(
        &args.items,
        args.item_args.format_for(t.kind()),
        quiet,
        policy,
        |chunk| {
            t.remove_chunk(chunk).map_err(|(i, e)| {
                let line = chunk.iter().nth(i).map(|(l, _)| l).unwrap_or_default();
                anyhow!(
                    "{what} {}: cannot remove '{}': {e:#}",
                    chunk.first + i as u64,
                    String::from_utf8_lossy(line)
                )
            })
        },
    );
    let code = finish(&t, &mut outcome)?;
    if !quiet {
        eprintln!(
            "removed {} items from {}",
            outcome.applied,
            t.location().display()
        );
    }
    Ok(code.unwrap_or(ExitCode::SUCCESS))
}
