//! The counting filter's minimal-increase insertion (Cohen and Matias's spectral Bloom
//! filter): never an under-estimate, never worse than minimum selection, no removal.

use bloomkit::codec::native;
use bloomkit::storage::CounterWidth;
use bloomkit::{AnyFilter, CountingBloomFilter, Error, Filter, Spec};
use proptest::prelude::*;
use std::collections::HashMap;

/// A skewed multiset: key `i` (1-based) appears `⌈500 / i⌉` times (Zipf, exponent 1), in an
/// order mixed by a fixed linear congruential shuffle.
fn zipf_stream(keys: u32) -> (Vec<u32>, HashMap<u32, u32>) {
    let mut stream = Vec::new();
    let mut truth = HashMap::new();
    for i in 1..=keys {
        let c = 500u32.div_ceil(i);
        truth.insert(i, c);
        stream.extend(std::iter::repeat_n(i, c as usize));
    }
    let mut s = 0x2545_f491_4f6c_dd1du64;
    for i in (1..stream.len()).rev() {
        s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        stream.swap(i, (s >> 33) as usize % (i + 1));
    }
    (stream, truth)
}

/// Minimal increase never under-estimates (with 8-bit counters nothing saturates: the
/// largest count is 500 > 255, so counts are compared as `min(true, 255)`), over-estimates no
/// more than minimum selection on any key, and less in total on a skewed stream.
#[test]
fn minimal_increase_never_under_estimates_and_beats_minimum_selection() {
    let (stream, truth) = zipf_stream(3000);
    let spec = Spec::for_capacity(1000, 0.05).unwrap(); // deliberately crowded
    let mut plain = CountingBloomFilter::from_spec(spec.clone(), CounterWidth::Eight).unwrap();
    let mut mi = CountingBloomFilter::from_spec(spec, CounterWidth::Eight)
        .unwrap()
        .with_minimal_increase();
    assert!(mi.is_minimal_increase() && !plain.is_minimal_increase());
    for k in &stream {
        plain.insert(k);
        mi.insert(k);
    }
    let (mut err_plain, mut err_mi) = (0u64, 0u64);
    for (k, &c) in &truth {
        let c = c.min(255) as u8;
        let (a, b) = (plain.count(k), mi.count(k));
        assert!(b >= c, "key {k}: minimal increase {b} < true {c}");
        assert!(
            b <= a,
            "key {k}: minimal increase {b} > minimum selection {a}"
        );
        err_plain += u64::from(a - c);
        err_mi += u64::from(b - c);
    }
    assert!(err_mi * 2 < err_plain, "{err_mi} vs {err_plain}");
}

#[test]
fn minimal_increase_refuses_removal_and_is_kept_in_files() {
    let mut f = CountingBloomFilter::new(100, 0.01)
        .unwrap()
        .with_minimal_increase();
    assert!(f.insert("a"));
    assert!(!f.insert("a"));
    assert_eq!(f.count("a"), 2);
    let before = f.clone();
    let err = f.remove("a").unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "a minimal-increase counting filter cannot remove elements"
    );
    assert_eq!(f, before);
    let mut any = AnyFilter::from(f.clone());
    assert!(any.remove_encoded(b"a").is_err());
    // Stored in the counter-width byte (0x80 | 4); read back with the mode.
    let bytes = native::to_bytes(&any, None).unwrap();
    assert_eq!(bytes[15], 0x84);
    let back = native::from_bytes(&bytes, &[]).unwrap().filter;
    let AnyFilter::Counting(back) = back else {
        panic!("not a counting filter")
    };
    assert!(back.is_minimal_increase());
    assert_eq!(back, f);
    // A plain counting filter's file is unchanged (width byte 4) and cannot be united with a
    // minimal-increase one.
    let plain = CountingBloomFilter::new(100, 0.01).unwrap();
    assert_eq!(
        native::to_bytes(&plain.clone().into(), None).unwrap()[15],
        4
    );
    let mut mixed = plain.clone();
    assert!(matches!(mixed.union(&f), Err(Error::Incompatible(_))));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any stream into a crowded filter with 4-bit counters: every estimate is at least the
    /// true count (as far as the counters reach: `min(true, 15)`) and at most minimum
    /// selection's estimate for the same stream.
    #[test]
    fn estimates_are_bounded_on_any_stream(stream in prop::collection::vec(0u16..60, 1..400)) {
        let spec = Spec::with_bits(64, 3).unwrap();
        let mut plain = CountingBloomFilter::from_spec(spec.clone(), CounterWidth::Four).unwrap();
        let mut mi = CountingBloomFilter::from_spec(spec, CounterWidth::Four)
            .unwrap()
            .with_minimal_increase();
        let mut truth: HashMap<u16, u8> = HashMap::new();
        for k in stream {
            plain.insert(&k);
            mi.insert(&k);
            let c = truth.entry(k).or_default();
            *c = c.saturating_add(1);
            for (key, &c) in &truth {
                let (a, b) = (plain.count(key), mi.count(key));
                prop_assert!(b >= c.min(15), "key {}: {} < {}", key, b, c);
                prop_assert!(b <= a, "key {}: {} > {}", key, b, a);
            }
        }
    }
}
