//! Building new filters from the CLI's sizing, kind and scheme.

use super::Context;
use crate::cli::{Creation, Kind, SchemeName};
use crate::window::Window;
use anyhow::{bail, Result};
use bloomkit::storage::CounterWidth;
use bloomkit::window::{CountWindowFilter, TimeWindowFilter};
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
    /// An expiring filter's window (then `kind` is `None` and `capacity` is the expected
    /// insertions per window).
    pub window: Option<Window>,
    /// A time window's number of generations (`None`: the default).
    pub generations: Option<u32>,
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
    match new.window {
        Some(Window::Count(n)) => {
            let hashing = spec.hashing().clone();
            return Ok(CountWindowFilter::with_hashing(n, new.fpp, hashing)?.into());
        }
        Some(Window::Time(window)) => {
            let generations = match new.generations {
                Some(g) => g,
                None => default_generations(new.capacity),
            };
            let hashing = spec.hashing().clone();
            let f = TimeWindowFilter::with_hashing(
                window,
                generations,
                new.capacity,
                new.fpp,
                hashing,
            )?;
            return Ok(f.into());
        }
        None => {}
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

/// The filter that `create` or `dedup` would make from their options, or `None` when the
/// sizing is missing. A count window's capacity is its window; a time window needs
/// `--capacity` (insertions per window); windows default to a 1% FPR.
pub fn new_filter(filter: &Creation, scheme: SchemeName) -> Result<Option<NewFilter>> {
    let sizing = &filter.sizing;
    let window = filter.window;
    if window.is_none() && filter.generations.is_some() {
        bail!("--generations is for time windows: give --window DURATION too (e.g. --window 30d)");
    }
    let (capacity, fpp) = match window {
        None => match (sizing.capacity, sizing.fpp) {
            (Some(c), Some(p)) => (c, p),
            _ => return Ok(None),
        },
        Some(Window::Count(n)) => {
            if sizing.capacity.is_some_and(|c| c != n) {
                bail!("a count window's capacity is its window ({n} insertions); drop --capacity");
            }
            if filter.generations.is_some() {
                bail!("--generations is for time windows; a count window of {n} insertions sizes its own generations");
            }
            (n, sizing.fpp.unwrap_or(DEFAULT_WINDOW_FPP))
        }
        Some(Window::Time(_)) => {
            let Some(c) = sizing.capacity else {
                bail!("a time window needs --capacity N, the expected insertions per window");
            };
            (c, sizing.fpp.unwrap_or(DEFAULT_WINDOW_FPP))
        }
    };
    if window.is_some() && scheme != SchemeName::Default {
        bail!(
            "expiring filters use bloomkit's own scheme only; drop --scheme {}",
            scheme.name()
        );
    }
    Ok(Some(NewFilter {
        capacity,
        fpp,
        kind: filter.kind,
        scheme,
        window,
        generations: filter.generations,
        minimal_increase: false,
    }))
}

/// The FPR of a window created without `--fpp`.
const DEFAULT_WINDOW_FPP: f64 = 0.01;

/// Generations of a time window created without `--generations`: 30, or one per expected
/// insertion when fewer are expected per window.
pub fn default_generations(capacity: u64) -> u32 {
    u32::try_from(capacity.clamp(1, 30)).unwrap_or(30)
}
