//! Proptest strategies shared by the test files.

#![allow(dead_code)]

use bloomkit::probe::blocked::BlockLayout;
use bloomkit::Hashing;
use proptest::prelude::*;

/// Any hash function, keyed SipHash with any key.
pub fn any_hashing() -> impl Strategy<Value = Hashing> {
    prop_oneof![
        Just(Hashing::Xxh3),
        Just(Hashing::Murmur3),
        Just(Hashing::Highway),
        any::<[u8; 16]>().prop_map(Hashing::siphash),
    ]
}

/// Any block layout, each kind equally likely: split-block (512 or 256 bits) or bits-K with K
/// in `hashes`.
pub fn any_layout(hashes: std::ops::Range<u32>) -> impl Strategy<Value = BlockLayout> {
    prop_oneof![
        Just(BlockLayout::SplitBlock),
        Just(BlockLayout::SplitBlock256),
        hashes.prop_map(BlockLayout::Bits),
    ]
}
