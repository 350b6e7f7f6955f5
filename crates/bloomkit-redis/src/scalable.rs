//! [`ScalableRedisFilter`]: a filter in Redis that grows by adding layers, shared by any number
//! of concurrent clients.
//!
//! The layer series is the core library's ([`bloomkit::ScalableConfig::layer_target`]): layer
//! `j` holds `capacity · growthʲ` elements at FPR `p · (1 − r) · rʲ` (`r` = tightening,
//! default ½), so the compound FPR is at most `Σ p(1 − r)rʲ < p` however many layers there are.
//! Every layer is a register-blocked filter of its own segments.
//!
//! ## Growth protocol (see docs/REDIS.md)
//! Before adding, a client *reserves* room in the newest layer with one Lua script on the
//! metadata hash (a compare-and-set): the script checks the filter id and that the client's
//! idea of the newest layer is still current, and grants `min(wanted, capacity − fill)` slots
//! by incrementing `fill:<j>`. If the layer is full and the client wanted more, the script
//! says so; the client creates the next layer's segment keys (named after the filter id, so
//! every client computes the same names) and calls the script again, which then appends the
//! next layer's description and bumps `layers`. A client whose idea was stale gets nothing,
//! re-reads the metadata and retries. So all clients agree on one layer list, and no layer
//! ever receives more reservations than its capacity.

use crate::conn::Connection;
use crate::error::{Error, Result};
use crate::filter::{
    create_segments, delete_meta, field, new_id, num, read_meta, segment_keys, FilterOptions,
    MAX_SEGMENTS, REGISTER_SCHEME,
};
use crate::keys::{self, SegmentKeys};
use crate::meta::{create_with_segments, head_fields, Meta, Stored};
use crate::segments::{self, AddMethod, Keyspace};
use bloomkit::probe::register::{RegisterLayout, RegisterProbe};
use bloomkit::scalable::LayerInfo;
use bloomkit::{Digest, Hashing, Incompatibility, Key};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The most layers a scalable filter may have; metadata claiming more is corrupt.
pub const MAX_LAYERS: u32 = 64;

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

    /// The core library's configuration with these parameters (its layer series is the one
    /// used here).
    pub fn config(&self) -> bloomkit::ScalableConfig {
        let mut c = bloomkit::ScalableConfig::new(self.capacity.max(1), self.fpp);
        c.growth = u32::try_from(self.growth).unwrap_or(u32::MAX);
        c.tightening = self.tightening;
        c
    }

    /// The parameters of layer `j` (deterministic: every client computes the same).
    pub fn layer(&self, j: u32) -> Result<Layer> {
        let (capacity, p) = self.config().layer_target(j).ok_or_else(too_many_layers)?;
        let layout = RegisterLayout::for_capacity(capacity, p, self.max_segment_bits)?;
        Ok(Layer { layout, capacity })
    }

    fn validate(&self) -> Result<()> {
        bloomkit::math::check_fpp(self.fpp)?;
        let growth_ok = (2..=u64::from(u32::MAX)).contains(&self.growth);
        let tightening_ok = self.tightening > 0.0 && self.tightening < 1.0;
        if !(growth_ok && tightening_ok) {
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

/// `KEYS[1]` = meta. ARGV: filter id ('' for a layout-1 filter), expected newest layer index,
/// wanted slots, '1' if the next layer's segment keys exist, next layer description, next
/// layer capacity. Returns {newest layer index, granted slots, layer count after, 1 if the
/// next layer is needed but not yet created}.
static RESERVE_SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
local id = redis.call('HGET', KEYS[1], 'id')
local layers = tonumber(redis.call('HGET', KEYS[1], 'layers'))
if not layers or (ARGV[1] ~= '' and id ~= ARGV[1]) then
  return redis.error_reply('BLOOMKIT_GONE the filter was deleted or re-created')
end
local cur = layers - 1
if cur ~= tonumber(ARGV[2]) then return {cur, 0, layers, 0} end
local cap = tonumber(redis.call('HGET', KEYS[1], 'cap:' .. cur))
local fill = tonumber(redis.call('HGET', KEYS[1], 'fill:' .. cur) or '0')
local want = tonumber(ARGV[3])
local take = math.max(0, math.min(want, cap - fill))
if take > 0 then redis.call('HINCRBY', KEYS[1], 'fill:' .. cur, take) end
if fill + take >= cap and want > take then
  if ARGV[4] ~= '1' then return {cur, take, layers, 1} end
  redis.call('HSET', KEYS[1], 'layer:' .. layers, ARGV[5], 'cap:' .. layers, ARGV[6],
    'fill:' .. layers, 0, 'layers', layers + 1)
  layers = layers + 1
end
return {cur, take, layers, 0}
"#,
    )
});

