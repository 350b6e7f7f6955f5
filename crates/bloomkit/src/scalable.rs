//! The scalable Bloom filter (Almeida, Baquero, Preguiça & Hutchison, 2007): grows past its
//! planned capacity while keeping its false-positive bound.
//!
//! It is a list of classic filters, the *layers*. Layer `i` holds
//! `capacity_i = initial_capacity · growth^i` elements at FPR `p_i = p_0 · r^i`, where `r` is
//! the *tightening ratio*. An element tests present if any layer contains it, so the compound
//! FPR is at most the sum of the layers' FPRs, a geometric series:
//!
//! ```text
//! Σ p_i  <  p_0 / (1 - r)  =  p        with  p_0 = p · (1 - r)
//! ```
//!
//! so the bound holds by construction, however many layers are added. With the defaults
//! (`growth = 2`, `r = 0.5`, as RedisBloom), the first layer gets `p / 2`, the next `p / 4`,
//! and so on. A larger `r` (0.8–0.9, as Almeida et al. suggest) spends fewer bits on later
//! layers and more on the first.
//!
//! A new layer is added when the newest has received as many new elements as its capacity.
//! Inserts go to the newest layer only, and only if no layer already contains the element.
//!
//! ```
//! use bloomkit::ScalableBloomFilter;
//! let mut urls = ScalableBloomFilter::new(1_000, 0.01)?;
//! for i in 0..100_000u64 {
//!     urls.insert(&i)?;
//! }
//! assert!(urls.contains(&99_999u64));
//! assert!(urls.layers().len() > 1);
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::classic::BloomFilter;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::hash::Hashing;
use crate::key::Key;
use crate::math::{check_fpp, Params};
use crate::probe::Scheme;
use crate::spec::Spec;
use std::fmt;

/// How a [`ScalableBloomFilter`] grows, and where it stops.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalableConfig {
    /// Elements the first layer holds.
    pub initial_capacity: u64,
    /// The compound false-positive bound `p`.
    pub fpp: f64,
    /// Each layer holds `growth` times the elements of the previous one (at least 1).
    pub growth: u32,
    /// Each layer's FPR is `tightening` times the previous one's (in (0, 1)).
    pub tightening: f64,
    /// The probing scheme of every layer ([`Scheme::MixedDouble`] by default; a filter read
    /// from a file keeps the scheme it was written with).
    pub scheme: Scheme,
    /// At most this many layers; inserting past them fails with [`Error::Full`].
    pub max_layers: Option<u32>,
    /// At most this many elements in all (the sum of layer capacities); inserting past it
    /// fails with [`Error::Full`].
    pub max_capacity: Option<u64>,
    /// The hash function of every layer (XXH3 by default; keyed SipHash for untrusted input).
    pub hashing: Hashing,
}

impl ScalableConfig {
    /// Defaults: growth 2, tightening 0.5, no limits, XXH3, [`Scheme::MixedDouble`].
    pub fn new(initial_capacity: u64, fpp: f64) -> Self {
        ScalableConfig {
            initial_capacity,
            fpp,
            growth: 2,
            tightening: 0.5,
            max_layers: None,
            max_capacity: None,
            hashing: Hashing::default(),
            scheme: Scheme::default(),
        }
    }

    fn validate(&self) -> Result<()> {
        check_fpp(self.fpp)?;
        if self.initial_capacity == 0 {
            return Err(Error::InvalidParameters(
                "a scalable filter needs an initial capacity of at least 1".into(),
            ));
        }
        if self.growth == 0 {
            return Err(Error::InvalidParameters("growth must be at least 1".into()));
        }
        if !(self.tightening > 0.0 && self.tightening < 1.0) {
            return Err(Error::InvalidParameters(format!(
                "tightening ratio must be in (0, 1), got {:?}",
                self.tightening
            )));
        }
        if self.max_layers == Some(0) {
            return Err(Error::InvalidParameters(
                "max_layers must be at least 1".into(),
            ));
        }
        if let Some(max) = self.max_capacity.filter(|&max| max < self.initial_capacity) {
            return Err(Error::InvalidParameters(format!(
                "max_capacity {max} is less than the initial capacity {}: not even the first \
                 layer fits",
                self.initial_capacity
            )));
        }
        Ok(())
    }

    /// The spec of a layer of `capacity` elements at FPR `fpp`.
    fn layer_spec(&self, capacity: u64, fpp: f64) -> Result<Spec> {
        Ok(Spec::for_capacity(capacity, fpp)?
            .with_hashing(self.hashing.clone())
            .with_scheme(self.scheme))
    }

