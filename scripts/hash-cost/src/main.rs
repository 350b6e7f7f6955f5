// Key-hash cost alone (scripts/hash-cost/run): ns per hash of candidate 64-bit hashes over
// bloomkit's benchmark keys, each hash timed over the same keys in rotating order, 101
// rounds, medians (and the median per-round ratio to XXH3-64).
#[path = "../../../crates/bloomkit/benches/support/keys.rs"]
mod keys;
use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::Instant;

type H = fn(&[u8]) -> u64;
fn xxh3(b: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(b)
}
fn rapid(b: &[u8]) -> u64 {
    rapidhash::v3::rapidhash_v3(b)
}
static WY: std::sync::OnceLock<[u64; 4]> = std::sync::OnceLock::new();
fn wy(b: &[u8]) -> u64 {
    wyhash::final3::wyhash(b, 0, *WY.get_or_init(|| wyhash::final3::make_secret(0)))
}
fn fold(b: &[u8]) -> u64 {
    foldhash::quality::FixedState::with_seed(0).hash_one(b)
}
fn foldfast(b: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0).hash_one(b)
}

#[inline(never)]
fn run(h: H, keys: &[Vec<u8>]) -> u64 {
    keys.iter().map(|k| h(k)).fold(0, u64::wrapping_add)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let fs: [(&str, H); 5] = [
        ("xxh3_64", xxh3),
        ("rapidhash v3", rapid),
        ("wyhash final3", wy),
        ("foldhash quality", fold),
        ("foldhash fast", foldfast),
    ];
    let sets: Vec<(&str, Vec<Vec<u8>>)> = vec![
        (
            "url 20-100 B",
            (0..20000u64)
                .map(|i| keys::url_key(i).into_bytes())
                .collect(),
        ),
        (
            "8 B (u64)",
            (0..20000u64)
                .map(|i| keys::splitmix(i).to_le_bytes().to_vec())
                .collect(),
        ),
        (
            "16 B",
            (0..20000u64)
                .map(|i| [keys::splitmix(i).to_le_bytes(), i.to_le_bytes()].concat())
                .collect(),
        ),
        (
            "32 B",
            (0..20000u64)
                .map(|i| {
                    keys::url_key(i).into_bytes()[..20]
                        .iter()
                        .chain(b"abcdefghijkl")
                        .copied()
                        .collect()
                })
                .collect(),
        ),
    ];
    for (name, keys) in &sets {
        let mut ns = vec![Vec::new(); fs.len()];
        for r in 0..101 {
            for j in 0..fs.len() {
                let w = (j + r) % fs.len();
                let t = Instant::now();
                black_box(run(fs[w].1, keys));
                ns[w].push(t.elapsed().as_nanos() as f64 / keys.len() as f64);
            }
        }
        print!("{name}:");
        for (i, (n, _)) in fs.iter().enumerate() {
            let ratio = median(ns[i].iter().zip(&ns[0]).map(|(a, b)| a / b).collect());
            print!(
                " | {n} {:.2} ns ({:.2}x xxh3)",
                median(ns[i].clone()),
                ratio
            );
        }
        println!();
    }
}
