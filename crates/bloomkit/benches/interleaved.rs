//! Single-key and batch operations, measured so that a noisy machine cannot tilt the
//! comparison: every round runs each contender once over the same keys (in a rotating order),
//! and the report gives, per contender, the median over rounds of its time divided by the
//! other contenders' times *in the same round*.
//!
//! ```text
//! cargo bench -p bloomkit --bench interleaved                 # URL and u64 keys, n = 1e7, p = 1 %
//! BLOOMKIT_N=100000000 BLOOMKIT_KEYS=url BLOOMKIT_ROUNDS=11 cargo bench -p bloomkit --bench interleaved
//! ```
//!
//! Keys (`benches/support/keys.rs`): URL-like strings of 20–100 bytes, each its own heap
//! `String` as users hold them, and `u64`s. Each round walks `min(n, 2,000,000)` keys.
//!
//! Contenders: bloomkit's default `BlockedBloomFilter` (Parquet's 256-bit half-block split
//! blocks at 1 %) one key at a time and in batches of 4096 (`contains_batch_into`,
//! `insert_batch`); the same for `AtomicBlockedBloomFilter`; bloomkit's classic
//! `BloomFilter`, with its default scheme and with `enhanced-double-64` (one XXH3-64 per key,
//! as fastbloom hashes), and with its default scheme in batches of 4096; fastbloom and sbbf-rs-safe given `xxh3_64` of the same key bytes (sbbf-rs-safe
//! gets bloomkit's bits per key); and two baselines over an array the size of bloomkit's
//! filter: one random cache-line load per key at a random index (no hashing: the memory
//! limit), and the key's XXH3 plus that load. Pools: absent keys ("miss"), present keys
//! ("hit"); "insert" builds: it adds the pool's first keys to an emptied filter of the same
//! size, so every insert sets new bits; "re-add" adds present keys again (no bit changes).
//! Each table ends with the atomic blocked filter's time over the plain one's (per-round ratio
//! medians), single keys and batches. Two more baselines run in "insert" only, over an array
//! of 64-bit atomic words the size of the filter: per key, a relaxed `fetch_or` (x86 `lock or`)
//! of one bit into each of the four words of a random half-line, prefetched as the batches
//! prefetch: what the atomic filter's insert of a new key must do at most (the default
//! layout's bits fall in four 64-bit words, and x86 has no wider atomic OR), without hashing;
//! and the same with one `fetch_or` per key, the least any lock-free insert of a new key does.
//! The insert table ends with the plain batch's time plus that one `fetch_or`, over the plain
//! batch's time: the lowest ratio an atomic batch insert of new keys could reach. A last
//! baseline, also in "insert" only, sets `k` bits per key (the classic filter's `k`, 7 at 1 %)
//! at positions drawn as the classic filter's default scheme draws them, in a plain array of
//! the classic filter's size, with plain ORs and no hashing: the memory work any classic
//! insert of a new key does, whoever computes its positions; the table then gives the classic
//! batch's time over it.

#[path = "support/keys.rs"]
mod keys;

use bloomkit::probe::reduce;
use bloomkit::probe::{Digest, Scheme};
use bloomkit::storage::Block;
use bloomkit::{AtomicBlockedBloomFilter, BlockedBloomFilter, BloomFilter, Spec};
use keys::{splitmix, url_key};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_64;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A key type every contender takes.
trait BenchKey: bloomkit::Key + Sized {
    const NAME: &'static str;
    fn make(i: u64) -> Self;
    /// XXH3-64 of the key's bytes (the hash the prehashed contenders are given).
    #[inline(always)]
    fn xxh(&self) -> u64 {
        self.with_bytes(xxh3_64)
    }
}

impl BenchKey for u64 {
    const NAME: &'static str = "u64";
    fn make(i: u64) -> Self {
        splitmix(i)
    }
}

impl BenchKey for String {
    const NAME: &'static str = "url";
    fn make(i: u64) -> Self {
        url_key(i)
    }
}

/// Keys per call of the batch contenders.
const BATCH: usize = 4096;

struct Filters {
    blocked: BlockedBloomFilter,
    atomic: AtomicBlockedBloomFilter,
    classic: BloomFilter,
    /// The classic filter with the one-64-bit-hash scheme (`enhanced-double-64`).
    classic64: BloomFilter,
    fast: fastbloom::BloomFilter,
    sbbf: sbbf_rs_safe::Filter,
    /// An empty filter of bloomkit's size, allocated as its filters are (huge pages where
    /// large): the baselines' array.
    lines: BlockedBloomFilter,
    /// The insert baselines' words (as many as the filter's).
    words: Vec<AtomicU64>,
    /// The classic baseline's bits (as many as the classic filter's).
    bits: Vec<u64>,
}

