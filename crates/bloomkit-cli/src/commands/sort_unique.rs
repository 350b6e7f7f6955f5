//! `bloomkit sort-unique`: each distinct integer once, ascending (`sort -n | uniq`), with the
//! integers kept in roaring bitmaps (see `crate::integers`).

use crate::cli::Integers;
use anyhow::Result;
use bloomkit::bitmap::Bitmap;
use std::process::ExitCode;

pub(crate) fn run(args: &Integers, quiet: bool) -> Result<ExitCode> {
    crate::integers::run::<Bitmap>("sort-unique", args, quiet)?;
    Ok(ExitCode::SUCCESS)
}
