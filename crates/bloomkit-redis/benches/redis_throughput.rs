//! Throughput against real redis-server processes: bloomkit (online and bulk adds, checks),
//! the seed designs' per-bit SETBIT/GETBIT pipeline, and RedisBloom's BF.MADD/BF.MEXISTS, all
//! against the same server in the same run, each sized for the same n at 1 % and with its
//! FPR measured. Then bloomkit on a 3-master cluster.
//!
//! Run: `cargo bench -p bloomkit-redis --bench redis_throughput`
//! RedisBloom rows need `BLOOMKIT_REDISBLOOM=/path/to/redisbloom.so` (see docs/REDIS.md);
//! without it they are skipped.
//!
//! This is a throughput report, not a criterion benchmark: each rate is the median of several
//! timed passes (3 for adds, which re-add the same elements after the first pass; 5 for checks)
//! over hundreds of thousands of elements in batches of 1,000 (one batch in flight), on a tokio
//! multi-thread runtime with 2 workers.

#[path = "../tests/common/mod.rs"]
mod common;

use common::items;

use bloomkit::Spec;
use bloomkit_redis::{AddMethod, Connection, FilterOptions, Options, RedisFilter};
use std::time::Instant;

const BATCH: usize = 1000;
/// Timed passes per add measurement and per check measurement; rows report the median.
const ADD_PASSES: usize = 3;
const CHECK_PASSES: usize = 5;

/// The median rate (elements per second) of `$passes` timed runs of `$body`, each of which
/// processes `$n` elements.
macro_rules! median_rate {
    ($passes:expr, $n:expr, $body:block) => {{
        let mut rates = Vec::new();
        for _ in 0..$passes {
            let t = Instant::now();
            $body
            rates.push($n as f64 / t.elapsed().as_secs_f64());
        }
        rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
        rates[rates.len() / 2]
    }};
}
const P: f64 = 0.01;

struct Row {
    name: String,
    n: usize,
    adds: f64,
    checks: f64,
    fpr: f64,
    bytes_per_elem: f64,
}

fn print(rows: &[Row]) {
    println!("| method | n | adds/s | checks/s | measured FPR | bytes/element |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let fmt = |x: f64| {
            if x.is_nan() {
                "–".to_string()
            } else {
                format!("{:.0}", x)
            }
        };
        println!(
            "| {} | {} | {} | {} | {:.4} | {:.2} |",
            r.name,
            r.n,
            fmt(r.adds),
            fmt(r.checks),
            r.fpr,
            r.bytes_per_elem
        );
    }
}

/// How many of `items` the filter reports as probably present, checked in batches.
async fn hits(f: &RedisFilter, items: &[String]) -> usize {
    let mut found = 0;
    for b in items.chunks(BATCH) {
        found += common::count_true(&f.contains_batch(b).await.unwrap());
    }
    found
}

/// The bytes the segments of the filter `name` take in Redis.
async fn stored_bytes(conn: &Connection, f: &RedisFilter) -> u64 {
    let mut bytes = 0;
    for s in 0..f.layout().segments() {
        bytes += strlen(conn, &f.segment_key(s)).await;
    }
    bytes
}

/// How many of `batch` RedisBloom's BF.MEXISTS reports present in `key`.
async fn mexists_hits(conn: &Connection, key: &str, batch: &[String]) -> usize {
    let r: Vec<i64> = conn
        .query(redis::cmd("BF.MEXISTS").arg(key).arg(batch))
        .await
        .unwrap();
    r.iter().filter(|&&x| x == 1).count()
}

async fn strlen(conn: &Connection, key: &str) -> u64 {
    conn.query(redis::cmd("STRLEN").arg(key)).await.unwrap()
}

