//! The blocked layout of a count window ([`Lanes`]): every slice of an element in one block.
//!
//! A block is [`LANES`] lanes of `w` bits (`w` = 128, 256 or 512), lane `j` of every block
//! making up physical slice `j`, stored as `w / 128` of the library's 64-byte [`Block`]s
//! (so a block of 128-bit lanes is one cache line, of 512-bit lanes four adjacent ones). An element with hash words
//! `[h1, h2]` (the 128-bit hash) lives in block `⌊h1 · B / 2⁶⁴⌋` ([`reduce`]); its `b`
//! positions in a lane are `log₂ w`-bit fields of `h2`, lowest first (9 of 7 bits, 8 of 8 or 7
//! of 9 per 64-bit word; further words are SplitMix64 steps from `h2`, as the blocked filters'
//! `Bits(k)` layout does), the same in every lane; positions may coincide. An insert ORs
//! them into the newest slice's lane; a query reads the block once and reports whether a lane
//! holds all of them (`k = 1`). Starting a generation clears one lane of every block. Lanes of
//! 128 bits (one cache line a block) with at most 8 bits per element, the shape at 1%, have an
//! AVX2 kernel
//! (`lanes_avx2.rs`), chosen once when the lanes are built.
//!
//! Sizing and the FPR model are `sizing.rs` ([`BlockedAgePartitioned`],
//! [`LaneModel`](super::sizing::LaneModel)).

use super::sizing::{BlockedAgePartitioned, LANES, LANE_BITS};
use crate::error::{Error, Result};
use crate::probe::{reduce, splitmix64};
use crate::storage::{blocks_from_words, prefetch, zeroed_blocks, Block};

/// The blocks of a count window in the blocked layout.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// Words per lane: 2, 4 or 8.
    lane_words: usize,
    /// Bits set per element in its lane (`b`).
    bits_per_element: u32,
    /// [`lines_per_block`] [`Block`]s per block.
    lines: Vec<Block>,
    /// Blocks.
    blocks: u64,
    /// Whether the AVX2 kernel serves these lanes on this CPU (decided once, from the shape
    /// and the CPU).
    avx2: bool,
}

/// Where an element is: its block and the hash word of its bits in a lane.
#[derive(Clone, Copy, Default)]
pub(crate) struct Probe {
    block: usize,
    h2: u64,
}

impl Lanes {
    /// Empty lanes of this shape.
    pub fn zeros(shape: &BlockedAgePartitioned) -> Result<Self> {
        let lane_words = check(shape)?;
        let lines = zeroed_blocks(shape.blocks * lines_per_block(lane_words) as u64)?;
        Ok(Self::from_lines(shape, lane_words, lines))
    }

    /// Lanes holding `words` (as [`words`](Self::as_lines) gives them), for a file.
    pub fn from_words(shape: &BlockedAgePartitioned, words: &[u64]) -> Result<Self> {
        let lane_words = check(shape)?;
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
        Ok(Self::from_lines(
            shape,
            lane_words,
            blocks_from_words(words)?,
        ))
    }

    fn from_lines(shape: &BlockedAgePartitioned, lane_words: usize, lines: Vec<Block>) -> Self {
        Lanes {
            lane_words,
            bits_per_element: shape.bits_per_element,
            lines,
            blocks: shape.blocks,
            avx2: avx2_applies(lane_words, shape.bits_per_element),
        }
    }

    /// The cache lines, block after block (for the file format).
    pub fn as_lines(&self) -> &[Block] {
        &self.lines
    }

    /// The block of hash words `[h1, h2]` (its bits come from `h2`).
    #[inline(always)]
    pub fn locate(&self, [h1, h2]: [u64; 2]) -> Probe {
        Probe {
            block: reduce(h1, self.blocks) as usize,
            h2,
        }
    }

