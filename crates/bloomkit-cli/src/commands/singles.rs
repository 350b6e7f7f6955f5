//! `bloomkit singles`: the integers that occur exactly once, ascending (`sort -n | uniq -u`),
//! with a two-bit cell per integer kept in roaring bitmaps (see `crate::integers`).

use crate::cli::Integers;
use crate::summary::Output;
use anyhow::Result;
use bloomkit::bitmap::TwoBitMap;
use std::process::ExitCode;

pub(crate) fn run(args: &Integers, out: &Output) -> Result<ExitCode> {
    crate::integers::run::<TwoBitMap>("singles", args, out)?;
    Ok(ExitCode::SUCCESS)
}
