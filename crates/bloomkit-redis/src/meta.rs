//! The metadata steps every filter kind of layout 2 shares: the common fields, creating the
//! metadata and the segment keys, opening by name, and checking the stored kind and hashing.

use crate::conn::Connection;
use crate::error::{Error, Result};
use crate::filter::{
    create_meta, create_segments, field, num, read_meta, segment_keys, stored_hashing,
    FilterOptions, LAYOUT_VERSION, MAX_SEGMENTS,
};
use crate::keys::{self, SegmentKeys};
use crate::segments::Keyspace;
use bloomkit::probe::register::RegisterLayout;
use bloomkit::{Hashing, Incompatibility};
use std::collections::HashMap;

/// The fields every kind starts with: `kind`, `version`, `id`, `scheme`, `hashing`, and
/// `hash_key` when the options store a keyed hash's key.
pub(crate) fn head_fields(
    kind: &str,
    id: &str,
    scheme: &str,
    options: &FilterOptions,
) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = vec![
        ("kind".into(), kind.into()),
        ("version".into(), LAYOUT_VERSION.to_string()),
        ("id".into(), id.into()),
        ("scheme".into(), scheme.into()),
        ("hashing".into(), options.hashing.id()),
    ];
    if let (true, Hashing::SipHash13(key)) = (options.store_key, &options.hashing) {
        let hex: String = key.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        fields.push(("hash_key".into(), hex));
    }
    fields
}

/// Writes the metadata if no filter `name` exists and then creates `segments` segment keys of
/// one zero byte (never grown: writes grow them), checking the id as creation does
/// (docs/REDIS.md, section 5). `Ok(true)` if this call created the filter.
pub(crate) async fn create_with_segments(
    conn: &Connection,
    name: &str,
    id: &str,
    fields: &[(String, String)],
    segments: u32,
) -> Result<bool> {
    if !create_meta(conn, name, fields).await? {
        return Ok(false);
    }
    let shape = RegisterLayout::from_shape(segments, 1, 1)?;
    let keys = SegmentKeys::with_id(name, id);
    let key_of = move |s| keys.segment(s);
    let ks = Keyspace {
        conn,
        name,
        key_of: &key_of,
        guarded: true,
    };
    create_segments(&ks, id, &shape).await?;
    Ok(true)
}

/// The metadata of filter `name` and the hashing to use: `hashing` if given (a keyed or
/// custom hash), else the stored one.
pub(crate) async fn open_meta(
    conn: &Connection,
    name: &str,
    hashing: Option<Hashing>,
) -> Result<(HashMap<String, String>, Hashing)> {
    keys::check_name(name)?;
    let meta = read_meta(conn, name).await?;
    let hashing = match hashing {
        Some(h) => h,
        None => stored_hashing(name, &meta)?,
    };
    Ok((meta, hashing))
}

/// Checks the stored `kind` and `scheme`, and that `hashing` (if any) is the stored one;
/// returns the hashing to use (`None`: a handle that hashes nothing, for deletion or expiry).
pub(crate) fn check_head(
    name: &str,
    meta: &HashMap<String, String>,
    kind: &str,
    scheme: &str,
    hashing: Option<Hashing>,
) -> Result<Hashing> {
    let stored_kind = field(name, meta, "kind")?;
    if stored_kind != kind {
        return Err(incompatible(Incompatibility::Kind(
            stored_kind.into(),
            kind.into(),
        )));
    }
    if field(name, meta, "scheme")? != scheme {
        return Err(Error::CorruptMetadata {
            name: name.into(),
            reason: "unknown scheme".into(),
        });
    }
    let stored = field(name, meta, "hashing")?;
    match hashing {
        Some(h) if stored != h.id() => Err(incompatible(Incompatibility::Hashing(
            stored.into(),
            h.id(),
        ))),
        Some(h) => Ok(h),
        None => Ok(Hashing::Xxh3),
    }
}

/// The segment keys, filter id and segment count of a layout-2 filter's metadata: `what`
/// names the kind in the error when the id is missing ("a counting filter").
pub(crate) fn layout2_segments(
    name: &str,
    meta: &HashMap<String, String>,
    what: &str,
) -> Result<(String, SegmentKeys, u32)> {
    let corrupt = |reason: String| Error::CorruptMetadata {
        name: name.into(),
        reason,
    };
    let (id, keys) = segment_keys(name, meta)?;
    let id = id.ok_or_else(|| corrupt(format!("{what} needs layout 2")))?;
    let segments: u32 = num(name, meta, "segments")?;
    if segments > MAX_SEGMENTS {
        return Err(corrupt(format!(
            "{segments} segments (at most {MAX_SEGMENTS})"
        )));
    }
    Ok((id, keys, segments))
}

/// [`Error::Core`] of an incompatibility.
pub(crate) fn incompatible(i: Incompatibility) -> Error {
    Error::Core(bloomkit::Error::Incompatible(i))
}