const NAMES: [&str; 14] = [
    "bloomkit blocked",
    "bloomkit blocked, batch",
    "bloomkit atomic blocked",
    "bloomkit atomic blocked, batch",
    "bloomkit classic",
    "fastbloom (xxh3)",
    "sbbf-rs-safe (xxh3)",
    "random line load",
    "xxh3 + random line load",
    "bloomkit classic, enhanced-double-64",
    "bloomkit classic, batch",
    "random half-line, 4 fetch_or",
    "random half-line, 1 fetch_or",
    "random bits, k plain ORs",
];
const BASELINES: [usize; 2] = [7, 8];
/// The insert baselines (measured in "insert" only): four `fetch_or`s per key, and one.
const OR_BASELINE: usize = 11;
const OR_ONE: usize = 12;
/// The classic insert baseline (measured in "insert" only): `k` plain ORs per key.
const CLASSIC_ORS: usize = 13;

/// Per key, sets `k` bits of `words` (a bit array of `m` bits) with plain ORs, at the
/// positions the classic filter's default scheme gives a digest (here two SplitMix64 outputs
/// of the key's number instead of its hash), nothing prefetched: the out-of-order core
/// overlaps the misses of consecutive keys (prefetching measured no faster here).
#[inline(never)]
fn classic_ors(words: &mut [u64], m: u64, k: u32, keys: usize) -> usize {
    for i in 0..keys as u64 {
        let (h1, h2) = (splitmix(i), splitmix(!i));
        let d = Digest {
            h1,
            h2,
            ..Digest::default()
        };
        Scheme::MixedDouble.for_each_position(&d, k, m, |p| {
            words[(p >> 6) as usize] |= 1 << (p & 63);
            true
        });
    }
    0
}

