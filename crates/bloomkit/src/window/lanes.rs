//! The blocked layout of a count window ([`Lanes`]): every slice of an element in one block.
//!
//! A block is [`LANES`] lanes of `w` bits (`w` = 128, 256 or 512), lane `j` of every block
//! making up physical slice `j`, stored as `w / 128` of the library's 64-byte [`Block`]s
//! (so a block of 128-bit lanes is one cache line, of 512-bit lanes four adjacent ones). The
//! lanes are interleaved by 64-bit word: word `t` of lane `j` is word `4·t + j` of the block,
//! so that word `t` of all four lanes is one 256-bit vector.
//!
//! An element with the 64-bit hash `h` lives in block `⌊h · B / 2⁶⁴⌋` ([`reduce`]); in a lane
//! it has one bit in each of the 8 sub-lanes of `w / 8` bits (16, 32 or 64; sub-lane `i` is
//! bits `i·w/8 ..` of the lane): bit `(h₃₂ · SALTᵢ mod 2³²) >> (32 - log₂(w/8))`, `h₃₂` the
//! low 32 bits of `h` and `SALT` the split-block filters' eight salts. So a lane is a small
//! split-block filter, and the lane mask is the split-block mask's one vector multiply and
//! shift. An insert ORs the mask into the newest slice's lane; a query reads the block once
//! and reports whether a lane holds all of it (`k = 1`). Starting a generation clears one lane
//! of every block. Lanes of 128 bits (one cache line a block), the shape at 1%, have an AVX2
//! kernel (`lanes_avx2.rs`), chosen once when the lanes are built.
//!
//! Files of the first blocked layout (native scheme 9: `b` positions over the whole lane
//! from the 128-bit hash, lanes stored one after another) keep their form
//! ([`LaneForm::Fields`]): `lanes_fields.rs` probes them, with the portable code only.
//!
//! Sizing and the FPR model are `sizing.rs` ([`BlockedAgePartitioned`],
//! [`LaneModel`](super::sizing::LaneModel)).

use super::ages::Ages;
use super::sizing::{BlockedAgePartitioned, BITS_PER_SLICE, LANES, LANE_BITS};
use crate::error::{Error, Result};
use crate::probe::blocked::{pipeline_touching, SALT};
use crate::probe::reduce;
use crate::storage::{blocks_from_words, prefetch, zeroed_blocks, Block};

/// How an element's bits sit in the lanes of a block.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LaneForm {
    /// One bit in each of 8 sub-lanes from the 64-bit hash, lanes interleaved by word (new
    /// filters, native scheme 11).
    Split,
    /// `b` positions over the whole lane from the second word of the 128-bit hash, lanes
    /// stored one after another (the first blocked layout, native scheme 9;
    /// `lanes_fields.rs`).
    Fields,
}

/// The blocks of a count window in the blocked layout.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// Words per lane: 2, 4 or 8.
    pub(super) lane_words: usize,
    /// How an element's bits sit in a lane.
    pub(super) form: LaneForm,
    /// Bits set per element in its lane (`b`; 8 for split lanes).
    pub(super) bits_per_element: u32,
    /// [`lines_per_block`] [`Block`]s per block.
    pub(super) lines: Vec<Block>,
    /// Blocks (`lines.len() / lines_per_block`).
    pub(super) blocks: u64,
    /// Whether the AVX2 kernel serves these lanes on this CPU (decided once, from the shape,
    /// the form and the CPU).
    avx2: bool,
}

impl Lanes {
    /// Empty split lanes of this shape (what new filters use).
    pub fn zeros(shape: &BlockedAgePartitioned) -> Result<Self> {
        let lane_words = check(shape, LaneForm::Split)?;
        let lines = zeroed_blocks(shape.blocks * lines_per_block(lane_words) as u64)?;
        Ok(Self::from_lines(shape, LaneForm::Split, lane_words, lines))
    }

