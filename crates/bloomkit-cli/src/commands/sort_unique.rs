//! `bloomkit sort-unique`: each distinct integer once, ascending (`sort -n | uniq`), with the
//! integers kept in roaring bitmaps (see `crate::integers`).

use crate::cli::Integers;
use crate::summary::Output;
use anyhow::Result;
use bloomkit::bitmap::Bitmap;
use std::process::ExitCode;

pub(crate) fn run(args: &Integers, out: &Output) -> Result<ExitCode> {
    crate::integers::run::<Bitmap>("sort-unique", args, out)?;
    Ok(ExitCode::SUCCESS)
}
