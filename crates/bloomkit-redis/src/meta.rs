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

/// Writes the metadata if no filter `name` exists and then creates the segment keys
/// `key_of(0..)` of `layout` (one zero byte each, large ones grown in steps), checking the id as
/// creation does (docs/REDIS.md, section 5). `Ok(true)` if this call created the filter.
pub(crate) async fn create_with_segments(
    conn: &Connection,
    name: &str,
    id: &str,
    fields: &[(String, String)],
    key_of: &(dyn Fn(u32) -> String + Sync),
    layout: &RegisterLayout,
) -> Result<bool> {
    if !create_meta(conn, name, fields).await? {
        return Ok(false);
    }
    create_segments(&Keyspace::new(conn, name, key_of, true), id, layout).await?;
    Ok(true)
}

/// [`create_with_segments`] for `segments` segment keys `bloomkit:{E:ID:s<i>}` of one zero
/// byte, never grown (writes grow them): the counting filter's segments, the time-window
/// filter's anchors.
pub(crate) async fn create_with_byte_segments(
    conn: &Connection,
    name: &str,
    id: &str,
    fields: &[(String, String)],
    segments: u32,
) -> Result<bool> {
    let keys = SegmentKeys::with_id(name, id);
    let shape = RegisterLayout::from_shape(segments, 1, 1)?;
    create_with_segments(conn, name, id, fields, &move |s| keys.segment(s), &shape).await
}

/// A filter's stored metadata, read to make a handle.
pub(crate) struct Meta<'a> {
    /// The connection the handle uses.
    pub conn: &'a Connection,
    /// The filter's name.
    pub name: &'a str,
    /// The metadata hash.
    pub fields: &'a HashMap<String, String>,
    /// The hashing the caller gives (it must match the stored id); `None`: a handle that
    /// hashes nothing, only for deleting or expiring the filter.
    pub hashing: Option<Hashing>,
}

impl Meta<'_> {
    /// Field `f` as a number ([`Error::CorruptMetadata`] if missing or not one).
    pub fn num<T: std::str::FromStr>(&self, f: &str) -> Result<T> {
        num(self.name, self.fields, f)
    }

    /// Field `fpp`, a false-positive rate strictly between 0 and 1 ([`Error::CorruptMetadata`]
    /// naming the field otherwise: missing, not a number, NaN, 0, 1, negative, above 1).
    pub fn fpp(&self) -> Result<f64> {
        bloomkit::math::check_fpp(self.num("fpp")?)
            .map_err(|e| self.corrupt(format!("field fpp: {e}")))
    }

    /// [`Error::CorruptMetadata`] of this filter.
    pub fn corrupt(&self, reason: impl std::fmt::Display) -> Error {
        Error::CorruptMetadata {
            name: self.name.into(),
            reason: reason.to_string(),
        }
    }

    /// Checks `kind` and `scheme` (see [`check_head`]) and returns the hashing to use.
    pub fn head(&self, kind: &str, scheme: &str) -> Result<Hashing> {
        check_head(
            self.name,
            self.fields,
            kind,
            &[scheme],
            self.hashing.clone(),
        )
        .map(|(h, _)| h)
    }

    /// [`head`](Self::head) for a kind stored under one of several scheme names: returns the
    /// hashing to use and the index in `schemes` of the stored name.
    pub fn head_among(&self, kind: &str, schemes: &[&str]) -> Result<(Hashing, usize)> {
        check_head(self.name, self.fields, kind, schemes, self.hashing.clone())
    }

    /// The register layout of `segments` segments of `segment_words` words and `hashes` bits.
    pub fn register_layout(&self, segments: u32) -> Result<RegisterLayout> {
        RegisterLayout::from_shape(segments, self.num("segment_words")?, self.num("hashes")?)
            .map_err(|e| self.corrupt(e))
    }

    /// The id, segment keys and segment count of a layout-2 kind (see [`layout2_segments`]).
    pub fn layout2(&self, what: &str) -> Result<(String, SegmentKeys, u32)> {
        layout2_segments(self.name, self.fields, what)
    }
}

/// A filter kind that a handle is made for from its stored metadata.
pub(crate) trait Stored: Sized {
    /// The filter the metadata describes.
    fn from_meta(meta: &Meta<'_>) -> Result<Self>;

    /// A handle only for deleting or expiring the filter (it hashes nothing).
    fn for_maintenance(
        conn: &Connection,
        name: &str,
        fields: &HashMap<String, String>,
    ) -> Result<Self> {
        Self::from_meta(&Meta {
            conn,
            name,
            fields,
            hashing: None,
        })
    }
}

/// Opens the filter `name` of kind `T`, hashing with `hashing` (which must match the stored
/// id) or else the stored hashing.
pub(crate) async fn open<T: Stored>(
    conn: &Connection,
    name: &str,
    hashing: Option<Hashing>,
) -> Result<T> {
    let (fields, hashing) = open_meta(conn, name, hashing).await?;
    T::from_meta(&Meta {
        conn,
        name,
        fields: &fields,
        hashing: Some(hashing),
    })
}

/// [`Error::Core`] `TooLarge` for a new filter of `bits` bits that needs more than
/// [`MAX_SEGMENTS`] segments (per generation, for a time window).
pub(crate) fn check_segment_count(segments: u32, bits: u64) -> Result<()> {
    if segments > MAX_SEGMENTS {
        return Err(bloomkit::Error::TooLarge {
            bits,
            limit: "more than 65,536 segments: use larger segments",
        }
        .into());
    }
    Ok(())
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

/// Checks the stored `kind`, that the stored `scheme` is one of `schemes`, and that `hashing`
/// (if any) is the stored one; returns the hashing to use (`None`: a handle that hashes
/// nothing, for deletion or expiry) and the index in `schemes` of the stored scheme.
pub(crate) fn check_head(
    name: &str,
    meta: &HashMap<String, String>,
    kind: &str,
    schemes: &[&str],
    hashing: Option<Hashing>,
) -> Result<(Hashing, usize)> {
    let stored_kind = field(name, meta, "kind")?;
    if stored_kind != kind {
        return Err(incompatible(Incompatibility::Kind(
            stored_kind.into(),
            kind.into(),
        )));
    }
    let stored_scheme = field(name, meta, "scheme")?;
    let Some(scheme) = schemes.iter().position(|&s| s == stored_scheme) else {
        return Err(incompatible(Incompatibility::Scheme(
            stored_scheme.into(),
            schemes.join(" or "),
        )));
    };
    let stored = field(name, meta, "hashing")?;
    match hashing {
        Some(h) if stored != h.id() => Err(incompatible(Incompatibility::Hashing(
            stored.into(),
            h.id(),
        ))),
        Some(h) => Ok((h, scheme)),
        None => Ok((Hashing::Xxh3, scheme)),
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
    Ok((id, keys, segment_count(name, meta)?))
}

/// The stored `segments` field, at most [`MAX_SEGMENTS`].
pub(crate) fn segment_count(name: &str, meta: &HashMap<String, String>) -> Result<u32> {
    let segments: u32 = num(name, meta, "segments")?;
    if segments > MAX_SEGMENTS {
        return Err(Error::CorruptMetadata {
            name: name.into(),
            reason: format!("{segments} segments (at most {MAX_SEGMENTS})"),
        });
    }
    Ok(segments)
}

/// [`Error::Core`] of an incompatibility.
pub(crate) fn incompatible(i: Incompatibility) -> Error {
    Error::Core(bloomkit::Error::Incompatible(i))
}
