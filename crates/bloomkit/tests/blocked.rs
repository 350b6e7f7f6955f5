//! Blocked and concurrent filters: measured FPR against the target, no false negatives, batch
//! paths equal to single ones, and lock-free inserts from several threads losing nothing.

use bloomkit::concurrent::{AtomicBlockedBloomFilter, AtomicBloomFilter};
use bloomkit::probe::blocked::{self, BlockLayout};
use bloomkit::{BlockedBloomFilter, BloomFilter, Error, Filter, Hashing};
use proptest::prelude::*;
use std::sync::Arc;

/// Grid n ∈ {1e3, 1e5, 1e6} × p ∈ {0.1, 0.01, 0.001}, the three layouts.
///
/// Bound: given the filter's bits, a query of a non-member is positive with probability `q`,
/// computed exactly from the bits by `estimated_fpp` (each block's `(ones/512)^k`, or the
/// product of its words' fills for split blocks, averaged over blocks and halves). With `T = 2000/p`
/// queries the count of positives is binomial: we require it within 5σ of `T·q` (this checks
/// that probing is uniform). Separately the sizing must deliver `q ≤ p`, up to the spread of
/// `q` between filters: 3% relative for n ≥ 1e5, 25% for n = 1e3 (only a few blocks).
/// `new` takes the fastest layout that costs at most 10% more memory than the compact layout:
/// the half-block split-block layout, else the split-block layout, else the compact one (at
/// high and at very low FPRs, where 8 bits per element are too many or too few).
#[test]
fn default_layout_is_the_fastest_within_ten_percent_of_the_smallest() {
    for (p, want) in [
        (0.01, BlockLayout::SplitBlock256),
        (0.001, BlockLayout::SplitBlock256),
        (0.0003, BlockLayout::SplitBlock),
    ] {
        let f = BlockedBloomFilter::new(1_000_000, p).unwrap();
        let compact = BlockedBloomFilter::new_compact(1_000_000, p).unwrap();
        assert_eq!(f.layout(), want, "p = {p}");
        assert!(f.bits() as f64 <= compact.bits() as f64 * 1.10);
        if want == BlockLayout::SplitBlock {
            let half = BlockedBloomFilter::new_split_block_256(1_000_000, p).unwrap();
            assert!(half.bits() as f64 > compact.bits() as f64 * 1.10);
        }
    }
    for p in [0.1, 1e-6] {
        let f = BlockedBloomFilter::new(1_000_000, p).unwrap();
        let split = BlockedBloomFilter::new_split_block(1_000_000, p).unwrap();
        assert!(matches!(f.layout(), BlockLayout::Bits(_)), "p = {p}");
        assert!(split.bits() as f64 > f.bits() as f64 * 1.10);
    }
}

