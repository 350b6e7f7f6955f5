//! Describing a filter for `info` (and `calc --filter`): the CLI's names for schemes and
//! layouts, and what is reported.

use crate::cli::SchemeName;
use bloomkit::bitmap::{BitmapForm, KeyRange};
use bloomkit::codec::native::Design;
use bloomkit::scalable::LayerInfo;
use bloomkit::{AnyFilter, Filter, Hashing, Spec};
use clap::ValueEnum;

/// The CLI's name for the way a spec maps elements, or a description if it matches no
/// preset.
pub fn scheme_name(spec: &Spec) -> String {
    let keyed = matches!(spec.hashing(), Hashing::SipHash13(_));
    for &s in SchemeName::value_variants() {
        let p = s.preset();
        if p.scheme() == spec.scheme()
            && (p.hashing() == *spec.hashing() || (keyed && s.is_bloomkits()))
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

/// What `info` reports. The default is empty, for kinds to fill in what they have.
#[derive(Debug, Clone, Default)]
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
    /// `split-block`, `bits-K`; `register` for the Redis filter's 64-bit words); a d-left
    /// filter's tables and cells; `minimal-increase` for a counting filter that inserts so;
    /// `None` for the other kinds.
    pub layout: Option<String>,
    /// Estimated distinct elements.
    pub estimated_items: f64,
    /// Fraction of bits (or counters) that are non-zero.
    pub fill_ratio: f64,
    /// Current estimated FPR.
    pub estimated_fpp: f64,
    /// Layers (scalable only).
    pub layers: Option<Vec<LayerInfo>>,
    /// The window of an expiring filter (count-window, time-window).
    pub window: Option<WindowInfo>,
    /// The integers a bitmap kind holds, `START..END` (bitmap kinds only).
    pub range: Option<String>,
}

/// A count window: what it remembers and how full its slices are.
#[derive(Debug, Clone)]
pub struct CountInfo {
    /// The window asked for.
    pub insertions: u64,
    /// Each of this many last insertions is always found (`l·g`).
    pub guaranteed: u64,
    /// An element has no bit left this many insertions after it was last inserted.
    pub forgotten_after: u64,
    /// Slices an element is inserted into (`k`).
    pub k: u32,
    /// Extra slices: generations an element outlives its own.
    pub l: u32,
    /// Insertions per generation (`g`).
    pub generation_size: u64,
    /// Insertions ever.
    pub inserted: u64,
    /// Fill ratio of each slice, newest first.
    pub slice_fills: Vec<f64>,
    /// How the slices are laid out: `blocked` or `slices` (one bit array per slice).
    pub layout: &'static str,
}

/// What an expiring filter remembers, and how full its generations are.
#[derive(Debug, Clone)]
pub enum WindowInfo {
    /// The last `insertions` insertions.
    Count(CountInfo),
    /// The last `window` of time.
    Time {
        /// The window.
        window: std::time::Duration,
        /// Generations per window.
        generations: u32,
        /// Length of a generation.
        generation_length: std::time::Duration,
        /// The live generations, newest first.
        live: Vec<bloomkit::window::Generation>,
        /// An element is certainly forgotten this long after its last insertion (one
        /// generation more in Redis, where the window tolerates clock skew).
        forgotten_by: std::time::Duration,
    },
}

/// The window of an expiring filter.
fn window_info(filter: &AnyFilter) -> Option<WindowInfo> {
    Some(match filter {
        AnyFilter::CountWindow(f) => {
            let s = f.shape();
            WindowInfo::Count(CountInfo {
                insertions: f.window(),
                guaranteed: f.guaranteed_window(),
                forgotten_after: f.forgotten_after(),
                k: s.k,
                l: s.l,
                generation_size: s.generation,
                inserted: f.inserted(),
                slice_fills: f.slice_fills(),
                layout: match f.layout() {
                    bloomkit::window::WindowLayout::Slices => "slices",
                    _ => "blocked",
                },
            })
        }
        AnyFilter::TimeWindow(f) => WindowInfo::Time {
            window: f.window(),
            generations: f.generations(),
            generation_length: f.generation_length(),
            live: f.generations_live(),
            forgotten_by: f.window() + f.generation_length(),
        },
        _ => return None,
    })
}

/// Describes an in-memory filter.
pub fn describe(filter: &AnyFilter, design: Option<Design>) -> Description {
    if let Some(d) = describe_bitmap(filter, design) {
        return d;
    }
    let (scheme, hashing) = match (spec_of(filter), filter) {
        (Some(spec), _) => (scheme_name(spec), spec.hashing().id()),
        (None, AnyFilter::Blocked(f)) => ("default".to_string(), f.hashing().id()),
        (None, AnyFilter::CountWindow(f)) => ("default".to_string(), f.hashing().id()),
        (None, AnyFilter::TimeWindow(f)) => ("default".to_string(), f.hashing().id()),
        (None, AnyFilter::DLeft(f)) => ("default".to_string(), f.hashing().id()),
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
                Some(info),
            )
        }
        AnyFilter::CountWindow(f) => {
            let fills = f.slice_fills();
            (
                f.shape().bits(),
                fills.iter().sum::<f64>() / fills.len() as f64,
                Some(f.window()),
                Some(f.fpp()),
                None,
            )
        }
        AnyFilter::TimeWindow(f) => {
            let live = f.generations_live();
            let slots = f64::from(f.generations() + 1);
            (
                filter.params().bits,
                live.iter().map(|g| g.fill).sum::<f64>() / slots,
                Some(f.capacity()),
                Some(f.fpp()),
                None,
            )
        }
        AnyFilter::DLeft(f) => (
            f.params().bits(),
            f.load(),
            design.map(|d| d.capacity),
            design.map(|d| d.fpp),
            None,
        ),
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
            AnyFilter::Blocked(f) => Some(f.spec().name()),
            AnyFilter::Counting(f) if f.is_minimal_increase() => Some("minimal-increase".into()),
            AnyFilter::DLeft(f) => {
                let p = f.params();
                let saturated = match f.saturated() {
                    0 => String::new(),
                    n => format!(", {n} saturated (never removed)"),
                };
                Some(format!(
                    "{} tables x {} buckets x {} cells of {}+{} bits{saturated}",
                    p.tables, p.buckets, p.cells_per_bucket, p.remainder_bits, p.counter_bits
                ))
            }
            _ => None,
        },
        layers,
        window: window_info(filter),
        range: None,
    }
}

