//! Where a filter lives: parsing a TARGET argument (Redis URLs are parsed by
//! `crate::redis_target`).

use crate::redis_target::RedisUrl;
use anyhow::{bail, Result};
use std::path::PathBuf;

/// Where a filter lives, parsed from a TARGET argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file in bloomkit's native format.
    File(PathBuf),
    /// A key in Redis (`redis://HOST:PORT/NAME`) or Redis Cluster (`redis+cluster://...`).
    Redis(RedisUrl),
}

impl Location {
    /// Parses a TARGET: a `redis://` or `redis+cluster://` URL, or else a file path.
    pub fn parse(target: &str) -> Result<Location> {
        if let Some(url) = RedisUrl::parse(target)? {
            return Ok(Location::Redis(url));
        }
        if target.is_empty() {
            bail!("empty target (give a file path or a redis:// URL)");
        }
        Ok(Location::File(PathBuf::from(target)))
    }

    /// A short name for messages (never a password).
    pub fn display(&self) -> String {
        match self {
            Location::File(p) => crate::shown::path(p),
            Location::Redis(url) => url.display(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        assert_eq!(
            Location::parse("a/b.bloom").unwrap(),
            Location::File("a/b.bloom".into())
        );
        assert!(matches!(
            Location::parse("redis+cluster://h:1/x").unwrap(),
            Location::Redis(u) if u.cluster && u.name == "x"
        ));
        assert!(Location::parse("redis://h:1").is_err());
        assert!(Location::parse("http://x/y").is_err());
    }
}
