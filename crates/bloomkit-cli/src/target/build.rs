//! Building new filters from the CLI's sizing, kind and scheme.

use super::Context;
use crate::cli::{Kind, SchemeName};
use anyhow::{bail, Result};
use bloomkit::storage::CounterWidth;
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, ScalableBloomFilter,
    ScalableConfig, Spec,
};

/// The kind of a new file filter when `--kind` is not given: blocked (one 64-byte block, so
/// one page of a mapped file, per element: 2-3 times faster than classic in the measurements
/// of docs/CLI.md, "The default kind"), or classic for a `--scheme` of another library, which
/// is a classic filter's scheme.
pub fn default_file_kind(scheme: SchemeName) -> Kind {
    match scheme {
        SchemeName::Default => Kind::Blocked,
        _ => Kind::Classic,
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
    let kind = new.kind.unwrap_or(default_file_kind(new.scheme));
    // Refuse what the machine cannot hold before allocating it.
    let bits = match kind {
        Kind::Blocked => bloomkit::BlockSpec::for_capacity(new.capacity, new.fpp)?.bits(),
        _ => spec.bits(),
    };
    let bytes = match kind {
        Kind::Counting => bits.saturating_mul(4).div_ceil(64).saturating_mul(8),
        _ => bits.div_ceil(64).saturating_mul(8),
    };
    crate::memory::ensure_fits(
        bytes,
        &format!(
            "a {} filter for {} elements at a false-positive rate of {}",
            kind.name(),
            new.capacity,
            crate::commands::prob(new.fpp)
        ),
    )?;
    Ok(match kind {
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
    })
}
