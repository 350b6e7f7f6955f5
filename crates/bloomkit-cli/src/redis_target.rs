//! Redis targets: `redis://HOST:PORT/NAME` and `redis+cluster://HOST:PORT/NAME`, through
//! bloomkit-redis. The CLI is synchronous, so each target owns a small tokio runtime and waits
//! on each batch.
//!
//! | created with | kept in Redis as | `info` kind |
//! |---|---|---|
//! | (default) or `--kind blocked` | bloomkit-redis's register-blocked filter: every element's bits in one 64-bit word | `blocked` |
//! | `--scheme redisson` | Redisson's own `RBloomFilter` layout (Java services can share it) | `classic` |
//! | `--kind scalable` | bloomkit-redis's scalable filter (layers grow as it fills) | `scalable` |

use crate::cli::{Kind, SchemeName};
use crate::target::{Context, Description, NewFilter};
use anyhow::{anyhow, bail, Result};
use bloomkit::scalable::LayerInfo;
use bloomkit_redis::{
    Connection, Error as RedisError, FilterOptions, Options, RedisFilter, RedissonFilter,
    ScalableParams, ScalableRedisFilter,
};
use tokio::runtime::Runtime;

/// A filter in Redis.
enum Remote {
    Register(RedisFilter),
    Redisson(RedissonFilter),
    Scalable(ScalableRedisFilter),
}

/// An open Redis target.
pub struct RedisTarget {
    rt: Runtime,
    conn: Connection,
    name: String,
    display: String,
    remote: Remote,
}

impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTarget")
            .field("target", &self.display)
            .finish()
    }
}

/// Connects; returns the runtime and the connection.
fn connect(addr: &str, cluster: bool, display: &str) -> Result<(Runtime, Connection)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("starting the Redis client: {e}"))?;
    let url = format!("redis://{addr}/");
    let options = Options::default();
    let conn = rt
        .block_on(async {
            if cluster {
                Connection::open_cluster(&[url.as_str()], &options).await
            } else {
                Connection::open(&url, &options).await
            }
        })
        .map_err(|e| anyhow!("{display}: {e} (is Redis running at {addr}?)"))?;
    Ok((rt, conn))
}

/// What is stored under `name`: "register", "scalable", "redisson", or None.
fn stored_kind(rt: &Runtime, conn: &Connection, name: &str) -> Result<Option<String>, RedisError> {
    rt.block_on(async {
        let kind: Option<String> = conn
            .query(
                redis::cmd("HGET")
                    .arg(bloomkit_redis::keys::meta(name))
                    .arg("kind"),
            )
            .await?;
        if kind.is_some() {
            return Ok(kind);
        }
        let redisson: i64 = conn
            .query(redis::cmd("EXISTS").arg(bloomkit_redis::keys::redisson_config(name)))
            .await?;
        Ok((redisson == 1).then(|| "redisson".to_string()))
    })
}

impl RedisTarget {
    fn err(&self, e: RedisError) -> anyhow::Error {
        anyhow!("{}: {e}", self.display)
    }

    /// Whether a filter exists at this name.
    pub fn exists(addr: &str, cluster: bool, name: &str, display: &str) -> Result<bool> {
        let (rt, conn) = connect(addr, cluster, display)?;
        let kind = stored_kind(&rt, &conn, name).map_err(|e| anyhow!("{display}: {e}"))?;
        Ok(kind.is_some())
    }

    /// Opens an existing filter.
    pub fn open(
        addr: &str,
        cluster: bool,
        name: &str,
        display: &str,
        ctx: &Context,
    ) -> Result<Self> {
        let (rt, conn) = connect(addr, cluster, display)?;
        let fail = |e: RedisError| anyhow!("{display}: {e}");
        let kind = stored_kind(&rt, &conn, name).map_err(fail)?;
        let remote = match kind.as_deref() {
            None => bail!(
                "{display}: no such filter (create it with: bloomkit create {display} --capacity N --fpp P)"
            ),
            Some("register") => Remote::Register(
                rt.block_on(async {
                    match &ctx.key {
                        Some(h) => RedisFilter::open_with(&conn, name, h.clone()).await,
                        None => RedisFilter::open(&conn, name).await,
                    }
                })
                .map_err(|e| match e {
                    RedisError::Core(bloomkit::Error::Incompatible(_)) if ctx.key.is_none() => {
                        anyhow!("{display}: {e} (if the filter is keyed, pass its key with --key-file)")
                    }
                    e => fail(e),
                })?,
            ),
            Some("scalable") => Remote::Scalable(
                rt.block_on(ScalableRedisFilter::open(&conn, name))
                    .map_err(fail)?,
            ),
            Some("redisson") => Remote::Redisson(
                rt.block_on(RedissonFilter::open(&conn, name))
                    .map_err(fail)?,
            ),
            Some(other) => bail!("{display}: unknown filter kind {other:?} in Redis"),
        };
        Ok(RedisTarget {
            rt,
            conn,
            name: name.to_string(),
            display: display.to_string(),
            remote,
        })
    }

