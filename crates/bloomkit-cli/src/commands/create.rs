//! `bloomkit create`.

use crate::cli::{Kind, SchemeName, Sizing};
use crate::commands::human_bytes;
use crate::target::{Context, Location, NewFilter, Target};
use anyhow::{bail, Result};
use std::process::ExitCode;

pub(crate) fn run(
    target: &str,
    sizing: &Sizing,
    kind: Option<Kind>,
    scheme: SchemeName,
    force: bool,
    ctx: &Context,
    quiet: bool,
) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let Some(new) = NewFilter::from_sizing(sizing, kind, scheme)? else {
        bail!("create needs --capacity N and --fpp P (see: bloomkit calc), or --range START..END for a bitmap");
    };
    let t = Target::create(&location, new, force, ctx)?;
    if !quiet {
        let d = t.describe()?;
        if let (Some(range), Some(form)) = (&d.range, &d.layout) {
            eprintln!(
                "created {} {} of range {range} ({form}, {})",
                d.kind,
                location.display(),
                human_bytes(d.bytes)
            );
            return Ok(ExitCode::SUCCESS);
        }
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
