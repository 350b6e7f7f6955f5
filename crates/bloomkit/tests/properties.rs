//! Properties that hold for every element, size, scheme and hash: no false negatives, ever;
//! union and intersection keep what they must; the key encoding does not drift.

use bloomkit::{AtomicBloomFilter, BloomFilter, Error, Hashing, Params, Preset, Scheme, Spec};
use proptest::prelude::*;

mod support;
use support::any_layout;

fn any_scheme() -> impl Strategy<Value = Scheme> {
    prop::sample::select(Scheme::ALL.to_vec())
}

fn any_hashing() -> impl Strategy<Value = Hashing> {
    prop_oneof![
        Just(Hashing::Xxh3),
        Just(Hashing::Murmur3),
        Just(Hashing::Highway),
        any::<[u8; 16]>().prop_map(Hashing::siphash),
    ]
}

fn any_spec() -> impl Strategy<Value = Spec> {
    (1u64..20_000, 1u32..24, any_scheme(), any_hashing())
        .prop_map(|(bits, hashes, s, h)| Spec::new(Params { bits, hashes }, s, h).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_false_negatives(spec in any_spec(), keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..300)) {
        let mut f = BloomFilter::from_spec(spec).unwrap();
        for k in &keys {
            f.insert(k.as_slice());
        }
        for k in &keys {
            prop_assert!(f.contains(k.as_slice()));
        }
    }

    #[test]
    fn no_false_negatives_with_presets(
        preset in prop::sample::select(Preset::ALL.to_vec()),
        n in 1u64..5000,
        p in 0.0001f64..0.5,
        keys in prop::collection::vec(any::<u64>(), 0..500),
    ) {
        let mut f = BloomFilter::from_spec(Spec::preset(preset, n, p).unwrap()).unwrap();
        f.extend(keys.iter());
        prop_assert!(keys.iter().all(|k| f.contains(k)));
    }

    #[test]
    fn union_holds_both_and_intersection_holds_common(
        spec in any_spec(),
        a in prop::collection::vec(any::<u32>(), 0..200),
        b in prop::collection::vec(any::<u32>(), 0..200),
    ) {
        let mut fa = BloomFilter::from_spec(spec.clone()).unwrap();
        let mut fb = BloomFilter::from_spec(spec).unwrap();
        fa.extend(a.iter());
        fb.extend(b.iter());
        let mut u = fa.clone();
        u.union(&fb).unwrap();
        prop_assert!(a.iter().chain(&b).all(|k| u.contains(k)));
        let mut i = fa.clone();
        i.intersect(&fb).unwrap();
        prop_assert!(a.iter().filter(|k| b.contains(k)).all(|k| i.contains(k)));
        // Intersection never has more bits than either side.
        prop_assert!(i.count_ones() <= fa.count_ones().min(fb.count_ones()));
    }

    /// A query answers "all of the element's bits are set", whatever the pattern of set and
    /// clear bits among them (the default scheme reads its first bits together before it
    /// branches): filters about half full, so absent elements meet every pattern.
    #[test]
    fn a_query_is_exactly_all_positions_set(
        spec in any_spec(),
        present in prop::collection::vec(any::<u32>(), 0..400),
        asked in prop::collection::vec(any::<u32>(), 1..400),
    ) {
        let mut f = BloomFilter::from_spec(spec).unwrap();
        // Fill to about half the bits, the state of a filter at its capacity.
        for k in &present {
            if 2 * f.count_ones() >= f.bits() {
                break;
            }
            f.insert(k);
        }
        let words = f.as_words();
        let set = |i: u64| words[(i / 64) as usize] >> (i % 64) & 1 == 1;
        let atomic = AtomicBloomFilter::from(f.clone());
        let batch = f.contains_batch(&asked);
        for (k, b) in asked.iter().zip(batch) {
            let want = f.positions(k).into_iter().all(set);
            prop_assert_eq!(f.contains(k), want);
            prop_assert_eq!(atomic.contains(k), want);
            prop_assert_eq!(b, want);
        }
    }

    #[test]
    fn insert_reports_novelty_truthfully(spec in any_spec(), keys in prop::collection::vec(any::<u16>(), 1..100)) {
        let mut f = BloomFilter::from_spec(spec).unwrap();
        for k in &keys {
            let before = f.clone();
            let new = f.insert(k);
            // "new" exactly when some bit changed.
            prop_assert_eq!(new, before != f);
            prop_assert!(!f.insert(k));
        }
    }
}