/// Describes a bitmap kind: its range width as bits, its form (dense or roaring) as its
/// layout, its exact count, no false positives.
fn describe_bitmap(filter: &AnyFilter, design: Option<Design>) -> Option<Description> {
    let (range, form, len) = match filter {
        AnyFilter::Bitmap(b) => (b.range(), b.form(), b.len()),
        AnyFilter::TwoBitMap(m) => (m.range(), m.form(), m.len()),
        _ => return None,
    };
    Some(
        Bitmap {
            kind: filter.kind(),
            range,
            form,
            len,
            bits: filter.params().bits,
            bytes: filter.memory_bytes() as u64,
            capacity: design.map(|d| d.capacity),
        }
        .describe(),
    )
}

/// What `info` reports of a bitmap kind, loaded or mapped.
pub struct Bitmap {
    /// Bitmap or two-bit map.
    pub kind: bloomkit::Kind,
    /// Its integers.
    pub range: KeyRange,
    /// Dense or roaring.
    pub form: BitmapForm,
    /// Integers present (exact).
    pub len: u64,
    /// Bits of its planes.
    pub bits: u64,
    /// Bytes of its planes.
    pub bytes: u64,
    /// Design capacity, if known.
    pub capacity: Option<u64>,
}

impl Bitmap {
    /// Its description: its form as the layout, its exact count, no false positives.
    pub fn describe(self) -> Description {
        Description {
            kind: self.kind.name(),
            scheme: "exact".into(),
            hashing: "none".into(),
            bits: self.bits,
            hashes: 0,
            bytes: self.bytes,
            capacity: self.capacity,
            fpp: Some(0.0),
            layout: Some(self.form.name().to_string()),
            estimated_items: self.len as f64,
            fill_ratio: self.len as f64 / self.range.width() as f64,
            estimated_fpp: 0.0,
            layers: None,
            window: None,
            range: Some(self.range.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_names_round_trip() {
        for &s in SchemeName::value_variants() {
            let spec = Spec::preset(s.preset(), 1000, 0.01).unwrap();
            assert_eq!(scheme_name(&spec), s.name());
        }
    }
}