    /// Capacity and FPR of layer `i`, or `None` if they overflow.
    pub fn layer_target(&self, i: u32) -> Option<(u64, f64)> {
        let capacity = u64::from(self.growth)
            .checked_pow(i)?
            .checked_mul(self.initial_capacity)?;
        let p0 = self.fpp * (1.0 - self.tightening);
        let p = p0 * self.tightening.powi(i as i32);
        (p > 0.0).then_some((capacity, p))
    }
}

/// One layer of a scalable filter.
#[derive(Clone, PartialEq, Eq)]
pub struct Layer {
    filter: BloomFilter,
    capacity: u64,
    inserted: u64,
}

impl Layer {
    /// A layer from its parts (for codecs).
    pub fn from_parts(filter: BloomFilter, capacity: u64, inserted: u64) -> Self {
        Layer {
            filter,
            capacity,
            inserted,
        }
    }

    /// The layer's classic filter.
    pub fn filter(&self) -> &BloomFilter {
        &self.filter
    }

    /// Elements the layer was sized for.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// New elements the layer has received.
    pub fn inserted(&self) -> u64 {
        self.inserted
    }
}

/// A summary of one layer (see [`ScalableBloomFilter::layer_info`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerInfo {
    /// Elements the layer was sized for.
    pub capacity: u64,
    /// The layer's target FPR.
    pub fpp: f64,
    /// Bits in the layer.
    pub bits: u64,
    /// Hash functions of the layer.
    pub hashes: u32,
    /// New elements the layer has received.
    pub inserted: u64,
    /// Fraction of the layer's bits set.
    pub fill_ratio: f64,
}

/// A Bloom filter that adds layers as it fills, keeping its compound FPR below `p`.
#[derive(Clone, PartialEq)]
pub struct ScalableBloomFilter {
    config: ScalableConfig,
    layers: Vec<Layer>,
}

impl ScalableBloomFilter {
    /// A filter that starts with room for `initial_capacity` elements and keeps its FPR below
    /// `fpp`, with the default growth (2) and tightening (0.5).
    pub fn new(initial_capacity: u64, fpp: f64) -> Result<Self> {
        Self::with_config(ScalableConfig::new(initial_capacity, fpp))
    }

    /// A filter with full control over growth, tightening, limits and hashing.
    pub fn with_config(config: ScalableConfig) -> Result<Self> {
        config.validate()?;
        let mut filter = ScalableBloomFilter {
            config,
            layers: Vec::new(),
        };
        filter.add_layer()?;
        Ok(filter)
    }

    /// A filter from its parts (for codecs): the layers must match what `config` would build.
    pub fn from_parts(config: ScalableConfig, layers: Vec<Layer>) -> Result<Self> {
        config.validate()?;
        if layers.is_empty() {
            return Err(Error::InvalidParameters(
                "a scalable filter has at least one layer".into(),
            ));
        }
        for (i, layer) in layers.iter().enumerate() {
            let (capacity, fpp) = config.layer_target(i as u32).ok_or_else(|| {
                Error::InvalidParameters(format!("layer {i} is beyond what the config allows"))
            })?;
            let want = config.layer_spec(capacity, fpp)?;
            if layer.capacity != capacity || layer.filter.spec() != &want {
                return Err(Error::InvalidParameters(format!(
                    "layer {i} does not match the growth rule"
                )));
            }
        }
        Ok(ScalableBloomFilter { config, layers })
    }

