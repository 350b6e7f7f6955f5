//! Targets: where a filter lives (a file or a Redis key) and the few operations every command
//! needs on it: open, create, insert/test/remove batches, describe, snapshot, save.
//!
//! Commands never touch files or Redis directly; they go through [`Target`], so a new kind of
//! filter or a new place to keep one is a change to this file only.

use crate::cli::{Kind, SchemeName};
use crate::redis_target::{RedisTarget, RedisUrl};
use anyhow::{anyhow, bail, Context as _, Result};
use bloomkit::codec::native::Design;
use bloomkit::storage::CounterWidth;
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, Filter, Hashing,
    ScalableBloomFilter, ScalableConfig, Spec,
};
use std::path::{Path, PathBuf};

/// Where a filter lives, parsed from a TARGET argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file in bloomkit's native format.
    File(PathBuf),
    /// A key in Redis (`redis://HOST:PORT/NAME`) or Redis Cluster (`redis+cluster://...`).
    Redis(RedisUrl),
}

impl Location {
    /// Parses a TARGET: a `redis://` or `redis+cluster://` URL, or else a file path.
    pub fn parse(target: &str) -> Result<Location> {
        if let Some(url) = RedisUrl::parse(target)? {
            return Ok(Location::Redis(url));
        }
        if target.is_empty() {
            bail!("empty target (give a file path or a redis:// URL)");
        }
        Ok(Location::File(PathBuf::from(target)))
    }

    /// A short name for messages (never a password).
    pub fn display(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Redis(url) => url.display(),
        }
    }
}

/// Options that apply to every target (from global flags).
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The SipHash key from `--key-file`, if any.
    pub key: Option<Hashing>,
}

impl Context {
    /// Reads `--key-file`: 16 raw bytes, or 32 hex digits (surrounding whitespace ignored).
    pub fn load_key(path: &Path) -> Result<Hashing> {
        let bytes =
            std::fs::read(path).with_context(|| format!("reading key file {}", path.display()))?;
        let key: [u8; 16] = if bytes.len() == 16 {
            bytes.try_into().expect("16 bytes")
        } else {
            let text = std::str::from_utf8(&bytes).unwrap_or("").trim();
            let mut out = Vec::new();
            crate::items::ItemFormat::Hex
                .encode(text.as_bytes(), &mut out)
                .ok()
                .and_then(|_| out.try_into().ok())
                .ok_or_else(|| {
                    anyhow!(
                        "key file {}: expected 16 raw bytes or 32 hex digits",
                        path.display()
                    )
                })?
        };
        Ok(Hashing::siphash(key))
    }

    fn keys(&self) -> Vec<Hashing> {
        self.key.iter().cloned().collect()
    }
}

/// What to create.
#[derive(Debug, Clone, Copy)]
pub struct NewFilter {
    /// Design capacity.
    pub capacity: u64,
    /// Design FPR.
    pub fpp: f64,
    /// Kind (None: the target's default).
    pub kind: Option<Kind>,
    /// Scheme.
    pub scheme: SchemeName,
}

/// Builds an empty in-memory filter.
pub fn build(new: NewFilter, ctx: &Context) -> Result<AnyFilter> {
    let preset = new.scheme.preset();
    let mut spec = Spec::preset(preset, new.capacity, new.fpp)?;
    if let Some(key) = &ctx.key {
        if new.scheme != SchemeName::Default {
            bail!(
                "--key-file gives keyed SipHash hashing, which --scheme {} cannot use (it hashes as that library does); use --scheme default",
                new.scheme.name()
            );
        }
        spec = spec.with_hashing(key.clone());
    }
    Ok(match new.kind.unwrap_or(Kind::Classic) {
        Kind::Classic => BloomFilter::from_spec(spec)?.into(),
        Kind::Counting => CountingBloomFilter::from_spec(spec, CounterWidth::Four)?.into(),
        Kind::Scalable => {
            if new.scheme != SchemeName::Default {
                bail!(
                    "scalable filters use bloomkit's own scheme only; drop --scheme {}",
                    new.scheme.name()
                );
            }
            let mut config = ScalableConfig::new(new.capacity.max(1), new.fpp);
            config.hashing = spec.hashing().clone();
            ScalableBloomFilter::with_config(config)?.into()
        }
        Kind::Blocked => {
            if new.scheme != SchemeName::Default {
                bail!(
                    "blocked filters use bloomkit's own scheme only; drop --scheme {}",
                    new.scheme.name()
                );
            }
            let (blocks, layout) = bloomkit::probe::blocked::default_params(new.capacity, new.fpp)?;
            BlockedBloomFilter::with_layout(blocks, layout, spec.hashing().clone())?.into()
        }
    })
}

