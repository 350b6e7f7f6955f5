//! [`Ages`]: which slice of an age-partitioned filter is the newest, and when the next
//! generation starts.

/// Which physical slice is the newest and when the next generation starts, from the
/// insertions ever made. An insertion starts a new generation (the oldest slice is cleared and
/// becomes the newest) when the current one already holds `g`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct Ages {
    /// Physical index of the newest slice.
    pub base: usize,
    /// Insertions ever.
    pub inserted: u64,
    /// The value of `inserted` at which the next insertion starts a generation (a multiple of
    /// `g`, at least `g`): the hot path compares with it instead of counting the generation.
    next_turn: u64,
    /// Slices (`k + l`).
    slices: usize,
    /// Insertions per generation (`g`).
    generation: u64,
}

impl Ages {
    /// Where a filter of `slices` slices and generations of `g` stands after `inserted`
    /// insertions: `s = ⌊(inserted - 1) / g⌋` generations have turned over, so the newest
    /// slice is `(-s) mod slices`.
    pub fn after(inserted: u64, slices: usize, g: u64) -> Ages {
        let shifts = inserted.saturating_sub(1) / g;
        let h = slices as u64;
        Ages {
            base: ((h - shifts % h) % h) as usize,
            inserted,
            next_turn: inserted.div_ceil(g).max(1).saturating_mul(g),
            slices,
            generation: g,
        }
    }

    /// Counts one insertion; returns the physical slice to clear first when it starts a new
    /// generation (the oldest, which becomes the newest).
    #[inline(always)]
    pub fn advance(&mut self) -> Option<usize> {
        let turned = (self.inserted == self.next_turn).then(|| self.turn());
        self.inserted += 1;
        turned
    }

    /// Starts a generation: one insertion in `g`, out of the hot path.
    #[cold]
    #[inline(never)]
    fn turn(&mut self) -> usize {
        self.base = (self.base + self.slices - 1) % self.slices;
        self.next_turn = self.next_turn.saturating_add(self.generation);
        self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting insertions one by one gives the state `after` computes directly.
    #[test]
    fn advancing_agrees_with_the_closed_form() {
        for (slices, g) in [(4, 1), (4, 3), (34, 7), (2, 1000)] {
            let mut ages = Ages::after(0, slices, g);
            for inserted in 0..20 * g * slices as u64 {
                assert_eq!(
                    ages,
                    Ages::after(inserted, slices, g),
                    "{slices} {g} {inserted}"
                );
                let before = ages.base;
                let turned = ages.advance();
                assert_eq!(turned.is_some(), inserted > 0 && inserted % g == 0);
                assert_eq!(turned.is_some(), ages.base != before || slices == 1);
            }
        }
    }
}
