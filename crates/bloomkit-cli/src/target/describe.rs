//! Describing a filter for `info` (and `calc --filter`): the CLI's names for schemes and
//! layouts, and what is reported.

use crate::cli::SchemeName;
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
    pub layers: Option<Vec<LayerInfo>>,
    /// The integers a bitmap kind holds, `START..END` (bitmap kinds only).
    pub range: Option<String>,
}

/// Describes a bitmap kind: its range width as bits, its form (dense or roaring) as its
/// layout, its exact count, no false positives.
fn describe_bitmap(filter: &AnyFilter, design: Option<Design>) -> Option<Description> {
    let (range, form, len) = match filter {
        AnyFilter::Bitmap(b) => (b.range(), b.form(), b.len()),
        AnyFilter::TwoBitMap(m) => (m.range(), m.form(), m.len()),
        _ => return None,
    };
    Some(Description {
        kind: filter.kind().name(),
        scheme: "exact".into(),
        hashing: "none".into(),
        bits: filter.params().bits,
        hashes: 0,
        bytes: filter.memory_bytes() as u64,
        capacity: design.map(|d| d.capacity),
        fpp: Some(0.0),
        layout: Some(form.name().to_string()),
        estimated_items: len as f64,
        fill_ratio: len as f64 / range.width() as f64,
        estimated_fpp: 0.0,
        layers: None,
        range: Some(range.to_string()),
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
            _ => None,
        },
        layers,
        range: None,
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
