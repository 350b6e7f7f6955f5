//! A file written by a newer version of bloomkit: every code such a version may add (a filter
//! kind, a layout or probing scheme, a hash function, a key encoding, a format version) is
//! reported as a newer version's, with a typed error, for every kind, never as a damaged file
//! and never misread.

use bloomkit::bitmap::{Bitmap, KeyRange, TwoBitMap};
use bloomkit::codec::native;
use bloomkit::window::{sizing, CountWindowFilter, TimeWindowFilter};
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, DLeftCountingFilter, Error,
    Filter, Hashing, Kind, ScalableBloomFilter, Spec,
};
use std::time::Duration;

/// A count window of the first blocked layout (scheme 9), which this build reads but no longer
/// builds (`tests/fixtures.rs`).
fn first_blocked_count_window() -> AnyFilter {
    let bytes = include_bytes!("fixtures/v2/count-window-blocked-lanes.bloom");
    native::from_bytes(bytes, &[]).unwrap().filter
}

/// One filter of every kind (every count-window layout), with its name.
fn every_kind() -> Vec<(String, AnyFilter)> {
    let spec = || Spec::for_capacity(1000, 0.01).unwrap();
    let range = || KeyRange::new(0, 10_000).unwrap();
    let shape = sizing::age_partitioned_for(1000, 0.01).unwrap();
    let day = Duration::from_secs(86_400);
    let filters: Vec<AnyFilter> = vec![
        BloomFilter::from_spec(spec()).unwrap().into(),
        CountingBloomFilter::new(1000, 0.01).unwrap().into(),
        ScalableBloomFilter::new(100, 0.01).unwrap().into(),
        BlockedBloomFilter::new(1000, 0.01).unwrap().into(),
        CountWindowFilter::new(1000, 0.01).unwrap().into(),
        CountWindowFilter::from_shape(shape, 1000, 0.01, Hashing::Xxh3)
            .unwrap()
            .into(),
        first_blocked_count_window(),
        TimeWindowFilter::new(7 * day, 7, 1000, 0.01)
            .unwrap()
            .into(),
        Bitmap::new(range(), 100).unwrap().into(),
        TwoBitMap::new(range(), 100).unwrap().into(),
        DLeftCountingFilter::new(1000, 0.01).unwrap().into(),
    ];
    let kinds: Vec<Kind> = filters.iter().map(|f| f.kind()).collect();
    for kind in Kind::ALL {
        assert!(kinds.contains(&kind), "no {kind} file in the test");
    }
    filters
        .into_iter()
        .enumerate()
        .map(|(i, f)| (format!("{} #{i}", f.kind()), f))
        .collect()
}

/// Rewrites the trailing checksum, as the newer writer would have written it.
fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n]);
    bytes[n..].copy_from_slice(&sum.to_le_bytes());
}

/// `bytes` with `edit` applied and the checksum fixed up.
fn edited(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = bytes.to_vec();
    edit(&mut out);
    reseal(&mut out);
    out
}

fn assert_newer(name: &str, what: &str, bytes: &[u8], names: &str) {
    match native::from_bytes(bytes, &[]) {
        Err(e @ Error::NewerVersion { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(names), "{name}, {what}: {msg}");
            assert!(msg.contains("newer version"), "{name}, {what}: {msg}");
        }
        other => panic!("{name}, {what}: {other:?}"),
    }
}

#[test]
fn codes_of_a_newer_version_are_reported_as_such_for_every_kind() {
    for (name, filter) in every_kind() {
        let bytes = native::to_bytes(&filter, None).unwrap();
        native::from_bytes(&bytes, &[]).unwrap();
        let kind = edited(&bytes, |b| b[10..12].copy_from_slice(&200u16.to_le_bytes()));
        assert_newer(&name, "kind", &kind, "unknown filter kind 200");
        // The scheme byte: a probing scheme, block layout, count-window layout, bitmap form or
        // d-left layout, by kind.
        let scheme = edited(&bytes, |b| b[12] = 250);
        assert_newer(&name, "layout", &scheme, "250");
        let key_encoding = edited(&bytes, |b| b[14] = 2);
        assert_newer(
            &name,
            "key encoding",
            &key_encoding,
            "unknown key encoding 2",
        );
        // Bitmaps store no hash function (code 0, checked as a field of their own).
        if !matches!(filter.kind(), Kind::Bitmap | Kind::TwoBitMap) {
            let hashing = edited(&bytes, |b| b[13] = 250);
            assert_newer(&name, "hashing", &hashing, "unknown hash function code 250");
        }
        // A format version beyond this build's.
        let version = edited(&bytes, |b| b[8..10].copy_from_slice(&3u16.to_le_bytes()));
        assert!(
            matches!(
                native::from_bytes(&version, &[]),
                Err(Error::UnsupportedVersion { version: 3, .. })
            ),
            "{name}"
        );
    }
}

#[test]
fn only_the_blocked_count_window_needs_version_2() {
    for (name, filter) in every_kind() {
        let bytes = native::to_bytes(&filter, None).unwrap();
        let blocked = matches!(&filter, AnyFilter::CountWindow(c) if c.layout() != bloomkit::window::WindowLayout::Slices);
        let want: u16 = if blocked { 2 } else { 1 };
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), want, "{name}");
    }
    // A blocked count window (split lanes, scheme 11, or the first layout, scheme 9) claiming
    // version 1 cannot be one a version-1 writer wrote.
    let split = CountWindowFilter::new(1000, 0.01).unwrap().into();
    for (f, scheme) in [(split, 11), (first_blocked_count_window(), 9)] {
        let bytes = native::to_bytes(&f, None).unwrap();
        assert_eq!(bytes[12], scheme);
        let v1 = edited(&bytes, |b| b[8..10].copy_from_slice(&1u16.to_le_bytes()));
        assert!(matches!(
            native::from_bytes(&v1, &[]),
            Err(Error::Corrupt { .. })
        ));
    }
}
