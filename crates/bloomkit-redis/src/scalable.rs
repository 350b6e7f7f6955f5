//! [`ScalableRedisFilter`]: a filter in Redis that grows by adding layers, shared by any number
//! of concurrent clients.
//!
//! Layer `j` holds `capacity · growthʲ` elements at FPR `p · (1 − r) · rʲ` (`r` = tightening,
//! default ½), so the compound FPR is at most `Σ p(1 − r)rʲ < p` however many layers there are.
//! Every layer is a register-blocked filter of its own segments.
//!
//! ## Growth protocol (see docs/REDIS.md)
//! Before adding, a client *reserves* room in the newest layer with one Lua script on the
//! metadata hash (a compare-and-set): the script checks that the client's idea of the newest
//! layer is still current, grants `min(wanted, capacity − fill)` slots by incrementing
//! `fill:<j>`, and, if the layer is now full and the client wanted more, appends the next layer's
//! description (computed by the client, identical for every client) and bumps `layers`. A client
//! whose idea was stale gets nothing, re-reads the metadata and retries. So all clients agree on
//! one layer list, and no layer ever receives more reservations than its capacity: overfill is
//! zero (duplicates in concurrent batches can only make the real count lower).

use crate::conn::Connection;
use crate::error::{Error, Result};
use crate::filter::{field, hashing_by_id, num, LAYOUT_VERSION, REGISTER_SCHEME};
use crate::keys;
use crate::segments::{self, AddMethod};
use bloomkit::probe::register::{RegisterLayout, RegisterProbe};
use bloomkit::{Digest, Hashing, Incompatibility, Key};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// One layer as stored in the metadata.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layer {
    /// The layer's layout.
    pub layout: RegisterLayout,
    /// Elements it may receive.
    pub capacity: u64,
}

/// Parameters of a scalable filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalableParams {
    /// Capacity of the first layer.
    pub capacity: u64,
    /// Compound FPR bound.
    pub fpp: f64,
    /// Capacity factor between layers (≥ 2).
    pub growth: u64,
    /// FPR factor between layers, in (0, 1).
    pub tightening: f64,
    /// Largest segment, bits.
    pub max_segment_bits: u64,
}

impl ScalableParams {
    /// Capacity `capacity`, compound FPR `fpp`, growth 2, tightening ½, default segments.
    pub fn new(capacity: u64, fpp: f64) -> Self {
        ScalableParams {
            capacity,
            fpp,
            growth: 2,
            tightening: 0.5,
            max_segment_bits: crate::filter::DEFAULT_SEGMENT_BITS,
        }
    }

    /// The parameters of layer `j` (deterministic: every client computes the same).
    pub fn layer(&self, j: u32) -> Result<Layer> {
        let capacity = self
            .capacity
            .max(1)
            .checked_mul(self.growth.checked_pow(j).ok_or(too_many_layers())?)
            .ok_or(too_many_layers())?;
        let p = self.fpp * (1.0 - self.tightening) * self.tightening.powi(j as i32);
        let layout = RegisterLayout::for_capacity(capacity, p, self.max_segment_bits)?;
        Ok(Layer { layout, capacity })
    }

    fn validate(&self) -> Result<()> {
        bloomkit::math::check_fpp(self.fpp)?;
        if self.growth < 2 || !(self.tightening > 0.0 && self.tightening < 1.0) {
            return Err(bloomkit::Error::InvalidParameters(format!(
                "growth must be >= 2 and tightening in (0, 1), got {} and {}",
                self.growth, self.tightening
            ))
            .into());
        }
        Ok(())
    }
}

fn too_many_layers() -> Error {
    bloomkit::Error::TooLarge {
        bits: u64::MAX,
        limit: "scalable filter grew past 2^64 elements",
    }
    .into()
}

