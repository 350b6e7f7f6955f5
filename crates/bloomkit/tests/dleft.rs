//! The d-left counting filter: FPR within its bound, no false negatives, removal and counts
//! against a model, full buckets, files and hostile files.

use bloomkit::codec::native::{self, Design};
use bloomkit::math::DLeftParams;
use bloomkit::{AnyFilter, CountingBloomFilter, DLeftCountingFilter, Error, Filter, Hashing};
use proptest::prelude::*;
use std::collections::HashMap;

/// At capacity: every inserted element is present, and the measured FPR matches the
/// design's.
///
/// Bound: a query that was never inserted is a false positive exactly when its true
/// fingerprint equals a stored one, so given the stored set each of `T` queries is an
/// independent trial with probability `q = params.expected_fpp(len)` (the hash is uniform).
/// The count is binomial(T, q); we require it within 5σ of `T·q`, and `q` at most the target.
#[test]
fn fpr_is_within_its_bound_and_there_are_no_false_negatives() {
    for (n, p) in [(20_000u64, 0.01), (20_000, 0.001)] {
        let mut f = DLeftCountingFilter::new(n, p).unwrap();
        for i in 0..n {
            f.insert(&format!("member:{i}")).unwrap();
        }
        for i in 0..n {
            assert!(f.contains(&format!("member:{i}")), "false negative {i}");
        }
        let q = f.params().expected_fpp(f.len());
        assert!(q <= p, "design FPR {q} above target {p}");
        let trials = 200_000u64;
        let hits = (0..trials)
            .filter(|i| f.contains(&format!("stranger:{i}")))
            .count() as f64;
        let mean = trials as f64 * q;
        let sigma = (mean * (1.0 - q)).sqrt();
        assert!(
            (hits - mean).abs() <= 5.0 * sigma + 1.0,
            "p = {p}: {hits} false positives, expected {mean:.0} ± {:.0}",
            5.0 * sigma
        );
        assert_eq!(f.estimated_fpp(), q);
    }
}

/// The paper's memory claim at the design point, from the sizing alone: at most 0.6 times a
/// 4-bit counting filter's bits for the same `n` and `p`.
#[test]
fn memory_is_at_most_six_tenths_of_a_four_bit_counting_filter() {
    for p in [0.01, 0.001] {
        let n = 1_000_000;
        let dleft = DLeftCountingFilter::new(n, p).unwrap().memory_bytes() as f64;
        let counting = CountingBloomFilter::new(n, p).unwrap().memory_bytes() as f64;
        assert!(dleft <= 0.6 * counting, "p = {p}: {dleft} vs {counting}");
    }
}

/// What a key's count should be: counts saturate at the counter maximum and then stay.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Count(u8),
    Saturated,
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u8),
    Remove(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..40).prop_map(Op::Insert),
        2 => (0u8..40).prop_map(Op::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Inserts and removals against a map of counts (2-bit counters, so some saturate).
    /// The 40 keys share no true fingerprint (a space of more than 10⁷ values at this size;
    /// a shared one would show as `len` below the model's), so the filter must follow the
    /// model exactly.
    #[test]
    fn counts_follow_a_model(ops in prop::collection::vec(op(), 1..300)) {
        let mut f = DLeftCountingFilter::new(100, 1e-6).unwrap();
        let max = f.counter_max();
        let mut model: HashMap<u8, Expect> = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(k) => {
                    let before = model.get(&k).copied().unwrap_or(Expect::Count(0));
                    let new = f.insert(&k).unwrap();
                    prop_assert_eq!(new, before == Expect::Count(0));
                    model.insert(k, match before {
                        Expect::Count(c) if c + 1 < max => Expect::Count(c + 1),
                        _ => Expect::Saturated,
                    });
                }
                Op::Remove(k) => {
                    let before = f.clone();
                    match model.get(&k).copied().unwrap_or(Expect::Count(0)) {
                        Expect::Count(0) => {
                            prop_assert!(matches!(f.remove(&k), Err(Error::NotPresent)));
                            prop_assert!(f == before, "a refused removal changed the filter");
                        }
                        Expect::Count(c) => {
                            f.remove(&k).unwrap();
                            model.insert(k, Expect::Count(c - 1));
                        }
                        Expect::Saturated => f.remove(&k).unwrap(),
                    }
                }
            }
            for k in 0..40u8 {
                let want = match model.get(&k).copied().unwrap_or(Expect::Count(0)) {
                    Expect::Count(c) => c,
                    Expect::Saturated => max,
                };
                prop_assert_eq!(f.count(&k), want, "key {}", k);
                prop_assert_eq!(f.contains(&k), want != 0);
            }
            let stored = model.values().filter(|e| **e != Expect::Count(0)).count() as u64;
            prop_assert_eq!(f.len(), stored);
        }
    }

    /// Every hostile file is a typed error or a consistent filter (one that survives its own
    /// round trip; fields that the reader ignores, such as padding, need not survive).
    #[test]
    fn damaged_files_are_typed_errors(flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4), reseal_it in any::<bool>()) {
        let mut bytes = sample_file();
        for (at, bit) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        if reseal_it {
            reseal(&mut bytes);
        }
        match native::from_bytes(&bytes, &[]) {
            Ok(d) => {
                let again = native::to_bytes(&d.filter, d.design).unwrap();
                prop_assert_eq!(native::from_bytes(&again, &[]).unwrap().filter, d.filter);
            }
            Err(e) => prop_assert!(!reseal_it || !matches!(e, Error::Checksum { .. }), "{e}"),
        }
    }

    /// Any truncation is an error.
    #[test]
    fn truncations_are_errors(cut in any::<prop::sample::Index>()) {
        let bytes = sample_file();
        let cut = cut.index(bytes.len());
        prop_assert!(native::from_bytes(&bytes[..cut], &[]).is_err());
    }
}

