//! Key names in Redis (see docs/REDIS.md, "Key layout").
//!
//! Every key of a bloomkit filter named `N` starts with `bloomkit:{`. The part in braces is the
//! Redis Cluster hash tag: the metadata has tag `N`, segment `i` has tag `N:s<i>` (layer `j` of a
//! scalable filter: `N:l<j>:s<i>`), so segments land in different slots and spread over the
//! cluster's nodes, while a segment's temporary merge key shares its segment's tag (and slot).

use crate::error::{Error, Result};

/// Checks that `name` can be used as a filter name.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('{') || name.contains('}') {
        return Err(Error::InvalidName(name.to_string()));
    }
    Ok(())
}

/// The metadata hash: `bloomkit:{N}:meta`.
pub fn meta(name: &str) -> String {
    format!("bloomkit:{{{name}}}:meta")
}

/// Segment `i` of a plain filter: `bloomkit:{N:s<i>}`.
pub fn segment(name: &str, i: u32) -> String {
    format!("bloomkit:{{{name}:s{i}}}")
}

/// Segment `i` of layer `j` of a scalable filter: `bloomkit:{N:l<j>:s<i>}`.
pub fn layer_segment(name: &str, layer: u32, i: u32) -> String {
    format!("bloomkit:{{{name}:l{layer}:s{i}}}")
}

/// A temporary merge key next to `segment_key` (same hash tag): `<segment_key>:tmp:<id>`.
pub fn temp(segment_key: &str, id: u64) -> String {
    format!("{segment_key}:tmp:{id:016x}")
}

/// Redisson's config hash for the filter at `name`: `{name}:config`, or `name:config` when the
/// name already contains `{`.
pub fn redisson_config(name: &str) -> String {
    if name.contains('{') {
        format!("{name}:config")
    } else {
        format!("{{{name}}}:config")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis Cluster's hash tag: the part between the first `{` and the next `}`, if non-empty.
    fn tag(key: &str) -> &str {
        if let Some(a) = key.find('{') {
            if let Some(b) = key[a + 1..].find('}') {
                if b > 0 {
                    return &key[a + 1..a + 1 + b];
                }
            }
        }
        key
    }

    #[test]
    fn names_and_tags() {
        assert_eq!(meta("f"), "bloomkit:{f}:meta");
        assert_eq!(tag(&segment("f", 3)), "f:s3");
        assert_eq!(tag(&layer_segment("f", 2, 3)), "f:l2:s3");
        let s = segment("f", 7);
        assert_eq!(tag(&temp(&s, 42)), tag(&s));
        assert_ne!(tag(&segment("f", 0)), tag(&segment("f", 1)));
        assert_eq!(redisson_config("bf"), "{bf}:config");
        assert_eq!(redisson_config("{x}bf"), "{x}bf:config");
        assert!(check_name("a:b").is_ok());
        assert!(matches!(check_name(""), Err(Error::InvalidName(_))));
        assert!(check_name("a{b").is_err());
        assert!(check_name("a}b").is_err());
    }
}