/// KEYS[1] = meta. ARGV: expected newest layer index, wanted slots, next layer description,
/// next layer capacity. Returns {newest layer index, granted slots, layer count after}.
static RESERVE_SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
local layers = tonumber(redis.call('HGET', KEYS[1], 'layers'))
if not layers then return redis.error_reply('ERR bloomkit: no such scalable filter') end
local cur = layers - 1
if cur ~= tonumber(ARGV[1]) then return {cur, 0, layers} end
local cap = tonumber(redis.call('HGET', KEYS[1], 'cap:' .. cur))
local fill = tonumber(redis.call('HGET', KEYS[1], 'fill:' .. cur) or '0')
local want = tonumber(ARGV[2])
local take = math.max(0, math.min(want, cap - fill))
if take > 0 then redis.call('HINCRBY', KEYS[1], 'fill:' .. cur, take) end
if fill + take >= cap and want > take then
  redis.call('HSET', KEYS[1], 'layer:' .. layers, ARGV[3], 'cap:' .. layers, ARGV[4],
    'fill:' .. layers, 0, 'layers', layers + 1)
  layers = layers + 1
end
return {cur, take, layers}
"#,
    )
});

static CREATE_SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"#,
    )
});

fn describe(l: &RegisterLayout) -> String {
    format!("{},{},{}", l.segments(), l.segment_words(), l.hashes())
}

/// A scalable Bloom filter in Redis (async API). See the module docs.
#[derive(Clone)]
pub struct ScalableRedisFilter {
    conn: Connection,
    name: String,
    params: ScalableParams,
    hashing: Hashing,
    layers: Arc<RwLock<Vec<Layer>>>,
}

impl std::fmt::Debug for ScalableRedisFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScalableRedisFilter")
            .field("name", &self.name)
            .field("params", &self.params)
            .finish()
    }
}

impl ScalableRedisFilter {
    /// Creates the scalable filter `name` (or opens it if it exists with the same parameters).
    pub async fn create(conn: &Connection, name: &str, params: ScalableParams) -> Result<Self> {
        keys::check_name(name)?;
        params.validate()?;
        let first = params.layer(0)?;
        let fields: Vec<(String, String)> = vec![
            ("kind".into(), "scalable".into()),
            ("version".into(), LAYOUT_VERSION.to_string()),
            ("scheme".into(), REGISTER_SCHEME.into()),
            ("hashing".into(), Hashing::Xxh3.id()),
            ("capacity".into(), params.capacity.to_string()),
            ("fpp".into(), params.fpp.to_string()),
            ("growth".into(), params.growth.to_string()),
            ("tightening".into(), params.tightening.to_string()),
            (
                "max_segment_bits".into(),
                params.max_segment_bits.to_string(),
            ),
            ("layers".into(), "1".into()),
            ("layer:0".into(), describe(&first.layout)),
            ("cap:0".into(), first.capacity.to_string()),
            ("fill:0".into(), "0".into()),
        ];
        let args: Vec<Vec<u8>> = fields
            .iter()
            .flat_map(|(k, v)| [k.as_bytes().to_vec(), v.as_bytes().to_vec()])
            .collect();
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let created: i64 = conn
            .script(&CREATE_SCRIPT, &[&keys::meta(name)], &refs)
            .await?;
        let f = Self::open(conn, name).await?;
        if created == 0 && f.params != params {
            return Err(Error::Core(bloomkit::Error::Incompatible(
                Incompatibility::Kind(
                    format!("scalable {:?}", f.params),
                    format!("scalable {params:?}"),
                ),
            )));
        }
        Ok(f)
    }

