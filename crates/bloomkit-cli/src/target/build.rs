//! Building new filters from the CLI's sizing, kind and scheme.

use super::Context;
use crate::cli::{Kind, SchemeName, Sizing};
use anyhow::{bail, Result};
use bloomkit::bitmap::{Bitmap, KeyRange, TwoBitMap};
use bloomkit::storage::CounterWidth;
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, ScalableBloomFilter,
    ScalableConfig, Spec,
};

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
    /// The integers of a bitmap kind (`capacity` is then the expected count, 0 if unknown,
    /// and `fpp` is 0).
    pub range: Option<KeyRange>,
}

impl NewFilter {
    /// What the sizing options ask for: `None` if they are not enough to create a filter
    /// (a Bloom filter needs --capacity and --fpp, a bitmap --range), an error if they
    /// contradict each other. --range alone makes a bitmap.
    pub fn from_sizing(
        sizing: &Sizing,
        kind: Option<Kind>,
        scheme: SchemeName,
    ) -> Result<Option<NewFilter>> {
        let kind = kind.or(sizing.range.map(|_| Kind::Bitmap));
        if matches!(kind, Some(Kind::Bitmap | Kind::TwoBitMap)) {
            if sizing.fpp.is_some() {
                bail!("a bitmap is exact (no false positives): drop --fpp, give --range START..END and optionally --capacity");
            }
            return Ok(sizing.range.map(|range| NewFilter {
                capacity: sizing.capacity.unwrap_or(0),
                fpp: 0.0,
                kind,
                scheme,
                range: Some(range),
            }));
        }
        if sizing.range.is_some() {
            bail!("--range sizes a bitmap; use it with --kind bitmap or --kind two-bit-map");
        }
        Ok(match (sizing.capacity, sizing.fpp) {
            (Some(capacity), Some(fpp)) => Some(NewFilter {
                capacity,
                fpp,
                kind,
                scheme,
                range: None,
            }),
            _ => None,
        })
    }
}

/// Builds an empty bitmap kind.
fn build_bitmap(new: NewFilter, kind: Kind, ctx: &Context) -> Result<AnyFilter> {
    if new.scheme != SchemeName::Default || ctx.key.is_some() {
        bail!("a bitmap does not hash its integers: drop --scheme and --key-file");
    }
    let Some(range) = new.range else {
        bail!("a bitmap needs the range of its integers: --range START..END");
    };
    Ok(if kind == Kind::Bitmap {
        Bitmap::new(range, new.capacity)?.into()
    } else {
        TwoBitMap::new(range, new.capacity)?.into()
    })
}

/// Builds an empty in-memory filter.
pub fn build(new: NewFilter, ctx: &Context) -> Result<AnyFilter> {
    if let Some(kind @ (Kind::Bitmap | Kind::TwoBitMap)) = new.kind {
        return build_bitmap(new, kind, ctx);
    }
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
            let block_spec = bloomkit::BlockSpec::for_capacity(new.capacity, new.fpp)?;
            BlockedBloomFilter::from_spec(block_spec.with_hashing(spec.hashing().clone()))?.into()
        }
        Kind::Bitmap | Kind::TwoBitMap => unreachable!("built above"),
    })
}
