//! Bitmap files under hostile input: random bitmaps and two-bit maps in both forms, encoded,
//! then damaged with the checksum recomputed (so that every structural check is reached).
//! A decoder must return a typed error or a bitmap that re-encodes to the same bitmap; never
//! a panic.

use bloomkit::bitmap::{Bitmap, BitmapForm, KeyRange, TwoBitMap};
use bloomkit::codec::native;
use bloomkit::AnyFilter;
use proptest::prelude::*;

/// A bitmap kind of random contents: `two` picks the two-bit map, `dense` the form.
fn sample(two: bool, dense: bool, start: i64, values: &[u32]) -> AnyFilter {
    let range = KeyRange::new(i128::from(start), i128::from(start) + 200_000).unwrap();
    let form = if dense {
        BitmapForm::Dense
    } else {
        BitmapForm::Roaring
    };
    let values: Vec<i64> = values
        .iter()
        .map(|&v| start + i64::from(v % 200_000))
        .collect();
    if two {
        let mut m = TwoBitMap::with_form(range, form).unwrap();
        m.insert_batch(&values).unwrap();
        m.into()
    } else {
        let mut b = Bitmap::with_form(range, form).unwrap();
        b.insert_batch(&values).unwrap();
        b.into()
    }
}

fn reseal(bytes: &mut [u8]) {
    let body = bytes.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn damaged_bitmap_files_are_refused_or_consistent(
        two in any::<bool>(),
        dense in any::<bool>(),
        start in -1000i64..1000,
        values in prop::collection::vec(any::<u32>(), 0..300),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let filter = sample(two, dense, start, &values);
        let bytes = native::to_bytes(&filter, None).unwrap();
        prop_assert_eq!(&native::from_bytes(&bytes, &[]).unwrap().filter, &filter);
        let mut bad = bytes.clone();
        for (at, value) in damage {
            let i = at.index(bad.len() - 8);
            bad[i] = value;
        }
        reseal(&mut bad);
        if let Ok(decoded) = native::from_bytes(&bad, &[]) {
            let again = native::to_bytes(&decoded.filter, decoded.design).unwrap();
            let back = native::from_bytes(&again, &[]).unwrap();
            prop_assert_eq!(back.filter, decoded.filter);
        }
        let cut = bytes.len() / 2;
        prop_assert!(native::from_bytes(&bytes[..cut], &[]).is_err());
    }
}