    /// Opens an existing scalable filter by name.
    pub async fn open(conn: &Connection, name: &str) -> Result<Self> {
        keys::check_name(name)?;
        let meta: HashMap<String, String> = conn
            .query(redis::cmd("HGETALL").arg(keys::meta(name)))
            .await?;
        if meta.is_empty() {
            return Err(Error::NotFound(name.into()));
        }
        let kind = field(name, &meta, "kind")?;
        if kind != "scalable" {
            return Err(Error::Core(bloomkit::Error::Incompatible(
                Incompatibility::Kind(kind.into(), "scalable".into()),
            )));
        }
        if num::<u32>(name, &meta, "version")? != LAYOUT_VERSION
            || field(name, &meta, "scheme")? != REGISTER_SCHEME
        {
            return Err(Error::CorruptMetadata {
                name: name.into(),
                reason: "unknown version or scheme".into(),
            });
        }
        let id = field(name, &meta, "hashing")?;
        let hashing = hashing_by_id(id).ok_or_else(|| {
            Error::Core(bloomkit::Error::Incompatible(Incompatibility::Hashing(
                id.into(),
                "xxh3".into(),
            )))
        })?;
        let params = ScalableParams {
            capacity: num(name, &meta, "capacity")?,
            fpp: num(name, &meta, "fpp")?,
            growth: num(name, &meta, "growth")?,
            tightening: num(name, &meta, "tightening")?,
            max_segment_bits: num(name, &meta, "max_segment_bits")?,
        };
        let f = ScalableRedisFilter {
            conn: conn.clone(),
            name: name.into(),
            params,
            hashing,
            layers: Arc::new(RwLock::new(Vec::new())),
        };
        f.load_layers(&meta)?;
        Ok(f)
    }

    fn load_layers(&self, meta: &HashMap<String, String>) -> Result<()> {
        let name = &self.name;
        let count: u32 = num(name, meta, "layers")?;
        let mut layers = Vec::with_capacity(count as usize);
        for j in 0..count {
            let desc = field(name, meta, &format!("layer:{j}"))?;
            let parts: Vec<&str> = desc.split(',').collect();
            let bad = || Error::CorruptMetadata {
                name: name.clone(),
                reason: format!("bad layer description {desc:?}"),
            };
            if parts.len() != 3 {
                return Err(bad());
            }
            let layout = RegisterLayout::from_shape(
                parts[0].parse().map_err(|_| bad())?,
                parts[1].parse().map_err(|_| bad())?,
                parts[2].parse().map_err(|_| bad())?,
            )
            .map_err(|_| bad())?;
            layers.push(Layer {
                layout,
                capacity: num(name, meta, &format!("cap:{j}"))?,
            });
        }
        if layers.is_empty() {
            return Err(Error::CorruptMetadata {
                name: name.clone(),
                reason: "no layers".into(),
            });
        }
        *self.layers.write().unwrap_or_else(|e| e.into_inner()) = layers;
        Ok(())
    }

    async fn reload(&self) -> Result<()> {
        let meta: HashMap<String, String> = self
            .conn
            .query(redis::cmd("HGETALL").arg(keys::meta(&self.name)))
            .await?;
        if meta.is_empty() {
            return Err(Error::NotFound(self.name.clone()));
        }
        self.load_layers(&meta)
    }

    /// The layers as this client last saw them.
    pub fn layers(&self) -> Vec<Layer> {
        self.layers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The parameters.
    pub fn params(&self) -> &ScalableParams {
        &self.params
    }

    fn digest(&self, bytes: &[u8]) -> Digest {
        let [h1, h2] = self.hashing.hash128(bytes);
        Digest {
            h1,
            h2,
            ..Digest::default()
        }
    }

    async fn check_digests(&self, digests: &[Digest]) -> Result<Vec<bool>> {
        let layers = self.layers();
        let mut found = vec![false; digests.len()];
        for (j, layer) in layers.iter().enumerate() {
            let idx: Vec<usize> = (0..digests.len()).filter(|&i| !found[i]).collect();
            if idx.is_empty() {
                break;
            }
            let probes: Vec<RegisterProbe> = idx
                .iter()
                .map(|&i| layer.layout.probe(&digests[i]))
                .collect();
            let name = self.name.clone();
            let j = j as u32;
            let key_of = move |s| keys::layer_segment(&name, j, s);
            let hits = segments::check(&self.conn, &key_of, &probes).await?;
            for (&i, h) in idx.iter().zip(hits) {
                found[i] |= h;
            }
        }
        Ok(found)
    }

    /// Checks a batch against every layer (one `BITFIELD_RO` per layer segment touched).
    pub async fn check_many<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let d: Vec<Digest> = keys
            .iter()
            .map(|k| k.with_bytes(|b| self.digest(b)))
            .collect();
        self.reload().await?;
        self.check_digests(&d).await
    }

