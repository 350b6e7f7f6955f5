//! Building new filters from the CLI's sizing, kind and scheme.

use super::Context;
use crate::cli::{Kind, SchemeName};
use anyhow::{bail, Result};
use bloomkit::storage::CounterWidth;
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, DLeftCountingFilter,
    ScalableBloomFilter, ScalableConfig, Spec,
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
    /// Counting filters: insert by minimal increase.
    pub minimal_increase: bool,
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
    let kind = new.kind.unwrap_or(Kind::Classic);
    if new.minimal_increase && kind != Kind::Counting {
        bail!("--minimal-increase is an insertion mode of counting filters; add --kind counting");
    }
    Ok(match kind {
        Kind::Classic => BloomFilter::from_spec(spec)?.into(),
        Kind::Counting => {
            let f = CountingBloomFilter::from_spec(spec, CounterWidth::Four)?;
            if new.minimal_increase {
                f.with_minimal_increase().into()
            } else {
                f.into()
            }
        }
        Kind::Dleft => {
            if new.scheme != SchemeName::Default {
                bail!(
                    "d-left filters use bloomkit's own scheme only; drop --scheme {}",
                    new.scheme.name()
                );
            }
            let params = bloomkit::math::DLeftParams::for_capacity(new.capacity, new.fpp)?;
            DLeftCountingFilter::from_params(params, spec.hashing().clone())?.into()
        }
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
    })
}
