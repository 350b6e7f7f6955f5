//! `bloomkit calc --range`: the bitmap of a key range next to the Bloom filter for (n, p),
//! and which is smaller.

use crate::commands::{human_bytes, prob};
use anyhow::Result;
use bloomkit::bitmap::{BitmapForm, KeyRange};
use bloomkit::math;

/// Prints the sizes of a bitmap of `range` holding `n` integers and, with `p`, the classic
/// filter's size for (n, p) and the recommendation.
pub(crate) fn advise(range: KeyRange, n: u64, p: Option<f64>) -> Result<()> {
    let dense = BitmapForm::dense_bytes(range);
    let roaring = BitmapForm::roaring_bytes(range, n);
    let form = BitmapForm::choose(range, n);
    let bitmap = match (form, dense) {
        (BitmapForm::Dense, Some(d)) => d,
        _ => roaring,
    };
    println!(
        "\nBitmap of the integers {range} ({} of them), exact:",
        range.width()
    );
    match dense {
        Some(d) => println!(
            "  dense:          {} (1 bit per integer of the range)",
            human_bytes(d)
        ),
        None => println!("  dense:          impossible (the range is wider than one bit array)"),
    }
    println!(
        "  roaring:        about {} for {n} integers spread over the range",
        human_bytes(roaring)
    );
    println!("  chosen form:    {form}");
    let Some(p) = p else {
        return Ok(());
    };
    let bloom = math::params_for(n, p)?;
    let bloom_bytes = bloom.words() * 8;
    println!(
        "  Bloom filter:   {} for {n} elements at FPR {}",
        human_bytes(bloom_bytes),
        prob(p)
    );
    if bitmap < bloom_bytes {
        println!(
            "recommended:    a bitmap (bloomkit create FILE --kind bitmap --range {range} -n {n}): {} instead of {}, and no false positives",
            human_bytes(bitmap),
            human_bytes(bloom_bytes)
        );
    } else {
        println!(
            "recommended:    a Bloom filter: the bitmap would take {}, the filter {}",
            human_bytes(bitmap),
            human_bytes(bloom_bytes)
        );
    }
    Ok(())
}
