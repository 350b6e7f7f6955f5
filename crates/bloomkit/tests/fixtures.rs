//! Files written by an earlier build must stay readable and byte-identical.
//!
//! `tests/fixtures/v1/*.bloom` were written by the build before the library's restructuring
//! (one file per kind, layout, scheme and counter width), `v2/` by later builds. For each one
//! this test
//! 1. decodes the committed file and checks that the keys inserted into it are present,
//! 2. re-encodes what it decoded and compares with the committed bytes, and
//! 3. builds the same filter again from the same keys and compares its encoding too,
//!
//! so any change of hashing, probing, sizing or encoding shows up as a failure here.
//! `BLOOMKIT_WRITE_FIXTURES=1 cargo test --test fixtures` rewrites the files (only ever done
//! on purpose, for a new format version).

use bloomkit::clock::ManualClock;
use bloomkit::codec::native::{self, Design};
use bloomkit::storage::CounterWidth;
use bloomkit::window::{sizing, CountWindowFilter, TimeWindowFilter, WindowLayout};
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, DLeftCountingFilter, Filter,
    Hashing, Preset, ScalableBloomFilter, ScalableConfig, Scheme, Spec,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const KEYS: u64 = 300;

fn key(i: u64) -> String {
    format!("https://example.com/page/{i}")
}

fn fill(f: &mut AnyFilter) {
    for i in 0..KEYS {
        f.insert_encoded(key(i).as_bytes()).unwrap();
    }
}

/// A `BlockedBloomFilter` constructor taking capacity and fpp.
type NewBlocked = fn(u64, f64) -> bloomkit::Result<BlockedBloomFilter>;

