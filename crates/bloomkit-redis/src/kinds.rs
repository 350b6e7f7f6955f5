//! A stored filter of any kind found by name, for the operations that need no hashing:
//! deleting it ([`crate::delete_filter`]) and giving it a time to live
//! ([`crate::expire_filter`]).

use crate::error::{Error, Result};
use crate::filter::{field, read_meta};
use crate::meta::Stored;
use crate::{
    keys, Connection, CountingRedisFilter, RedisFilter, RedissonFilter, ScalableRedisFilter,
    TimeWindowRedisFilter,
};
use std::time::Duration;

/// A handle of any kind that hashes nothing.
pub(crate) enum AnyFilter {
    Register(RedisFilter),
    Scalable(ScalableRedisFilter),
    Counting(CountingRedisFilter),
    Window(TimeWindowRedisFilter),
    Redisson(RedissonFilter),
}

impl AnyFilter {
    /// The filter stored under `name`: bloomkit metadata first, then a Redisson config;
    /// `None` if there is neither. Metadata too corrupt to make a handle of (to list the
    /// segments): [`Error::CorruptMetadata`].
    pub async fn by_name(conn: &Connection, name: &str) -> Result<Option<Self>> {
        keys::check_name(name)?;
        let meta = match read_meta(conn, name).await {
            Ok(m) => m,
            Err(Error::NotFound(_)) => {
                return match RedissonFilter::open(conn, name).await {
                    Ok(f) => Ok(Some(AnyFilter::Redisson(f))),
                    Err(Error::NotFound(_)) => Ok(None),
                    Err(e) => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        Ok(Some(match field(name, &meta, "kind")? {
            "scalable" => AnyFilter::Scalable(Stored::for_maintenance(conn, name, &meta)?),
            crate::counting::COUNTING_KIND => {
                AnyFilter::Counting(Stored::for_maintenance(conn, name, &meta)?)
            }
            crate::window::TIME_WINDOW_KIND => {
                AnyFilter::Window(Stored::for_maintenance(conn, name, &meta)?)
            }
            _ => AnyFilter::Register(Stored::for_maintenance(conn, name, &meta)?),
        }))
    }

    /// Deletes the filter (metadata first, then every key).
    pub async fn delete(self) -> Result<()> {
        match self {
            AnyFilter::Register(f) => f.delete().await,
            AnyFilter::Scalable(f) => f.delete().await,
            AnyFilter::Counting(f) => f.delete().await,
            AnyFilter::Window(f) => f.delete().await,
            AnyFilter::Redisson(f) => f.delete().await,
        }
    }

    /// Gives the filter and every one of its keys the time to live `ttl`.
    pub async fn expire(&self, ttl: Duration) -> Result<()> {
        match self {
            AnyFilter::Register(f) => f.expire(ttl).await,
            AnyFilter::Scalable(f) => f.expire(ttl).await,
            AnyFilter::Counting(f) => f.expire(ttl).await,
            AnyFilter::Window(f) => f.expire(ttl).await,
            AnyFilter::Redisson(f) => f.expire(ttl).await,
        }
    }
}

/// What [`purge_filter`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Purge {
    /// Nothing was stored under the name.
    Nothing,
    /// A filter was deleted whole (its metadata could be read: [`crate::delete_filter`]).
    Deleted,
    /// The metadata was corrupt: it was deleted, and so were the `keys` keys named after the
    /// filter's id (`bloomkit:{E:ID:…}`, found with `SCAN`).
    CorruptDeleted {
        /// Segment (and generation) keys deleted besides the metadata.
        keys: u64,
    },
    /// The metadata was corrupt and was deleted, but the filter's other keys could not be
    /// identified: why, and which keys may remain.
    MetadataOnly {
        /// Why the keys could not be found.
        why: String,
    },
}

/// Deletes whatever filter is stored under `name`, also when its metadata is too corrupt to
/// open it: then the metadata goes first (stopping its writers' creation of anything new),
/// and the keys named after the filter's id, `bloomkit:{E:ID:…}` (docs/REDIS.md, section 2:
/// no other filter has keys of that form), are found with `SCAN … MATCH` and deleted. Without a
/// valid id (layout 1, or an unreadable id) the keys cannot be told from other filters' keys,
/// and on a cluster `SCAN` would have to run on every node: then only the metadata is deleted,
/// and [`Purge::MetadataOnly`] says why.
pub async fn purge_filter(conn: &Connection, name: &str) -> Result<Purge> {
    match crate::delete_filter(conn, name).await {
        Ok(true) => return Ok(Purge::Deleted),
        Ok(false) => return Ok(Purge::Nothing),
        Err(Error::CorruptMetadata { .. }) => {}
        Err(Error::WrongType(_)) => {
            // The metadata key holds no hash (someone else's value): no id to find keys by.
            let _: i64 = conn.query(redis::cmd("DEL").arg(keys::meta(name))).await?;
            return Ok(Purge::MetadataOnly {
                why: "its metadata key held another type of value than a hash, so no segment \
                      keys could be told apart from other filters' keys"
                    .into(),
            });
        }
        Err(e) => return Err(e),
    }
    let meta = read_meta(conn, name).await?;
    let layout2 = meta.get("version").map(String::as_str) == Some("2");
    let id = meta
        .get("id")
        .filter(|id| layout2 && (1..=32).contains(&id.len()))
        .filter(|id| id.bytes().all(|b| b.is_ascii_hexdigit()))
        .cloned();
    let _: i64 = conn.query(redis::cmd("DEL").arg(keys::meta(name))).await?;
    let Some(id) = id else {
        return Ok(Purge::MetadataOnly {
            why: "its metadata names no valid filter id (layout 2), so its segment keys cannot \
                  be told apart from other filters' keys"
                .into(),
        });
    };
    let pattern = format!(
        "{}*",
        glob_escape(keys::SegmentKeys::with_id(name, &id).prefix())
    );
    if conn.is_cluster() {
        return Ok(Purge::MetadataOnly {
            why: format!(
                "on a cluster its keys would have to be listed on every node; keys matching \
                 {pattern} may remain"
            ),
        });
    }
    let mut deleted = 0;
    let mut cursor = 0u64;
    loop {
        let (next, found): (u64, Vec<String>) = conn
            .query(
                redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000),
            )
            .await?;
        if !found.is_empty() {
            deleted += conn.query::<u64>(redis::cmd("DEL").arg(&found)).await?;
        }
        if next == 0 {
            return Ok(Purge::CorruptDeleted { keys: deleted });
        }
        cursor = next;
    }
}

/// `s` with Redis glob characters escaped.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
