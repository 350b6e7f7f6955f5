//! `bloomkit dedup`: a first-seen filter for a stream of lines.

use crate::cli::{Creation, ItemArgs, SaveArgs, SchemeName};
use crate::commands::window_info::check_same_window;
use crate::commands::{finish, plural, write_policy};
use crate::items::Sources;
use crate::stream::{self, End};
use crate::summary::{check_health, Output, Summary};
use crate::target::{new_filter, Context, Location, Target};
use anyhow::{bail, Result};
use std::io::Write;
use std::process::ExitCode;

/// Opens the filter, or creates it when it does not exist and the sizing is given. Another
/// process may create it at the same moment: then this one opens theirs.
fn open_or_create(location: &Location, filter: &Creation, ctx: &Context) -> Result<Target> {
    if Target::exists(location)? {
        let t = Target::open_for_update(location, ctx)?;
        if filter.window.is_some() || filter.generations.is_some() {
            let d = t.describe()?;
            let display = location.display();
            check_same_window(
                &display,
                d.window.as_ref(),
                filter.window,
                filter.generations,
            )?;
        }
        return Ok(t);
    }
    let Some(new) = new_filter(filter, SchemeName::Default)? else {
        bail!(
            "{}: no such filter; give --capacity N and --fpp P (or --window, or --range for a bitmap) to create it",
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
    filter: &Creation,
    item_args: &ItemArgs,
    save: &SaveArgs,
    ctx: &Context,
    out: &Output,
) -> Result<ExitCode> {
    let mut sources = Sources::new(&[], item_args, out)?;
    let location = Location::parse(&filter.target)?;
    let mut t = open_or_create(&location, filter, ctx)?;
    sources.set_format(item_args.format_for(t.kind()));
    let end = sources.terminator();
    let mut stdout = std::io::BufWriter::new(crate::stdout::lock());
    let mut new = Vec::new();
    let mut kept = 0u64;
    let policy = write_policy(&t, item_args, save, true);
    let mut outcome = stream::run(sources, out.progress, policy, |chunk| {
        // Recorded (saved, for a file) first, printed after.
        t.insert_chunk(chunk, &mut new, false)?;
        let fresh = chunk.iter().zip(&new).filter(|(_, &n)| n).count() as u64;
        kept += fresh;
        let printed = (|| {
            for ((line, _), &n) in chunk.iter().zip(&new) {
                if n && !out.quiet {
                    stdout.write_all(line)?;
                    stdout.write_all(end)?;
                }
            }
            stdout.flush()
        })();
        // Saved already: say so, and that some of its new lines may not have been printed.
        printed.map_err(|e| {
            anyhow::Error::new(e).context(stream::AfterApplied(format!(
                "{} saved, not all of them printed",
                plural(fresh, "new line", "new lines")
            )))
        })
    });
    drop(stdout);
    let code = finish(&t, &mut outcome)?;
    let total = outcome.applied;
    let signal = match outcome.end {
        End::Signal(s) => Some(s),
        _ => None,
    };
    let closed = matches!(outcome.end, End::ClosedOutput);
    if out.text() && !closed {
        crate::shown::say!(
            "dedup {}: {} read, {kept} new {} written, {} dropped as seen before{}",
            location.display(),
            plural(total, "line", "lines"),
            if kept == 1 { "line" } else { "lines" },
            total - kept,
            match signal {
                Some(s) => format!(" (stopped by signal {s}; every printed line is saved)"),
                None => String::new(),
            }
        );
    }
    // Not when nothing changed and no JSON is wanted. (A mapped file's state comes from the
    // pass that seals it.)
    if !out.quiet && !closed && (kept > 0 || out.json) {
        let d = check_health(&t, out)?;
        Summary::new("dedup", &location.display())
            .set("items", total)
            .set("new", kept)
            .set("dropped", total - kept)
            .set("signal", signal)
            .filter(&d)
            .print(out, true)?;
    }
    Ok(code.unwrap_or(ExitCode::SUCCESS))
}
