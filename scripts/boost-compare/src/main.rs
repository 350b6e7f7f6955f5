// bloomkit against Boost.Bloom in ONE process (scripts/boost-compare/run): the same URL-like
// keys, the same number of bits, rounds that alternate the contenders in a rotating order, and
// the median of per-round ratios. The Boost.Bloom side is driver.cpp, linked in.
#[path = "../../../crates/bloomkit/benches/support/keys.rs"]
mod keys;

use bloomkit::probe::reduce;
use bloomkit::storage::Block;
use bloomkit::{BlockedBloomFilter, Hashing};
use std::hint::black_box;
use std::time::Instant;

extern "C" {
    fn bb_setup(n: u64, bits: u64, fpr: *mut f64) -> u64;
    fn bb_run(which: i32, what: i32, start: u64, count: u64) -> f64;
}

const NAMES: [&str; 8] = [
    "bloomkit blocked, batch (4096 a call)",
    "bloomkit blocked, single",
    "Boost fast_multiblock32<8>, bulk (boost::hash)",
    "Boost fast_multiblock32<8>, single (boost::hash)",
    "Boost fast_multiblock32<8>, bulk (XXH3)",
    "Boost fast_multiblock32<8>, single (XXH3)",
    "random cache-line load",
    "XXH3 of each key alone (no filter)",
];
/// The baselines: a random cache-line load per key (the memory limit; no insert), and the
/// XXH3-64 of each key with nothing else (the floor of every contender that hashes with XXH3:
/// it reads every key's bytes, as they do).
const LINE: usize = 6;
const HASH: usize = 7;
const BATCH: usize = 4096;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let n = env("N", 10_000_000);
    let rounds = env("ROUNDS", 11) as usize;
    let p = 0.01;
    let pool = n.min(10_000_000);
    let sub = n.min(2_000_000) as usize;
    let members: Vec<String> = (0..pool).map(keys::url_key).collect();
    let strangers: Vec<String> = (n..n + pool).map(keys::url_key).collect();
    let mut filter = BlockedBloomFilter::new(n, p).unwrap();
    let mut scratch = BlockedBloomFilter::new(n, p).unwrap();
    let lines = BlockedBloomFilter::new(n, p).unwrap();
    let lines: &[Block] = lines.as_blocks();
    for i in 0..n {
        match members.get(i as usize) {
            Some(k) => filter.insert(k),
            None => filter.insert(&keys::url_key(i)),
        };
    }
    let mut boost_fpr = 0.0;
    // SAFETY: plain C ABI call into driver.cpp; the pointer is to a live f64.
    let boost_sum = unsafe { bb_setup(n, filter.bits(), &mut boost_fpr) };
    let sum = keys::checksum(members.iter().take(1000).map(|k| k.as_bytes()));
    assert_eq!(sum, boost_sum, "bloomkit's and the driver's keys differ");
    let fp = strangers.iter().filter(|k| filter.contains(*k)).count();
    println!(
        "n = {n}, p = {p}, {} bits ({:.2} per key), layout {}; measured FPR: bloomkit {:.5}, Boost (XXH3) {boost_fpr:.5}; {rounds} rounds of {sub} keys; key checksum {sum:016x}",
        filter.bits(),
        filter.bits() as f64 / n as f64,
        filter.layout(),
        fp as f64 / strangers.len() as f64
    );
    let mut out = vec![false; BATCH];
    for (what, code) in [("miss", 0), ("hit", 1), ("insert", 2)] {
        let keys = if code == 0 { &strangers } else { &members };
        let mut ns = vec![Vec::new(); NAMES.len()];
        for r in 0..rounds {
            let start = if code == 2 {
                0
            } else {
                (r * sub) % (keys.len() - sub + 1)
            };
            let ks = &keys[start..start + sub];
            for j in 0..NAMES.len() {
                let which = (j + r) % NAMES.len();
                if code == 2 && which == LINE {
                    ns[which].push(f64::NAN);
                    continue;
                }
                if (2..6).contains(&which) {
                    // SAFETY: plain C ABI call; driver.cpp checks nothing, the arguments are
                    // in range of its key vectors (made for the same n).
                    ns[which]
                        .push(unsafe { bb_run(which as i32 - 2, code, start as u64, sub as u64) });
                    continue;
                }
                if code == 2 {
                    scratch.clear();
                }
                let t = Instant::now();
                let c: usize = match (which, code) {
                    (0, 2) => {
                        ks.chunks(BATCH).for_each(|c| scratch.insert_batch(c));
                        0
                    }
                    (1, 2) => ks.iter().filter(|k| scratch.insert(*k)).count(),
                    (0, _) => ks
                        .chunks(BATCH)
                        .map(|c| {
                            let out = &mut out[..c.len()];
                            filter.contains_batch_into(c, out);
                            out.iter().filter(|&&b| b).count()
                        })
                        .sum(),
                    (1, _) => ks.iter().filter(|k| filter.contains(*k)).count(),
                    (HASH, _) => ks
                        .iter()
                        .map(|k| Hashing::Xxh3.hash64(k.as_bytes()))
                        .fold(0u64, u64::wrapping_add) as usize,
                    _ => (0..sub as u64)
                        .map(|i| {
                            lines[reduce(keys::splitmix(i ^ (r as u64) << 32), lines.len() as u64)
                                as usize]
                                .0[0]
                        })
                        .fold(0u64, u64::wrapping_add) as usize,
                };
                black_box(c);
                ns[which].push(t.elapsed().as_nanos() as f64 / sub as f64);
            }
        }
        let ratio =
            |a: usize, b: usize| median(ns[a].iter().zip(&ns[b]).map(|(x, y)| x / y).collect());
        println!("\n{what}: | contender | ns/key | ÷ Boost bulk (XXH3) | ÷ Boost bulk (boost::hash) | ÷ Boost single (XXH3) | ÷ line load | ÷ XXH3 alone |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for (i, name) in NAMES.iter().enumerate() {
            if code == 2 && i == LINE {
                continue;
            }
            let line = if code == 2 {
                "–".into()
            } else {
                format!("{:.2}", ratio(i, LINE))
            };
            println!(
                "| {name} | {:.1} | {:.2} | {:.2} | {:.2} | {line} | {:.2} |",
                median(ns[i].clone()),
                ratio(i, 4),
                ratio(i, 2),
                ratio(i, 5),
                ratio(i, HASH)
            );
        }
    }
}
