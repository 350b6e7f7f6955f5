//! `bloomkit dedup`: a first-seen filter for a stream of lines.

use crate::cli::{ItemArgs, Kind, SaveArgs, SchemeName, Sizing};
use crate::commands::{finish, write_policy};
use crate::stream::{self, End};
use crate::target::{Context, Location, NewFilter, Target};
use anyhow::{bail, Result};
use std::io::Write;
use std::process::ExitCode;

/// Opens the filter, or creates it when it does not exist and the sizing is given. Another
/// process may create it at the same moment: then this one opens theirs.
fn open_or_create(
    location: &Location,
    sizing: &Sizing,
    kind: Option<Kind>,
    ctx: &Context,
) -> Result<Target> {
    if Target::exists(location)? {
        return Target::open_for_update(location, ctx);
    }
    let Some(new) = NewFilter::from_sizing(sizing, kind, SchemeName::Default)? else {
        bail!(
            "{}: no such filter; give --capacity N and --fpp P (or --range for a bitmap) to create it",
            location.display()
        );
    };
    match Target::create(location, new, false, ctx) {
        // A file is reopened to be used in place (classic, blocked).
        Ok(t) if matches!(location, Location::File(_)) => {
            drop(t);
            Target::open_for_update(location, ctx)
        }
        Ok(t) => Ok(t),
        // Created by another process meanwhile: use theirs.
        Err(_) if Target::exists(location)? => Target::open_for_update(location, ctx),
        Err(e) => Err(e),
    }
}

pub(crate) fn run(
    target: &str,
    sizing: &Sizing,
    kind: Option<Kind>,
    item_args: &ItemArgs,
    save: &SaveArgs,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let mut t = open_or_create(&location, sizing, kind, ctx)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut new = Vec::new();
    let mut kept = 0u64;
    let policy = write_policy(&t, item_args, save, true);
    let mut outcome = stream::run(
        &[],
        item_args.format_for(t.kind()),
        quiet,
        policy,
        |chunk| {
            // Recorded (saved, for a file) first, printed after.
            t.insert_chunk(chunk, &mut new, false)?;
            for ((line, _), &n) in chunk.iter().zip(&new) {
                if n {
                    kept += 1;
                    out.write_all(line)?;
                    out.write_all(b"\n")?;
                }
            }
            out.flush()?;
            Ok(())
        },
    );
    let code = finish(&t, &mut outcome)?;
    if !quiet && !matches!(outcome.end, End::ClosedOutput) {
        let total = outcome.applied;
        eprintln!(
            "dedup {}: {total} lines read, {kept} new lines written, {} dropped as seen before{}",
            location.display(),
            total - kept,
            match outcome.end {
                End::Signal(s) => format!(" (stopped by signal {s}; every printed line is saved)"),
                _ => String::new(),
            }
        );
    }
    Ok(code.unwrap_or(ExitCode::SUCCESS))
}
