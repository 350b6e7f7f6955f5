//! The filters the `window` bench and the `window_speed` example compare: a count window of
//! the last N = 10⁶ insertions at 1%, and a blocked filter (default half-block layout) of the
//! same number of bits, both filled as in steady use: the count window has seen three windows,
//! the blocked filter holds the last one (what the count window remembers).

use bloomkit::window::CountWindowFilter;
use bloomkit::{BlockLayout, BlockedBloomFilter, Hashing};

/// The window.
pub const N: u64 = 1_000_000;

/// The two filters, filled with the keys `0..3N` (the blocked filter with `2N..3N`).
pub fn filled() -> (CountWindowFilter, BlockedBloomFilter) {
    let mut window = CountWindowFilter::new(N, 0.01).unwrap();
    let bits = window.shape().bits();
    let mut blocked =
        BlockedBloomFilter::with_layout(bits / 512, BlockLayout::SplitBlock256, Hashing::Xxh3)
            .unwrap();
    let members: Vec<u64> = (0..3 * N).collect();
    window.insert_batch(&members);
    blocked.insert_batch(&members[2 * N as usize..]);
    (window, blocked)
}

/// The operations both filters are timed on, so that one piece of timing code serves both.
pub trait Timed {
    /// A single-key query.
    fn query(&self, key: &u64) -> bool;
    /// A batch query.
    fn query_batch(&self, keys: &[u64]) -> Vec<bool>;
    /// An insert that reports whether the key was new.
    fn insert_new(&mut self, key: &u64) -> bool;
    /// An insert that only sets bits (the count window's `insert_batch` of one key: it does
    /// not query first; the blocked filter's insert).
    fn insert_bits(&mut self, key: &u64);
}

/// `Timed` for a filter type whose `contains`, `contains_batch` and `insert` it times, and whose
/// bit-setting insert is `$bits`.
macro_rules! timed {
    ($t:ty, |$f:ident, $key:ident| $bits:expr) => {
        impl Timed for $t {
            fn query(&self, key: &u64) -> bool {
                self.contains(key)
            }
            fn query_batch(&self, keys: &[u64]) -> Vec<bool> {
                self.contains_batch(keys)
            }
            fn insert_new(&mut self, key: &u64) -> bool {
                self.insert(key)
            }
            fn insert_bits(&mut self, key: &u64) {
                let ($f, $key) = (self, key);
                $bits;
            }
        }
    };
}

timed!(CountWindowFilter, |f, key| f
    .insert_batch(std::slice::from_ref(key)));
timed!(BlockedBloomFilter, |f, key| f.insert(key));
