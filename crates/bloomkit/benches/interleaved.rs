//! Single-key operations out of cache, measured so that a noisy machine cannot tilt the
//! comparison: every round runs each contender once over the same 2,000,000 keys (in a
//! rotating order), and the report gives, per contender, the median over rounds of its time
//! divided by the other contenders' times *in the same round*.
//!
//! ```text
//! cargo bench -p bloomkit --bench interleaved            # n = 1e7, p = 1 %, 21 rounds
//! BLOOMKIT_N=100000000 BLOOMKIT_ROUNDS=41 cargo bench -p bloomkit --bench interleaved
//! ```
//!
//! Contenders: bloomkit's default `BlockedBloomFilter` (Parquet's 256-bit half-block split
//! blocks at 1 %; XXH3 of the key bytes inside `contains`/`insert`) and its 512-bit split-block
//! layout (`new_split_block`, sized for the same n and p, so 4 % smaller); fastbloom
//! and sbbf-rs-safe given `xxh3_64` of the same key bytes; the baseline of one random
//! cache-line load per key over an array the size of bloomkit's filter; and the floor of any
//! cache-blocked query: a filter of the same size whose `k = 3` bits per element share one
//! 64-bit word (hash, one load, a three-bit test, all inlined; it needs more memory than
//! bloomkit's filter to reach 1 %, so here it is a speed reference only, not a usable
//! filter). Pools: absent keys ("miss"), present keys ("hit"), and a 50/50 random mix ("mix",
//! where a branch on the answer is unpredictable); inserts re-add present keys.

use bloomkit::probe::reduce;
use bloomkit::storage::{BitVec, Block};
use bloomkit::BlockedBloomFilter;
use std::hint::black_box;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_64;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

struct Filters {
    bloomkit: BlockedBloomFilter,
    fast: fastbloom::BloomFilter,
    sbbf: sbbf_rs_safe::Filter,
    baseline: BlockedBloomFilter,
    floor: BitVec,
    split512: BlockedBloomFilter,
}

const NAMES: [&str; 6] = [
    "bloomkit",
    "fastbloom-prehashed-xxh3",
    "sbbf-rs-safe-xxh3",
    "baseline",
    "floor: 3 bits in one word",
    "bloomkit split-block-512",
];

/// The contenders that only answer queries (no insert row).
fn query_only(which: usize) -> bool {
    which == 3 || which == 4
}

/// The floor filter's word index and three-bit mask for a key hash.
#[inline(always)]
fn floor_probe(h: u64, words: u64) -> (usize, u64) {
    let mask = (1u64 << (h & 63)) | (1u64 << ((h >> 6) & 63)) | (1u64 << ((h >> 12) & 63));
    (reduce(h, words) as usize, mask)
}

#[inline(never)]
fn query(f: &Filters, which: usize, keys: &[u64]) -> usize {
    match which {
        0 => keys.iter().filter(|k| f.bloomkit.contains(*k)).count(),
        5 => keys.iter().filter(|k| f.split512.contains(*k)).count(),
        1 => keys
            .iter()
            .filter(|k| f.fast.contains_hash(xxh3_64(&k.to_le_bytes())))
            .count(),
        2 => keys
            .iter()
            .filter(|k| f.sbbf.contains_hash(xxh3_64(&k.to_le_bytes())))
            .count(),
        4 => {
            let w = f.floor.as_words();
            keys.iter()
                .filter(|k| {
                    let (i, m) = floor_probe(xxh3_64(&k.to_le_bytes()), w.len() as u64);
                    w[i] & m == m
                })
                .count()
        }
        _ => {
            let b: &[Block] = f.baseline.as_blocks();
            keys.iter()
                .map(|k| b[reduce(xxh3_64(&k.to_le_bytes()), b.len() as u64) as usize].0[0])
                .fold(0u64, u64::wrapping_add) as usize
        }
    }
}