/// Every fixture: its file name, the filter it holds, and its recorded design.
fn fixtures() -> Vec<(&'static str, AnyFilter, Option<Design>)> {
    let design = Some(Design {
        capacity: 1000,
        fpp: 0.01,
    });
    let classic = |spec: Spec| AnyFilter::from(BloomFilter::from_spec(spec).unwrap());
    let preset = |p| classic(Spec::preset(p, 1000, 0.01).unwrap());
    // The v1 files of bloomkit's own kinds have the default scheme of their time,
    // `enhanced-double`; the v2 files the default since, `mixed-double`.
    let v1 = |spec: Spec| spec.with_scheme(Scheme::EnhancedDouble);
    let counting_with =
        |spec: Spec, w| AnyFilter::from(CountingBloomFilter::from_spec(spec, w).unwrap());
    let counting = |w| counting_with(v1(Spec::for_capacity(1000, 0.01).unwrap()), w);
    let scalable = |scheme| {
        let mut config = ScalableConfig::new(100, 0.01);
        config.scheme = scheme;
        AnyFilter::from(ScalableBloomFilter::with_config(config).unwrap())
    };
    let blocked: [(_, NewBlocked); 4] = [
        ("v1/blocked-default.bloom", BlockedBloomFilter::new),
        ("v1/blocked-compact.bloom", BlockedBloomFilter::new_compact),
        (
            "v1/blocked-split.bloom",
            BlockedBloomFilter::new_split_block,
        ),
        (
            "v1/blocked-split256.bloom",
            BlockedBloomFilter::new_split_block_256,
        ),
    ];
    let blocked =
        blocked.map(|(name, new)| (name, AnyFilter::from(new(1000, 0.01).unwrap()), design));
    let mut all = vec![
        (
            "v1/classic.bloom",
            classic(v1(Spec::preset(Preset::Bloomkit, 1000, 0.01).unwrap())),
            design,
        ),
        (
            "v1/classic-nodesign.bloom",
            classic(v1(Spec::preset(Preset::Bloomkit, 1000, 0.01).unwrap())),
            None,
        ),
        ("v1/guava.bloom", preset(Preset::Guava), design),
        ("v1/guava32.bloom", preset(Preset::Guava32), design),
        ("v1/go.bloom", preset(Preset::Go), design),
        ("v1/redisson.bloom", preset(Preset::Redisson), design),
        (
            "v1/classic-murmur3.bloom",
            classic(v1(Spec::for_capacity(1000, 0.01)
                .unwrap()
                .with_hashing(Hashing::Murmur3))),
            design,
        ),
        // Added with the one-64-bit-hash classic scheme (native scheme code 10).
        (
            "v1/classic-bloomkit64.bloom",
            preset(Preset::Bloomkit64),
            design,
        ),
    ];
    all.extend(blocked);
    all.extend([
        ("v1/counting4.bloom", counting(CounterWidth::Four), design),
        ("v1/counting8.bloom", counting(CounterWidth::Eight), design),
        // Added with the d-left kind and minimal increase (same format version).
        (
            "v1/counting4-minimal-increase.bloom",
            match counting(CounterWidth::Four) {
                AnyFilter::Counting(c) => c.with_minimal_increase().into(),
                other => other,
            },
            design,
        ),
        (
            "v1/dleft.bloom",
            DLeftCountingFilter::new(1000, 0.01).unwrap().into(),
            design,
        ),
        // Added with the expiring kinds (same format version). The count window is the
        // layout of one bit array per slice, which every build before the blocked layout wrote.
        (
            "v1/count-window-slices.bloom",
            count_window_slices(),
            design,
        ),
        ("v1/time-window.bloom", time_window(), design),
        // Added with the split lanes of the blocked count window (native scheme 11, format
        // version 2): what `CountWindowFilter::new` builds.
        (
            "v2/count-window-split-lanes.bloom",
            CountWindowFilter::new(1000, 0.01).unwrap().into(),
            design,
        ),
        (
            // 300 keys into layers of 100, 200, ...: three layers.
            "v1/scalable.bloom",
            scalable(Scheme::EnhancedDouble),
            None,
        ),
        // Added with the `mixed-double` scheme (native scheme code 12), bloomkit's default
        // since: what `BloomFilter::new`, `CountingBloomFilter::new` and
        // `ScalableBloomFilter::new` build.
        (
            "v2/classic-mixed-double.bloom",
            BloomFilter::new(1000, 0.01).unwrap().into(),
            design,
        ),
        (
            "v2/counting4-mixed-double.bloom",
            counting_with(Spec::for_capacity(1000, 0.01).unwrap(), CounterWidth::Four),
            design,
        ),
        (
            "v2/scalable-mixed-double.bloom",
            AnyFilter::from(ScalableBloomFilter::new(100, 0.01).unwrap()),
            None,
        ),
    ]);
    all
}

/// A count window of the last 1000 insertions at 1% in one bit array per slice (the paper's
/// layout, sized by `age_partitioned_for`).
fn count_window_slices() -> AnyFilter {
    let shape = sizing::age_partitioned_for(1000, 0.01).unwrap();
    CountWindowFilter::from_shape(shape, 1000, 0.01, Hashing::Xxh3)
        .unwrap()
        .into()
}