/// The CLI's name for the way a spec maps elements, or a description if it matches no
/// preset.
pub fn scheme_name(spec: &Spec) -> String {
    let keyed = matches!(spec.hashing(), Hashing::SipHash13(_));
    for s in [
        SchemeName::Default,
        SchemeName::Guava,
        SchemeName::Guava32,
        SchemeName::Go,
        SchemeName::Redisson,
    ] {
        let p = s.preset();
        if p.scheme() == spec.scheme()
            && (p.hashing() == *spec.hashing() || (keyed && s == SchemeName::Default))
        {
            return s.name().to_string();
        }
    }
    format!("{}+{}", spec.scheme().name(), spec.hashing().id())
}

/// The spec of a filter, or `None` for a blocked filter (its layout replaces the spec).
fn spec_of(filter: &AnyFilter) -> Option<&Spec> {
    Some(match filter {
        AnyFilter::Classic(f) => f.spec(),
        AnyFilter::Counting(f) => f.spec(),
        AnyFilter::Scalable(f) => f.layers()[0].filter().spec(),
        _ => return None,
    })
}

/// One layer of a scalable filter, for `info`.
#[derive(Debug, Clone)]
pub struct LayerDesc {
    /// Elements the layer was sized for.
    pub capacity: u64,
    /// Its FPR target.
    pub fpp: f64,
    /// Bits.
    pub bits: u64,
    /// Hash functions.
    pub hashes: u32,
    /// New elements inserted into it.
    pub inserted: u64,
    /// Fraction of bits set.
    pub fill_ratio: f64,
}

/// What `info` reports.
#[derive(Debug, Clone)]
pub struct Description {
    /// Kind name.
    pub kind: &'static str,
    /// Scheme name (see [`scheme_name`]).
    pub scheme: String,
    /// The hash function's id.
    pub hashing: String,
    /// Bits (or counters); summed over layers for scalable filters.
    pub bits: u64,
    /// Hash functions (of the newest layer for scalable filters).
    pub hashes: u32,
    /// Bytes of bits or counters.
    pub bytes: u64,
    /// Design capacity (initial capacity for scalable filters), if known.
    pub capacity: Option<u64>,
    /// Design FPR, if known.
    pub fpp: Option<f64>,
    /// How a blocked filter places an element's bits in its block (`split-block-256`,
    /// `split-block`, `bits-K`; `register` for the Redis filter's 64-bit words); `None` for
    /// the other kinds.
    pub layout: Option<String>,
    /// Estimated distinct elements.
    pub estimated_items: f64,
    /// Fraction of bits (or counters) that are non-zero.
    pub fill_ratio: f64,
    /// Current estimated FPR.
    pub estimated_fpp: f64,
    /// Layers (scalable only).
    pub layers: Option<Vec<LayerDesc>>,
}

/// The name `info` gives a blocked filter's in-block layout.
pub fn layout_name(layout: bloomkit::probe::blocked::BlockLayout) -> String {
    use bloomkit::probe::blocked::BlockLayout;
    match layout {
        BlockLayout::SplitBlock256 => "split-block-256".into(),
        BlockLayout::SplitBlock => "split-block".into(),
        BlockLayout::Bits(k) => format!("bits-{k}"),
    }
}

/// Describes an in-memory filter.
pub fn describe(filter: &AnyFilter, design: Option<Design>) -> Description {
    let (scheme, hashing) = match (spec_of(filter), filter) {
        (Some(spec), _) => (scheme_name(spec), spec.hashing().id()),
        (None, AnyFilter::Blocked(f)) => ("default".to_string(), f.hashing().id()),
        (None, other) => (other.kind().to_string(), String::new()),
    };
    let (bits, fill, capacity, fpp, layers) = match filter {
        AnyFilter::Blocked(f) => (
            f.bits(),
            f.count_ones() as f64 / f.bits() as f64,
            design.map(|d| d.capacity),
            design.map(|d| d.fpp),
            None,
        ),
        AnyFilter::Classic(f) => (
            f.bits(),
            f.fill_ratio(),
            design.map(|d| d.capacity),
            design.map(|d| d.fpp),
            None,
        ),
        AnyFilter::Counting(f) => (
            f.spec().bits(),
            f.count_nonzero() as f64 / f.spec().bits() as f64,
            design.map(|d| d.capacity),
            design.map(|d| d.fpp),
            None,
        ),
        AnyFilter::Scalable(f) => {
            let info = f.layer_info();
            let bits: u64 = info.iter().map(|l| l.bits).sum();
            let ones: f64 = info.iter().map(|l| l.fill_ratio * l.bits as f64).sum();
            (
                bits,
                ones / bits as f64,
                Some(f.config().initial_capacity),
                Some(f.config().fpp),
                Some(
                    info.iter()
                        .map(|l| LayerDesc {
                            capacity: l.capacity,
                            fpp: l.fpp,
                            bits: l.bits,
                            hashes: l.hashes,
                            inserted: l.inserted,
                            fill_ratio: l.fill_ratio,
                        })
                        .collect(),
                ),
            )
        }
        // A kind added to the library later: what the Filter trait tells.
        other => (other.params().bits, f64::NAN, None, None, None),
    };
    Description {
        kind: filter.kind().name(),
        scheme,
        hashing,
        bits,
        hashes: filter.params().hashes,
        bytes: filter.memory_bytes() as u64,
        capacity,
        fpp,
        estimated_items: filter.estimated_len(),
        fill_ratio: fill,
        estimated_fpp: filter.estimated_fpp(),
        layout: match filter {
            AnyFilter::Blocked(f) => Some(layout_name(f.layout())),
            _ => None,
        },
        layers,
    }
}

