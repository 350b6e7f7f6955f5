//! Cache-line blocks: 512 bits in eight 64-bit words, aligned to 64 bytes so that a block is
//! exactly one cache line on common hardware.

use super::sync::{AtomicU64, Ordering};
use crate::error::Result;

/// One 512-bit block, 64-byte aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub struct Block(pub [u64; 8]);

impl Block {
    /// Whether every bit of `mask` is set.
    #[inline(always)]
    pub fn contains(&self, mask: &[u64; 8]) -> bool {
        // Written as a fold over all eight words (no early exit) so that it compiles to a few
        // vector instructions.
        let mut missing = 0u64;
        for (w, m) in self.0.iter().zip(mask) {
            missing |= m & !w;
        }
        missing == 0
    }

    /// ORs `mask` in; returns `true` if any bit was clear.
    #[inline(always)]
    pub fn insert(&mut self, mask: &[u64; 8]) -> bool {
        let mut missing = 0u64;
        for (w, m) in self.0.iter_mut().zip(mask) {
            missing |= m & !*w;
            *w |= m;
        }
        missing != 0
    }
}

/// `n` zeroed blocks, reporting allocation failure instead of aborting.
pub(crate) fn zeroed_blocks(n: u64) -> Result<Vec<Block>> {
    super::zeroed_vec(n, Block::default())
}

/// Blocks from plain words (8 per block); the word count must be a multiple of 8.
pub(crate) fn blocks_from_words(words: &[u64]) -> Result<Vec<Block>> {
    let mut blocks = zeroed_blocks(words.len() as u64 / 8)?;
    for (b, c) in blocks.iter_mut().zip(words.chunks_exact(8)) {
        b.0.copy_from_slice(c);
    }
    Ok(blocks)
}

/// One 512-bit block of atomic words, 64-byte aligned.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct AtomicBlock(pub [AtomicU64; 8]);

impl AtomicBlock {
    /// Whether every bit of `mask` is set.
    #[inline(always)]
    pub fn contains(&self, mask: &[u64; 8]) -> bool {
        let mut missing = 0u64;
        for (w, m) in self.0.iter().zip(mask) {
            missing |= m & !w.load(Ordering::Relaxed);
        }
        missing == 0
    }

    /// ORs `mask` in, one `fetch_or` per word that has bits to set; returns `true` if any bit
    /// was clear. Each word's update is atomic, so concurrent inserts never lose a bit.
    #[inline(always)]
    pub fn insert(&self, mask: &[u64; 8]) -> bool {
        let mut missing = 0u64;
        for (w, &m) in self.0.iter().zip(mask) {
            if m != 0 {
                missing |= m & !w.fetch_or(m, Ordering::Relaxed);
            }
        }
        missing != 0
    }

    /// A plain copy (a snapshot).
    pub fn load(&self) -> Block {
        Block(std::array::from_fn(|i| self.0[i].load(Ordering::Relaxed)))
    }

    /// An atomic block holding `b`.
    pub fn new(b: Block) -> Self {
        AtomicBlock(b.0.map(AtomicU64::new))
    }
}
