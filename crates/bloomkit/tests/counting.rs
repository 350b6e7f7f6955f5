//! Counting filter behaviour: removal, frequency estimates, saturation, refusals.

use bloomkit::codec::native;
use bloomkit::storage::{CounterWidth, Counters};
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
            kind: "classic"
        })
    ));
    let mut counting: Box<dyn Filter> = Box::new(CountingBloomFilter::new(10, 0.1).unwrap());
    counting.insert_encoded(b"x").unwrap();
    counting.remove_encoded(b"x").unwrap();
    assert!(!counting.contains_encoded(b"x"));
}

/// The filter's whole state as it would be written to a file.
fn bytes_of(f: &CountingBloomFilter) -> Vec<u8> {
    native::to_bytes(&f.clone().into(), None).unwrap()
}

/// A filter of `spec` whose counter `i` holds `values[i]`.
fn with_counters(spec: &Spec, width: CounterWidth, values: &[u8]) -> CountingBloomFilter {
    let mut counters = Counters::zeros(spec.bits(), width).unwrap();
    for (i, &v) in values.iter().enumerate() {
        counters.set(i as u64, v);
    }
    CountingBloomFilter::from_parts(spec.clone(), counters).unwrap()
}

/// How many of the element's probes land on each counter.
fn multiplicities(spec: &Spec, key: &str) -> HashMap<u64, u8> {
    let mut m = HashMap::new();
    for p in spec.positions(key) {
        *m.entry(p).or_insert(0u8) += 1;
    }
    m
}

/// An element whose probes are not all zero but one of them is: the refusal must come before
/// any counter is touched, so the counters it shares with "x" keep their values.
#[test]
fn refused_removal_of_a_partly_present_element_changes_no_byte() {
    let spec = Spec::with_bits(64, 4).unwrap();
    let mut f = CountingBloomFilter::from_spec(spec.clone(), CounterWidth::Four).unwrap();
    f.insert("x");
    let x: Vec<u64> = spec.positions("x");
    // The first probe in probe order is one of x's counters, and another probe is zero.
    let y = (0..10_000)
        .map(|i| format!("y:{i}"))
        .find(|y| {
            let p = spec.positions(y.as_str());
            x.contains(&p[0]) && p.iter().any(|q| !x.contains(q))
        })
        .expect("some element shares its first counter with x (64 counters, 4 probes)");
    let before = bytes_of(&f);
    assert!(matches!(f.remove(y.as_str()), Err(Error::NotPresent)));
    assert_eq!(bytes_of(&f), before, "a refused removal changed the filter");
    assert!(f.contains("x"));
    f.remove("x").unwrap();
    assert_eq!(f.count_nonzero(), 0);
}

/// Where two probes of an element hit the same counter, that counter must hold at least two:
/// removing from a counter of 1 twice would take it below zero. Refused, nothing changed; with
/// one more on that counter the same removal succeeds and empties the filter.
#[test]
fn removal_that_would_take_a_shared_counter_below_zero_is_refused() {
    // 8 probes over 5 counters: every element hits some counter at least twice.
    let spec = Spec::with_bits(5, 8).unwrap();
    for width in [CounterWidth::Four, CounterWidth::Eight] {
        let mult = multiplicities(&spec, "e");
        let (&shared, &times) = mult.iter().find(|(_, &n)| n >= 2).unwrap();
        let mut values = [0u8; 5];
        for (&p, &n) in &mult {
            values[p as usize] = n;
        }
        // Every counter covers its probes except `shared`, which is one short (but not zero).
        values[shared as usize] = times - 1;
        let mut f = with_counters(&spec, width, &values);
        assert!(f.contains("e"), "all of e's counters are non-zero");
        let before = bytes_of(&f);
        assert!(matches!(f.remove("e"), Err(Error::NotPresent)));
        assert_eq!(bytes_of(&f), before, "a refused removal changed the filter");

        values[shared as usize] = times;
        let mut f = with_counters(&spec, width, &values);
        f.remove("e").unwrap();
        assert_eq!(f.count_nonzero(), 0, "each counter lost exactly its probes");
    }
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

    /// Removal against a model: on arbitrary counters, `remove` succeeds exactly when every
    /// counter of the element holds at least as many as its probes there (or is saturated),
    /// and then lowers each unsaturated counter by exactly that many; otherwise it is refused
    /// and the filter's bytes are unchanged.
    #[test]
    fn removal_matches_the_model(values in prop::collection::vec(0u8..=15, 16), key in 0u32..1000) {
        let spec = Spec::with_bits(16, 6).unwrap();
        let key = key.to_string();
        let mut f = with_counters(&spec, CounterWidth::Four, &values);
        let before = bytes_of(&f);
        let mult = multiplicities(&spec, &key);
        let possible = mult.iter().all(|(&p, &n)| values[p as usize] == 15 || values[p as usize] >= n);
        match f.remove(key.as_str()) {
            Ok(()) => {
                prop_assert!(possible);
                for (i, &v) in values.iter().enumerate() {
                    let n = mult.get(&(i as u64)).copied().unwrap_or(0);
                    let expected = if v == 15 { v } else { v - n };
                    prop_assert_eq!(f.counters().get(i as u64), expected);
                }
            }
            Err(Error::NotPresent) => {
                prop_assert!(!possible);
                prop_assert_eq!(bytes_of(&f), before);
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }
}