/// A time window of 7 days in 7 generations, 1000 insertions per window, on a clock set in
/// the year 2200: a reader's clock is behind it, which the filter takes as no time passing,
/// so every key stays inside the window.
fn time_window() -> AnyFilter {
    let day = Duration::from_secs(86_400);
    let clock = Arc::new(ManualClock::new(7_258_118_400_000));
    TimeWindowFilter::new(7 * day, 7, 1000, 0.01)
        .unwrap()
        .with_clock(clock)
        .into()
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[test]
fn files_of_the_earlier_build_read_back_and_encode_identically() {
    let write = std::env::var_os("BLOOMKIT_WRITE_FIXTURES").is_some();
    for (name, mut filter, design) in fixtures() {
        fill(&mut filter);
        let rebuilt = native::to_bytes(&filter, design).unwrap();
        let path = dir().join(name);
        if write {
            std::fs::write(&path, &rebuilt).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let decoded = native::from_bytes(&committed, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.design, design, "{name}: design");
        for i in 0..KEYS {
            assert!(
                decoded.filter.contains_encoded(key(i).as_bytes()),
                "{name}: key {i} missing"
            );
        }
        assert_eq!(
            native::to_bytes(&decoded.filter, decoded.design).unwrap(),
            committed,
            "{name}: decoding and re-encoding changed the bytes"
        );
        assert_eq!(
            rebuilt, committed,
            "{name}: this build writes other bytes for the same filter"
        );
    }
}

#[test]
fn streamed_writes_and_saves_are_the_committed_bytes() {
    let tmp = std::env::temp_dir().join(format!("bloomkit-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (name, _, _) in fixtures() {
        let committed = std::fs::read(dir().join(name)).unwrap();
        let decoded = native::from_bytes(&committed, &[]).unwrap();
        let mut streamed = Vec::new();
        native::write_to(&decoded.filter, decoded.design, &mut streamed).unwrap();
        assert_eq!(
            streamed, committed,
            "{name}: write_to differs from the file"
        );
        assert_eq!(
            native::encoded_len(&decoded.filter, decoded.design),
            committed.len() as u64,
            "{name}: encoded_len"
        );
        // file::save streams into the file; the bytes on disk are the same.
        let path = tmp.join(name.replace('/', "-"));
        bloomkit::file::save(&path, &decoded.filter, decoded.design).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            committed,
            "{name}: file::save"
        );
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Count windows of the first blocked layout (native scheme 9, format version 2), which the
/// build of that layout wrote and this one reads but no longer builds: `CountWindowFilter::new(1000,
/// 0.01)` (lanes of 512 bits, 6 bits per element) and a shape with lanes of 128 bits (7 bits per
/// element), each holding keys 0..300. The same build recorded, in `<name>.answers`, line by
/// line: which of keys 300..20 300 it found; whether each insert of keys 20 300..21 500 was
/// new (`1`) or not (`0`), a run crossing three generations; which of keys 0..20 300 it found
/// after those; and the XXH3-64 of its encoding after them. This build must answer and write
/// exactly the same.
#[test]
fn first_blocked_count_windows_answer_as_the_build_that_wrote_them() {
    let design = Some(Design {
        capacity: 1000,
        fpp: 0.01,
    });
    let positives = |f: &AnyFilter, range: std::ops::Range<u64>| {
        range
            .filter(|&i| f.contains_encoded(key(i).as_bytes()))
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for name in [
        "count-window-blocked-lanes",
        "count-window-blocked-lanes128",
    ] {
        let path = dir().join("v2").join(name);
        let committed = std::fs::read(path.with_extension("bloom")).unwrap();
        let answers = std::fs::read_to_string(path.with_extension("answers")).unwrap();
        let answers: Vec<&str> = answers.lines().collect();
        let decoded = native::from_bytes(&committed, &[]).unwrap();
        assert_eq!(decoded.design, design, "{name}");
        let AnyFilter::CountWindow(c) = &decoded.filter else {
            panic!("{name}: a count window")
        };
        assert!(
            matches!(c.layout(), WindowLayout::BlockedFields(_)),
            "{name}: {:?}",
            c.layout()
        );
        let mut f = decoded.filter;
        for i in 0..KEYS {
            assert!(f.contains_encoded(key(i).as_bytes()), "{name}: key {i}");
        }
        assert_eq!(native::to_bytes(&f, design).unwrap(), committed, "{name}");
        let mut streamed = Vec::new();
        native::write_to(&f, design, &mut streamed).unwrap();
        assert_eq!(streamed, committed, "{name}: write_to");
        assert_eq!(
            positives(&f, KEYS..20_300),
            answers[0],
            "{name}: non-members"
        );
        let new: String = (20_300..21_500)
            .map(|i| {
                let new = f.insert_encoded(key(i).as_bytes()).unwrap();
                if new {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        assert_eq!(new, answers[1], "{name}: inserts");
        assert_eq!(
            positives(&f, 0..20_300),
            answers[2],
            "{name}: after the inserts"
        );
        let after = native::to_bytes(&f, design).unwrap();
        let hash = xxhash_rust::xxh3::xxh3_64(&after).to_string();
        assert_eq!(hash, answers[3], "{name}: the encoding after the inserts");
    }
}
