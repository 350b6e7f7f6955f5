//! bloomkit against its peers, in one criterion run so the ratios are fair.
//!
//! ```text
//! cargo bench -p bloomkit --bench filters
//! BLOOMKIT_BENCH_SIZES=100000,10000000,100000000 BLOOMKIT_BENCH_FPP=0.01,0.001 cargo bench -p bloomkit --bench filters
//! ```
//!
//! Every row times 1024 operations per iteration, with keys drawn in order from a pool of the
//! filter's members (or of as many non-members), at most [`MAX_POOL`] of them; their hashes
//! spread the accesses over the whole filter as in real use. All
//! rows hash the key inside the timed loop: bloomkit through its pipeline (key bytes → XXH3-128),
//! "prehashed" peers from `xxh3_64` of the same key bytes computed by the caller. The FPR and
//! bits-per-key of every filter are printed by `cargo run --release --example fpr_table`.
//!
//! Keys (`benches/support/keys.rs`, `BLOOMKIT_BENCH_KEYS=url,u64`): URL-like strings of 20–100
//! bytes, each its own heap `String`, then `u64`s.

#[path = "support/keys.rs"]
mod keys;

use bloomkit::concurrent::AtomicBlockedBloomFilter;
use bloomkit::probe::reduce;
use bloomkit::storage::Block;
use bloomkit::{BlockedBloomFilter, BloomFilter};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;
use xxhash_rust::xxh3::xxh3_64;

const OPS: usize = 1024;

/// The most members (and non-members) a row walks. Hashing spreads any of them over the whole
/// filter, so at n = 10⁸ a pool of 10⁷ walks the same random accesses as one of 10⁸, and keeps
/// URL keys in memory (2 × 10⁸ strings would need about 18 GB).
const MAX_POOL: u64 = 10_000_000;

fn env_list<T: std::str::FromStr>(name: &str, default: &str) -> Vec<T> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// A key type the benchmark can feed to every library.
trait BenchKey: bloomkit::Key + std::hash::Hash + Clone {
    fn bytes_hash(&self) -> u64;
    fn make(i: u64) -> Self;
    const NAME: &'static str;
}

impl BenchKey for u64 {
    fn bytes_hash(&self) -> u64 {
        xxh3_64(&self.to_le_bytes())
    }
    fn make(i: u64) -> Self {
        keys::splitmix(i)
    }
    const NAME: &'static str = "u64";
}

impl BenchKey for String {
    fn bytes_hash(&self) -> u64 {
        xxh3_64(self.as_bytes())
    }
    fn make(i: u64) -> Self {
        keys::url_key(i)
    }
    const NAME: &'static str = "url";
}

/// The memory limit: one random cache-line load per key over an array the size of the
/// blocked filter, allocated the same way (an empty blocked filter's blocks).
struct RandomLoad(BlockedBloomFilter);

impl RandomLoad {
    fn probe(&self, h: u64) -> u64 {
        let blocks: &[Block] = self.0.as_blocks();
        blocks[reduce(h, blocks.len() as u64) as usize].0[0]
    }
}

/// Runs `op` over `OPS` keys per iteration, walking the pool.
fn bench_over<K>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: BenchmarkId,
    pool: &[K],
    mut op: impl FnMut(&[K]) -> usize,
) {
    let mut at = 0usize;
    c.bench_function(id, |b| {
        b.iter(|| {
            if at + OPS > pool.len() {
                at = 0;
            }
            let r = op(&pool[at..at + OPS]);
            at += OPS;
            black_box(r)
        })
    });
}

