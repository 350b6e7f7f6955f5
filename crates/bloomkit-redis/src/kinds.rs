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