    /// The cache lines of the element's block.
    #[inline(always)]
    fn block(&self, p: &Probe) -> &[Block] {
        let lines = lines_per_block(self.lane_words);
        &self.lines[p.block * lines..(p.block + 1) * lines]
    }

    /// Starts loading the element's block.
    #[inline(always)]
    pub fn prefetch(&self, p: &Probe) {
        self.block(p).iter().for_each(|line| prefetch(line));
    }

    /// Whether some slice's lane has every bit of the element (`k = 1`: one slice is a
    /// run).
    #[inline(always)]
    pub fn any_hit(&self, p: &Probe) -> bool {
        let (block, b) = (self.block(p), self.bits_per_element);
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2 and the lanes are two words
            // (`lanes_avx2::applies`); a block of them is two `Block`s.
            return unsafe { super::lanes_avx2::any_hit(block, p.h2, b) };
        }
        self.hits_portable(block, p.h2) != 0
    }

    /// One bit per physical slice, set where the slice's lane has every bit of in-lane hash
    /// `h2` (the portable code).
    fn hits_portable(&self, block: &[Block], h2: u64) -> u32 {
        let b = self.bits_per_element;
        match self.lane_words {
            2 => hits_in::<2>(block, &mask::<2>(h2, b)),
            4 => hits_in::<4>(block, &mask::<4>(h2, b)),
            _ => hits_in::<8>(block, &mask::<8>(h2, b)),
        }
    }

    /// Sets the element's bits in the lane of physical slice `slice`; returns whether no
    /// lane had all of them before (the element was new) when `test` is set, else `false`.
    #[inline(always)]
    pub fn set(&mut self, p: &Probe, slice: usize, test: bool) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            let (b, lines) = (self.bits_per_element, lines_per_block(self.lane_words));
            let block = &mut self.lines[p.block * lines..(p.block + 1) * lines];
            // SAFETY: as in `any_hit`; a physical slice is a lane, `slice < LANES = 4`.
            return unsafe { super::lanes_avx2::set(block, p.h2, b, slice, test) };
        }
        let new = test && !self.any_hit(p);
        match self.lane_words {
            2 => self.set_in::<2>(p, slice),
            4 => self.set_in::<4>(p, slice),
            _ => self.set_in::<8>(p, slice),
        }
        new
    }

    #[inline(always)]
    fn set_in<const LW: usize>(&mut self, p: &Probe, slice: usize) {
        let m = mask::<LW>(p.h2, self.bits_per_element);
        let lines = lines_per_block(LW);
        let block = &mut self.lines[p.block * lines..(p.block + 1) * lines];
        for (t, m) in m.iter().enumerate() {
            let w = slice * LW + t;
            block[w / 8].0[w % 8] |= m;
        }
    }

    /// Clears physical slice `slice`: its lane in every block.
    pub fn clear_slice(&mut self, slice: usize) {
        let lw = self.lane_words;
        for block in self.lines.chunks_exact_mut(lines_per_block(lw)) {
            for w in slice * lw..(slice + 1) * lw {
                block[w / 8].0[w % 8] = 0;
            }
        }
    }

    /// Clears every slice.
    pub fn clear(&mut self) {
        self.lines.iter_mut().for_each(|l| *l = Block::default());
    }

    /// Set bits of physical slice `slice`.
    pub fn slice_ones(&self, slice: usize) -> u64 {
        let lw = self.lane_words;
        self.lines
            .chunks_exact(lines_per_block(lw))
            .flat_map(|block| (slice * lw..(slice + 1) * lw).map(|w| block[w / 8].0[w % 8]))
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// The fill of each physical slice's lane in each block, block after block: `fill(block,
    /// slice)` is called for every pair (for the FPR estimate).
    pub fn for_each_lane_fill(&self, mut fill: impl FnMut(usize, usize, f64)) {
        let lw = self.lane_words;
        let bits = (lw * 64) as f64;
        for (i, block) in self.lines.chunks_exact(lines_per_block(lw)).enumerate() {
            for slice in 0..LANES as usize {
                let ones: u32 = (slice * lw..(slice + 1) * lw)
                    .map(|w| block[w / 8].0[w % 8].count_ones())
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
const fn lines_per_block(lane_words: usize) -> usize {
    LANES as usize * lane_words / 8
}

/// Whether the AVX2 kernel serves lanes of `lane_words` words and `b` bits per element here.
fn avx2_applies(lane_words: usize, b: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::lanes_avx2::applies(lane_words, b);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (lane_words, b);
        false
    }
}

/// The bits of in-lane hash `h2` in a lane of `LW` words (the definition of the layout):
/// `b` positions, `log₂(64·LW)`-bit fields of `h2` lowest first, then of SplitMix64 steps
/// from `h2`. Each position's word is chosen by masks rather than by an index, so that the
/// mask stays in registers.
#[inline(always)]
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
        for (t, m) in m.iter_mut().enumerate() {
            *m |= u64::from(pos >> 6 == t as u64) << (pos & 63);
        }
        x >>= field;
        left -= 1;
    }
    m
}

/// [`Lanes::hits`] for lanes of `LW` words (a constant, so that the loops unroll).
#[inline(always)]
fn hits_in<const LW: usize>(block: &[Block], mask: &[u64; LW]) -> u32 {
    let mut hits = 0;
    for lane in 0..LANES as usize {
        let mut missing = 0u64;
        for (t, m) in mask.iter().enumerate() {
            let w = lane * LW + t;
            missing |= m & !block[w / 8].0[w % 8];
        }
        hits |= u32::from(missing == 0) << lane;
    }
    hits
}

/// Checks a blocked shape; returns the words per lane.
fn check(shape: &BlockedAgePartitioned) -> Result<usize> {
    let bad = |why: String| Err(Error::InvalidParameters(why));
    if !LANE_BITS.contains(&shape.lane_bits) {
        return bad(format!(
            "a blocked count window has lanes of 128, 256 or 512 bits, not {}",
            shape.lane_bits
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
    use crate::window::sizing::BlockedAgePartitioned;

    /// The AVX2 kernel (where the CPU has it) and the portable code agree on every lane mask,
    /// every set bit and every answer, for each `b` the kernel serves and the next.
    #[test]
    fn avx2_kernel_and_portable_code_agree() {
        for b in 1..=9 {
            let shape = BlockedAgePartitioned {
                generation: 100,
                blocks: 256,
                lane_bits: 128,
                bits_per_element: b,
            };
            let mut fast = Lanes::zeros(&shape).unwrap();
            #[cfg(target_arch = "x86_64")]
            let expect_avx2 = b <= 8 && std::arch::is_x86_feature_detected!("avx2");
            #[cfg(not(target_arch = "x86_64"))]
            let expect_avx2 = false;
            assert_eq!(fast.avx2, expect_avx2, "b = {b}");
            let mut portable = fast.clone();
            portable.force_portable();
            for i in 0..3000u64 {
                let h = [splitmix64(i), splitmix64(i ^ 0xabcd)];
                let p = fast.locate(h);
                assert_eq!(fast.any_hit(&p), portable.any_hit(&p), "b = {b}, key {i}");
                // Fill lanes unevenly so that both answers occur.
                if i % 3 != 0 {
                    let slice = (i % u64::from(LANES)) as usize;
                    let test = i % 2 == 0;
                    let new = fast.set(&p, slice, test);
                    assert_eq!(new, portable.set(&p, slice, test), "b = {b}, key {i}");
                    assert!(fast.any_hit(&p) && !fast.set(&p, slice, true));
                    portable.set(&p, slice, false);
                }
            }
            assert!(fast.lines == portable.lines, "b = {b}");
            let ones: u64 = (0..LANES as usize).map(|s| fast.slice_ones(s)).sum();
            assert!(ones > 0 && ones < shape.bits());
        }
    }

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
}