    /// Creates a filter (deleting an existing one first when `force`; the caller has checked
    /// that one exists only if `force`).
    pub fn create(
        addr: &str,
        cluster: bool,
        name: &str,
        display: &str,
        new: NewFilter,
        force: bool,
        ctx: &Context,
    ) -> Result<Self> {
        let (rt, conn) = connect(addr, cluster, display)?;
        let fail = |e: RedisError| anyhow!("{display}: {e}");
        let keyed = ctx.key.is_some();
        let kind = new.kind.unwrap_or(Kind::Blocked);
        let build = match (kind, new.scheme) {
            (Kind::Counting, _) => bail!(
                "{display}: counting filters cannot be kept in Redis; use a file target, or a blocked or scalable filter"
            ),
            (Kind::Classic, SchemeName::Default) => bail!(
                "{display}: in Redis bloomkit keeps blocked filters (the default), scalable ones, or Redisson's classic layout (--scheme redisson); drop --kind classic"
            ),
            (_, SchemeName::Guava | SchemeName::Guava32 | SchemeName::Go) => bail!(
                "{display}: --scheme {} filters live in memory, not in Redis; use a file target (and export it)",
                new.scheme.name()
            ),
            (Kind::Scalable, SchemeName::Redisson) | (Kind::Blocked, SchemeName::Redisson) => {
                bail!("{display}: Redisson's layout is a classic filter; use --kind classic with --scheme redisson")
            }
            (Kind::Scalable, _) if keyed => bail!(
                "{display}: scalable filters in Redis use XXH3 only; drop --key-file"
            ),
            (Kind::Classic, SchemeName::Redisson) if keyed => bail!(
                "{display}: Redisson's layout hashes with HighwayHash; drop --key-file"
            ),
            other => other,
        };
        if force {
            if let Ok(old) = Self::open(addr, cluster, name, display, ctx) {
                old.delete()?;
            }
        }
        let remote = rt.block_on(async {
            Ok::<_, RedisError>(match build {
                (Kind::Scalable, _) => Remote::Scalable(
                    ScalableRedisFilter::create(
                        &conn,
                        name,
                        ScalableParams::new(new.capacity, new.fpp),
                    )
                    .await?,
                ),
                (Kind::Classic, _) => Remote::Redisson(
                    RedissonFilter::create(&conn, name, new.capacity, new.fpp).await?,
                ),
                _ => {
                    let mut options = FilterOptions::default();
                    if let Some(h) = &ctx.key {
                        options.hashing = h.clone();
                    }
                    Remote::Register(
                        RedisFilter::create_with(&conn, name, new.capacity, new.fpp, options)
                            .await?,
                    )
                }
            })
        });
        let remote = remote.map_err(fail)?;
        Ok(RedisTarget {
            rt,
            conn,
            name: name.to_string(),
            display: display.to_string(),
            remote,
        })
    }

    /// Deletes the filter.
    pub fn delete(self) -> Result<()> {
        let display = self.display.clone();
        self.rt
            .block_on(async move {
                match self.remote {
                    Remote::Register(f) => f.delete().await,
                    Remote::Redisson(f) => f.delete().await,
                    Remote::Scalable(f) => f.delete().await,
                }
            })
            .map_err(|e| anyhow!("{display}: {e}"))
    }

