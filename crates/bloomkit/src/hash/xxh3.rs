//! XXH3-64 (seed 0, the default secret) with keys of 4 to 128 bytes computed inline.
//!
//! Hand-written for speed, not for a different result: it returns exactly what
//! `xxhash_rust::xxh3::xxh3_64` returns for every input (the test below compares them at every
//! length from 0 to 300), and hands every other length to that function. The reason it exists:
//! URL-like keys (20–100 bytes) spend about half of a batch query in this hash, and
//! `xxhash_rust`'s function is too large for the compiler to inline into the probing loops, so
//! each key paid a call (and, inside the AVX2 loops, a `vzeroupper` before it). (A branch-free
//! variant, which computes all four pairs of 16-byte mixes and masks the ones the length
//! excludes, hashed URL-like keys 10–80 % slower than these length branches, whose
//! mispredictions resolve as soon as the length is loaded.)
//!
//! The algorithm and its constants are XXH3's published definition (xxHash's
//! `XXH3_len_4to8_64b`, `XXH3_len_9to16_64b`, `XXH3_len_17to128_64b`, `XXH3_mix16B`,
//! `XXH3_rrmxmx` and `XXH3_avalanche`, with `XXH3_kSecret`).

/// The first 128 bytes of XXH3's default secret (`XXH3_kSecret`), as little-endian words.
const SECRET: [u64; 16] = [
    0xbe4b_a423_396c_feb8,
    0x1cad_21f7_2c81_017c,
    0xdb97_9083_e96d_d4de,
    0x1f67_b3b7_a4a4_4072,
    0x78e5_c0cc_4ee6_79cb,
    0x2172_ffcc_7dd0_5a82,
    0x8e24_43f7_7446_08b8,
    0x4c26_3a81_e690_35e0,
    0xcb00_c391_bb52_283c,
    0xa32e_531b_8b65_d088,
    0x4ef9_0da2_9748_6471,
    0xd8ac_dea9_46ef_1938,
    0x3f34_9ce3_3f76_faa8,
    0x1d4f_0bc7_c7bb_dcf9,
    0x3159_b4cd_4be0_518a,
    0x6473_78d9_c97e_9fc8,
];

/// XXH64's first prime, XXH3's length multiplier.
const PRIME64_1: u64 = 0x9e37_79b1_85eb_ca87;

/// XXH3-64 of `bytes` with seed 0: equal to `xxhash_rust::xxh3::xxh3_64(bytes)`.
#[inline(always)]
pub(crate) fn xxh3_64(bytes: &[u8]) -> u64 {
    match bytes.len() {
        17..=128 => len_17_to_128(bytes),
        9..=16 => len_9_to_16(bytes),
        4..=8 => len_4_to_8(bytes),
        _ => other_lengths(bytes),
    }
}

/// The lengths this file does not inline: a call into `xxhash_rust`.
#[inline(never)]
fn other_lengths(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// The 8 little-endian bytes of `bytes` at `at`.
///
/// # Safety
/// `at + 8 <= bytes.len()`.
#[inline(always)]
unsafe fn read(bytes: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= bytes.len());
    // SAFETY: the caller guarantees the 8 bytes lie inside `bytes`; `read_unaligned` has no
    // alignment requirement.
    u64::from_le(unsafe { bytes.as_ptr().add(at).cast::<u64>().read_unaligned() })
}

/// `XXH3_mix16B`: the 16 bytes at `at` against secret words `s` and `s + 1`.
///
/// # Safety
/// `at + 16 <= bytes.len()`.
#[inline(always)]
unsafe fn mix16(bytes: &[u8], at: usize, s: usize) -> u64 {
    // SAFETY: `at + 16 <= bytes.len()` (the caller's guarantee).
    let (lo, hi) = unsafe { (read(bytes, at), read(bytes, at + 8)) };
    let p = u128::from(lo ^ SECRET[s]) * u128::from(hi ^ SECRET[s + 1]);
    p as u64 ^ (p >> 64) as u64
}

/// `XXH3_len_17to128_64b` with seed 0: pairs of 16-byte mixes from both ends of the key, one
/// pair more for each 32 bytes of length.
#[inline(always)]
fn len_17_to_128(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((17..=128).contains(&len));
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    // Pair `j` reads bytes `16j..16j + 16` and `len - 16(j + 1)..len - 16j` with secret words
    // `4j..4j + 4`, when `len > 32j`.
    let pair = |j: usize| {
        // SAFETY: pair `j` is read only when `len > 32j`, so `16j + 16 <= len`, and
        // `len - 16(j + 1) >= 16j >= 0` with `len - 16(j + 1) + 16 <= len`.
        unsafe {
            mix16(bytes, 16 * j, 4 * j).wrapping_add(mix16(bytes, len - 16 * (j + 1), 4 * j + 2))
        }
    };
    if len > 32 {
        if len > 64 {
            if len > 96 {
                acc = acc.wrapping_add(pair(3));
            }
            acc = acc.wrapping_add(pair(2));
        }
        acc = acc.wrapping_add(pair(1));
    }
    avalanche(acc.wrapping_add(pair(0)))
}

/// `XXH3_len_9to16_64b` with seed 0.
#[inline(always)]
fn len_9_to_16(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((9..=16).contains(&len));
    // SAFETY: `len >= 9`, so bytes `0..8` and `len - 8..len` lie inside the key.
    let (lo, hi) = unsafe { (read(bytes, 0), read(bytes, len - 8)) };
    let lo = lo ^ SECRET[3] ^ SECRET[4];
    let hi = hi ^ SECRET[5] ^ SECRET[6];
    let p = u128::from(lo) * u128::from(hi);
    let acc = (len as u64)
        .wrapping_add(lo.swap_bytes())
        .wrapping_add(hi)
        .wrapping_add(p as u64 ^ (p >> 64) as u64);
    avalanche(acc)
}

/// `XXH3_len_4to8_64b` with seed 0 (a `u64` key is 8 bytes).
#[inline(always)]
fn len_4_to_8(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((4..=8).contains(&len));
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let input = u64::from(word(len - 4)).wrapping_add(u64::from(word(0)) << 32);
    let mut h = input ^ SECRET[1] ^ SECRET[2];
    // `XXH3_rrmxmx`.
    h ^= h.rotate_left(49) ^ h.rotate_left(24);
    h = h.wrapping_mul(0x9fb2_1c65_1e98_df25);
    h ^= (h >> 35).wrapping_add(len as u64);
    h = h.wrapping_mul(0x9fb2_1c65_1e98_df25);
    h ^ (h >> 28)
}

/// `XXH3_avalanche`.
#[inline(always)]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(0x1656_6791_9e37_79f9);
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::splitmix64;

    /// Bit for bit `xxhash_rust`'s XXH3-64, at every length around and inside the inlined range,
    /// on varied bytes.
    #[test]
    fn equals_xxhash_rust_at_every_length() {
        for seed in 0..40u64 {
            let bytes: Vec<u8> = (0..300u64)
                .map(|i| splitmix64(seed * 1000 + i) as u8)
                .collect();
            for len in 0..=300 {
                let key = &bytes[..len];
                assert_eq!(xxh3_64(key), xxhash_rust::xxh3::xxh3_64(key), "len {len}");
            }
        }
        // A key at the end of an allocation: reads stay inside it.
        for len in 17..=128 {
            let key = vec![0xa5u8; len];
            assert_eq!(xxh3_64(&key), xxhash_rust::xxh3::xxh3_64(&key));
        }
    }
}