#[test]
fn a_filter_past_its_capacity_refuses_whole_elements() {
    let mut f = DLeftCountingFilter::new(1000, 0.01).unwrap();
    let mut stored = 0u64;
    let err = loop {
        let before = f.clone();
        match f.insert(&format!("x{stored}")) {
            Ok(_) => stored += 1,
            Err(e) => {
                assert!(f == before, "a refused insert changed the filter");
                break e;
            }
        }
        assert!(stored < 100_000, "never full");
    };
    assert!(matches!(err, Error::Full(_)), "{err}");
    assert!(err.to_string().contains("larger capacity"), "{err}");
    // d-left balance: nothing overflows before the design capacity, and the cells fill to
    // well past 75 % before the first element finds all its buckets full.
    assert!(stored > 1000, "full after {stored}");
    assert!(f.load() > 0.8, "load {}", f.load());
    // Everything stored is still there.
    for i in 0..stored {
        assert!(f.contains(&format!("x{i}")));
    }
}

fn sample() -> DLeftCountingFilter {
    let mut f = DLeftCountingFilter::new(500, 0.01).unwrap();
    for i in 0..300u32 {
        f.insert(&(i % 200)).unwrap();
    }
    f
}

fn sample_file() -> Vec<u8> {
    let design = Some(Design {
        capacity: 500,
        fpp: 0.01,
    });
    native::to_bytes(&sample().into(), design).unwrap()
}

/// Recomputes the trailing checksum after a deliberate edit (XXH3-64, docs/FORMAT.md).
fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n]);
    bytes[n..].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn files_round_trip_and_name_what_is_wrong() {
    let f = sample();
    let design = Some(Design {
        capacity: 500,
        fpp: 0.01,
    });
    let any = AnyFilter::from(f.clone());
    let bytes = native::to_bytes(&any, design).unwrap();
    assert_eq!(bytes.len() as u64, native::encoded_len(&any, design));
    assert_eq!(u16::from_le_bytes([bytes[10], bytes[11]]), 9);
    let back = native::from_bytes(&bytes, &[]).unwrap();
    assert_eq!(back.filter, any);
    assert_eq!(back.design, design);
    assert_eq!(back.filter.kind().name(), "dleft");

    let edited = |at: usize, value: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + value.len()].copy_from_slice(value);
        reseal(&mut b);
        native::from_bytes(&b, &[]).unwrap_err().to_string()
    };
    // A gigantic geometry is refused before anything is allocated.
    let err = edited(128, &(1u64 << 40).to_le_bytes());
    assert!(err.contains("truncated"), "{err}");
    let err = edited(128, &u64::MAX.to_le_bytes());
    assert!(err.contains("d-left geometry"), "{err}");
    // Sub-tables, remainder and counter widths outside the limits.
    let err = edited(136, &0u32.to_le_bytes());
    assert!(err.contains("sub-tables"), "{err}");
    let err = edited(144, &70u32.to_le_bytes());
    assert!(err.contains("remainder"), "{err}");
    // The largest remainder width a file can state is refused too, not summed past u32::MAX
    // with the counter width (found by the fuzz target native_sealed).
    let err = edited(144, &u32::MAX.to_le_bytes());
    assert!(err.contains("remainder"), "{err}");
    let err = edited(15, &[0]);
    assert!(err.contains("counter"), "{err}");
    // The occupied count must match the cells.
    let err = edited(152, &7u64.to_le_bytes());
    assert!(err.contains("occupied"), "{err}");
    // A remainder without a count.
    let mut b = bytes.clone();
    let cells = f.cells();
    let empty = (0..cells.len()).find(|&i| cells.get(i) == 0).unwrap();
    let bit = 192 * 8 + empty * u64::from(cells.width()) + u64::from(f.params().counter_bits);
    b[(bit / 8) as usize] |= 1 << (bit % 8);
    reseal(&mut b);
    let err = native::from_bytes(&b, &[]).unwrap_err().to_string();
    assert!(err.contains("zero counter"), "{err}");
    // A keyed filter needs its key.
    let keyed = Hashing::siphash(*b"0123456789abcdef");
    let params = DLeftParams::for_capacity(100, 0.01).unwrap();
    let k = DLeftCountingFilter::from_params(params, keyed.clone()).unwrap();
    let kb = native::to_bytes(&k.clone().into(), None).unwrap();
    assert!(matches!(
        native::from_bytes(&kb, &[]),
        Err(Error::MissingKey(_))
    ));
    assert_eq!(native::from_bytes(&kb, &[keyed]).unwrap().filter, k.into());
    // Not mappable: the memory-mapped open says so.
    let dir = std::env::temp_dir().join(format!("bloomkit-dleft-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("d.bloom");
    bloomkit::file::save(&path, &any, design).unwrap();
    assert_eq!(bloomkit::file::load(&path, &[]).unwrap().filter, any);
    #[cfg(feature = "mmap")]
    {
        let Err(err) = bloomkit::mmap::MappedFilter::open(&path, &[]) else {
            panic!("a d-left file was mapped")
        };
        assert!(err.to_string().contains("memory-mapped"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips() {
    let f = sample();
    let json = serde_json::to_string(&f).unwrap();
    let back: DLeftCountingFilter = serde_json::from_str(&json).unwrap();
    assert!(back == f);
    let wrong: Result<CountingBloomFilter, _> = serde_json::from_str(&json);
    assert!(wrong
        .unwrap_err()
        .to_string()
        .contains("found a dleft filter"));
}
