//! `bloomkit remove`: counting filters (not minimal-increase ones), d-left filters and bitmaps.

use crate::cli::Update;
use crate::commands::{finish, plural, write_policy};
use crate::items::Sources;
use crate::stream::{self, End};
use crate::summary::{Output, Summary};
use crate::target::{Context, Location, Target};
use anyhow::{anyhow, bail, Result};
use std::process::ExitCode;

pub(crate) fn run(args: &Update, ctx: &Context, out: &Output) -> Result<ExitCode> {
    let mut sources = Sources::new(&args.items, &args.item_args, out)?;
    let mut t = Target::open_for_update(&Location::parse(&args.target)?, ctx)?;
    sources.set_format(args.item_args.format_for(t.kind()));
    if !matches!(
        t.kind(),
        bloomkit::Kind::Counting | bloomkit::Kind::DLeft | bloomkit::Kind::Bitmap
    ) {
        bail!(
            "{}: a {} filter cannot remove items; only counting filters, d-left filters and bitmaps can (create one with --kind counting, or --kind dleft)",
            t.location().display(),
            t.kind()
        );
    }
    let policy = write_policy(&t, &args.item_args, &args.save, false);
    let mut outcome = stream::run(sources, out.progress, policy, |chunk| {
        t.remove_chunk(chunk).map_err(|(i, e)| {
            let line = chunk.iter().nth(i).map(|(l, _)| l).unwrap_or_default();
            let named = anyhow!(
                "{}: cannot remove '{}': {e:#}",
                chunk.position(i),
                String::from_utf8_lossy(line)
            );
            // An error that says what became of its batch keeps saying so.
            if e.is::<stream::Settled>() {
                stream::Settled::as_said(named)
            } else {
                named
            }
        })
    });
    let code = finish(&t, &mut outcome)?;
    let place = t.location().display();
    if out.text() {
        crate::shown::say!(
            "removed {} from {place}",
            plural(outcome.applied, "item", "items")
        );
    }
    if out.json && !out.quiet {
        let d = t.describe()?;
        Summary::new("remove", &place)
            .set("items", outcome.applied)
            .set("removed", outcome.applied)
            .set(
                "signal",
                match outcome.end {
                    End::Signal(s) => Some(s),
                    _ => None,
                },
            )
            .filter(&d)
            .print(out, false)?;
    }
    Ok(code.unwrap_or(ExitCode::SUCCESS))
}