    /// Lanes of this form holding `words` (as [`as_lines`](Self::as_lines) gives them), for a
    /// file.
    pub fn from_words(
        shape: &BlockedAgePartitioned,
        form: LaneForm,
        words: &[u64],
    ) -> Result<Self> {
        let lane_words = check(shape, form)?;
        let want = shape.blocks * 8 * lines_per_block(lane_words) as u64;
        if words.len() as u64 != want {
            return Err(Error::InvalidParameters(format!(
                "{} blocks of {} lanes of {} bits are {} words, not {}",
                shape.blocks,
                LANES,
                shape.lane_bits,
                want,
                words.len()
            )));
        }
        let lines = blocks_from_words(words)?;
        Ok(Self::from_lines(shape, form, lane_words, lines))
    }

    fn from_lines(
        shape: &BlockedAgePartitioned,
        form: LaneForm,
        lane_words: usize,
        lines: Vec<Block>,
    ) -> Self {
        Lanes {
            lane_words,
            form,
            bits_per_element: shape.bits_per_element,
            lines,
            blocks: shape.blocks,
            avx2: form == LaneForm::Split && avx2_applies(lane_words),
        }
    }

    /// How an element's bits sit in a lane.
    pub fn form(&self) -> LaneForm {
        self.form
    }

    /// The cache lines, block after block (for the file format).
    pub fn as_lines(&self) -> &[Block] {
        &self.lines
    }