fn describe(l: &RegisterLayout) -> String {
    format!("{},{},{}", l.segments(), l.segment_words(), l.hashes())
}

/// What [`ScalableRedisFilter::info`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalableInfo {
    /// The parameters.
    pub params: ScalableParams,
    /// Hash function id ([`Hashing::id`]).
    pub hashing: String,
    /// The filter id (`None` for layout-1 filters).
    pub id: Option<String>,
    /// Each layer: capacity, target FPR, bits, `k`, reserved slots and fill.
    pub layers: Vec<LayerInfo>,
    /// Bits over all layers.
    pub bits: u64,
    /// Bits set over all layers.
    pub set_bits: u64,
    /// Estimated number of distinct elements (the sum of the layers' estimates).
    pub estimated_count: f64,
    /// Estimated current compound FPR, `1 − Π(1 − fprⱼ)` from each layer's fill.
    pub estimated_fpp: f64,
}

/// A scalable Bloom filter in Redis (async API). See the module docs.
#[derive(Clone)]
pub struct ScalableRedisFilter {
    conn: Connection,
    name: String,
    params: ScalableParams,
    hashing: Hashing,
    id: Option<String>,
    keys: SegmentKeys,
    layers: Arc<RwLock<Vec<Layer>>>,
}

debug_fields!(ScalableRedisFilter {
    name,
    params,
    hashing
});

impl ScalableRedisFilter {
    /// Creates the scalable filter `name` (or opens it if it exists with the same parameters),
    /// hashing with XXH3.
    pub async fn create(conn: &Connection, name: &str, params: ScalableParams) -> Result<Self> {
        Self::create_with(conn, name, params, FilterOptions::default()).await
    }

    /// [`create`](Self::create) with the hashing of `options` (and its
    /// [`store_key`](FilterOptions::store_key)); its segment size is `params`'.
    pub async fn create_with(
        conn: &Connection,
        name: &str,
        params: ScalableParams,
        options: FilterOptions,
    ) -> Result<Self> {
        keys::check_name(name)?;
        params.validate()?;
        let first = params.layer(0)?;
        let id = new_id()?;
        let mut fields = head_fields("scalable", &id, REGISTER_SCHEME, &options);
        fields.extend([
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
        ]);
        let keys = SegmentKeys::with_id(name, &id);
        let key_of = move |s| keys.layer_segment(0, s);
        let created =
            create_with_segments(conn, name, &id, &fields, &key_of, &first.layout).await?;
        let f = Self::open_with(conn, name, options.hashing.clone()).await?;
        if !created && f.params != params {
            return Err(Error::Core(bloomkit::Error::Incompatible(
                Incompatibility::Kind(
                    format!("scalable {:?}", f.params),
                    format!("scalable {params:?}"),
                ),
            )));
        }
        Ok(f)
    }

    /// Opens an existing scalable filter by name (a keyed one needs its key stored in the
    /// metadata, else [`Error::KeyRequired`]: use [`open_with`](Self::open_with)).
    pub async fn open(conn: &Connection, name: &str) -> Result<Self> {
        crate::meta::open(conn, name, None).await
    }