#[inline(never)]
fn insert(f: &mut Filters, which: usize, keys: &[u64]) -> usize {
    match which {
        0 => keys.iter().filter(|k| f.bloomkit.insert(*k)).count(),
        5 => keys.iter().filter(|k| f.split512.insert(*k)).count(),
        1 => keys
            .iter()
            .filter(|k| f.fast.insert_hash(xxh3_64(&k.to_le_bytes())))
            .count(),
        2 => keys
            .iter()
            .filter(|k| f.sbbf.insert_hash(xxh3_64(&k.to_le_bytes())))
            .count(),
        _ => unreachable!("the baseline and the floor have no insert"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let n = env("BLOOMKIT_N", 10_000_000);
    let rounds = env("BLOOMKIT_ROUNDS", 21) as usize;
    let p = 0.01;
    let members: Vec<u64> = (0..n).map(splitmix).collect();
    let strangers: Vec<u64> = (n..2 * n).map(splitmix).collect();
    let mixed: Vec<u64> = (0..n as usize)
        .map(|i| {
            if splitmix(i as u64 ^ 0x5eed) & 1 == 0 {
                members[i]
            } else {
                strangers[i]
            }
        })
        .collect();
    let bloomkit = BlockedBloomFilter::new(n, p).unwrap();
    let filter_bits = bloomkit.bits();
    // sbbf-rs-safe takes bits per key: give it what bloomkit's sizing needs for p.
    let bits = (bloomkit.bits() as f64 / n as f64).ceil() as usize;
    let mut f = Filters {
        // Allocated the same way as bloomkit's (huge pages where the filter is large).
        baseline: BlockedBloomFilter::with_layout(
            bloomkit.blocks(),
            bloomkit.layout(),
            Default::default(),
        )
        .unwrap(),
        bloomkit,
        fast: fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize),
        sbbf: sbbf_rs_safe::Filter::new(bits, n as usize),
        floor: BitVec::zeros(filter_bits).unwrap(),
        split512: BlockedBloomFilter::new_split_block(n, p).unwrap(),
    };
    for k in &members {
        f.bloomkit.insert(k);
        f.split512.insert(k);
        f.fast.insert_hash(xxh3_64(&k.to_le_bytes()));
        f.sbbf.insert_hash(xxh3_64(&k.to_le_bytes()));
        let (i, m) = floor_probe(xxh3_64(&k.to_le_bytes()), f.floor.as_words().len() as u64);
        for bit in 0..64 {
            if m >> bit & 1 == 1 {
                f.floor.set(i as u64 * 64 + bit);
            }
        }
    }
    let sub = 2_000_000.min(n as usize);
    println!("n = {n}, p = {p}, {rounds} rounds of {sub} keys per contender; ns per key (median over rounds), and the median of per-round ratios");
    for (what, pool) in [
        ("miss", &strangers),
        ("hit", &members),
        ("mix", &mixed),
        ("insert", &members),
    ] {
        let mut ns: Vec<Vec<f64>> = vec![Vec::new(); NAMES.len()];
        for r in 0..rounds {
            let start = (r * sub) % (n as usize - sub + 1);
            let keys = &pool[start..start + sub];
            for j in 0..NAMES.len() {
                let which = (j + r) % NAMES.len();
                if what == "insert" && query_only(which) {
                    ns[which].push(f64::NAN);
                    continue;
                }
                let t = Instant::now();
                let mut c = 0;
                for chunk in keys.chunks(1024) {
                    c += if what == "insert" {
                        insert(&mut f, which, chunk)
                    } else {
                        query(&f, which, chunk)
                    };
                }
                black_box(c);
                ns[which].push(t.elapsed().as_nanos() as f64 / sub as f64);
            }
        }
        let ratio =
            |a: usize, b: usize| median(ns[a].iter().zip(&ns[b]).map(|(x, y)| x / y).collect());
        println!("\n{what}: | contender | ns/key | ÷ fastbloom | ÷ sbbf-rs-safe | ÷ baseline |");
        for (i, name) in NAMES.iter().enumerate() {
            if what == "insert" && query_only(i) {
                continue;
            }
            let base = if what == "insert" {
                "–".to_string()
            } else {
                format!("{:.2}", ratio(i, 3))
            };
            println!(
                "| {name} | {:.1} | {:.2} | {:.2} | {base} |",
                median(ns[i].clone()),
                ratio(i, 1),
                ratio(i, 2)
            );
        }
    }
}
