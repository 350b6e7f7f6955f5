//! `bloomkit expire`: one time to live for a whole Redis filter.

use crate::redis_target::RedisTarget;
use crate::summary::{Output, Summary};
use crate::target::Location;
use crate::window::format_duration;
use anyhow::{bail, Result};
use std::process::ExitCode;
use std::time::Duration;

pub(crate) fn run(target: &str, ttl: Duration, out: &Output) -> Result<ExitCode> {
    let location = Location::parse(target)?;
    let Location::Redis(url) = &location else {
        bail!(
            "{}: expire is for Redis filters (a file does not expire: delete it when it is no longer needed)",
            location.display()
        );
    };
    RedisTarget::expire(url, ttl)?;
    Summary::new("expire", &location.display())
        .set("ttl", format_duration(ttl))
        .set("ttl_ms", u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
        .print(out, false)?;
    if out.text() {
        crate::shown::say!(
            "{}: Redis deletes the filter (its metadata and every key) in {}",
            location.display(),
            format_duration(ttl)
        );
    }
    Ok(ExitCode::SUCCESS)
}
