//! Counting filter behaviour: removal, frequency estimates, saturation, refusals.

use bloomkit::storage::CounterWidth;
use bloomkit::{BloomFilter, CountingBloomFilter, Error, Filter, Spec};
use proptest::prelude::*;
use std::collections::HashMap;

fn fp_count(f: &CountingBloomFilter, trials: u64) -> u64 {
    (0..trials)
        .filter(|i| f.contains(&format!("stranger:{i}")))
        .count() as u64
}

/// Insert A ∪ B, remove B: every element of A is still present, and the FPR falls back to
/// the level of a filter that only ever held A.
///
/// Bound: with `T` = 200,000 queries, the false-positive count of a filter holding A is
/// binomial with mean `T·q ≈ 2000` (n = 10,000 at 1%); the filter after removals must have
/// the *same* counters as one that only held A (no counter saturated), so its count of false
/// positives equals that filter's exactly; we also check it against `q` within 5σ.
#[test]
fn removing_b_restores_a() {
    let spec = Spec::for_capacity(20_000, 0.01).unwrap();
    let a: Vec<String> = (0..10_000).map(|i| format!("a:{i}")).collect();
    let b: Vec<String> = (0..10_000).map(|i| format!("b:{i}")).collect();

    let mut only_a = CountingBloomFilter::from_spec(spec.clone(), CounterWidth::Four).unwrap();
    for x in &a {
        only_a.insert(x);
    }
    let mut f = CountingBloomFilter::from_spec(spec, CounterWidth::Four).unwrap();
    for x in a.iter().chain(&b) {
        f.insert(x);
    }
    let before = fp_count(&f, 200_000);
    for x in &b {
        f.remove(x).unwrap();
    }
    assert!(
        a.iter().all(|x| f.contains(x)),
        "false negative after removals"
    );
    // No counter saturated here (max load is far below 15), so removal is exact.
    assert_eq!(f, only_a);

    let t = 200_000.0;
    let after = fp_count(&f, 200_000) as f64;
    let q = f.estimated_fpp();
    let sigma = (t * q * (1.0 - q)).sqrt();
    assert!(
        (after - t * q).abs() <= 5.0 * sigma,
        "after={after} expected={}",
        t * q
    );
    // Holding A ∪ B (twice the elements) the FPR was far higher.
    assert!(before as f64 > 3.0 * after, "before={before} after={after}");
}

#[test]
fn saturation_is_sticky() {
    for (width, max) in [(CounterWidth::Four, 15u8), (CounterWidth::Eight, 255u8)] {
        let spec = Spec::with_bits(1000, 3).unwrap();
        let mut f = CountingBloomFilter::from_spec(spec, width).unwrap();
        for _ in 0..300 {
            f.insert("hot");
        }
        assert_eq!(f.count("hot"), max);
        // Removing more often than the maximum never brings it to zero: saturated counters
        // are not decremented, so no false negative can appear.
        for _ in 0..300 {
            f.remove("hot").unwrap();
        }
        assert!(f.contains("hot"));
        assert_eq!(f.count("hot"), max);
    }
    // Below saturation, removal is exact.
    let mut f = CountingBloomFilter::new(1000, 0.01).unwrap();
    for _ in 0..10 {
        f.insert("warm");
    }
    for _ in 0..10 {
        f.remove("warm").unwrap();
    }
    assert!(!f.contains("warm"));
    assert_eq!(f.count_nonzero(), 0);
}

#[test]
fn impossible_removals_are_refused_and_change_nothing() {
    let mut f = CountingBloomFilter::new(1000, 0.01).unwrap();
    f.insert("x");
    let before = f.clone();
    assert!(matches!(f.remove("y"), Err(Error::NotPresent)));
    assert_eq!(f, before);
    f.remove("x").unwrap();
    assert!(matches!(f.remove("x"), Err(Error::NotPresent)));
    // Through the trait, classic filters cannot remove at all.
    let mut classic: Box<dyn Filter> = Box::new(BloomFilter::new(10, 0.1).unwrap());
    assert!(matches!(
        classic.remove_encoded(b"x"),
        Err(Error::Unsupported {
            operation: "remove",
            kind: bloomkit::Kind::Classic
        })
    ));
    let mut counting: Box<dyn Filter> = Box::new(CountingBloomFilter::new(10, 0.1).unwrap());
    counting.insert_encoded(b"x").unwrap();
    counting.remove_encoded(b"x").unwrap();
    assert!(!counting.contains_encoded(b"x"));
}

/// Where two probes of an element hit the same counter, a counter of 1 cannot hold it.
#[test]
fn repeated_probes_need_enough_count() {
    // With 2 counters and 8 probes, every element hits some counter several times.
    let spec = Spec::with_bits(2, 8).unwrap();
    let mut f = CountingBloomFilter::from_spec(spec, CounterWidth::Eight).unwrap();
    f.insert("e");
    f.remove("e").unwrap();
    assert_eq!(f.count_nonzero(), 0);
    f.insert("e");
    let probes = f.spec().positions("e");
    let first = probes[0];
    let hits_first = probes.iter().filter(|&&p| p == first).count();
    assert!(hits_first >= 2);
}

#[test]
fn union_and_conversion() {
    let mut a = CountingBloomFilter::new(1000, 0.01).unwrap();
    let mut b = a.clone();
    a.insert("x");
    b.insert("x");
    b.insert("y");
    a.union(&b).unwrap();
    assert_eq!(a.count("x"), 2);
    assert_eq!(a.count("y"), 1);
    let plain = a.to_bloom_filter();
    assert!(plain.contains("x") && plain.contains("y"));
    assert_eq!(plain.count_ones(), a.count_nonzero());
    assert_eq!(a.memory_bytes(), 4 * plain.memory_bytes());

    let eight = CountingBloomFilter::from_spec(a.spec().clone(), CounterWidth::Eight).unwrap();
    assert!(matches!(a.union(&eight), Err(Error::Incompatible(_))));
    let other = CountingBloomFilter::new(1000, 0.1).unwrap();
    assert!(matches!(a.union(&other), Err(Error::Incompatible(_))));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// The count of every element is at least its true multiplicity (below saturation).
    #[test]
    fn counts_never_below_truth(items in prop::collection::vec(0u16..200, 0..600), eight in any::<bool>()) {
        let width = if eight { CounterWidth::Eight } else { CounterWidth::Four };
        let spec = Spec::for_capacity(200, 0.05).unwrap();
        let mut f = CountingBloomFilter::from_spec(spec, width).unwrap();
        let mut truth: HashMap<u16, u8> = HashMap::new();
        for x in &items {
            f.insert(x);
            let c = truth.entry(*x).or_default();
            *c = c.saturating_add(1);
        }
        for (x, &n) in &truth {
            prop_assert!(f.count(x) >= n.min(width.max()));
        }
        // Remove half of each element's occurrences: counts stay >= the remaining truth.
        for (x, n) in truth.iter_mut() {
            for _ in 0..*n / 2 {
                f.remove(x).unwrap();
            }
            *n -= *n / 2;
        }
        for (x, &n) in &truth {
            prop_assert!(f.contains(x));
            prop_assert!(f.count(x) >= n.min(width.max()));
        }
    }
}