    /// Whether some slice's lane of the element's block has all its bits (`k = 1`: one slice
    /// is a run).
    #[inline(always)]
    pub fn contains(&self, h: u64) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2 and the lanes are two words
            // (`lanes_avx2::applies`): then a block is one line, and there are `blocks` lines.
            return unsafe { super::lanes_avx2::contains(&self.lines, self.blocks, h) };
        }
        self.contains_portable(h)
    }

    fn contains_portable(&self, h: u64) -> bool {
        let i = reduce(h, self.blocks) as usize;
        match self.lane_words {
            2 => any_full::<2, SPLIT>(self.block::<2>(i), &mask::<2>(h as u32)),
            4 => any_full::<4, SPLIT>(self.block::<4>(i), &mask::<4>(h as u32)),
            _ => any_full::<8, SPLIT>(self.block::<8>(i), &mask::<8>(h as u32)),
        }
    }

    /// Sets the element's bits in the lane of physical slice `slice`; with `test`, returns
    /// whether no lane had all of them before (the element was new), else `false`.
    #[inline(always)]
    pub fn insert(&mut self, h: u64, slice: usize, test: bool) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            let (lines, blocks) = (&mut self.lines, self.blocks);
            // SAFETY: as in `contains`; a physical slice is a lane, `slice < LANES = 4`.
            return unsafe {
                if test {
                    super::lanes_avx2::insert::<true>(lines, blocks, h, slice)
                } else {
                    super::lanes_avx2::insert::<false>(lines, blocks, h, slice)
                }
            };
        }
        let new = test && !self.contains_portable(h);
        let i = reduce(h, self.blocks) as usize;
        match self.lane_words {
            2 => set::<2, SPLIT>(self.block_mut::<2>(i), &mask::<2>(h as u32), slice),
            4 => set::<4, SPLIT>(self.block_mut::<4>(i), &mask::<4>(h as u32), slice),
            _ => set::<8, SPLIT>(self.block_mut::<8>(i), &mask::<8>(h as u32), slice),
        }
        new
    }

    /// Tests the elements of `keys`, whose hashes `hash` gives, into `out`: each key is hashed
    /// and its block prefetched well ahead of its test (the blocked filters' pipeline).
    /// `touch` is called on each key well before it is hashed ([`pipeline_touching`]: heap
    /// keys' bytes are prefetched).
    pub fn contains_batch<K>(
        &self,
        keys: &[K],
        touch: impl Fn(&K),
        hash: impl Fn(&K) -> u64,
        out: &mut [bool],
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: as in `contains`.
            return unsafe {
                super::lanes_avx2::contains_batch(&self.lines, self.blocks, keys, touch, hash, out)
            };
        }
        pipeline_touching(
            out,
            keys,
            touch,
            |_, k| {
                let h = hash(k);
                self.prefetch(h);
                h
            },
            |out, i, h| out[i] = self.contains_portable(h),
        );
    }

    /// Inserts the elements of `keys`, whose hashes `hash` gives, in order, each counted by
    /// `ages` (which may start a generation); hashed and prefetched ahead as in
    /// [`contains_batch`](Self::contains_batch).
    pub fn insert_batch<K>(
        &mut self,
        ages: &mut Ages,
        keys: &[K],
        touch: impl Fn(&K),
        hash: impl Fn(&K) -> u64,
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: as in `contains`.
            return unsafe {
                super::lanes_avx2::insert_batch(
                    &mut self.lines,
                    self.blocks,
                    ages,
                    keys,
                    touch,
                    hash,
                )
            };
        }
        pipeline_touching(
            self,
            keys,
            touch,
            |lanes, k| {
                let h = hash(k);
                lanes.prefetch(h);
                h
            },
            |lanes, _, h| {
                if let Some(j) = ages.advance() {
                    lanes.clear_slice(j);
                }
                lanes.insert(h, ages.base, false);
            },
        );
    }

    /// Starts loading the block of hash `h` (the block-choosing word of the hash).
    #[inline(always)]
    pub(super) fn prefetch(&self, h: u64) {
        let lines = lines_per_block(self.lane_words);
        let i = reduce(h, self.blocks) as usize * lines;
        self.lines[i..i + lines].iter().for_each(|l| prefetch(l));
    }

    /// Block `i` of lanes of `LW` words.
    #[inline(always)]
    pub(super) fn block<const LW: usize>(&self, i: usize) -> &[Block] {
        let lines = lines_per_block(LW);
        &self.lines[i * lines..(i + 1) * lines]
    }

    #[inline(always)]
    pub(super) fn block_mut<const LW: usize>(&mut self, i: usize) -> &mut [Block] {
        let lines = lines_per_block(LW);
        &mut self.lines[i * lines..(i + 1) * lines]
    }

    /// Clears physical slice `slice`: its lane in every block.
    pub fn clear_slice(&mut self, slice: usize) {
        let split = self.form == LaneForm::Split;
        clear_lane(&mut self.lines, self.lane_words, split, slice);
    }

    /// Clears every slice.
    pub fn clear(&mut self) {
        self.lines.iter_mut().for_each(|l| *l = Block::default());
    }

    /// The words of lane `slice` of every block, block after block.
    fn lane_words_of(&self, slice: usize) -> impl Iterator<Item = u64> + '_ {
        let (lw, split) = (self.lane_words, self.form == LaneForm::Split);
        self.lines
            .chunks_exact(lines_per_block(lw))
            .flat_map(move |block| (0..lw).map(move |t| word(block, split, lw, t, slice)))
    }

    /// Set bits of physical slice `slice`.
    pub fn slice_ones(&self, slice: usize) -> u64 {
        self.lane_words_of(slice)
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// The fill of each physical slice's lane in each block, block after block: `fill(block,
    /// slice)` is called for every pair (for the FPR estimate).
    pub fn for_each_lane_fill(&self, mut fill: impl FnMut(usize, usize, f64)) {
        let (lw, split) = (self.lane_words, self.form == LaneForm::Split);
        let bits = (lw * 64) as f64;
        for (i, block) in self.lines.chunks_exact(lines_per_block(lw)).enumerate() {
            for slice in 0..LANES as usize {
                let ones: u32 = (0..lw)
                    .map(|t| word(block, split, lw, t, slice).count_ones())
                    .sum();
                fill(i, slice, f64::from(ones) / bits);
            }
        }
    }

    /// Bytes of memory held.
    pub fn memory_bytes(&self) -> usize {
        self.lines.len() * 64
    }
}

impl Lanes {
    /// Makes every operation take the portable path (for the tests that compare it with the
    /// AVX2 kernel).
    #[cfg(test)]
    pub(crate) fn force_portable(&mut self) {
        self.avx2 = false;
    }
}

/// The cache lines ([`Block`]s) of a block of lanes of `lane_words` words.
pub(super) const fn lines_per_block(lane_words: usize) -> usize {
    LANES as usize * lane_words / 8
}

