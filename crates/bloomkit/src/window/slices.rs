//! The paper's layout of a count window ([`Slices`]): one bit array per slice.
//!
//! The element's position in physical slice `j` is the `j`-th probe of
//! [`Scheme::EnhancedDouble`](crate::Scheme::EnhancedDouble) (the default when this layout was
//! made; files of the layout depend on it) over the slice's bits,
//! so a query hashes once and touches one word per slice it reads. Every build before the
//! blocked layout (`lanes.rs`) wrote count windows this way; files keep loading in it.

use crate::error::Result;
use crate::probe::{reduce, Digest};
use crate::storage::{prefetch, BitVec};

/// The slices of a count window, in physical order.
#[derive(Clone, PartialEq)]
pub(crate) struct Slices {
    bits: Vec<BitVec>,
}

impl Slices {
    /// `count` empty slices of `bits` bits.
    pub fn zeros(count: usize, bits: u64) -> Result<Self> {
        let bits = (0..count)
            .map(|_| BitVec::zeros(bits))
            .collect::<Result<Vec<_>>>()?;
        Ok(Slices { bits })
    }

    /// Slices from their bit arrays.
    pub fn from_vec(bits: Vec<BitVec>) -> Self {
        Slices { bits }
    }

    /// The bit arrays, in physical order.
    pub fn as_slice(&self) -> &[BitVec] {
        &self.bits
    }

    /// Number of slices.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// The element's position in physical slice `j`: the `j`-th probe of enhanced double
    /// hashing (`x₀ = h1, y₀ = h2, x₊ = x + y, y₊ = y + i`), in closed form
    /// `x_j = h1 + j·h2 + j(j-1)(j-2)/6` (wrapping), reduced to the slice's bits.
    #[inline(always)]
    pub fn position(&self, d: &Digest, j: usize) -> u64 {
        let j = j as u64;
        let cubic = j * j.saturating_sub(1) * j.saturating_sub(2) / 6;
        let x = d.h1.wrapping_add(j.wrapping_mul(d.h2)).wrapping_add(cubic);
        reduce(x, self.bits[0].len())
    }

    /// The physical slice of age `age` when the newest is `base`.
    #[inline(always)]
    fn physical(&self, base: usize, age: usize) -> usize {
        let j = base + age;
        if j >= self.bits.len() {
            j - self.bits.len()
        } else {
            j
        }
    }

    /// Whether `k` consecutive slices (by age, the newest being `base`) have the element's
    /// bit. Any run of `k` ages contains an age `≡ k - 1 (mod k)`, so only those anchors are
    /// read first (about `(k + l) / k` words, prefetched together); a run is then measured
    /// around each anchor that has the bit.
    pub fn contains(&self, d: &Digest, base: usize, k: usize) -> bool {
        let h = self.bits.len();
        let hit = |age: usize| {
            let j = self.physical(base, age);
            self.bits[j].get(self.position(d, j))
        };
        self.prefetch_anchors(d, base, k);
        for anchor in (k - 1..h).step_by(k) {
            if !hit(anchor) {
                continue;
            }
            let mut run = 1;
            let mut a = anchor;
            while run < k && a > 0 && hit(a - 1) {
                a -= 1;
                run += 1;
            }
            let mut b = anchor + 1;
            while run < k && b < h && hit(b) {
                b += 1;
                run += 1;
            }
            if run >= k {
                return true;
            }
        }
        false
    }

    /// Starts loading the words of the anchors (ages `≡ k - 1 (mod k)`) and of their
    /// neighbours, the probes a query of a non-member mostly reads.
    #[inline]
    pub fn prefetch_anchors(&self, d: &Digest, base: usize, k: usize) {
        let h = self.bits.len();
        for anchor in (k - 1..h).step_by(k) {
            for age in anchor.saturating_sub(1)..(anchor + 2).min(h) {
                let j = self.physical(base, age);
                prefetch(&self.bits[j].as_words()[(self.position(d, j) >> 6) as usize]);
            }
        }
    }

    /// Records an element in the `k` newest slices.
    pub fn set(&mut self, d: &Digest, base: usize, k: usize) {
        for age in 0..k {
            let j = self.physical(base, age);
            let p = self.position(d, j);
            self.bits[j].set(p);
        }
    }

    /// Clears physical slice `j`.
    pub fn clear_slice(&mut self, j: usize) {
        self.bits[j].clear();
    }

    /// Clears every slice.
    pub fn clear(&mut self) {
        self.bits.iter_mut().for_each(BitVec::clear);
    }

    /// Set bits of physical slice `j`.
    pub fn slice_ones(&self, j: usize) -> u64 {
        self.bits[j].count_ones()
    }

    /// Bytes of memory held.
    pub fn memory_bytes(&self) -> usize {
        self.bits.iter().map(BitVec::memory_bytes).sum()
    }
}