fn run<K: BenchKey>(c: &mut Criterion, n: u64, p: f64) {
    let pool = n.min(MAX_POOL);
    let members: Vec<K> = (0..pool).map(K::make).collect();
    let strangers: Vec<K> = (n..n + pool).map(K::make).collect();

    let mut classic = BloomFilter::new(n, p).unwrap();
    let mut blocked = BlockedBloomFilter::new(n, p).unwrap();
    let atomic = AtomicBlockedBloomFilter::new(n, p).unwrap();
    let mut fast = fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize);
    let mut fast_pre = fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize);
    let mut bf = bloomfilter::Bloom::new_for_fp_rate(n as usize, p).unwrap();
    // sbbf-rs-safe takes bits per key: give it what bloomkit's split-block sizing needs for p.
    let sbbf_bits = (BlockedBloomFilter::new_split_block(n, p).unwrap().bits() as f64 / n as f64)
        .ceil() as usize;
    let mut sbbf = sbbf_rs_safe::Filter::new(sbbf_bits, n as usize);
    let mut split = BlockedBloomFilter::new_split_block(n, p).unwrap();
    let baseline = RandomLoad(
        BlockedBloomFilter::with_layout(blocked.blocks(), blocked.layout(), Default::default())
            .unwrap(),
    );
    keys::each_key(n, &members, K::make, |k| {
        classic.insert(k);
        blocked.insert(k);
        split.insert(k);
        atomic.insert(k);
        fast.insert(k);
        fast_pre.insert_hash(k.bytes_hash());
        bf.set(k);
        sbbf.insert_hash(k.bytes_hash());
    });

    let label = format!("{}/n={n}/p={p}", K::NAME);
    for (what, pool) in [("miss", &strangers), ("hit", &members)] {
        let mut g = c.benchmark_group(format!("query-{what}/{label}"));
        g.throughput(Throughput::Elements(OPS as u64));
        let id = |name: &str| BenchmarkId::from_parameter(name);
        bench_over(&mut g, id("bloomkit-classic"), pool, |ks| {
            ks.iter().filter(|k| classic.contains(*k)).count()
        });
        bench_over(&mut g, id("bloomkit-classic-batch"), pool, |ks| {
            classic
                .contains_batch(ks)
                .into_iter()
                .filter(|&b| b)
                .count()
        });
        bench_over(&mut g, id("bloomkit-blocked"), pool, |ks| {
            ks.iter().filter(|k| blocked.contains(*k)).count()
        });
        bench_over(&mut g, id("bloomkit-blocked-batch"), pool, |ks| {
            blocked
                .contains_batch(ks)
                .into_iter()
                .filter(|&b| b)
                .count()
        });
        bench_over(&mut g, id("bloomkit-split-block"), pool, |ks| {
            ks.iter().filter(|k| split.contains(*k)).count()
        });
        bench_over(&mut g, id("bloomkit-split-block-batch"), pool, |ks| {
            split.contains_batch(ks).into_iter().filter(|&b| b).count()
        });
        bench_over(&mut g, id("bloomkit-concurrent-blocked"), pool, |ks| {
            ks.iter().filter(|k| atomic.contains(*k)).count()
        });
        bench_over(
            &mut g,
            id("bloomkit-concurrent-blocked-batch"),
            pool,
            |ks| atomic.contains_batch(ks).into_iter().filter(|&b| b).count(),
        );
        bench_over(&mut g, id("fastbloom"), pool, |ks| {
            ks.iter().filter(|k| fast.contains(*k)).count()
        });
        bench_over(&mut g, id("fastbloom-prehashed-xxh3"), pool, |ks| {
            ks.iter()
                .filter(|k| fast_pre.contains_hash(k.bytes_hash()))
                .count()
        });
        bench_over(&mut g, id("bloomfilter"), pool, |ks| {
            ks.iter().filter(|k| bf.check(*k)).count()
        });
        bench_over(&mut g, id("sbbf-rs-safe-xxh3"), pool, |ks| {
            ks.iter()
                .filter(|k| sbbf.contains_hash(k.bytes_hash()))
                .count()
        });
        bench_over(&mut g, id("baseline-random-line-load"), pool, |ks| {
            ks.iter()
                .map(|k| baseline.probe(k.bytes_hash()))
                .fold(0u64, u64::wrapping_add) as usize
        });
        g.finish();
    }

    // Inserts: re-inserting members walks the same random accesses as building.
    let mut g = c.benchmark_group(format!("insert/{label}"));
    g.throughput(Throughput::Elements(OPS as u64));
    let id = |name: &str| BenchmarkId::from_parameter(name);
    bench_over(&mut g, id("bloomkit-classic"), &members, |ks| {
        ks.iter().filter(|k| classic.insert(*k)).count()
    });
    bench_over(&mut g, id("bloomkit-classic-batch"), &members, |ks| {
        classic.insert_batch(ks);
        0
    });
    bench_over(&mut g, id("bloomkit-blocked"), &members, |ks| {
        ks.iter().filter(|k| blocked.insert(*k)).count()
    });
    bench_over(&mut g, id("bloomkit-blocked-batch"), &members, |ks| {
        blocked.insert_batch(ks);
        0
    });
    bench_over(&mut g, id("bloomkit-split-block"), &members, |ks| {
        ks.iter().filter(|k| split.insert(*k)).count()
    });
    bench_over(&mut g, id("bloomkit-split-block-batch"), &members, |ks| {
        split.insert_batch(ks);
        0
    });
    bench_over(&mut g, id("bloomkit-concurrent-blocked"), &members, |ks| {
        ks.iter().filter(|k| atomic.insert(*k)).count()
    });
    bench_over(
        &mut g,
        id("bloomkit-concurrent-blocked-batch"),
        &members,
        |ks| {
            atomic.insert_batch(ks);
            0
        },
    );
    bench_over(&mut g, id("fastbloom"), &members, |ks| {
        ks.iter().filter(|k| fast.insert(*k)).count()
    });
    bench_over(&mut g, id("fastbloom-prehashed-xxh3"), &members, |ks| {
        ks.iter()
            .filter(|k| fast_pre.insert_hash(k.bytes_hash()))
            .count()
    });
    bench_over(&mut g, id("bloomfilter"), &members, |ks| {
        ks.iter().for_each(|k| bf.set(k));
        0
    });
    bench_over(&mut g, id("sbbf-rs-safe-xxh3"), &members, |ks| {
        ks.iter()
            .filter(|k| sbbf.insert_hash(k.bytes_hash()))
            .count()
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let sizes: Vec<u64> = env_list("BLOOMKIT_BENCH_SIZES", "100000,10000000");
    let fpps: Vec<f64> = env_list("BLOOMKIT_BENCH_FPP", "0.01");
    let keys: Vec<String> = env_list("BLOOMKIT_BENCH_KEYS", "url,u64");
    for &n in &sizes {
        for &p in &fpps {
            if keys.iter().any(|k| k == "url") {
                run::<String>(c, n, p);
            }
            if keys.iter().any(|k| k == "u64") {
                run::<u64>(c, n, p);
            }
        }
    }
}

criterion_group! {
    name = filters;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(filters);
