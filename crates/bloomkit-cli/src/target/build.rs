//! Building new filters from the CLI's sizing, kind and scheme.

use super::Context;
use crate::cli::{Creation, SchemeName};
use crate::window::Window;
use anyhow::{bail, Result};
use bloomkit::bitmap::{Bitmap, KeyRange, TwoBitMap};
use bloomkit::storage::CounterWidth;
use bloomkit::window::{CountWindowFilter, TimeWindowFilter};
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, DLeftCountingFilter, Kind,
    ScalableBloomFilter, ScalableConfig, Spec,
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
    /// An expiring filter's window (then `kind` is `None` and `capacity` is the expected
    /// insertions per window).
    pub window: Option<Window>,
    /// A time window's number of generations (`None`: the default).
    pub generations: Option<u32>,
    /// Counting filters: insert by minimal increase.
    pub minimal_increase: bool,
    /// The integers of a bitmap kind (`capacity` is then the expected count, 0 if unknown,
    /// and `fpp` is 0).
    pub range: Option<KeyRange>,
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

/// The bitmap that `create` or `dedup` would make (`--range`, or `--kind bitmap` or
/// `two-bit-map`): `None` if it is not a bitmap; an error if the options contradict it.
fn new_bitmap(filter: &Creation, scheme: SchemeName) -> Result<Option<NewFilter>> {
    let sizing = &filter.sizing;
    let kind = filter.kind.or(sizing.range.map(|_| Kind::Bitmap));
    if !matches!(kind, Some(Kind::Bitmap | Kind::TwoBitMap)) {
        if sizing.range.is_some() {
            bail!("--range sizes a bitmap; use it with --kind bitmap or --kind two-bit-map");
        }
        return Ok(None);
    }
    if sizing.fpp.is_some() || filter.window.is_some() {
        bail!("a bitmap is exact and never forgets: drop --fpp and --window, give --range START..END and optionally --capacity");
    }
    let Some(range) = sizing.range else {
        bail!("a bitmap needs the range of its integers: --range START..END");
    };
    Ok(Some(NewFilter {
        capacity: sizing.capacity.unwrap_or(0),
        fpp: 0.0,
        kind,
        scheme,
        window: None,
        generations: None,
        minimal_increase: false,
        range: Some(range),
    }))
}

/// Builds an empty in-memory filter.
pub fn build(new: NewFilter, ctx: &Context) -> Result<AnyFilter> {
    if let Some(kind @ (Kind::Bitmap | Kind::TwoBitMap)) = new.kind {
        return build_bitmap(new, kind, ctx);
    }
    let preset = new.scheme.preset();
    let mut spec = Spec::preset(preset, new.capacity, new.fpp)?;
    if let Some(key) = &ctx.key {
        if !new.scheme.is_bloomkits() {
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
    let kind = new.kind.unwrap_or(default_file_kind(new.scheme));
    if new.minimal_increase && kind != Kind::Counting {
        bail!("--minimal-increase is an insertion mode of counting filters; add --kind counting");
    }
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
        Kind::Counting => {
            let f = CountingBloomFilter::from_spec(spec, CounterWidth::Four)?;
            if new.minimal_increase {
                f.with_minimal_increase().into()
            } else {
                f.into()
            }
        }
        Kind::DLeft => {
            if new.scheme != SchemeName::Default {
                bail!(
                    "d-left filters use bloomkit's default scheme only; drop --scheme {}",
                    new.scheme.name()
                );
            }
            let params = bloomkit::math::DLeftParams::for_capacity(new.capacity, new.fpp)?;
            DLeftCountingFilter::from_params(params, spec.hashing().clone())?.into()
        }
        Kind::Scalable => {
            if new.scheme != SchemeName::Default {
                bail!(
                    "scalable filters use bloomkit's default scheme only; drop --scheme {}",
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
                    "blocked filters use bloomkit's default scheme only; drop --scheme {}",
                    new.scheme.name()
                );
            }
            let block_spec = bloomkit::BlockSpec::for_capacity(new.capacity, new.fpp)?;
            BlockedBloomFilter::from_spec(block_spec.with_hashing(spec.hashing().clone()))?.into()
        }
        other => bail!("a {other} filter is not made with --kind (expiring filters: --window)"),
    })
}

/// The filter that `create` or `dedup` would make from their options, or `None` when the
/// sizing is missing. A count window's capacity is its window; a time window needs
/// `--capacity` (insertions per window); windows default to a 1% FPR.
pub fn new_filter(filter: &Creation, scheme: SchemeName) -> Result<Option<NewFilter>> {
    if let Some(bitmap) = new_bitmap(filter, scheme)? {
        return Ok(Some(bitmap));
    }
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
            "expiring filters use bloomkit's default scheme only; drop --scheme {}",
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
        range: None,
    }))
}

/// The FPR of a window created without `--fpp`.
const DEFAULT_WINDOW_FPP: f64 = 0.01;

/// Generations of a time window created without `--generations`: 30, or one per expected
/// insertion when fewer are expected per window.
pub fn default_generations(capacity: u64) -> u32 {
    u32::try_from(capacity.clamp(1, 30)).unwrap_or(30)
}