#[test]
fn measured_fpr_meets_target() {
    let mut report = String::new();
    let mut failures = Vec::new();
    for which in ["compact", "split", "split256"] {
        for n in [1_000u64, 100_000, 1_000_000] {
            for p in [0.1, 0.01, 0.001] {
                let mut f = match which {
                    "split" => BlockedBloomFilter::new_split_block(n, p).unwrap(),
                    "split256" => BlockedBloomFilter::new_split_block_256(n, p).unwrap(),
                    _ => BlockedBloomFilter::new_compact(n, p).unwrap(),
                };
                for i in 0..n {
                    f.insert(&format!("member:{i}"));
                }
                assert!((0..n).all(|i| f.contains(&format!("member:{i}"))));
                let t = (2000.0 / p) as u64;
                let hits = (0..t)
                    .filter(|i| f.contains(&format!("stranger:{i}")))
                    .count() as f64;
                let q = f.estimated_fpp();
                let tf = t as f64;
                let sigmas = (hits - tf * q) / (tf * q * (1.0 - q)).sqrt();
                let bits_per_key = f.bits() as f64 / n as f64;
                report += &format!(
                    "{which} n={n} p={p}: measured {:.5} q {:.5} ({sigmas:+.2} sigma) {:?} {bits_per_key:.2} bits/key\n",
                    hits / tf,
                    q,
                    f.layout()
                );
                if sigmas.abs() > 5.0 {
                    failures.push(format!("{which} n={n} p={p}: {sigmas:+.2} sigma"));
                }
                let slack = if n < 100_000 { 1.25 } else { 1.03 };
                if q > p * slack {
                    failures.push(format!("{which} n={n} p={p}: q = {q}"));
                }
            }
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}

/// The blocking penalty, in theory: bits per key of the blocked sizing against the classic one.
#[test]
fn blocking_costs_bounded_extra_memory() {
    for p in [0.01, 0.001] {
        let n = 10_000_000;
        let (blocks, layout) = blocked::params_for(n, p, false).unwrap();
        let blocked_bits = (blocks * 512) as f64 / n as f64;
        let classic_bits = bloomkit::math::params_for(n, p).unwrap().bits as f64 / n as f64;
        println!(
            "p={p}: blocked {blocked_bits:.2} vs classic {classic_bits:.2} bits/key ({layout:?})"
        );
        assert!(blocked_bits > classic_bits);
        assert!(
            blocked_bits < classic_bits * 1.6,
            "p={p}: {blocked_bits} vs {classic_bits}"
        );
    }
}

#[test]
fn batches_answer_like_single_calls() {
    batches_answer_like_single_calls_for(BlockedBloomFilter::new(20_000, 0.01).unwrap());
    batches_answer_like_single_calls_for(BlockedBloomFilter::new_compact(20_000, 0.01).unwrap());
    batches_answer_like_single_calls_for(
        BlockedBloomFilter::new_split_block_256(20_000, 0.01).unwrap(),
    );
}

fn batches_answer_like_single_calls_for(empty: BlockedBloomFilter) {
    let keys: Vec<u64> = (0..10_000).collect();
    let mut single = empty;
    let mut batch = single.clone();
    for k in &keys[..5000] {
        single.insert(k);
    }
    batch.insert_batch(&keys[..5000]);
    assert_eq!(single, batch);
    let answers = batch.contains_batch(&keys);
    for (k, a) in keys.iter().zip(&answers) {
        assert_eq!(*a, single.contains(k));
    }
    assert!(answers[..5000].iter().all(|&a| a));
    // Odd lengths (not multiples of the internal group size).
    assert_eq!(batch.contains_batch(&keys[..37]).len(), 37);
    assert!(batch.contains_batch::<u64>(&[]).is_empty());
}

#[test]
fn union_intersection_and_errors() {
    let mut a = BlockedBloomFilter::new(1000, 0.01).unwrap();
    let mut b = a.clone();
    a.insert("x");
    b.insert("y");
    let mut u = a.clone();
    u.union(&b).unwrap();
    assert!(u.contains("x") && u.contains("y"));
    let mut i = u.clone();
    i.intersect(&a).unwrap();
    assert!(i.contains("x"));
    assert_eq!(i, a);
    let other = BlockedBloomFilter::new(100_000, 0.01).unwrap();
    assert!(matches!(a.union(&other), Err(Error::Incompatible(_))));
    let keyed =
        BlockedBloomFilter::with_layout(a.blocks(), a.layout(), Hashing::siphash([1; 16])).unwrap();
    assert!(matches!(a.union(&keyed), Err(Error::Incompatible(_))));
    assert!(matches!(
        BlockedBloomFilter::with_layout(0, BlockLayout::Bits(3), Hashing::Xxh3),
        Err(Error::ZeroBits)
    ));
    assert!(matches!(
        BlockedBloomFilter::with_layout(1, BlockLayout::Bits(0), Hashing::Xxh3),
        Err(Error::ZeroHashes)
    ));
    assert!(BlockedBloomFilter::new(10, 0.0).is_err());
    assert!(
        BlockedBloomFilter::from_words(&[0; 7], BlockLayout::SplitBlock, Hashing::Xxh3).is_err()
    );
    let f: Box<dyn Filter> = Box::new(a);
    assert_eq!(f.kind(), bloomkit::Kind::Blocked);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn no_false_negatives(
        blocks in 1u64..200,
        k in 1u32..20,
        which in 0u8..3,
        keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..30), 0..500),
    ) {
        let layout = match which {
            0 => BlockLayout::SplitBlock,
            1 => BlockLayout::SplitBlock256,
            _ => BlockLayout::Bits(k),
        };
        let mut f = BlockedBloomFilter::with_layout(blocks, layout, Hashing::Xxh3).unwrap();
        for key in &keys {
            f.insert(key.as_slice());
        }
        prop_assert!(keys.iter().all(|k| f.contains(k.as_slice())));
        let batch: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        prop_assert!(f.contains_batch(&batch).into_iter().all(|b| b));
    }
}

/// Four threads insert disjoint sets into one shared filter with no lock; afterwards every
/// element of every set is present (zero false negatives), for both concurrent kinds.
#[test]
fn concurrent_inserts_lose_nothing() {
    const THREADS: u64 = 4;
    const PER: u64 = 50_000;
    let classic = Arc::new(AtomicBloomFilter::new(THREADS * PER, 0.01).unwrap());
    let blocked = Arc::new(AtomicBlockedBloomFilter::new(THREADS * PER, 0.01).unwrap());
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (c, b) = (Arc::clone(&classic), Arc::clone(&blocked));
            std::thread::spawn(move || {
                let keys: Vec<(u64, u64)> = (0..PER).map(|i| (t, i)).collect();
                for k in &keys[..PER as usize / 2] {
                    c.insert(k);
                    b.insert(k);
                }
                for k in &keys[PER as usize / 2..] {
                    c.insert(k);
                }
                b.insert_batch(&keys[PER as usize / 2..]);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for t in 0..THREADS {
        for i in 0..PER {
            assert!(classic.contains(&(t, i)), "classic lost ({t}, {i})");
            assert!(blocked.contains(&(t, i)), "blocked lost ({t}, {i})");
        }
    }
    // Converting back keeps the bits; a sequential build gives the same filter.
    let classic = Arc::try_unwrap(classic).unwrap().into_inner();
    let blocked = Arc::try_unwrap(blocked).unwrap().into_inner();
    let mut seq_c = BloomFilter::new(THREADS * PER, 0.01).unwrap();
    let mut seq_b = BlockedBloomFilter::new(THREADS * PER, 0.01).unwrap();
    for t in 0..THREADS {
        for i in 0..PER {
            seq_c.insert(&(t, i));
            seq_b.insert(&(t, i));
        }
    }
    assert_eq!(classic, seq_c);
    assert_eq!(blocked, seq_b);
    let round = AtomicBloomFilter::from(seq_c.clone()).into_inner();
    assert_eq!(round, seq_c);
}