/// Pins the positions of fixed keys under bloomkit's default pipeline (key encoding, XXH3,
/// `mixed-double` probing), under the default before it (`enhanced-double`) and under keyed
/// SipHash. If this test fails, saved filters would stop answering correctly: a change of
/// encoding, hash or probing is a format break.
#[test]
fn default_positions_are_stable() {
    let spec = Spec::with_bits(1_000_003, 7).unwrap();
    assert_eq!(spec.scheme(), Scheme::MixedDouble);
    check_pinned(&spec, &PINNED);
    // The default before `mixed-double`: files that have it keep these positions.
    check_pinned(
        &spec.clone().with_scheme(Scheme::EnhancedDouble),
        &PINNED_ENHANCED_DOUBLE,
    );
}

/// Checks the positions of the fixed keys (the first `pinned.len()` of them) under `spec`.
fn check_pinned(spec: &Spec, pinned: &[[u64; 7]]) {
    let keyed = spec
        .clone()
        .with_hashing(Hashing::siphash(*b"0123456789abcdef"));
    let got = [
        spec.positions(""),
        spec.positions("hello"),
        spec.positions(&42u64),
        spec.positions(&-7i32),
        spec.positions(&("user", 7u64)),
        keyed.positions("hello"),
    ];
    for (g, w) in got.iter().zip(pinned) {
        assert_eq!(g.as_slice(), w.as_slice(), "{}", spec.scheme());
    }
}

/// The default's positions of "", "hello", 42u64 and -7i32 (the hashing and key encoding are
/// pinned below with every key).
const PINNED: [[u64; 7]; 4] = [
    [720902, 41469, 492879, 134621, 626347, 211598, 641642],
    [82783, 235655, 218557, 720313, 596436, 964590, 523970],
    [362577, 399553, 555451, 250359, 971222, 114221, 604789],
    [949460, 201851, 598430, 827980, 35502, 546840, 296847],
];

const PINNED_ENHANCED_DOUBLE: [[u64; 7]; 6] = [
    [375028, 975280, 575529, 175779, 776031, 376281, 976533],
    [779204, 489802, 200399, 910999, 621596, 332193, 42791],
    [381868, 989952, 598032, 206113, 814197, 422277, 30358],
    [868496, 976227, 83956, 191688, 299420, 407152, 514883],
    [131005, 45616, 960231, 874842, 789454, 704065, 618676],
    [881534, 612841, 344149, 75457, 806768, 538075, 269383],
];