/// A filter in memory, loaded from (and saved back to) a file.
#[derive(Debug)]
struct Loaded {
    filter: AnyFilter,
    design: Option<Design>,
    dirty: bool,
}

/// Where an open filter's state is.
#[derive(Debug)]
enum Backend {
    /// In memory, from a file.
    Memory(Loaded),
    /// In Redis.
    Redis(RedisTarget),
}

/// An opened filter and where it goes back to.
#[derive(Debug)]
pub struct Target {
    location: Location,
    backend: Backend,
}

impl Target {
    /// Whether a filter exists at `location`.
    pub fn exists(location: &Location) -> Result<bool> {
        match location {
            Location::File(p) => Ok(p.exists()),
            Location::Redis(url) => RedisTarget::exists(url),
        }
    }

    /// Opens an existing filter.
    pub fn open(location: &Location, ctx: &Context) -> Result<Target> {
        let backend = match location {
            Location::File(path) => {
                if !path.exists() {
                    bail!(
                        "{}: no such filter (create it with: bloomkit create {} --capacity N --fpp P)",
                        path.display(),
                        path.display()
                    );
                }
                let decoded = bloomkit::file::load(path, &ctx.keys()).map_err(|e| match e {
                    bloomkit::Error::MissingKey(_) => {
                        anyhow!("{}: {e} (pass the key with --key-file)", path.display())
                    }
                    e => anyhow!("{}: {e}", path.display()),
                })?;
                Backend::Memory(Loaded {
                    filter: decoded.filter,
                    design: decoded.design,
                    dirty: false,
                })
            }
            Location::Redis(url) => Backend::Redis(RedisTarget::open(url, ctx)?),
        };
        Ok(Target {
            location: location.clone(),
            backend,
        })
    }

    /// A new filter at `location` (files are written by [`Target::save`]). Refuses to replace
    /// an existing one unless `force`.
    pub fn create(
        location: &Location,
        new: NewFilter,
        force: bool,
        ctx: &Context,
    ) -> Result<Target> {
        if !force && Self::exists(location)? {
            bail!(
                "{}: a filter already exists (use --force to replace it)",
                location.display()
            );
        }
        match location {
            Location::File(_) => {
                let filter = build(new, ctx)?;
                let design = Some(Design {
                    capacity: new.capacity,
                    fpp: new.fpp,
                });
                Self::replace(location, filter, design, true)
            }
            Location::Redis(url) => Ok(Target {
                location: location.clone(),
                backend: Backend::Redis(RedisTarget::create(url, new, force, ctx)?),
            }),
        }
    }

    /// A target that will hold `filter` (saved by [`Target::save`]). Refuses to replace an
    /// existing filter unless `force`. Only files can take a whole filter.
    pub fn replace(
        location: &Location,
        filter: AnyFilter,
        design: Option<Design>,
        force: bool,
    ) -> Result<Target> {
        match location {
            Location::File(_) => {
                if !force && Self::exists(location)? {
                    bail!(
                        "{}: a filter already exists (use --force to replace it)",
                        location.display()
                    );
                }
                Ok(Target {
                    location: location.clone(),
                    backend: Backend::Memory(Loaded {
                        filter,
                        design,
                        dirty: true,
                    }),
                })
            }
            Location::Redis(_) => bail!(
                "{}: a whole filter can only be written to a file target (Redis filters are filled with add)",
                location.display()
            ),
        }
    }

    /// Where the filter lives.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The filter's kind.
    pub fn kind(&self) -> bloomkit::Kind {
        match &self.backend {
            Backend::Memory(m) => m.filter.kind(),
            Backend::Redis(r) => r.kind(),
        }
    }