    /// Opens an existing scalable filter with this hash function, which must match the stored
    /// hashing id.
    pub async fn open_with(conn: &Connection, name: &str, hashing: Hashing) -> Result<Self> {
        crate::meta::open(conn, name, Some(hashing)).await
    }

    fn load_layers(&self, meta: &HashMap<String, String>) -> Result<()> {
        let name = &self.name;
        if meta.get("id") != self.id.as_ref() {
            return Err(Error::Gone(name.clone()));
        }
        let count: u32 = num(name, meta, "layers")?;
        let corrupt = |reason: String| Error::CorruptMetadata {
            name: name.clone(),
            reason,
        };
        if count == 0 || count > MAX_LAYERS {
            return Err(corrupt(format!("{count} layers (1 to {MAX_LAYERS})")));
        }
        let mut layers = Vec::with_capacity(count as usize);
        for j in 0..count {
            let desc = field(name, meta, &format!("layer:{j}"))?;
            let bad = || corrupt(format!("bad layer description {desc:?}"));
            let parts: Vec<&str> = desc.split(',').collect();
            if parts.len() != 3 {
                return Err(bad());
            }
            let segments: u32 = parts[0].parse().map_err(|_| bad())?;
            if segments > MAX_SEGMENTS {
                return Err(bad());
            }
            let layout = RegisterLayout::from_shape(
                segments,
                parts[1].parse().map_err(|_| bad())?,
                parts[2].parse().map_err(|_| bad())?,
            )
            .map_err(|_| bad())?;
            layers.push(Layer {
                layout,
                capacity: num(name, meta, &format!("cap:{j}"))?,
            });
        }
        *self.layers.write().unwrap_or_else(|e| e.into_inner()) = layers;
        Ok(())
    }

    async fn reload(&self) -> Result<HashMap<String, String>> {
        let meta = read_meta(&self.conn, &self.name)
            .await
            .map_err(|e| match e {
                Error::NotFound(n) => Error::Gone(n),
                e => e,
            })?;
        self.load_layers(&meta)?;
        Ok(meta)
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

    /// The filter id (`None` for layout-1 filters).
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The digest of each key, in order.
    fn digests<K: Key>(&self, keys: &[K]) -> Vec<Digest> {
        keys.iter()
            .map(|k| k.with_bytes(|b| self.digest(b)))
            .collect()
    }

    fn digest(&self, bytes: &[u8]) -> Digest {
        let [h1, h2] = self.hashing.hash128(bytes);
        Digest {
            h1,
            h2,
            ..Digest::default()
        }
    }

    /// Runs `f` with the keyspace of layer `j`.
    async fn with_layer<T>(
        &self,
        j: u32,
        f: impl AsyncFnOnce(&Keyspace<'_>) -> Result<T>,
    ) -> Result<T> {
        let key_of = |s| self.keys.layer_segment(j, s);
        f(&Keyspace::new(
            &self.conn,
            &self.name,
            &key_of,
            self.id.is_some(),
        ))
        .await
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
            let hits = self
                .with_layer(j as u32, async |ks| segments::check(ks, &probes).await)
                .await?;
            for (&i, h) in idx.iter().zip(hits) {
                found[i] |= h;
            }
        }
        Ok(found)
    }

    /// Checks a batch against every layer (one pipeline of reads per layer segment touched).
    pub async fn contains_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let d = self.digests(keys);
        self.reload().await?;
        self.check_digests(&d).await
    }

