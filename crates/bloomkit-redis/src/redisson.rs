//! [`RedissonFilter`]: bit-exact interop with Redisson's `RBloomFilter`.
//!
//! Redisson keeps the bitmap as a Redis string at the filter's name and its parameters in the
//! hash `{name}:config` (fields `size`, `hashIterations`, `expectedInsertions`,
//! `falseProbability`). Elements are hashed with HighwayHash-128 under Redisson's fixed key
//! ([`bloomkit::Hashing::Highway`]) and probed with [`bloomkit::Scheme::Redisson`] over the exact,
//! unrounded `size`; bit `i` is Redis bit offset `i` (most significant first in each byte).
//! Element bytes are the codec's: `StringCodec` is the UTF-8 of a string (`&str` keys),
//! `ByteArrayCodec` the raw bytes (`&[u8]` keys).
//!
//! Filters created here also get a random id in the config (field `bloomkitId`, which Redisson
//! ignores); every add checks, atomically with its write, that the config still has this
//! filter's size, hash count and id, so a writer whose filter was deleted or re-created fails
//! with [`Error::Gone`] instead of writing into the new one or re-creating the bitmap.

use crate::conn::{script_cmd, Connection};
use crate::error::{Error, Result};
use crate::filter::num;
use crate::keys;
use crate::reads::{self, Field};
use bloomkit::{math, Hashing, Incompatibility, Key, Params, Scheme, Spec};
use std::collections::HashMap;

/// Redisson's largest size (bits).
pub const REDISSON_MAX_SIZE: u64 = 4_294_967_294;

/// A Redisson-compatible Bloom filter (async API).
#[derive(Debug, Clone)]
pub struct RedissonFilter {
    conn: Connection,
    name: String,
    config_key: String,
    spec: Spec,
    id: Option<String>,
}

impl RedissonFilter {
    /// Like Redisson's `tryInit(n, p)`: creates the config with Redisson's sizing, or opens the
    /// existing filter if its size and hash count are the same (else
    /// [`bloomkit::Error::Incompatible`]).
    pub async fn create(conn: &Connection, name: &str, n: u64, p: f64) -> Result<Self> {
        let params = math::redisson_params(n, p)?;
        let config_key = keys::redisson_config(name);
        // Java's Double.toString and Rust's Display agree on the shortest round-trip digits
        // for the usual probabilities (0.01, 0.03, 1.0E-4 differs only in style; Redisson
        // parses either with Double.parseDouble).
        let fields: Vec<(String, String)> = vec![
            ("size".into(), params.bits.to_string()),
            ("hashIterations".into(), params.hashes.to_string()),
            ("expectedInsertions".into(), n.to_string()),
            ("falseProbability".into(), p.to_string()),
            ("bloomkitId".into(), crate::filter::new_id()?),
        ];
        let created = crate::filter::create_hash(conn, &config_key, &fields).await?;
        let f = Self::open(conn, name).await?;
        if !created {
            let have = f.spec.params();
            if have.bits != params.bits {
                return Err(bloomkit::Error::Incompatible(Incompatibility::Bits(
                    have.bits,
                    params.bits,
                ))
                .into());
            }
            if have.hashes != params.hashes {
                return Err(bloomkit::Error::Incompatible(Incompatibility::Hashes(
                    have.hashes,
                    params.hashes,
                ))
                .into());
            }
        }
        Ok(f)
    }

    /// Opens a filter that Redisson (or [`create`](Self::create)) initialised.
    pub async fn open(conn: &Connection, name: &str) -> Result<Self> {
        let config_key = keys::redisson_config(name);
        let meta: HashMap<String, String> =
            conn.query(redis::cmd("HGETALL").arg(&config_key)).await?;
        if meta.is_empty() {
            return Err(Error::NotFound(name.into()));
        }
        let bits: u64 = num(name, &meta, "size")?;
        let hashes: u32 = num(name, &meta, "hashIterations")?;
        if bits == 0 || bits > REDISSON_MAX_SIZE || hashes == 0 || hashes > math::MAX_HASHES {
            return Err(Error::CorruptMetadata {
                name: name.into(),
                reason: format!("size {bits} / hashIterations {hashes} out of range"),
            });
        }
        let spec = Spec::new(Params { bits, hashes }, Scheme::Redisson, Hashing::Highway)?;
        Ok(RedissonFilter {
            conn: conn.clone(),
            name: name.into(),
            config_key,
            spec,
            id: meta.get("bloomkitId").cloned(),
        })
    }

