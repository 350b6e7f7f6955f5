//! The benchmarks' keys, shared by the criterion groups, the interleaved benchmark and the
//! `string_keys` example (which also feeds them to the Boost.Bloom comparison driver in
//! `scripts/boost-compare/`, whose C++ generator is a line-for-line copy of this one).
//!
//! - `u64` keys: `splitmix(i)`.
//! - URL-like keys: each a separate heap `String` of 20 to 100 bytes (uniform length, mean
//!   60), `https://` then `i` as 8 hex digits (so keys are distinct), `/`, then characters from
//!   a 64-letter alphabet drawn from a SplitMix64 stream seeded by `i`.

#![allow(dead_code)] // each benchmark uses part of it

/// SplitMix64's output function.
pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

const ALPHABET: &[u8; 64] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/";

/// URL-like key number `i` (20 to 100 bytes).
pub fn url_key(i: u64) -> String {
    let r = splitmix(i);
    let len = 20 + (r % 81) as usize;
    let mut s = String::with_capacity(len);
    s.push_str("https://");
    for shift in (0..8).rev() {
        s.push(ALPHABET[((i >> (4 * shift)) & 15) as usize + 26] as char);
    }
    s.push('/');
    let mut state = r;
    while s.len() < len {
        state = splitmix(state);
        for j in 0..10 {
            if s.len() < len {
                s.push(ALPHABET[((state >> (6 * j)) & 63) as usize] as char);
            }
        }
    }
    s
}

/// FNV-1a over the keys' bytes, each followed by a zero byte: a checksum that shows two
/// generators made the same keys.
pub fn checksum<'a>(keys: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for k in keys {
        for &b in k.iter().chain(&[0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Calls `f` with the `n` keys `make(0)`, ..., `make(n - 1)`: `members[i]` where it is kept (the
/// first keys), made anew past them (and dropped).
pub fn each_key<K>(n: u64, members: &[K], make: impl Fn(u64) -> K, mut f: impl FnMut(&K)) {
    for i in 0..n {
        match members.get(i as usize) {
            Some(k) => f(k),
            None => f(&make(i)),
        }
    }
}