    /// Whether large adds can take a bulk path (see [`Target::insert_batch`]).
    pub fn has_bulk(&self) -> bool {
        match &self.backend {
            Backend::Memory(_) => false,
            Backend::Redis(r) => r.has_bulk(),
        }
    }

    /// Inserts every element of a batch; `new[i]` says whether element `i` was new. With
    /// `bulk` on a target that [has a bulk path](Target::has_bulk), the batch takes it.
    pub fn insert_batch(
        &mut self,
        elements: &[Vec<u8>],
        new: &mut Vec<bool>,
        bulk: bool,
    ) -> Result<()> {
        new.clear();
        match &mut self.backend {
            Backend::Redis(r) => r.insert_batch(elements, new, bulk)?,
            Backend::Memory(m) => {
                for e in elements {
                    let was_new = m
                        .filter
                        .insert_encoded(e)
                        .map_err(|err| anyhow!("{}: {err}", self.location.display()))?;
                    new.push(was_new);
                }
                m.dirty = true;
            }
        }
        Ok(())
    }

    /// Tests every element of a batch.
    pub fn contains_batch(&self, elements: &[Vec<u8>], present: &mut Vec<bool>) -> Result<()> {
        present.clear();
        match &self.backend {
            Backend::Memory(m) => {
                present.extend(elements.iter().map(|e| m.filter.contains_encoded(e)));
            }
            Backend::Redis(r) => r.contains_batch(elements, present)?,
        }
        Ok(())
    }

    /// Removes every element of a batch (counting filters only). Fails naming the first
    /// element (by index) that cannot be removed; a file target is then not saved.
    pub fn remove_batch(
        &mut self,
        elements: &[Vec<u8>],
    ) -> std::result::Result<(), (usize, anyhow::Error)> {
        match &mut self.backend {
            Backend::Memory(m) => {
                if !matches!(m.filter, AnyFilter::Counting(_)) {
                    return Err((
                        0,
                        anyhow!(
                            "{}: a {} filter cannot remove items; only counting filters can (create one with --kind counting)",
                            self.location.display(),
                            m.filter.kind()
                        ),
                    ));
                }
                for (i, e) in elements.iter().enumerate() {
                    m.filter
                        .remove_encoded(e)
                        .map_err(|err| (i, anyhow!("{err}")))?;
                }
                m.dirty = true;
                Ok(())
            }
            Backend::Redis(r) => Err((
                0,
                anyhow!(
                    "{}: a {} filter cannot remove items; only counting filters can, and they live in files",
                    self.location.display(),
                    r.kind()
                ),
            )),
        }
    }

    /// Describes the filter.
    pub fn describe(&self) -> Result<Description> {
        match &self.backend {
            Backend::Memory(m) => Ok(describe(&m.filter, m.design)),
            Backend::Redis(r) => r.describe(),
        }
    }

    /// The filter as it is now, with its design (file targets only).
    pub fn snapshot(&self) -> Result<(AnyFilter, Option<Design>)> {
        match &self.backend {
            Backend::Memory(m) => Ok((m.filter.clone(), m.design)),
            Backend::Redis(_) => bail!(
                "{}: a Redis filter cannot be read back whole; merge, intersect and export take file targets",
                self.location.display()
            ),
        }
    }

    /// Writes changes back: an atomic replace for files.
    pub fn save(&mut self) -> Result<()> {
        match (&mut self.backend, &self.location) {
            (Backend::Memory(m), Location::File(path)) => {
                if m.dirty {
                    bloomkit::file::save(path, &m.filter, m.design)
                        .map_err(|e| anyhow!("saving {}: {e}", path.display()))?;
                    m.dirty = false;
                }
                Ok(())
            }
            // Redis applies every batch as it goes.
            (Backend::Redis(_), _) => Ok(()),
            (Backend::Memory(_), Location::Redis(_)) => {
                unreachable!("memory backends come from files")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        assert_eq!(
            Location::parse("a/b.bloom").unwrap(),
            Location::File("a/b.bloom".into())
        );
        assert!(matches!(
            Location::parse("redis+cluster://h:1/x").unwrap(),
            Location::Redis(u) if u.cluster && u.name == "x"
        ));
        assert!(Location::parse("redis://h:1").is_err());
        assert!(Location::parse("http://x/y").is_err());
    }

    #[test]
    fn scheme_names_round_trip() {
        for s in [
            SchemeName::Default,
            SchemeName::Guava,
            SchemeName::Guava32,
            SchemeName::Go,
            SchemeName::Redisson,
        ] {
            let spec = Spec::preset(s.preset(), 1000, 0.01).unwrap();
            assert_eq!(scheme_name(&spec), s.name());
        }
    }
}
