//! Probing for the d-left counting filter: from an element's hash to its bucket and
//! fingerprint remainder in each sub-table.
//!
//! The element's 128-bit hash gives its *true fingerprint* `(q, f)`: a bucket number
//! `q = reduce(h1, B)` and a remainder `f = h2 mod 2^r` (`B` buckets per sub-table, `r`
//! remainder bits). Sub-table `t` sees it through its own permutation `P_t` of
//! `[0, B) × [0, 2^r)`, a three-round Feistel network over the mixed radix:
//!
//! ```text
//! q1 = (q  + reduce(mix(f,  t, 0), B)) mod B
//! f1 =  f  ^ (mix(q1, t, 1) mod 2^r)
//! q2 = (q1 + reduce(mix(f1, t, 2), B)) mod B        P_t(q, f) = (q2, f1)
//! ```
//!
//! with `mix(x, t, i) = splitmix64(x ^ (3t + i + 1) · 0xd6e8feb86659fd93)`. Each round can be
//! undone, so `P_t` is a bijection: a cell of sub-table `t` holding remainder `f1` in bucket
//! `q2` identifies exactly one true fingerprint. That is the point of the construction: two
//! elements with different true fingerprints can never be confused by a lookup, whichever
//! sub-tables they landed in, so one element's removal can never take another's cell (short
//! of a collision of true fingerprints, which is what the false-positive rate counts). The
//! rounds also make the `d` bucket choices of an element look independent, which d-left
//! hashing's balance needs.

use super::{reduce, splitmix64};

/// Where an element's fingerprint goes in each sub-table of a d-left filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLeftProbe {
    buckets: u64,
    remainder_mask: u64,
}

/// The salt multiplier of the round functions.
const SALT: u64 = 0xd6e8_feb8_6659_fd93;

#[inline(always)]
fn mix(x: u64, table: u32, round: u64) -> u64 {
    splitmix64(x ^ (3 * u64::from(table) + round + 1).wrapping_mul(SALT))
}

impl DLeftProbe {
    /// Probing for sub-tables of `buckets` buckets (at least one) and `remainder_bits`-bit
    /// remainders (1 to 64).
    pub fn new(buckets: u64, remainder_bits: u32) -> Self {
        debug_assert!(buckets >= 1 && (1..=64).contains(&remainder_bits));
        DLeftProbe {
            buckets,
            remainder_mask: u64::MAX >> (64 - remainder_bits),
        }
    }

    /// The true fingerprint `(q, f)` of an element with hash words `h1`, `h2`.
    #[inline]
    pub fn fingerprint(&self, h1: u64, h2: u64) -> (u64, u64) {
        (reduce(h1, self.buckets), h2 & self.remainder_mask)
    }

    #[inline(always)]
    fn add(&self, a: u64, b: u64) -> u64 {
        // a, b < buckets: no overflow in u128, one conditional subtraction.
        let s = u128::from(a) + u128::from(b);
        (if s >= u128::from(self.buckets) {
            s - u128::from(self.buckets)
        } else {
            s
        }) as u64
    }

    #[inline(always)]
    fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            self.buckets - (b - a)
        }
    }

    /// `P_table(q, f)`: the bucket and remainder of true fingerprint `(q, f)` in sub-table
    /// `table`.
    #[inline]
    pub fn locate(&self, (q, f): (u64, u64), table: u32) -> (u64, u64) {
        let b = self.buckets;
        let q1 = self.add(q, reduce(mix(f, table, 0), b));
        let f1 = f ^ (mix(q1, table, 1) & self.remainder_mask);
        let q2 = self.add(q1, reduce(mix(f1, table, 2), b));
        (q2, f1)
    }

    /// The inverse of [`locate`](Self::locate): the true fingerprint stored as remainder `f1`
    /// in bucket `q2` of sub-table `table`.
    pub fn unlocate(&self, (q2, f1): (u64, u64), table: u32) -> (u64, u64) {
        let b = self.buckets;
        let q1 = self.sub(q2, reduce(mix(f1, table, 2), b));
        let f = f1 ^ (mix(q1, table, 1) & self.remainder_mask);
        let q = self.sub(q1, reduce(mix(f, table, 0), b));
        (q, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn each_table_permutes_the_fingerprint_space() {
        // Small spaces, checked exhaustively: every (bucket, remainder) is hit exactly once,
        // and unlocate undoes locate.
        for (buckets, r) in [(1u64, 1u32), (7, 3), (13, 5), (64, 4)] {
            let p = DLeftProbe::new(buckets, r);
            for table in 0..4 {
                let mut seen = HashSet::new();
                for q in 0..buckets {
                    for f in 0..1u64 << r {
                        let (b, g) = p.locate((q, f), table);
                        assert!(b < buckets && g < 1 << r);
                        assert!(seen.insert((b, g)), "collision at table {table}");
                        assert_eq!(p.unlocate((b, g), table), (q, f));
                    }
                }
            }
        }
        // Large spaces: inverse on a sample, including the extremes.
        let p = DLeftProbe::new(u64::MAX, 64);
        for (i, q) in [0, 1, u64::MAX - 1, 12345].into_iter().enumerate() {
            let fp = (q, (i as u64).wrapping_mul(SALT));
            assert_eq!(p.unlocate(p.locate(fp, 3), 3), fp);
        }
    }

    #[test]
    fn tables_choose_different_buckets() {
        let p = DLeftProbe::new(1000, 12);
        let mut same = 0;
        for i in 0..10_000u64 {
            let fp = p.fingerprint(splitmix64(i), splitmix64(!i));
            if p.locate(fp, 0).0 == p.locate(fp, 1).0 {
                same += 1;
            }
        }
        // Independent choices agree with probability 1/1000: about 10 of 10,000.
        assert!(same < 40, "{same}");
    }
}