    /// The spec (size, `k`, Redisson scheme, HighwayHash).
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The name of the config hash.
    pub fn config_key(&self) -> &str {
        &self.config_key
    }

    /// Adds elements; returns for each whether it was new. One script per call (atomic for the
    /// whole batch): the config check, then `BITFIELD SET u1 ...`.
    pub async fn insert_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let k = self.spec.hashes() as usize;
        let script = &*crate::segments::REDISSON_ADD_SCRIPT;
        let mut cmd = script_cmd(
            script,
            &[&self.name, &self.config_key],
            3 + 4 * k * keys.len(),
        );
        cmd.arg(self.spec.bits())
            .arg(self.spec.hashes())
            .arg(self.id.as_deref().unwrap_or(""));
        for key in keys {
            for p in self.spec.positions(key) {
                cmd.arg("SET").arg("u1").arg(p).arg(1);
            }
        }
        let old: Vec<u8> = self
            .conn
            .eval(script, &cmd)
            .await
            .map_err(|e| e.about(&self.name))?;
        Ok(old.chunks(k).map(|c| c.contains(&0)).collect())
    }

    /// Adds one element; `true` if it was new.
    pub async fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.insert_batch(&[key]).await?[0])
    }

    /// Checks elements: `BITFIELD_RO ... GET u1` of their bits, or, where a batch's bits lie
    /// close together, `GETRANGE` of the bytes that hold them (as the plain filter's checks).
    pub async fn contains_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let k = self.spec.hashes() as usize;
        // Field `t·k + j`: bit `j` of element `t`.
        let fields: Vec<Field> = keys
            .iter()
            .flat_map(|key| self.spec.positions(key))
            .map(|offset| Field { offset, width: 1 })
            .collect();
        // Then the config, on the same connection: it must still describe this filter.
        let mut config = redis::cmd("HMGET");
        config
            .arg(&self.config_key)
            .arg(&["size", "hashIterations", "bloomkitId"]);
        let mut bits = vec![0u8; fields.len()];
        let config = reads::read_then(&self.conn, &self.name, &fields, Some(config), |f, v| {
            bits[f] = v as u8
        })
        .await?;
        let config: Vec<Option<String>> =
            crate::segments::parse(config.unwrap_or(redis::Value::Nil))?;
        let same = config.first().cloned().flatten() == Some(self.spec.bits().to_string())
            && config.get(1).cloned().flatten() == Some(self.spec.hashes().to_string())
            && (self.id.is_none() || config.get(2).cloned().flatten() == self.id);
        if !same {
            return Err(Error::Gone(self.name.clone()));
        }
        Ok(bits.chunks(k).map(|c| !c.contains(&0)).collect())
    }

    /// Checks one element.
    pub async fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.contains_batch(&[key]).await?[0])
    }

    /// Redisson's `count()`: `round(-size / k · ln(1 - BITCOUNT / size))`.
    pub async fn count(&self) -> Result<u64> {
        let ones = self.set_bits().await?;
        Ok(math::estimate_count(self.spec.bits(), self.spec.hashes(), ones).round() as u64)
    }

    /// Bits currently set (`BITCOUNT` of the bitmap).
    pub async fn set_bits(&self) -> Result<u64> {
        self.conn
            .query(redis::cmd("BITCOUNT").arg(&self.name))
            .await
    }

    /// Deletes the bitmap and the config.
    pub async fn delete(self) -> Result<()> {
        let _: i64 = self.conn.query(redis::cmd("DEL").arg(&self.name)).await?;
        let _: i64 = self
            .conn
            .query(redis::cmd("DEL").arg(&self.config_key))
            .await?;
        Ok(())
    }
}

impl RedissonFilter {
    /// The bitmap's key (the filter's name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The connection.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }
}
