//! `bloomkit create`.

use crate::cli::{Creation, SchemeName};
use crate::commands::human_bytes;
use crate::target::{new_filter, Context, Location, Target};
use anyhow::{bail, Result};
use std::process::ExitCode;

pub(crate) fn run(
    filter: &Creation,
    minimal_increase: bool,
    scheme: SchemeName,
    force: bool,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let location = Location::parse(&filter.target)?;
    let Some(mut new) = new_filter(filter, scheme)? else {
        bail!("create needs --capacity N and --fpp P (see: bloomkit calc)");
    };
    new.minimal_increase = minimal_increase;
    let t = Target::create(&location, new, force, ctx)?;
    if !quiet {
        let d = t.describe()?;
        eprintln!(
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
