//! The first blocked layout of a count window (native scheme 9), which files written before
//! split lanes hold: [`Lanes`] of [`LaneForm::Fields`]. Such files keep loading, answering and
//! being written exactly as before; new filters use split lanes (`lanes.rs`).
//!
//! The lanes of a block are stored one after another (word `t` of lane `j` is word
//! `j·w/64 + t` of the block). An element with hash words `[h1, h2]` (the 128-bit hash) lives
//! in block `⌊h1 · B / 2⁶⁴⌋`; its `b` positions in a lane are `log₂ w`-bit fields of `h2`,
//! lowest first (9 of 7 bits, 8 of 8 or 7 of 9 per 64-bit word; further words are SplitMix64
//! steps from `h2`), the same in every lane; positions may coincide. Portable code only: these
//! files are read, not built.

use super::lanes::{any_full, set, LaneForm, Lanes};
use crate::probe::{reduce, splitmix64};

/// The `split` argument of the portable probes: the lanes are not interleaved.
const FIELDS: bool = false;

impl Lanes {
    /// Whether some lane of the element's block has all its bits (`k = 1`), in the fields
    /// form, from the element's 128-bit hash.
    pub fn contains_fields(&self, [h1, h2]: [u64; 2]) -> bool {
        debug_assert_eq!(self.form, LaneForm::Fields);
        let (i, b) = (reduce(h1, self.blocks) as usize, self.bits_per_element);
        match self.lane_words {
            2 => any_full::<2, FIELDS>(self.block::<2>(i), &mask::<2>(h2, b)),
            4 => any_full::<4, FIELDS>(self.block::<4>(i), &mask::<4>(h2, b)),
            _ => any_full::<8, FIELDS>(self.block::<8>(i), &mask::<8>(h2, b)),
        }
    }

    /// Sets the element's bits in the lane of physical slice `slice`, in the fields form; with
    /// `test`, returns whether no lane had all of them before, else `false`.
    pub fn insert_fields(&mut self, h: [u64; 2], slice: usize, test: bool) -> bool {
        let new = test && !self.contains_fields(h);
        let [h1, h2] = h;
        let (i, b) = (reduce(h1, self.blocks) as usize, self.bits_per_element);
        match self.lane_words {
            2 => set::<2, FIELDS>(self.block_mut::<2>(i), &mask::<2>(h2, b), slice),
            4 => set::<4, FIELDS>(self.block_mut::<4>(i), &mask::<4>(h2, b), slice),
            _ => set::<8, FIELDS>(self.block_mut::<8>(i), &mask::<8>(h2, b), slice),
        }
        new
    }
}

/// The bits of in-lane hash `h2` in a lane of `LW` words (the definition of the layout):
/// `b` positions, `log₂(64·LW)`-bit fields of `h2` lowest first, then of SplitMix64 steps
/// from `h2`.
fn mask<const LW: usize>(h2: u64, b: u32) -> [u64; LW] {
    let field = 6 + LW.trailing_zeros();
    let per_word = 64 / field;
    let lane = (64 * LW as u64) - 1;
    let mut m = [0u64; LW];
    let (mut seed, mut x, mut left) = (h2, h2, per_word);
    for _ in 0..b {
        if left == 0 {
            seed = splitmix64(seed);
            x = seed;
            left = per_word;
        }
        let pos = x & lane;
        m[(pos >> 6) as usize] |= 1 << (pos & 63);
        x >>= field;
        left -= 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::sizing::BlockedAgePartitioned;

    #[test]
    fn positions_are_fields_of_the_hash() {
        // b = 2 in 128-bit lanes: bits 5 and 3 + 64 (fields 5 and 67 of h2).
        let h2 = 5 | (67 << 7);
        assert_eq!(mask::<2>(h2, 2), [1 << 5, 1 << 3]);
        // 512-bit lanes: 9-bit fields; past the seventh, SplitMix64 of h2.
        let m = mask::<8>(0, 8);
        let next = splitmix64(0) & 511;
        let mut want = [0u64; 8];
        want[0] |= 1;
        want[(next >> 6) as usize] |= 1 << (next & 63);
        assert_eq!(m, want);
    }

    /// Lane `j` is words `j·LW ..< (j + 1)·LW` of its block, and an inserted element is
    /// found and no longer new, whichever lane holds it.
    #[test]
    fn lanes_follow_one_another() {
        let shape = BlockedAgePartitioned {
            generation: 10,
            blocks: 1,
            lane_bits: 256,
            bits_per_element: 3,
        };
        let mut lanes = Lanes::from_words(&shape, LaneForm::Fields, &[0; 16]).unwrap();
        let h = [0, 1 | (200 << 8) | (130 << 16)];
        assert!(!lanes.contains_fields(h));
        assert!(lanes.insert_fields(h, 2, true));
        assert!(lanes.contains_fields(h) && !lanes.insert_fields(h, 1, true));
        let words = &lanes.as_lines()[1].0;
        // Lane 2 is words 8..12: bit 1 of word 8, bit 2 of word 10, bit 8 of word 11.
        assert_eq!(&words[..4], &[1 << 1, 0, 1 << 2, 1 << 8]);
        assert_eq!(lanes.slice_ones(2), 3);
        assert_eq!(lanes.slice_ones(1), 3);
        lanes.clear_slice(1);
        lanes.clear_slice(2);
        assert!(!lanes.contains_fields(h));
    }
}
