//! Model check of the lock-free inserts with loom: the interleavings of two threads' inserts
//! are explored (all of them for classic filters, those with up to three preemptions for
//! blocked ones), and none may lose a bit.
//!
//! A blocked insert is a load and, when bits are missing, a `fetch_or` per word holding some of
//! the element's bits, and a
//! classic insert one `fetch_or` per bit, so an insert is not a single atomic operation. Loom
//! checks that this is still enough: whatever the interleaving, both elements are present
//! afterwards, the bits are exactly the union of the two elements' bits, and when both threads
//! insert the same element at least one of them reports it as new.
//!
//! Built only with loom enabled (a separate build, so it does not disturb the normal one):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p bloomkit --release --test loom
//! ```
#![cfg(loom)]

use bloomkit::concurrent::{AtomicBlockedBloomFilter, AtomicBloomFilter};
use bloomkit::probe::blocked::BlockLayout;
use bloomkit::{BlockedBloomFilter, BloomFilter, Hashing};
use loom::sync::Arc;
use loom::thread;

/// Runs `insert(a)` on a second thread and `insert(b)` on this one, then checks the result
/// against inserting both sequentially into `expected`.
fn check_blocked(layout: BlockLayout, a: u64, b: u64) {
    let mut expected = BlockedBloomFilter::with_layout(1, layout, Hashing::Xxh3).unwrap();
    expected.insert(&a);
    expected.insert(&b);
    // A split-block insert reads and ORs all eight words, and both threads touch every word:
    // exploring every interleaving does not end. Three preemptions cover every order in which
    // the two threads' read, test and OR of one word can interleave, with the rest of both
    // inserts before or after (loom's recommended bound).
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(move || {
        let empty = BlockedBloomFilter::with_layout(1, layout, Hashing::Xxh3).unwrap();
        let f = Arc::new(AtomicBlockedBloomFilter::from(empty));
        let other = {
            let f = f.clone();
            thread::spawn(move || f.insert(&a))
        };
        let new_b = f.insert(&b);
        let new_a = other.join().unwrap();
        assert!(f.contains(&a) && f.contains(&b));
        if a == b {
            assert!(
                new_a || new_b,
                "an element inserted twice was never reported new"
            );
        }
        let f = Arc::try_unwrap(f)
            .ok()
            .expect("the other thread has finished");
        assert_eq!(f.into_inner(), expected);
    });
}

#[test]
fn split_block_inserts_lose_no_bit() {
    check_blocked(BlockLayout::SplitBlock, 1, 2);
}

#[test]
fn split_block_same_element_is_new_once_or_more() {
    check_blocked(BlockLayout::SplitBlock, 7, 7);
}

#[test]
fn half_split_block_inserts_lose_no_bit() {
    check_blocked(BlockLayout::SplitBlock256, 1, 2);
}

#[test]
fn bits_layout_inserts_lose_no_bit() {
    check_blocked(BlockLayout::Bits(6), 3, 4);
}

#[test]
fn classic_inserts_lose_no_bit() {
    // 128 bits and 4 hashes: the two elements' bits share words.
    let mut expected = BloomFilter::with_params(128, 4).unwrap();
    expected.insert(&10u64);
    expected.insert(&20u64);
    loom::model(move || {
        let f = Arc::new(AtomicBloomFilter::from(
            BloomFilter::with_params(128, 4).unwrap(),
        ));
        let other = {
            let f = f.clone();
            thread::spawn(move || f.insert(&10u64))
        };
        f.insert(&20u64);
        other.join().unwrap();
        assert!(f.contains(&10u64) && f.contains(&20u64));
        let f = Arc::try_unwrap(f)
            .ok()
            .expect("the other thread has finished");
        assert_eq!(f.into_inner(), expected);
    });
}