/// The `split` argument of [`word_index`] and of the portable probes for split lanes.
const SPLIT: bool = true;

/// The index in its block of word `t` of lane `lane` (lanes of `lane_words` words): `4·t +
/// lane` for split lanes (interleaved by word), `lane · lane_words + t` for the fields form
/// (one lane after another).
#[inline(always)]
pub(super) const fn word_index(split: bool, lane_words: usize, t: usize, lane: usize) -> usize {
    if split {
        t * LANES as usize + lane
    } else {
        lane * lane_words + t
    }
}

/// Clears lane `slice` of every block of `lines` (lanes of `lane_words` words, split or not).
pub(super) fn clear_lane(lines: &mut [Block], lane_words: usize, split: bool, slice: usize) {
    for block in lines.chunks_exact_mut(lines_per_block(lane_words)) {
        for t in 0..lane_words {
            let w = word_index(split, lane_words, t, slice);
            block[w / 8].0[w % 8] = 0;
        }
    }
}

/// Word `t` of lane `lane` in `block` ([`word_index`]).
#[inline(always)]
fn word(block: &[Block], split: bool, lane_words: usize, t: usize, lane: usize) -> u64 {
    let w = word_index(split, lane_words, t, lane);
    block[w / 8].0[w % 8]
}

/// Whether the AVX2 kernel serves lanes of `lane_words` words here.
fn avx2_applies(lane_words: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::lanes_avx2::applies(lane_words);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = lane_words;
        false
    }
}

/// The bits of in-lane hash `h` in a lane of `LW` words (the definition of the layout): in
/// sub-lane `i` of `s = 8·LW` bits, bit `(h · SALTᵢ mod 2³²) >> (32 - log₂ s)`.
#[inline(always)]
pub(super) fn mask<const LW: usize>(h: u32) -> [u64; LW] {
    let sub_bits = 8 * LW;
    let shift = 32 - sub_bits.trailing_zeros();
    let per_word = 64 / sub_bits;
    let mut m = [0u64; LW];
    for (i, salt) in SALT.into_iter().enumerate() {
        let bit = h.wrapping_mul(salt) >> shift;
        m[i / per_word] |= 1u64 << (bit as usize + (i % per_word) * sub_bits);
    }
    m
}

/// Whether some lane of `block` (lanes of `LW` words, split or not: [`word_index`]) has
/// every bit of `mask`.
#[inline(always)]
pub(super) fn any_full<const LW: usize, const SPLIT: bool>(
    block: &[Block],
    mask: &[u64; LW],
) -> bool {
    let mut missing = [0u64; LANES as usize];
    for (t, m) in mask.iter().enumerate() {
        for (lane, miss) in missing.iter_mut().enumerate() {
            *miss |= m & !word(block, SPLIT, LW, t, lane);
        }
    }
    missing.contains(&0)
}

/// ORs `mask` into lane `lane` of `block` (lanes of `LW` words, split or not).
#[inline(always)]
pub(super) fn set<const LW: usize, const SPLIT: bool>(
    block: &mut [Block],
    mask: &[u64; LW],
    lane: usize,
) {
    for (t, m) in mask.iter().enumerate() {
        let w = word_index(SPLIT, LW, t, lane);
        block[w / 8].0[w % 8] |= m;
    }
}