    /// The kind, as `info` reports it.
    pub fn kind(&self) -> &'static str {
        match self.remote {
            Remote::Register(_) => "blocked",
            Remote::Redisson(_) => "classic",
            Remote::Scalable(_) => "scalable",
        }
    }

    /// Adds a batch; `new[i]` says whether element `i` was new. With `bulk`, a plain filter
    /// takes the batch through bloomkit-redis's bulk path (bits merged server-side with
    /// `BITOP OR`), which does not say which elements were new: `new` is then left empty.
    pub fn insert_batch(
        &mut self,
        elements: &[Vec<u8>],
        new: &mut Vec<bool>,
        bulk: bool,
    ) -> Result<()> {
        new.clear();
        let r = self.rt.block_on(async {
            match &self.remote {
                Remote::Register(f) if bulk => f.add_bulk(elements).await.map(|()| Vec::new()),
                Remote::Register(f) => f.add_many(elements).await,
                Remote::Redisson(f) => f.add_many(elements).await,
                Remote::Scalable(f) => f.add_many(elements).await,
            }
        });
        *new = r.map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Whether this target has a bulk path.
    pub fn has_bulk(&self) -> bool {
        matches!(self.remote, Remote::Register(_))
    }

    /// Estimated number of distinct elements.
    pub fn estimated_items(&self) -> Result<f64> {
        let r = self.rt.block_on(async {
            match &self.remote {
                Remote::Register(f) => f.count().await,
                Remote::Redisson(f) => f.count().await.map(|c| c as f64),
                Remote::Scalable(f) => f.count().await,
            }
        });
        r.map_err(|e| self.err(e))
    }

    /// Tests a batch.
    pub fn contains_batch(&self, elements: &[Vec<u8>], present: &mut Vec<bool>) -> Result<()> {
        let r = self.rt.block_on(async {
            match &self.remote {
                Remote::Register(f) => f.check_many(elements).await,
                Remote::Redisson(f) => f.check_many(elements).await,
                Remote::Scalable(f) => f.check_many(elements).await,
            }
        });
        *present = r.map_err(|e| self.err(e))?;
        Ok(())
    }

    fn bitcount(&self, key: String) -> Result<u64> {
        self.rt
            .block_on(self.conn.query::<u64>(redis::cmd("BITCOUNT").arg(key)))
            .map_err(|e| self.err(e))
    }

    /// Describes the filter.
    pub fn describe(&self) -> Result<Description> {
        match &self.remote {
            Remote::Register(f) => {
                let info = self.rt.block_on(f.info()).map_err(|e| self.err(e))?;
                Ok(Description {
                    kind: "blocked",
                    scheme: "default".into(),
                    hashing: info.hashing,
                    bits: info.bits,
                    hashes: info.hashes,
                    bytes: info.bits / 8,
                    capacity: (info.capacity > 0).then_some(info.capacity),
                    fpp: (info.fpp > 0.0).then_some(info.fpp),
                    estimated_items: info.estimated_count,
                    fill_ratio: info.set_bits as f64 / info.bits as f64,
                    estimated_fpp: info.estimated_fpp,
                    layout: Some("register".into()),
                    layers: None,
                })
            }
            Remote::Redisson(f) => {
                let spec = f.spec();
                let ones = self.bitcount(self.name.clone())?;
                let fill = ones as f64 / spec.bits() as f64;
                Ok(Description {
                    kind: "classic",
                    scheme: "redisson".into(),
                    hashing: spec.hashing().id(),
                    bits: spec.bits(),
                    hashes: spec.hashes(),
                    bytes: spec.bits().div_ceil(8),
                    capacity: None,
                    fpp: None,
                    estimated_items: bloomkit::math::estimate_count(
                        spec.bits(),
                        spec.hashes(),
                        ones,
                    ),
                    fill_ratio: fill,
                    estimated_fpp: bloomkit::math::fpp_from_fill(fill, spec.hashes()),
                    layout: None,
                    layers: None,
                })
            }
            Remote::Scalable(f) => {
                let fills = self.rt.block_on(f.fills()).map_err(|e| self.err(e))?;
                let params = *f.params();
                let mut layers = Vec::new();
                let (mut bits, mut ones_total, mut items, mut miss) = (0u64, 0u64, 0.0, 1.0);
                for (j, layer) in f.layers().iter().enumerate() {
                    let mut ones = 0;
                    for s in 0..layer.layout.segments() {
                        ones += self.bitcount(bloomkit_redis::keys::layer_segment(
                            &self.name, j as u32, s,
                        ))?;
                    }
                    let est = layer.layout.estimate_count(ones);
                    let fpp_now = layer.layout.expected_fpp(est.round() as u64);
                    miss *= 1.0 - fpp_now;
                    bits += layer.layout.bits();
                    ones_total += ones;
                    items += est;
                    layers.push(LayerInfo {
                        capacity: layer.capacity,
                        fpp: params.fpp
                            * (1.0 - params.tightening)
                            * params.tightening.powi(j as i32),
                        bits: layer.layout.bits(),
                        hashes: layer.layout.hashes(),
                        inserted: fills.get(j).copied().unwrap_or(0),
                        fill_ratio: ones as f64 / layer.layout.bits() as f64,
                    });
                }
                Ok(Description {
                    kind: "scalable",
                    scheme: "default".into(),
                    hashing: bloomkit::Hashing::Xxh3.id(),
                    bits,
                    hashes: layers.last().map_or(0, |l| l.hashes),
                    bytes: bits / 8,
                    capacity: Some(params.capacity),
                    fpp: Some(params.fpp),
                    estimated_items: items,
                    fill_ratio: ones_total as f64 / bits.max(1) as f64,
                    estimated_fpp: 1.0 - miss,
                    layout: None,
                    layers: Some(layers),
                })
            }
        }
    }
}
