//! `bloomkit calc --range`: the bitmap of a key range next to the Bloom filter for (n, p),
//! and which is smaller.

use crate::commands::{human_bytes, prob};
use anyhow::Result;
use bloomkit::bitmap::{BitmapForm, KeyRange};
use bloomkit::math;
use serde_json::{json, Value};
use std::fmt::Write;

/// The sizes of a bitmap of `range` holding `n` integers and, with `p`, the classic filter's
/// size for (n, p) and the recommendation: as text, and as the `bitmap` object of `--json`.
pub(crate) fn advise(range: KeyRange, n: u64, p: Option<f64>) -> Result<(String, Value)> {
    let dense = BitmapForm::dense_bytes(range);
    let roaring = BitmapForm::roaring_bytes(range, n);
    let form = BitmapForm::choose(range, n);
    let bitmap = match (form, dense) {
        (BitmapForm::Dense, Some(d)) => d,
        _ => roaring,
    };
    let mut t = String::new();
    writeln!(
        t,
        "\nBitmap of the integers {range} ({} of them), exact:",
        range.width()
    )?;
    match dense {
        Some(d) => writeln!(
            t,
            "  dense:          {} (1 bit per integer of the range)",
            human_bytes(d)
        )?,
        None => writeln!(
            t,
            "  dense:          impossible (the range is wider than one bit array)"
        )?,
    }
    writeln!(
        t,
        "  roaring:        about {} for {n} integers spread over the range",
        human_bytes(roaring)
    )?;
    write!(t, "  chosen form:    {form}")?;
    let mut j = json!({
        "range": range.to_string(),
        "dense_bytes": dense,
        "roaring_bytes": roaring,
        "form": form.name(),
        "bytes": bitmap,
    });
    let Some(p) = p else {
        return Ok((t, j));
    };
    let bloom = math::params_for(n, p)?;
    let bloom_bytes = bloom.words() * 8;
    writeln!(
        t,
        "\n  Bloom filter:   {} for {n} elements at FPR {}",
        human_bytes(bloom_bytes),
        prob(p)
    )?;
    if bitmap < bloom_bytes {
        write!(
            t,
            "recommended:    a bitmap (bloomkit create FILE --kind bitmap --range {range} -n {n}): {} instead of {}, and no false positives",
            human_bytes(bitmap),
            human_bytes(bloom_bytes)
        )?;
    } else {
        write!(
            t,
            "recommended:    a Bloom filter: the bitmap would take {}, the filter {}",
            human_bytes(bitmap),
            human_bytes(bloom_bytes)
        )?;
    }
    j["bloom_bytes"] = json!(bloom_bytes);
    j["recommended"] = json!(if bitmap < bloom_bytes {
        "bitmap"
    } else {
        "bloom"
    });
    Ok((t, j))
}