    /// Checks one element.
    pub async fn check<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.check_many(&[key]).await?[0])
    }

    /// Adds a batch; returns for each element whether it was new. Elements already present in
    /// any layer are skipped; the rest are reserved in, and added to, the newest layer.
    pub async fn add_many<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let d: Vec<Digest> = keys
            .iter()
            .map(|k| k.with_bytes(|b| self.digest(b)))
            .collect();
        self.reload().await?;
        let present = self.check_digests(&d).await?;
        let mut todo: Vec<usize> = (0..d.len()).filter(|&i| !present[i]).collect();
        let mut new = vec![false; d.len()];
        let meta_key = keys::meta(&self.name);
        while !todo.is_empty() {
            let layers = self.layers();
            let cur = (layers.len() - 1) as u32;
            let next = self.params.layer(cur + 1)?;
            let (at, take, after): (u32, u64, u32) = self
                .conn
                .script(
                    &RESERVE_SCRIPT,
                    &[&meta_key],
                    &[
                        cur.to_string().as_bytes(),
                        todo.len().to_string().as_bytes(),
                        describe(&next.layout).as_bytes(),
                        next.capacity.to_string().as_bytes(),
                    ],
                )
                .await?;
            if at == cur && take > 0 {
                let take = (take as usize).min(todo.len());
                let batch: Vec<usize> = todo.drain(..take).collect();
                let layout = layers[cur as usize].layout;
                let probes: Vec<RegisterProbe> =
                    batch.iter().map(|&i| layout.probe(&d[i])).collect();
                let name = self.name.clone();
                let key_of = move |s| keys::layer_segment(&name, cur, s);
                let flags =
                    segments::add(&self.conn, &key_of, &probes, AddMethod::default()).await?;
                for (&i, f) in batch.iter().zip(flags) {
                    new[i] = f;
                }
            }
            if at != cur || after as usize != layers.len() {
                self.reload().await?;
            }
        }
        Ok(new)
    }

    /// Adds one element; `true` if it was new.
    pub async fn add<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.add_many(&[key]).await?[0])
    }

    /// Estimated number of distinct elements (sum of the layers' estimates).
    pub async fn count(&self) -> Result<f64> {
        self.reload().await?;
        let mut total = 0.0;
        for (j, layer) in self.layers().iter().enumerate() {
            let name = self.name.clone();
            let j = j as u32;
            let key_of = move |s| keys::layer_segment(&name, j, s);
            let ones = segments::count_ones(&self.conn, &key_of, layer.layout.segments()).await?;
            total += layer.layout.estimate_count(ones);
        }
        Ok(total)
    }

    /// Reserved slots per layer (`fill:<j>`), as stored.
    pub async fn fills(&self) -> Result<Vec<u64>> {
        let meta: HashMap<String, String> = self
            .conn
            .query(redis::cmd("HGETALL").arg(keys::meta(&self.name)))
            .await?;
        let count: u32 = num(&self.name, &meta, "layers")?;
        (0..count)
            .map(|j| num(&self.name, &meta, &format!("fill:{j}")))
            .collect()
    }

    /// The compound FPR bound `Σ p(1 − r)rʲ` over the current layers (always < `p`).
    pub fn fpp_bound(&self) -> f64 {
        let n = self.layers().len() as i32;
        let p = &self.params;
        (0..n)
            .map(|j| p.fpp * (1.0 - p.tightening) * p.tightening.powi(j))
            .sum()
    }

    /// Deletes every layer and the metadata.
    pub async fn delete(self) -> Result<()> {
        self.reload().await?;
        let _: i64 = self
            .conn
            .query(redis::cmd("DEL").arg(keys::meta(&self.name)))
            .await?;
        for (j, layer) in self.layers().iter().enumerate() {
            let name = self.name.clone();
            let j = j as u32;
            let key_of = move |s| keys::layer_segment(&name, j, s);
            segments::delete(&self.conn, &key_of, layer.layout.segments()).await?;
        }
        Ok(())
    }
}
