//! `bloomkit create`.

use crate::cli::{Creation, SchemeName};
use crate::commands::human_bytes;
use crate::summary::{Output, Summary};
use crate::target::{new_filter, Context, Location, Target};
use anyhow::{bail, Result};
use bloomkit::Filter;
use std::process::ExitCode;

pub(crate) fn run(
    filter: &Creation,
    minimal_increase: bool,
    scheme: SchemeName,
    force: bool,
    ctx: &Context,
    out: &Output,
) -> Result<ExitCode> {
    let location = Location::parse(&filter.target)?;
    let Some(mut new) = new_filter(filter, scheme)? else {
        bail!("create needs --capacity N and --fpp P (see: bloomkit calc), --range START..END for a bitmap, or --like FILE (made as that filter file)");
    };
    new.minimal_increase = minimal_increase;
    let t = Target::create(&location, new, force, ctx)?;
    report(&t, &location, out)
}

/// `bloomkit create OUT --like SOURCE`: an empty filter file made as the file SOURCE was (the
/// library's `clear` of a copy: kind, size, hashing, scheme and options kept).
pub(crate) fn like(
    target: &str,
    source: &str,
    force: bool,
    ctx: &Context,
    out: &Output,
) -> Result<ExitCode> {
    let [location, source_location] = [target, source].map(Location::parse);
    let (location, source_location) = (location?, source_location?);
    for (what, l) in [("the new filter", &location), ("--like", &source_location)] {
        if matches!(l, Location::Redis(_)) {
            bail!(
                "create --like works on filter files: {what} is the Redis filter {} (create Redis filters with --capacity and --fpp)",
                l.display()
            );
        }
    }
    let (mut filter, design) = Target::open(&source_location, ctx)?.snapshot()?;
    filter.clear();
    let t = Target::replace(&location, filter, design, force, ctx)?;
    report(&t, &location, out)
}

/// Prints what was created.
fn report(t: &Target, location: &Location, out: &Output) -> Result<ExitCode> {
    let d = t.describe()?;
    Summary::new("create", &location.display())
        .filter(&d)
        .print(out, false)?;
    if let (true, Some(range), Some(form)) = (out.text(), &d.range, &d.layout) {
        crate::shown::say!(
            "created {} {} of range {range} ({form}, {})",
            d.kind,
            location.display(),
            human_bytes(d.bytes)
        );
    } else if out.text() {
        crate::shown::say!(
            "created {} {} filter {}: {} bits, {} hashes, {}",
            d.scheme,
            d.kind,
            location.display(),
            d.bits,
            d.hashes,
            human_bytes(d.bytes)
        );
    }
    Ok(ExitCode::SUCCESS)
}