    /// Checks one element.
    pub async fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.contains_batch(&[key]).await?[0])
    }

    /// Adds a batch; returns for each element whether it was new. Elements already present in
    /// any layer are skipped; the rest are reserved in, and added to, the newest layer.
    pub async fn insert_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        let d = self.digests(keys);
        self.reload().await?;
        let present = self.check_digests(&d).await?;
        let mut todo: Vec<usize> = (0..d.len()).filter(|&i| !present[i]).collect();
        let mut new = vec![false; d.len()];
        let meta_key = keys::meta(&self.name);
        let id = self.id.clone().unwrap_or_default();
        let mut next_ready = false;
        while !todo.is_empty() {
            let layers = self.layers();
            let cur = (layers.len() - 1) as u32;
            let next = self.params.layer(cur + 1)?;
            let (at, take, after, need): (u32, u64, u32, u32) = self
                .conn
                .script(
                    &RESERVE_SCRIPT,
                    &[&meta_key],
                    &[
                        id.as_bytes(),
                        cur.to_string().as_bytes(),
                        todo.len().to_string().as_bytes(),
                        if next_ready { b"1" } else { b"0" },
                        describe(&next.layout).as_bytes(),
                        next.capacity.to_string().as_bytes(),
                    ],
                )
                .await
                .map_err(|e| e.about(&self.name))?;
            if at == cur && take > 0 {
                let take = (take as usize).min(todo.len());
                let batch: Vec<usize> = todo.drain(..take).collect();
                let probes: Vec<RegisterProbe> = batch
                    .iter()
                    .map(|&i| layers[cur as usize].layout.probe(&d[i]))
                    .collect();
                let flags = self
                    .with_layer(cur, async |ks| {
                        segments::add(ks, &probes, AddMethod::default()).await
                    })
                    .await?;
                for (&i, f) in batch.iter().zip(flags) {
                    new[i] = f;
                }
            }
            next_ready = false;
            if need == 1 && at == cur {
                // The newest layer is full: create the next layer's segment keys, then ask
                // again (the script appends the layer only once they exist).
                if self.layers().len() as u32 >= MAX_LAYERS {
                    return Err(too_many_layers());
                }
                self.create_layer(cur + 1, &next.layout).await?;
                next_ready = true;
            } else if at != cur || after as usize != layers.len() {
                self.reload().await?;
            }
        }
        Ok(new)
    }

    /// Creates the segment keys of layer `j` (not yet listed in the metadata). Layout 1 has
    /// lazily created segments: nothing to do.
    async fn create_layer(&self, j: u32, layout: &RegisterLayout) -> Result<()> {
        let Some(id) = &self.id else {
            return Ok(());
        };
        self.with_layer(j, async |ks| create_segments(ks, id, layout).await)
            .await?;
        self.inherit_expiry(j, layout).await
    }

    /// Adds one element; `true` if it was new.
    pub async fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        Ok(self.insert_batch(&[key]).await?[0])
    }

    /// Parameters, layers and current fill (one `BITCOUNT` per segment).
    pub async fn info(&self) -> Result<ScalableInfo> {
        let meta = self.reload().await?;
        let (mut bits, mut ones_total, mut items, mut miss) = (0u64, 0u64, 0.0, 1.0);
        let config = self.params.config();
        let mut layers = Vec::new();
        for (j, layer) in self.layers().iter().enumerate() {
            let ones = self
                .with_layer(j as u32, async |ks| {
                    segments::count_ones(ks, layer.layout.segments()).await
                })
                .await?;
            let est = layer.layout.estimate_count(ones);
            miss *= 1.0 - layer.layout.expected_fpp(est.round() as u64);
            bits += layer.layout.bits();
            ones_total += ones;
            items += est;
            layers.push(LayerInfo {
                capacity: layer.capacity,
                fpp: config.layer_target(j as u32).map_or(0.0, |(_, p)| p),
                bits: layer.layout.bits(),
                hashes: layer.layout.hashes(),
                inserted: num(&self.name, &meta, &format!("fill:{j}")).unwrap_or(0),
                fill_ratio: ones as f64 / layer.layout.bits() as f64,
            });
        }
        Ok(ScalableInfo {
            params: self.params,
            hashing: self.hashing.id(),
            id: self.id.clone(),
            layers,
            bits,
            set_bits: ones_total,
            estimated_count: items,
            estimated_fpp: 1.0 - miss,
        })
    }

    /// Estimated number of distinct elements (sum of the layers' estimates).
    pub async fn count(&self) -> Result<f64> {
        Ok(self.info().await?.estimated_count)
    }

    /// Reserved slots per layer (`fill:<j>`), as stored.
    pub async fn fills(&self) -> Result<Vec<u64>> {
        Ok(self
            .info()
            .await?
            .layers
            .iter()
            .map(|l| l.inserted)
            .collect())
    }

    /// The compound FPR bound `Σ p(1 − r)rʲ` over the current layers (always < `p`).
    pub fn fpp_bound(&self) -> f64 {
        let config = self.params.config();
        (0..self.layers().len() as u32)
            .filter_map(|j| config.layer_target(j).map(|(_, p)| p))
            .sum()
    }

    /// Deletes the metadata, then every layer's segments (including a next layer whose keys a
    /// client may have created but not yet listed).
    pub async fn delete(self) -> Result<()> {
        self.reload().await?;
        delete_meta(&self.conn, &self.name, self.id.as_deref()).await?;
        let layers = self.layers();
        let mut all: Vec<RegisterLayout> = layers.iter().map(|l| l.layout).collect();
        if let Ok(next) = self.params.layer(layers.len() as u32) {
            all.push(next.layout);
        }
        for (j, layout) in all.iter().enumerate() {
            self.with_layer(j as u32, async |ks| {
                segments::delete(ks, layout.segments()).await
            })
            .await?;
        }
        Ok(())
    }
}

