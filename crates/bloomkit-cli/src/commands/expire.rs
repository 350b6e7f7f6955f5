//! `bloomkit expire`: one time to live for a whole Redis filter.

use crate::redis_target::RedisTarget;
use crate::target::Location;
use anyhow::{bail, Result};
use std::process::ExitCode;
use std::time::Duration;

pub(crate) fn run(target: &str, ttl: Duration, quiet: bool) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let Location::Redis(url) = &location else {
        bail!(
            "{}: expire is for Redis filters (a file does not expire: delete it when it is no longer needed)",
            location.display()
        );
    };
    RedisTarget::expire(url, ttl)?;
    if !quiet {
        eprintln!(
            "{}: Redis deletes the filter (its metadata and every key) in {}",
            location.display(),
            crate::window::format_duration(ttl)
        );
    }
    Ok(ExitCode::SUCCESS)
}
