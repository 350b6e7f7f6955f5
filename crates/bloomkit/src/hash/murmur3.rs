//! MurmurHash3_x64_128, written here rather than taken from a crate for two reasons: it must be
//! bit-exact with Guava's `Hashing.murmur3_128()` and Go's `spaolacci/murmur3` (checked against
//! their golden outputs in this crate's tests), and Go's bits-and-blooms needs the hash of
//! `data ++ [0x01]`, which this version computes without copying `data`.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[inline(always)]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

#[inline(always)]
fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

#[inline(always)]
fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// One half of a block round: `h` rotated by `r`, plus the other half, times 5, plus `c`.
#[inline(always)]
fn round(h: u64, r: u32, other: u64, c: u64) -> u64 {
    h.rotate_left(r)
        .wrapping_add(other)
        .wrapping_mul(5)
        .wrapping_add(c)
}

#[inline(always)]
fn read_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

struct State {
    h1: u64,
    h2: u64,
}

impl State {
    #[inline(always)]
    fn block(&mut self, block: &[u8]) {
        let (k1, k2) = (read_u64(block), read_u64(&block[8..]));
        self.h1 = round(self.h1 ^ mix_k1(k1), 27, self.h2, 0x52dc_e729);
        self.h2 = round(self.h2 ^ mix_k2(k2), 31, self.h1, 0x3849_5ab5);
    }

    /// Mixes in the final `tail.len() < 16` bytes and finalizes.
    #[inline(always)]
    fn finish(mut self, tail: &[u8], total_len: u64) -> [u64; 2] {
        debug_assert!(tail.len() < 16);
        if !tail.is_empty() {
            let mut buf = [0u8; 16];
            buf[..tail.len()].copy_from_slice(tail);
            if tail.len() > 8 {
                self.h2 ^= mix_k2(read_u64(&buf[8..]));
            }
            self.h1 ^= mix_k1(read_u64(&buf));
        }
        let (mut h1, mut h2) = (self.h1 ^ total_len, self.h2 ^ total_len);
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        h1 = fmix64(h1);
        h2 = fmix64(h2);
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        [h1, h2]
    }
}

/// MurmurHash3_x64_128 of `data` with seed 0, as `[h1, h2]` (Guava's `asBytes()` is `h1` then
/// `h2`, each little-endian).
pub fn murmur3_x64_128(data: &[u8]) -> [u64; 2] {
    let mut state = State { h1: 0, h2: 0 };
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        state.block(block);
    }
    state.finish(blocks.remainder(), data.len() as u64)
}

/// MurmurHash3_x64_128 of `data ++ [suffix]` with seed 0, without copying `data`.
pub fn murmur3_x64_128_suffixed(data: &[u8], suffix: u8) -> [u64; 2] {
    let mut state = State { h1: 0, h2: 0 };
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        state.block(block);
    }
    let rest = blocks.remainder();
    let mut tail = [0u8; 16];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = suffix;
    let tail_len = rest.len() + 1;
    let total = data.len() as u64 + 1;
    if tail_len == 16 {
        state.block(&tail);
        state.finish(&[], total)
    } else {
        state.finish(&tail[..tail_len], total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixed_equals_concatenation() {
        let data: Vec<u8> = (0..70u8).collect();
        for len in 0..data.len() {
            let mut cat = data[..len].to_vec();
            cat.push(1);
            assert_eq!(
                murmur3_x64_128_suffixed(&data[..len], 1),
                murmur3_x64_128(&cat),
                "len {len}"
            );
        }
    }
}
