//! Proptest strategies shared by the test files.

#![allow(dead_code)]

use bloomkit::probe::blocked::BlockLayout;
use proptest::prelude::*;

/// Any block layout, each kind equally likely: split-block (512 or 256 bits) or bits-K with K
/// in `hashes`.
pub fn any_layout(hashes: std::ops::Range<u32>) -> impl Strategy<Value = BlockLayout> {
    prop_oneof![
        Just(BlockLayout::SplitBlock),
        Just(BlockLayout::SplitBlock256),
        hashes.prop_map(BlockLayout::Bits),
    ]
}
