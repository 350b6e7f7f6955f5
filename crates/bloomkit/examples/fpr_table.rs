//! Measured false-positive rate and bits per key of bloomkit's filters and its peers, at the
//! same (n, p), as a markdown table (the accuracy half of docs/BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p bloomkit --example fpr_table [N,N,...] [P,P,...]
//! ```

use bloomkit::concurrent::AtomicBlockedBloomFilter;
use bloomkit::{BlockedBloomFilter, BloomFilter};
use xxhash_rust::xxh3::xxh3_64;

#[path = "support/args.rs"]
mod args;

/// A filter's membership test.
type Contains<'a> = &'a dyn Fn(&u64) -> bool;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let sizes: Vec<u64> = args::list(args.next(), "100000,10000000", "N");
    let fpps: Vec<f64> = args::list(args.next(), "0.01,0.001", "P");
    println!("| n | target p | filter | bits/key | k | measured FPR | FPR / target |");
    println!("|---:|---:|---|---:|---:|---:|---:|");
    for &n in &sizes {
        for &p in &fpps {
            let members: Vec<u64> = (0..n).map(splitmix).collect();
            let queries = (2000.0 / p) as u64;
            let strangers: Vec<u64> = (n..n + queries).map(splitmix).collect();
            let mut rows: Vec<(String, f64, u32, u64)> = Vec::new();
            let mut measure = |name: &str, bits: f64, k: u32, contains: Contains| {
                assert!(members.iter().all(contains), "{name}: false negative");
                let fp = strangers.iter().filter(|s| contains(s)).count() as u64;
                rows.push((name.to_string(), bits / n as f64, k, fp));
            };

            let mut classic = BloomFilter::new(n, p).unwrap();
            let mut blocked = BlockedBloomFilter::new(n, p).unwrap();
            let mut split = BlockedBloomFilter::new_split_block(n, p).unwrap();
            let mut compact = BlockedBloomFilter::new_compact(n, p).unwrap();
            let atomic = AtomicBlockedBloomFilter::new(n, p).unwrap();
            let mut fast = fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize);
            let mut bf = bloomfilter::Bloom::new_for_fp_rate(n as usize, p).unwrap();
            let sbbf_bits = (split.bits() as f64 / n as f64).ceil() as usize;
            let mut sbbf = sbbf_rs_safe::Filter::new(sbbf_bits, n as usize);
            for k in &members {
                classic.insert(k);
                blocked.insert(k);
                split.insert(k);
                compact.insert(k);
                atomic.insert(k);
                fast.insert_hash(xxh3_64(&k.to_le_bytes()));
                bf.set(k);
                sbbf.insert_hash(xxh3_64(&k.to_le_bytes()));
            }
            let sbbf_name = format!("sbbf-rs-safe ({sbbf_bits} bits/key)");
            let blocked_k = blocked.layout().hashes();
            let filters: [(&str, u64, u32, Contains); 8] = [
                ("bloomkit classic", classic.bits(), classic.hashes(), &|k| {
                    classic.contains(k)
                }),
                (
                    "bloomkit blocked (default layout)",
                    blocked.bits(),
                    blocked_k,
                    &|k| blocked.contains(k),
                ),
                ("bloomkit split-block", split.bits(), 8, &|k| {
                    split.contains(k)
                }),
                (
                    "bloomkit blocked compact",
                    compact.bits(),
                    compact.layout().hashes(),
                    &|k| compact.contains(k),
                ),
                (
                    "bloomkit concurrent blocked",
                    atomic.memory_bytes() as u64 * 8,
                    blocked_k,
                    &|k| atomic.contains(k),
                ),
                (
                    "fastbloom (xxh3 prehashed)",
                    fast.num_bits() as u64,
                    fast.num_hashes(),
                    &|k| fast.contains_hash(xxh3_64(&k.to_le_bytes())),
                ),
                (
                    "bloomfilter",
                    bf.len(),
                    bf.number_of_hash_functions(),
                    &|k| bf.check(k),
                ),
                (&sbbf_name, sbbf.as_bytes().len() as u64 * 8, 8, &|k| {
                    sbbf.contains_hash(xxh3_64(&k.to_le_bytes()))
                }),
            ];
            for (name, bits, k, contains) in filters {
                measure(name, bits as f64, k, contains);
            }
            for (name, bpk, k, fp) in rows {
                let rate = fp as f64 / queries as f64;
                println!(
                    "| {n} | {p} | {name} | {bpk:.2} | {k} | {rate:.5} | {:.2} |",
                    rate / p
                );
            }
        }
    }
}
