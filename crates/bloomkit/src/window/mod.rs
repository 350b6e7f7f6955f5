//! Expiring filters: filters that remember only a window, the last `N` insertions or the last
//! span of time, and forget what is older.
//!
//! | type | window | how | guarantee |
//! |---|---|---|---|
//! | [`CountWindowFilter`] (`count.rs`; layouts `lanes.rs`, `slices.rs`) | the last `N` insertions | age-partitioned slices (Shtul, Baquero & Almeida, 2020): `k + l` slices, a new generation every `g` insertions; new filters keep every slice of an element in one block | each of the last `l·g ≥ N` insertions is found; every bit of an element is gone `(k + l)·g` insertions later |
//! | [`TimeWindowFilter`] (`time.rs`) | the last span of time `T` | a ring of `G + 1` blocked filters, one per generation of `T / G`, rotated by a [`Clock`](crate::clock::Clock) | everything inserted within `T` is found; forgotten after `T + T/G` |
//!
//! Both meet their FPR target over the whole window, sized by [`sizing`]. Choosing between
//! them, and the measured memory and FPR of each, is in `docs/EXPIRING.md`.
//!
//! Neither has a lock-free (`&self`) variant. Moving to a new generation clears memory that a
//! concurrent insert may be writing to at the same moment: an insert that read the old
//! generation would set its bits in memory being cleared and lose the element, a false negative
//! inside the window, which is the one thing these filters promise never to give. Share one
//! behind a `Mutex` (inserts are a few nanoseconds to a few tens of nanoseconds), or one
//! per thread.

mod ages;
pub mod count;
mod lanes;
#[cfg(target_arch = "x86_64")]
mod lanes_avx2;
mod lanes_fields;
pub mod sizing;
mod slices;
pub mod time;

pub use count::{CountWindowFilter, WindowLayout};
pub use sizing::{AgePartitioned, BlockedAgePartitioned};
pub use time::{Generation, TimeWindowFilter, MAX_WINDOW_MS};

// Compile docs/EXPIRING.md's examples as doctests so they cannot go stale.
#[doc = include_str!("../../../../docs/EXPIRING.md")]
#[cfg(doctest)]
pub struct ExpiringDoctests;