async fn bloomkit_rows(conn: &Connection, tag: &str, n: usize, rows: &mut Vec<Row>) {
    let data = items(0..n as u64);
    let absent = items(10_000_000..10_000_000 + 100_000);
    for method in [AddMethod::Script, AddMethod::Bitfield] {
        let name = format!("bk-{tag}-{method:?}");
        let opts = FilterOptions {
            add_method: method,
            ..FilterOptions::default()
        };
        let f = RedisFilter::create_with(conn, &name, n as u64, P, opts)
            .await
            .unwrap();
        let adds = median_rate!(ADD_PASSES, n, {
            for b in data.chunks(BATCH) {
                f.insert_batch(b).await.unwrap();
            }
        });
        let checks = median_rate!(CHECK_PASSES, n, {
            let found = hits(&f, &data).await;
            assert_eq!(found, n, "false negatives");
        });
        let fp = hits(&f, &absent).await;
        let bytes = stored_bytes(conn, &f).await;
        rows.push(Row {
            name: format!("bloomkit online ({method:?}) {tag}"),
            n,
            adds,
            checks,
            fpr: fp as f64 / absent.len() as f64,
            bytes_per_elem: bytes as f64 / n as f64,
        });
        f.delete().await.unwrap();
    }
}

async fn bloomkit_bulk(conn: &Connection, tag: &str, n: usize, rows: &mut Vec<Row>) {
    let data = items(0..n as u64);
    let absent = items(10_000_000..10_000_000 + 100_000);
    let name = format!("bk-bulk-{tag}");
    let f = RedisFilter::create(conn, &name, n as u64, P).await.unwrap();
    let t = Instant::now();
    f.insert_bulk(&data).await.unwrap();
    let adds = n as f64 / t.elapsed().as_secs_f64();
    let fp = hits(&f, &absent).await;
    assert_eq!(hits(&f, &data[..10_000]).await, 10_000, "false negatives");
    let bytes = stored_bytes(conn, &f).await;
    rows.push(Row {
        name: format!("bloomkit bulk (one insert_bulk call) {tag}"),
        n,
        adds,
        checks: f64::NAN,
        fpr: fp as f64 / absent.len() as f64,
        bytes_per_elem: bytes as f64 / n as f64,
    });
    f.delete().await.unwrap();
}

async fn per_bit_rows(conn: &Connection, n: usize, rows: &mut Vec<Row>) {
    // The seed designs: a classic filter, one SETBIT / GETBIT per bit, pipelined per batch.
    let spec = Spec::for_capacity(n as u64, P).unwrap();
    let data = items(0..n as u64);
    let absent = items(10_000_000..10_000_000 + 50_000);
    let key = "perbit";
    let adds = median_rate!(ADD_PASSES, n, {
        for b in data.chunks(BATCH) {
            let mut pipe = redis::pipe();
            for x in b {
                for pos in spec.positions(x) {
                    pipe.cmd("SETBIT").arg(key).arg(pos).arg(1).ignore();
                }
            }
            let () = conn.pipe(&pipe).await.unwrap();
        }
    });
    let check = |b: &[String]| {
        let mut pipe = redis::pipe();
        for x in b {
            for pos in spec.positions(x) {
                pipe.cmd("GETBIT").arg(key).arg(pos);
            }
        }
        pipe
    };
    let k = spec.hashes() as usize;
    let checks = median_rate!(CHECK_PASSES, n, {
        for b in data.chunks(BATCH) {
            let bits: Vec<u8> = conn.pipe(&check(b)).await.unwrap();
            assert!(bits.chunks(k).all(|c| !c.contains(&0)));
        }
    });
    let mut fp = 0;
    for b in absent.chunks(BATCH) {
        let bits: Vec<u8> = conn.pipe(&check(b)).await.unwrap();
        fp += bits.chunks(k).filter(|c| !c.contains(&0)).count();
    }
    rows.push(Row {
        name: "per-bit SETBIT/GETBIT pipeline (seed designs)".into(),
        n,
        adds,
        checks,
        fpr: fp as f64 / absent.len() as f64,
        bytes_per_elem: strlen(conn, key).await as f64 / n as f64,
    });
}