/// Per key, ORs one bit into each of the first `ops` of the four words of a random 32-byte
/// half-line of `words` with a relaxed `fetch_or`, the line prefetched `AHEAD` keys before.
/// With `ops` = 1 it is the least a lock-free insert of a new key can do: one atomic
/// read-modify-write of one word (x86 `lock or`).
#[inline(never)]
fn or_baseline(words: &[AtomicU64], keys: usize, ops: usize) -> usize {
    const AHEAD: u64 = 64;
    let halves = words.len() as u64 / 4;
    let half = |i: u64| 4 * reduce(splitmix(i), halves) as usize;
    for i in 0..keys as u64 {
        let ahead = &words[half(i + AHEAD)];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint: it never faults, whatever the address (this one is a
        // word of `words`); SSE is part of the x86_64 baseline.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>((ahead as *const AtomicU64).cast())
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ahead;
        let h = splitmix(!i);
        let w = &words[half(i)..][..ops];
        for (j, w) in w.iter().enumerate() {
            w.fetch_or(1u64 << ((h >> (6 * j)) & 63), Ordering::Relaxed);
        }
    }
    0
}

/// Answers `keys` with `batch` in calls of [`BATCH`] keys; the number of positive answers.
///
/// This and the other loops below are generic over the contender's closure and never inlined:
/// each contender runs in a function of its own, so no contender's code generation (register
/// allocation, loop placement, inlining budget) depends on the others' beside it.
#[inline(never)]
fn in_batches<K>(keys: &[K], out: &mut [bool], batch: impl Fn(&[K], &mut [bool])) -> usize {
    keys.chunks(BATCH)
        .map(|c| {
            let out = &mut out[..c.len()];
            batch(c, out);
            out.iter().filter(|&&b| b).count()
        })
        .sum()
}

/// Asks `contains` about every key, one at a time; the number of positive answers.
#[inline(never)]
fn hits<K>(keys: &[K], contains: impl Fn(&K) -> bool) -> usize {
    keys.iter().filter(|k| contains(k)).count()
}

/// Adds every key with `insert`, one at a time; the number it reported new.
#[inline(never)]
fn adds<K>(keys: &[K], mut insert: impl FnMut(&K) -> bool) -> usize {
    keys.iter().filter(|k| insert(k)).count()
}

/// The baseline of one random cache-line load per key (no hashing).
#[inline(never)]
fn line_loads(lines: &[Block], keys: usize, salt: u64) -> usize {
    let n = lines.len() as u64;
    (0..keys as u64)
        .map(|i| lines[reduce(splitmix(i ^ salt << 32), n) as usize].0[0])
        .fold(0u64, u64::wrapping_add) as usize
}

/// The baseline of the key's XXH3 and one cache-line load at the index it gives.
#[inline(never)]
fn hashed_line_loads<K: BenchKey>(lines: &[Block], keys: &[K]) -> usize {
    let n = lines.len() as u64;
    keys.iter()
        .map(|k| lines[reduce(k.xxh(), n) as usize].0[0])
        .fold(0u64, u64::wrapping_add) as usize
}

fn query<K: BenchKey>(f: &Filters, which: usize, keys: &[K], salt: u64, out: &mut [bool]) -> usize {
    match which {
        0 => hits(keys, |k| f.blocked.contains(k)),
        1 => in_batches(keys, out, |c, o| f.blocked.contains_batch_into(c, o)),
        2 => hits(keys, |k| f.atomic.contains(k)),
        3 => in_batches(keys, out, |c, o| f.atomic.contains_batch_into(c, o)),
        4 => hits(keys, |k| f.classic.contains(k)),
        5 => hits(keys, |k| f.fast.contains_hash(k.xxh())),
        6 => hits(keys, |k| f.sbbf.contains_hash(k.xxh())),
        9 => hits(keys, |k| f.classic64.contains(k)),
        10 => in_batches(keys, out, |c, o| f.classic.contains_batch_into(c, o)),
        7 => line_loads(f.lines.as_blocks(), keys.len(), salt),
        _ => hashed_line_loads(f.lines.as_blocks(), keys),
    }
}

/// Adds `keys` to contender `which`'s filter (emptied by the caller).
fn insert<K: BenchKey>(f: &mut Filters, which: usize, keys: &[K]) -> usize {
    let batches = |keys: &[K], add: &mut dyn FnMut(&[K])| keys.chunks(BATCH).for_each(add);
    match which {
        0 => adds(keys, |k| f.blocked.insert(k)),
        1 => {
            batches(keys, &mut |c| f.blocked.insert_batch(c));
            0
        }
        2 => adds(keys, |k| f.atomic.insert(k)),
        3 => {
            batches(keys, &mut |c| f.atomic.insert_batch(c));
            0
        }
        4 => adds(keys, |k| f.classic.insert(k)),
        5 => adds(keys, |k| f.fast.insert_hash(k.xxh())),
        6 => adds(keys, |k| f.sbbf.insert_hash(k.xxh())),
        9 => adds(keys, |k| f.classic64.insert(k)),
        10 => {
            batches(keys, &mut |c| f.classic.insert_batch(c));
            0
        }
        OR_BASELINE => or_baseline(&f.words, keys.len(), 4),
        OR_ONE => or_baseline(&f.words, keys.len(), 1),
        CLASSIC_ORS => {
            let (m, k) = (f.classic.bits(), f.classic.hashes());
            classic_ors(&mut f.bits, m, k, keys.len())
        }
        _ => unreachable!("the load baselines have no insert"),
    }
}

fn clear(f: &mut Filters, which: usize) {
    match which {
        0 | 1 => f.blocked.clear(),
        2 | 3 => f.atomic.clear(),
        4 | 10 => f.classic.clear(),
        5 => f.fast.clear(),
        9 => f.classic64.clear(),
        OR_BASELINE | OR_ONE => f.words.iter().for_each(|w| w.store(0, Ordering::Relaxed)),
        CLASSIC_ORS => f.bits.fill(0),
        _ => f.sbbf.reset(),
    }
}

/// Whether contender `which` sits out operation `what`: the load baselines do not insert, the
/// OR baselines only insert.
fn skipped(what: &str, which: usize) -> bool {
    let adds = what == "insert" || what == "re-add";
    let or_baseline = [OR_BASELINE, OR_ONE, CLASSIC_ORS].contains(&which);
    (adds && BASELINES.contains(&which)) || (what != "insert" && or_baseline)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn filters(n: u64, p: f64) -> Filters {
    let blocked = BlockedBloomFilter::new(n, p).unwrap();
    // sbbf-rs-safe takes bits per key: give it what bloomkit's sizing needs for p.
    let bits = (blocked.bits() as f64 / n as f64).ceil() as usize;
    let words = (0..blocked.bits() / 64)
        .map(|_| AtomicU64::new(0))
        .collect();
    let classic = BloomFilter::new(n, p).unwrap();
    Filters {
        bits: vec![0; classic.bits().div_ceil(64) as usize],
        lines: BlockedBloomFilter::with_layout(
            blocked.blocks(),
            blocked.layout(),
            Default::default(),
        )
        .unwrap(),
        atomic: AtomicBlockedBloomFilter::new(n, p).unwrap(),
        blocked,
        classic,
        classic64: BloomFilter::from_spec(
            Spec::for_capacity(n, p)
                .unwrap()
                .with_scheme(Scheme::EnhancedDouble64),
        )
        .unwrap(),
        fast: fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize),
        sbbf: sbbf_rs_safe::Filter::new(bits, n as usize),
        words,
    }
}

fn run<K: BenchKey>(n: u64, rounds: usize) {
    let p = 0.01;
    let sub = 2_000_000.min(n) as usize;
    // At most 10^7 members are kept (hashing spreads any of them over the whole filter).
    let pool = n.min(10_000_000);
    let members: Vec<K> = (0..pool).map(K::make).collect();
    let strangers: Vec<K> = (n..n + pool).map(K::make).collect();
    let mut qf = filters(n, p);
    let mut bf = filters(n, p);
    keys::each_key(n, &members, K::make, |k| {
        qf.blocked.insert(k);
        qf.atomic.insert(k);
        qf.classic.insert(k);
        qf.classic64.insert(k);
        qf.fast.insert_hash(k.xxh());
        qf.sbbf.insert_hash(k.xxh());
    });
    let mut out = vec![false; BATCH];
    println!(
        "\n## {} keys, n = {n}, p = {p}, {rounds} rounds of {sub} keys per contender",
        K::NAME
    );
    let first: Vec<Vec<u8>> = members
        .iter()
        .take(1000)
        .map(|k| k.to_key_bytes())
        .collect();
    println!(
        "blocked filter: {} bits; checksum of the first {} keys: {:016x}",
        qf.blocked.bits(),
        first.len(),
        keys::checksum(first.iter().map(|k| &k[..]))
    );
    println!("ns per key (median over rounds), and medians of per-round ratios");
    for what in ["miss", "hit", "insert", "re-add"] {
        let pool = if what == "miss" { &strangers } else { &members };
        let adds = what == "insert" || what == "re-add";
        let mut ns: Vec<Vec<f64>> = vec![Vec::new(); NAMES.len()];
        for r in 0..rounds {
            let start = (r * sub) % (pool.len() - sub + 1);
            let keys = &pool[start..start + sub];
            for j in 0..NAMES.len() {
                let which = (j + r) % NAMES.len();
                if skipped(what, which) {
                    ns[which].push(f64::NAN);
                    continue;
                }
                if what == "insert" {
                    clear(&mut bf, which);
                }
                let t = Instant::now();
                let c = if what == "insert" {
                    insert(&mut bf, which, &pool[..sub])
                } else if what == "re-add" {
                    // The query filters hold every member: nothing changes.
                    insert(&mut qf, which, keys)
                } else {
                    query(&qf, which, keys, r as u64, &mut out)
                };
                black_box(c);
                ns[which].push(t.elapsed().as_nanos() as f64 / sub as f64);
            }
        }
        let ratio =
            |a: usize, b: usize| median(ns[a].iter().zip(&ns[b]).map(|(x, y)| x / y).collect());
        println!(
            "\n{what}: | contender | ns/key | ÷ blocked | ÷ fastbloom | ÷ sbbf-rs-safe | ÷ line load |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for (i, name) in NAMES.iter().enumerate() {
            if skipped(what, i) {
                continue;
            }
            let base = if adds {
                "–".to_string()
            } else {
                format!("{:.2}", ratio(i, 7))
            };
            println!(
                "| {name} | {:.1} | {:.2} | {:.2} | {:.2} | {base} |",
                median(ns[i].clone()),
                ratio(i, 0),
                ratio(i, 5),
                ratio(i, 6)
            );
        }
        println!(
            "\n{what}: atomic ÷ plain blocked: single {:.2}, batch {:.2}",
            ratio(2, 0),
            ratio(3, 1)
        );
        if what == "insert" {
            let diff =
                |a: usize, b: usize| median(ns[a].iter().zip(&ns[b]).map(|(x, y)| x - y).collect());
            println!(
                "{what}: atomic − plain blocked, batch: {:.1} ns/key; 4 fetch_or alone: {:.1} ns/key; 1 fetch_or alone: {:.1} ns/key",
                diff(3, 1),
                median(ns[OR_BASELINE].clone()),
                median(ns[OR_ONE].clone())
            );
            // The least any lock-free insert of new keys adds to the plain batch: one
            // `fetch_or` per key. Its time over the plain batch's, per round.
            println!(
                "{what}: (plain blocked batch + 1 fetch_or per key) ÷ plain blocked batch: {:.2}",
                median(
                    ns[OR_ONE]
                        .iter()
                        .zip(&ns[1])
                        .map(|(o, p)| (o + p) / p)
                        .collect()
                )
            );
            println!(
                "{what}: bloomkit classic ÷ {} plain ORs at random bits: single {:.2}, batch {:.2}",
                bf.classic.hashes(),
                ratio(4, CLASSIC_ORS),
                ratio(10, CLASSIC_ORS)
            );
        }
    }
}

fn main() {
    let n = env("BLOOMKIT_N", 10_000_000);
    let rounds = env("BLOOMKIT_ROUNDS", 21) as usize;
    let keys = std::env::var("BLOOMKIT_KEYS").unwrap_or_else(|_| "url,u64".into());
    for k in keys.split(',') {
        match k.trim() {
            "url" => run::<String>(n, rounds),
            "u64" => run::<u64>(n, rounds),
            other => eprintln!("unknown key type {other:?} (url, u64)"),
        }
    }
}
