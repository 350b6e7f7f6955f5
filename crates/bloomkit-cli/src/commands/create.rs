//! `bloomkit create`.

use crate::cli::{Kind, SchemeName, Sizing};
use crate::commands::human_bytes;
use crate::summary::{Output, Summary};
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
    out: &Output,
) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let (Some(capacity), Some(fpp)) = (sizing.capacity, sizing.fpp) else {
        bail!("create needs --capacity N and --fpp P (see: bloomkit calc)");
    };
    let new = NewFilter {
        capacity,
        fpp,
        kind,
        scheme,
    };
    let t = Target::create(&location, new, force, ctx)?;
    let d = t.describe()?;
    Summary::new("create", &location.display())
        .filter(&d)
        .print(out, false)?;
    if out.text() {
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