/// Checks a blocked shape for lanes of this form; returns the words per lane.
fn check(shape: &BlockedAgePartitioned, form: LaneForm) -> Result<usize> {
    let bad = |why: String| Err(Error::InvalidParameters(why));
    if !LANE_BITS.contains(&shape.lane_bits) {
        return bad(format!(
            "a blocked count window has lanes of 128, 256 or 512 bits, not {}",
            shape.lane_bits
        ));
    }
    if form == LaneForm::Split && shape.bits_per_element != BITS_PER_SLICE {
        return bad(format!(
            "a blocked count window sets {BITS_PER_SLICE} bits per element in a lane (one per sub-lane), not {}",
            shape.bits_per_element
        ));
    }
    if shape.blocks == 0 || shape.generation == 0 {
        return bad(
            "a blocked count window needs at least one block and one insertion per generation"
                .into(),
        );
    }
    crate::math::check_bits_hashes(shape.bits(), u64::from(shape.bits_per_element))?;
    Ok(shape.lane_bits as usize / 64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::splitmix64;
    use crate::window::sizing::BlockedAgePartitioned;

    fn shape(lane_bits: u32) -> BlockedAgePartitioned {
        BlockedAgePartitioned {
            generation: 100,
            blocks: 256,
            lane_bits,
            bits_per_element: BITS_PER_SLICE,
        }
    }

    /// The AVX2 kernel (where the CPU has it) and the portable code agree on every answer and
    /// every set bit, single and batched, for each lane width.
    #[test]
    fn avx2_kernel_and_portable_code_agree() {
        for lane_bits in LANE_BITS {
            let mut fast = Lanes::zeros(&shape(lane_bits)).unwrap();
            #[cfg(target_arch = "x86_64")]
            let expect_avx2 = lane_bits == 128 && std::arch::is_x86_feature_detected!("avx2");
            #[cfg(not(target_arch = "x86_64"))]
            let expect_avx2 = false;
            assert_eq!(fast.avx2, expect_avx2, "{lane_bits}");
            let mut portable = fast.clone();
            portable.force_portable();
            let keys: Vec<u64> = (0..3000u64).map(splitmix64).collect();
            for (i, &h) in keys.iter().enumerate() {
                assert_eq!(
                    fast.contains(h),
                    portable.contains(h),
                    "{lane_bits}, key {i}"
                );
                // Fill lanes unevenly so that both answers occur.
                if i % 3 != 0 {
                    let slice = i % LANES as usize;
                    let test = i % 2 == 0;
                    let new = fast.insert(h, slice, test);
                    assert_eq!(new, portable.insert(h, slice, test), "{lane_bits}, key {i}");
                    assert!(fast.contains(h) && !fast.insert(h, slice, true));
                    portable.insert(h, slice, false);
                }
            }
            assert!(fast.lines == portable.lines, "{lane_bits}");
            let (mut a, mut b) = (vec![false; 3000], vec![true; 3000]);
            fast.contains_batch(&keys, |_| {}, |h| *h ^ 1, &mut a);
            portable.contains_batch(&keys, |_| {}, |h| *h ^ 1, &mut b);
            assert_eq!(a, b);
            let (mut ages_a, mut ages_b) = (Ages::after(7, 4, 50), Ages::after(7, 4, 50));
            fast.insert_batch(&mut ages_a, &keys, |_| {}, |h| *h ^ 2);
            portable.insert_batch(&mut ages_b, &keys, |_| {}, |h| *h ^ 2);
            assert!(
                fast.lines == portable.lines && ages_a == ages_b,
                "{lane_bits}"
            );
            let ones: u64 = (0..LANES as usize).map(|s| fast.slice_ones(s)).sum();
            assert!(ones > 0 && ones < shape(lane_bits).bits());
        }
    }

    #[test]
    fn positions_are_salted_products_per_sub_lane() {
        // h = 1: the product is the salt itself; its top 4, 5 or 6 bits are the position.
        let m = mask::<2>(1);
        for (i, salt) in SALT.into_iter().enumerate() {
            let bit = (salt >> 28) as usize + 16 * i;
            assert_eq!(m[bit / 64] >> (bit % 64) & 1, 1, "sub-lane {i}");
        }
        assert_eq!(m.iter().map(|w| w.count_ones()).sum::<u32>(), 8);
        let m = mask::<8>(3);
        for (i, salt) in SALT.into_iter().enumerate() {
            assert_eq!(m[i], 1 << (3u32.wrapping_mul(salt) >> 26), "sub-lane {i}");
        }
        // Lane 1's word 1 is word 5 of the block.
        let mut lanes = Lanes::zeros(&shape(128)).unwrap();
        lanes.insert(0, 1, false);
        let block = &lanes.lines[0].0;
        assert_eq!((block[1], block[5]), (mask::<2>(0)[0], mask::<2>(0)[1]));
        assert_eq!(block.iter().filter(|w| **w != 0).count(), 2);
    }
}
