//! `bloomkit create`.

use crate::cli::{Creation, SchemeName};
use crate::commands::human_bytes;
use crate::summary::{Output, Summary};
use crate::target::{new_filter, Context, Location, Target};
use anyhow::{bail, Result};
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
        bail!("create needs --capacity N and --fpp P (see: bloomkit calc), or --range START..END for a bitmap");
    };
    new.minimal_increase = minimal_increase;
    let t = Target::create(&location, new, force, ctx)?;
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