async fn redisbloom_rows(conn: &Connection, n: usize, rows: &mut Vec<Row>) {
    let data = items(0..n as u64);
    let absent = items(10_000_000..10_000_000 + 100_000);
    let key = "rb";
    let _: () = conn
        .query(redis::cmd("BF.RESERVE").arg(key).arg(P).arg(n))
        .await
        .unwrap();
    let adds = median_rate!(ADD_PASSES, n, {
        for b in data.chunks(BATCH) {
            let _: Vec<i64> = conn
                .query(redis::cmd("BF.MADD").arg(key).arg(b))
                .await
                .unwrap();
        }
    });
    let checks = median_rate!(CHECK_PASSES, n, {
        let mut found = 0;
        for b in data.chunks(BATCH) {
            found += mexists_hits(conn, key, b).await;
        }
        assert_eq!(found, n);
    });
    let mut fp = 0;
    for b in absent.chunks(BATCH) {
        fp += mexists_hits(conn, key, b).await;
    }
    let mem: u64 = conn
        .query(redis::cmd("MEMORY").arg("USAGE").arg(key))
        .await
        .unwrap();
    rows.push(Row {
        name: "RedisBloom BF.MADD / BF.MEXISTS".into(),
        n,
        adds,
        checks,
        fpr: fp as f64 / absent.len() as f64,
        bytes_per_elem: mem as f64 / n as f64,
    });
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (server, conn, redisbloom) = common::bench_server().await;
    let mut rows = Vec::new();
    bloomkit_rows(&conn, "standalone", 200_000, &mut rows).await;
    bloomkit_bulk(&conn, "standalone", 1_000_000, &mut rows).await;
    per_bit_rows(&conn, 50_000, &mut rows).await;
    if redisbloom {
        redisbloom_rows(&conn, 1_000_000, &mut rows).await;
    }
    // Server-side cost per command, to tell server time from client and network time.
    let stats: String = conn
        .query(redis::cmd("INFO").arg("commandstats"))
        .await
        .unwrap();
    for line in stats.lines().filter(|l| l.starts_with("cmdstat_")) {
        eprintln!("{line}");
    }
    drop(server);

    let cluster = common::Cluster::start();
    let urls = cluster.urls();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let conn = Connection::open_cluster(&refs, &Options::default())
        .await
        .unwrap();
    // Segments of 2^20 bits so that the filter spreads over all three nodes.
    let n = 1_000_000usize;
    let data = items(0..n as u64);
    let opts = FilterOptions {
        max_segment_bits: 1 << 20,
        ..FilterOptions::default()
    };
    let f = RedisFilter::create_with(&conn, "cl", n as u64, P, opts)
        .await
        .unwrap();
    let t = Instant::now();
    for b in data[..200_000].chunks(BATCH) {
        f.insert_batch(b).await.unwrap();
    }
    let adds = 200_000.0 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    f.insert_bulk(&data[200_000..]).await.unwrap();
    let bulk = 800_000.0 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for b in data[..200_000].chunks(BATCH) {
        assert!(f.contains_batch(b).await.unwrap().iter().all(|&x| x));
    }
    let checks = 200_000.0 / t.elapsed().as_secs_f64();
    let absent = items(10_000_000..10_100_000);
    let fp = hits(&f, &absent).await;
    rows.push(Row {
        name: format!(
            "bloomkit 3-master cluster ({} segments; online adds, checks)",
            f.layout().segments()
        ),
        n,
        adds,
        checks,
        fpr: fp as f64 / absent.len() as f64,
        bytes_per_elem: f.layout().bits() as f64 / 8.0 / n as f64,
    });
    rows.push(Row {
        name: "bloomkit 3-master cluster bulk (800,000 in one insert_bulk)".into(),
        n,
        adds: bulk,
        checks: f64::NAN,
        fpr: fp as f64 / absent.len() as f64,
        bytes_per_elem: f.layout().bits() as f64 / 8.0 / n as f64,
    });
    print(&rows);
}