#[test]
fn bad_parameters_are_typed_errors() {
    let new = |n, p| BloomFilter::new(n, p).unwrap_err();
    let with_params = |m, k| BloomFilter::with_params(m, k).unwrap_err();
    let preset = |preset, n, p| Spec::preset(preset, n, p).unwrap_err();
    for p in [0.0, 1.0, f64::NAN, -0.1] {
        assert!(matches!(new(100, p), Error::InvalidFpp(_)), "p = {p}");
    }
    assert!(matches!(with_params(0, 3), Error::ZeroBits));
    assert!(matches!(with_params(64, 0), Error::ZeroHashes));
    assert!(matches!(
        with_params(64, 100_000),
        Error::TooManyHashes {
            hashes: 100_000,
            ..
        }
    ));
    assert!(matches!(with_params(u64::MAX, 3), Error::TooLarge { .. }));
    assert!(matches!(new(u64::MAX, 1e-12), Error::TooLarge { .. }));
    // A valid size that this machine cannot allocate (2^59 bytes) is an error, not an abort.
    assert!(matches!(
        with_params(1u64 << 62, 3),
        Error::Alloc { .. } | Error::TooLarge { .. }
    ));
    assert!(matches!(
        preset(Preset::Guava, 1, 0.99),
        Error::InvalidParameters(_)
    ));
    assert!(matches!(
        preset(Preset::Redisson, 10_000_000_000, 0.001),
        Error::TooLarge { .. }
    ));
    // n = 0 is documented to mean n = 1.
    assert_eq!(
        BloomFilter::new(0, 0.01).unwrap().bits(),
        BloomFilter::new(1, 0.01).unwrap().bits()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Plain and atomic blocked filters of any size, layout and hashing set the same bits for
    /// the same keys, one by one or in batches, and answer the same.
    #[test]
    fn atomic_blocked_filters_set_the_bits_of_plain_ones(
        blocks in 1u64..300,
        layout in any_layout(1..16),
        hashing in any_hashing(),
        keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 0..400),
    ) {
        use bloomkit::{AtomicBlockedBloomFilter, BlockedBloomFilter};
        let mut plain = BlockedBloomFilter::with_layout(blocks, layout, hashing.clone()).unwrap();
        let atomic = AtomicBlockedBloomFilter::with_layout(blocks, layout, hashing).unwrap();
        let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let (one, batch) = keys.split_at(keys.len() / 2);
        for key in one {
            prop_assert_eq!(plain.insert(key), atomic.insert(key));
        }
        plain.insert_batch(batch);
        atomic.insert_batch(batch);
        prop_assert!(plain.words().eq(atomic.words()));
        prop_assert_eq!(plain.contains_batch(&keys), atomic.contains_batch(&keys));
        prop_assert!(keys.iter().all(|k| atomic.contains(k)));
    }
}

/// Batch queries of filters larger than 4 MiB (which prefetch an element's first lines, then the
/// rest only when its first bits are set) answer exactly "all positions set", as single queries
/// do, for every scheme: bits three quarters set, so both answers occur for every `k`.
#[test]
fn batches_of_large_filters_answer_as_single_queries() {
    let mix = |mut x: u64| {
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    };
    let bits = 40_000_000u64;
    let words: Vec<u64> = (0..bits / 64).map(|i| mix(i) | mix(!i)).collect();
    let keys: Vec<u64> = (0..20_000).map(|i| mix(i + (1 << 40))).collect();
    let schemes = Scheme::ALL.into_iter();
    for (scheme, k) in schemes.flat_map(|s| [1, 3, 4, 7, 11].map(|k| (s, k))) {
        let hashing = if scheme == Scheme::Go {
            Hashing::Murmur3
        } else {
            Hashing::Xxh3
        };
        let spec = Spec::new(Params { bits, hashes: k }, scheme, hashing).unwrap();
        let f = BloomFilter::from_words(spec, words.clone()).unwrap();
        let set = |i: u64| words[(i / 64) as usize] >> (i % 64) & 1 == 1;
        let want: Vec<bool> = keys
            .iter()
            .map(|x| f.positions(x).into_iter().all(set))
            .collect();
        let positives = want.iter().filter(|&&b| b).count();
        assert!(
            positives > 0 && positives < keys.len(),
            "{scheme} k = {k}: {positives}"
        );
        assert_eq!(f.contains_batch(&keys), want, "{scheme} k = {k}");
        // Batches shorter than either of the pipeline's distances (`112 / k` elements and half
        // of that: 16 and 8 at k = 7), around them and longer, from offsets: every element is
        // still answered in its place.
        for (from, len) in [(0, 0), (0, 1), (5, 2), (0, 7), (3, 8), (0, 9), (2, 15)]
            .into_iter()
            .chain([(0, 16), (9, 17), (0, 24), (4, 33), (0, 100)])
        {
            let part = &keys[from..from + len];
            assert_eq!(
                f.contains_batch(part),
                want[from..from + len],
                "{scheme} k = {k}, {len} from {from}"
            );
        }
        let single: Vec<bool> = keys.iter().map(|x| f.contains(x)).collect();
        assert_eq!(single, want, "{scheme} k = {k}");
        assert_eq!(
            AtomicBloomFilter::from(f).contains_batch(&keys),
            want,
            "{scheme} k = {k}"
        );
    }
}