    /// The configuration.
    pub fn config(&self) -> &ScalableConfig {
        &self.config
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    fn add_layer(&mut self) -> Result<()> {
        let i = self.layers.len() as u32;
        if let Some(max) = self.config.max_layers {
            if i >= max {
                return Err(Error::Full(format!("all {max} layers are full")));
            }
        }
        let (capacity, fpp) = self
            .config
            .layer_target(i)
            .ok_or_else(|| Error::Full(format!("layer {i} would exceed every limit")))?;
        if let Some(max) = self.config.max_capacity {
            let total = self.capacity().saturating_add(capacity);
            if total > max {
                return Err(Error::Full(format!(
                    "another layer would raise the capacity to {total}, past the maximum of {max}"
                )));
            }
        }
        let spec = self.config.layer_spec(capacity, fpp)?;
        self.layers.push(Layer {
            filter: BloomFilter::from_spec(spec)?,
            capacity,
            inserted: 0,
        });
        Ok(())
    }

    /// Adds an element unless some layer already contains it. Returns `true` if it was new.
    /// Fails with [`Error::Full`] when a new layer is needed but a limit forbids it; the
    /// filter is then unchanged.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        // Every layer shares the hashing and the scheme, so one digest serves all.
        let d = self.layers[0].filter.spec().digest(key);
        if self
            .layers
            .iter()
            .rev()
            .any(|l| l.filter.contains_digest(&d))
        {
            return Ok(false);
        }
        let newest = self.layers.last().expect("at least one layer");
        if newest.inserted >= newest.capacity {
            self.add_layer()?;
        }
        let newest = self.layers.last_mut().expect("at least one layer");
        newest.filter.insert_digest(&d);
        newest.inserted += 1;
        Ok(true)
    }

    /// [`insert`](Self::insert) for callers that cannot report an error (`Extend`): when a
    /// limit or memory forbids a new layer, the element goes into the newest layer past its
    /// capacity, so it is never lost (the FPR bound then no longer holds).
    pub(crate) fn insert_or_overfill<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        if let Ok(new) = self.insert(key) {
            return new;
        }
        // `insert` failed before changing anything, and only for an element not yet present.
        let newest = self.layers.last_mut().expect("at least one layer");
        let d = newest.filter.spec().digest(key);
        newest.filter.insert_digest(&d);
        newest.inserted += 1;
        true
    }

    /// Whether the element may be present (newest layer first).
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        let d = self.layers[0].filter.spec().digest(key);
        self.layers
            .iter()
            .rev()
            .any(|l| l.filter.contains_digest(&d))
    }

    /// Number of insertions that were new (exact, as counted by [`insert`](Self::insert)).
    pub fn len(&self) -> u64 {
        self.layers.iter().map(|l| l.inserted).sum()
    }

    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Estimated number of distinct elements, summed over layers from their set bits.
    pub fn estimated_len(&self) -> f64 {
        self.layers.iter().map(|l| l.filter.estimated_len()).sum()
    }

    /// Estimated FPR given the current contents: `1 - Π(1 - p_i)` over the layers' current
    /// FPRs.
    pub fn estimated_fpp(&self) -> f64 {
        1.0 - self
            .layers
            .iter()
            .map(|l| 1.0 - l.filter.estimated_fpp())
            .product::<f64>()
    }

    /// Sum of the layers' capacities.
    pub fn capacity(&self) -> u64 {
        self.layers
            .iter()
            .fold(0u64, |acc, l| acc.saturating_add(l.capacity))
    }

    /// Capacity, FPR, size and fill of each layer, oldest first.
    pub fn layer_info(&self) -> Vec<LayerInfo> {
        self.layers
            .iter()
            .enumerate()
            .map(|(i, l)| LayerInfo {
                capacity: l.capacity,
                fpp: self.config.layer_target(i as u32).map_or(0.0, |t| t.1),
                bits: l.filter.bits(),
                hashes: l.filter.hashes(),
                inserted: l.inserted,
                fill_ratio: l.filter.fill_ratio(),
            })
            .collect()
    }

    /// Bytes of heap memory used by all layers' bits.
    pub fn memory_bytes(&self) -> usize {
        self.layers.iter().map(|l| l.filter.memory_bytes()).sum()
    }

    /// Removes every element and every layer but the first.
    pub fn clear(&mut self) {
        self.layers.truncate(1);
        self.layers[0].filter.clear();
        self.layers[0].inserted = 0;
    }
}

impl fmt::Debug for ScalableBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScalableBloomFilter")
            .field("config", &self.config)
            .field("layers", &self.layers.len())
            .field("len", &self.len())
            .finish()
    }
}

impl Filter for ScalableBloomFilter {
    fn kind(&self) -> crate::Kind {
        crate::Kind::Scalable
    }
    fn insert_encoded(&mut self, bytes: &[u8]) -> Result<bool> {
        self.insert(bytes)
    }
    fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.contains(bytes)
    }
    fn params(&self) -> Params {
        self.layers
            .last()
            .expect("at least one layer")
            .filter
            .spec()
            .params()
    }
    fn estimated_len(&self) -> f64 {
        ScalableBloomFilter::estimated_len(self)
    }
    crate::filter::inherent_filter_methods!(ScalableBloomFilter);
}
