//! The blocked layout of a count window ([`Lanes`]): every slice of an element in one block.
//!
//! A block is [`LANES`] lanes of `w` bits (`w` = 128, 256 or 512), lane `j` of every block
//! making up physical slice `j`, stored as `w / 64` of the library's 64-byte [`Block`]s
//! (so a block of 128-bit lanes is two adjacent cache lines). An element with hash words
//! `[h1, h2]` (the 128-bit hash) lives in block `⌊h1 · B / 2⁶⁴⌋` ([`reduce`]); its `b`
//! positions in a lane are the `Bits(b)` positions of `h2` of the blocked filters
//! ([`for_each_position`], 9-bit fields) modulo `w`, the same in every lane. An insert ORs
//! them into the newest slice's lane; a query reads the block once and reports which lanes
//! hold all of them (`hits`, one bit per physical slice). Starting a generation clears one
//! lane of every block.
//!
//! Sizing and the FPR model are `sizing.rs` ([`BlockedAgePartitioned`],
//! [`LaneModel`](super::sizing::LaneModel)).

use super::sizing::{BlockedAgePartitioned, LANES, LANE_BITS};
use crate::error::{Error, Result};
use crate::probe::blocked::for_each_position;
use crate::probe::reduce;
use crate::storage::{blocks_from_words, prefetch, zeroed_blocks, Block};

/// The blocks of a count window in the blocked layout.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// Words per lane: 2, 4 or 8 (also the cache lines per block).
    lane_words: usize,
    /// Bits set per element in its lane (`b`).
    bits_per_element: u32,
    /// `lane_words` [`Block`]s per block.
    lines: Vec<Block>,
    /// Blocks.
    blocks: u64,
}

/// Where an element is: its block and its bits in a lane (the first `lane_words` words).
#[derive(Clone, Copy, Default)]
pub(crate) struct Probe {
    block: usize,
    mask: [u64; 8],
}

impl Lanes {
    /// Empty lanes of this shape.
    pub fn zeros(shape: &BlockedAgePartitioned) -> Result<Self> {
        let lane_words = check(shape)?;
        let lines = zeroed_blocks(shape.blocks * lane_words as u64)?;
        Ok(Self::from_lines(shape, lane_words, lines))
    }

    /// Lanes holding `words` (as [`words`](Self::as_lines) gives them), for a file.
    pub fn from_words(shape: &BlockedAgePartitioned, words: &[u64]) -> Result<Self> {
        let lane_words = check(shape)?;
        if words.len() as u64 != shape.blocks * 8 * lane_words as u64 {
            return Err(Error::InvalidParameters(format!(
                "{} blocks of {} lanes of {} bits are {} words, not {}",
                shape.blocks,
                LANES,
                shape.lane_bits,
                shape.blocks * 8 * lane_words as u64,
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
        }
    }

    /// The cache lines, block after block (for the file format).
    pub fn as_lines(&self) -> &[Block] {
        &self.lines
    }

    /// The block and lane bits of hash words `[h1, h2]`.
    #[inline(always)]
    pub fn locate(&self, [h1, h2]: [u64; 2]) -> Probe {
        let mut mask = [0u64; 8];
        let fold = self.lane_words - 1;
        for_each_position(h2, self.bits_per_element, |pos| {
            mask[(pos >> 6) & fold] |= 1u64 << (pos & 63);
        });
        Probe {
            block: reduce(h1, self.blocks) as usize,
            mask,
        }
    }

    /// The cache lines of the element's block.
    #[inline(always)]
    fn block(&self, p: &Probe) -> &[Block] {
        &self.lines[p.block * self.lane_words..(p.block + 1) * self.lane_words]
    }

    /// Starts loading the element's block.
    #[inline(always)]
    pub fn prefetch(&self, p: &Probe) {
        self.block(p).iter().for_each(|line| prefetch(line));
    }

    /// One bit per physical slice: set where the slice's lane has every bit of the element.
    #[inline(always)]
    pub fn hits(&self, p: &Probe) -> u32 {
        let block = self.block(p);
        match self.lane_words {
            2 => hits_in::<2>(block, &p.mask),
            4 => hits_in::<4>(block, &p.mask),
            _ => hits_in::<8>(block, &p.mask),
        }
    }

    /// Sets the element's bits in the lane of physical slice `slice`.
    #[inline(always)]
    pub fn set(&mut self, p: &Probe, slice: usize) {
        let lw = self.lane_words;
        let block = &mut self.lines[p.block * lw..(p.block + 1) * lw];
        for (t, m) in p.mask[..lw].iter().enumerate() {
            let w = slice * lw + t;
            block[w / 8].0[w % 8] |= m;
        }
    }

    /// Clears physical slice `slice`: its lane in every block.
    pub fn clear_slice(&mut self, slice: usize) {
        let lw = self.lane_words;
        for block in self.lines.chunks_exact_mut(lw) {
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
            .chunks_exact(lw)
            .flat_map(|block| (slice * lw..(slice + 1) * lw).map(|w| block[w / 8].0[w % 8]))
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// The fill of each physical slice's lane in each block, block after block: `fill(block,
    /// slice)` is called for every pair (for the FPR estimate).
    pub fn for_each_lane_fill(&self, mut fill: impl FnMut(usize, usize, f64)) {
        let lw = self.lane_words;
        let bits = (lw * 64) as f64;
        for (i, block) in self.lines.chunks_exact(lw).enumerate() {
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

/// [`Lanes::hits`] for lanes of `LW` words (a constant, so that the loops unroll).
#[inline(always)]
fn hits_in<const LW: usize>(block: &[Block], mask: &[u64; 8]) -> u32 {
    let mut hits = 0;
    for lane in 0..LANES as usize {
        let mut missing = 0u64;
        for (t, m) in mask[..LW].iter().enumerate() {
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