impl Stored for ScalableRedisFilter {
    fn from_meta(m: &Meta<'_>) -> Result<Self> {
        let hashing = m.head("scalable", REGISTER_SCHEME)?;
        let (id, keys) = segment_keys(m.name, m.fields)?;
        let params = ScalableParams {
            capacity: m.num("capacity")?,
            fpp: m.num("fpp")?,
            growth: m.num("growth")?,
            tightening: m.num("tightening")?,
            max_segment_bits: m.num("max_segment_bits")?,
        };
        // Values no client could have written (a growth of 0, a tightening of 2, segments of
        // 0 bits) are refused now, not when the filter grows.
        params
            .validate()
            .and_then(|()| params.layer(0).map(drop))
            .map_err(|e| m.corrupt(e))?;
        let f = ScalableRedisFilter {
            conn: m.conn.clone(),
            name: m.name.into(),
            params,
            hashing,
            id,
            keys,
            layers: Arc::new(RwLock::new(Vec::new())),
        };
        f.load_layers(m.fields)?;
        Ok(f)
    }
}

impl ScalableRedisFilter {
    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The connection.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Every segment key of every listed layer and of the next one (which a client may have
    /// created but not yet listed), after re-reading the layer list.
    pub(crate) async fn all_segment_keys(&self) -> Result<Vec<String>> {
        self.reload().await?;
        let layers = self.layers();
        let mut all: Vec<RegisterLayout> = layers.iter().map(|l| l.layout).collect();
        if let Ok(next) = self.params.layer(layers.len() as u32) {
            all.push(next.layout);
        }
        Ok(all
            .iter()
            .enumerate()
            .flat_map(|(j, l)| (0..l.segments()).map(move |s| self.keys.layer_segment(j as u32, s)))
            .collect())
    }

    /// Gives the segment keys of layer `j` the metadata's time to live, if it has one (a
    /// filter given an expiry with `expire` before the layer existed).
    async fn inherit_expiry(&self, j: u32, layout: &RegisterLayout) -> Result<()> {
        let ttl: i64 = self
            .conn
            .query(redis::cmd("PTTL").arg(keys::meta(&self.name)))
            .await?;
        if ttl > 0 {
            for s in 0..layout.segments() {
                let _: i64 = self
                    .conn
                    .query(
                        redis::cmd("PEXPIRE")
                            .arg(self.keys.layer_segment(j, s))
                            .arg(ttl),
                    )
                    .await?;
            }
        }
        Ok(())
    }
}
