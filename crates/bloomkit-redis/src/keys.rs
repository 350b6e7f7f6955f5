//! Key names in Redis (see docs/REDIS.md, "Key layout").
//!
//! Every key of a bloomkit filter named `N` starts with `bloomkit:{`. The part in braces is the
//! Redis Cluster hash tag. The metadata is `bloomkit:{N}:meta`. The segments of a filter created
//! by this version (layout 2) carry the filter's random id `ID` (a generation: a filter deleted
//! and re-created under the same name gets new segment keys), and the name is escaped so that
//! it contains no `:` (`%` → `%25`, `:` → `%3A`):
//!
//! - segment `i`: `bloomkit:{E:ID:s<i>}`;
//! - segment `i` of layer `j` of a scalable filter: `bloomkit:{E:ID:l<j>:s<i>}`;
//! - segment `i` of generation `g` of a time-window filter: `bloomkit:{E:ID:s<i>}:g<g>` (the
//!   segment key itself is then the generation's anchor, see [`crate::window`]).
//!
//! With `E` free of `:`, the parts of a key name are unambiguous, so the keys of two different
//! filters can never be the same key (a scalable filter `X` and a filter named `X:l0` included).
//! Segments land in different slots and spread over a cluster's nodes; a segment's temporary
//! merge key (`<segment>:tmp`, which only exists inside the merge script) shares its tag.
//!
//! Filters of layout 1 (no id) keep their old names: `bloomkit:{N:s<i>}` and
//! `bloomkit:{N:l<j>:s<i>}`.

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

/// `name` with `%` and `:` percent-encoded, so that it contains no `:`.
pub fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '%' => out.push_str("%25"),
            ':' => out.push_str("%3A"),
            c => out.push(c),
        }
    }
    out
}

/// The segment key names of one filter: layout 2 (with the filter's id) or layout 1 (legacy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentKeys {
    /// Everything before `s<i>}` (or before `l<j>:s<i>}`).
    prefix: String,
}

impl SegmentKeys {
    /// The keys of a layout-2 filter with this id.
    pub fn with_id(name: &str, id: &str) -> Self {
        SegmentKeys {
            prefix: format!("bloomkit:{{{}:{id}:", escape(name)),
        }
    }

    /// The keys of a layout-1 filter (no id, name not escaped).
    pub fn legacy(name: &str) -> Self {
        SegmentKeys {
            prefix: format!("bloomkit:{{{name}:"),
        }
    }

    /// What every key name of the filter starts with: `bloomkit:{E:ID:` (layout 2).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Segment `i` of a plain filter.
    pub fn segment(&self, i: u32) -> String {
        format!("{}s{i}}}", self.prefix)
    }

    /// Segment `i` of layer `j` of a scalable filter.
    pub fn layer_segment(&self, layer: u32, i: u32) -> String {
        format!("{}l{layer}:s{i}}}", self.prefix)
    }

    /// Segment `i` of generation `g` of a time-window filter: `<segment i>:g<g>`, in the slot
    /// of segment `i`'s key (its anchor), so one script or pipeline reaches every generation
    /// of a segment.
    pub fn generation_segment(&self, generation: u64, i: u32) -> String {
        format!("{}s{i}}}:g{generation}", self.prefix)
    }
}

/// The temporary merge key next to `segment_key` (same hash tag): `<segment_key>:tmp`. It
/// exists only while the merge script runs.
pub fn temp(segment_key: &str) -> String {
    format!("{segment_key}:tmp")
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
        let k = SegmentKeys::with_id("f", "ab12");
        assert_eq!(k.segment(3), "bloomkit:{f:ab12:s3}");
        assert_eq!(tag(&k.layer_segment(2, 3)), "f:ab12:l2:s3");
        assert_eq!(
            k.generation_segment(20_000, 3),
            "bloomkit:{f:ab12:s3}:g20000"
        );
        assert_eq!(tag(&k.generation_segment(7, 3)), tag(&k.segment(3)));
        let s = k.segment(7);
        assert_eq!(tag(&temp(&s)), tag(&s));
        assert_ne!(tag(&k.segment(0)), tag(&k.segment(1)));
        let old = SegmentKeys::legacy("f");
        assert_eq!(old.segment(3), "bloomkit:{f:s3}");
        assert_eq!(old.layer_segment(2, 3), "bloomkit:{f:l2:s3}");
        assert_eq!(redisson_config("bf"), "{bf}:config");
        assert_eq!(redisson_config("{x}bf"), "{x}bf:config");
        assert!(check_name("a:b").is_ok());
        assert!(matches!(check_name(""), Err(Error::InvalidName(_))));
        assert!(check_name("a{b").is_err());
        assert!(check_name("a}b").is_err());
    }

    /// A scalable filter `X` and a plain filter `X:l0` (or any names whose escaped forms could
    /// be confused) never share a key, even with the same id.
    #[test]
    fn keys_of_different_filters_never_collide() {
        let names = [
            "X", "X:l0", "X:l0:s0", "X%3Al0", "X:ID", "X:", ":X", "%", "%25",
        ];
        let mut all = std::collections::HashSet::new();
        for n in names {
            let k = SegmentKeys::with_id(n, "ID");
            let mut mine = vec![meta(n)];
            for i in 0..3 {
                mine.push(k.segment(i));
                for j in 0..3 {
                    mine.push(k.layer_segment(j, i));
                    mine.push(k.generation_segment(u64::from(j), i));
                }
            }
            for key in mine {
                assert!(all.insert(key.clone()), "{key} of {n} already used");
            }
        }
        assert_eq!(escape("a:b%c"), "a%3Ab%25c");
    }
}
