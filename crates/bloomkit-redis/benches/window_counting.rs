//! Throughput of the time-window and counting filters against a real redis-server, side by
//! side in one run with what they are measured against:
//!
//! - time-window checks (a single-generation filter, then filters whose every generation is
//!   filled) against RedisBloom's `BF.MEXISTS` on a filter of the same `n` at 1 %; the
//!   single-generation filter at two sizes, 200,000 (a batch's words lie close together and
//!   are read as one byte range) and 5,000,000 (read as fields), each against RedisBloom at
//!   its size;
//! - time-window adds through the transaction against the script it replaced;
//! - counting adds and removes against the per-bit `SETBIT` pipeline of the seed designs
//!   (a classic filter, one `SETBIT` per bit, pipelined per batch).
//!
//! Run: `cargo bench -p bloomkit-redis --bench window_counting [-- window|counting]`; the
//! RedisBloom rows need
//! `BLOOMKIT_REDISBLOOM=/path/to/redisbloom.so` (docs/REDIS.md, "Tests and benchmarks").
//!
//! Each rate is the median of several timed passes over the same elements in batches of 1,000
//! (one batch in flight) on a tokio runtime with 2 workers; the passes of the contenders are
//! interleaved, so load on the machine hits them alike. Also printed: requests (round trips)
//! per batch, counted by the connection.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{items, median, show};

use bloomkit::clock::{Clock, ManualClock, SystemClock};
use bloomkit::Spec;
use bloomkit_redis::{
    Connection, CountingRedisFilter, RedisFilter, TimeWindowRedisFilter, WindowParams,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BATCH: usize = 1000;
const PASSES: usize = 7;
const P: f64 = 0.01;
const HOUR: u64 = 3_600_000;
/// The capacity of the large single-generation window (and RedisBloom filter) whose checks
/// read fields.
const LARGE: usize = 5_000_000;

/// Elements per second of one pass of `f` over `n` elements.
async fn rate(n: usize, f: impl AsyncFnOnce()) -> f64 {
    let t = Instant::now();
    f().await;
    n as f64 / t.elapsed().as_secs_f64()
}

/// A time-window filter of `generations` generations for `n` insertions per window, with
/// `filled` generations holding `n / generations` elements each (the newest is current).
/// Returns it and the elements of the current generation.
async fn window(
    conn: &Connection,
    name: &str,
    generations: u32,
    filled: u32,
    n: usize,
) -> (TimeWindowRedisFilter, Vec<String>) {
    let params = WindowParams::new(
        Duration::from_millis(u64::from(generations) * HOUR),
        generations,
        n as u64,
        P,
    );
    let clock = Arc::new(ManualClock::new(SystemClock.now_ms() / HOUR * HOUR));
    let f = TimeWindowRedisFilter::create(conn, name, params)
        .await
        .unwrap()
        .with_clock(clock.clone());
    let per = n / generations as usize;
    let mut last = Vec::new();
    for g in 0..filled {
        last = items(u64::from(g) * per as u64..u64::from(g + 1) * per as u64);
        for b in last.chunks(BATCH) {
            f.insert_batch(b).await.unwrap();
        }
        if g + 1 < filled {
            clock.advance(Duration::from_millis(HOUR));
        }
    }
    // A fresh handle on the same clock, as another process would open it.
    let reader = TimeWindowRedisFilter::open(conn, name)
        .await
        .unwrap()
        .with_clock(clock);
    reader.contains_batch(&last[..BATCH]).await.unwrap(); // learns the generations
    (reader, last)
}

async fn window_checks(f: &TimeWindowRedisFilter, data: &[String]) -> f64 {
    rate(data.len(), async || {
        for b in data.chunks(BATCH) {
            assert!(f.contains_batch(b).await.unwrap().iter().all(|&x| x));
        }
    })
    .await
}

async fn mexists(conn: &Connection, key: &str, data: &[String]) {
    for b in data.chunks(BATCH) {
        let r: Vec<i64> = conn
            .query(redis::cmd("BF.MEXISTS").arg(key).arg(b))
            .await
            .unwrap();
        assert!(r.iter().all(|&x| x == 1));
    }
}

async fn absent_hits(f: &TimeWindowRedisFilter, absent: &[String]) -> f64 {
    let mut fp = 0;
    for b in absent.chunks(BATCH) {
        fp += common::count_true(&f.contains_batch(b).await.unwrap());
    }
    fp as f64 / absent.len() as f64
}

async fn window_rows(conn: &Connection, server: u32, redisbloom: bool) {
    let n = 200_000;
    let absent = items(10_000_000..10_100_000);
    println!("\n### Time-window checks (n = {n} per window, p = 1 %, batches of {BATCH})\n");
    let (single, data) = window(conn, "w1", 1, 1, n).await;
    if redisbloom {
        // RedisBloom filters of both sizes (see `large` below), the same elements in each.
        for (key, size) in [("rb", n), ("rb-large", LARGE)] {
            let _: () = conn
                .query(redis::cmd("BF.RESERVE").arg(key).arg(P).arg(size))
                .await
                .unwrap();
            for b in data.chunks(BATCH) {
                let _: Vec<i64> = conn
                    .query(redis::cmd("BF.MADD").arg(key).arg(b))
                    .await
                    .unwrap();
            }
        }
    }
    // The plain register filter of the same n and p, for reference.
    let plain = RedisFilter::create(conn, "plain", n as u64, P)
        .await
        .unwrap();
    for b in data.chunks(BATCH) {
        plain.insert_batch(b).await.unwrap();
    }
    // The same elements in a single-generation window sized for LARGE: a batch's words lie
    // about 9 KB apart there, so its checks read fields where the small window's read one
    // byte range (docs/REDIS.md, section 4).
    let large = {
        let params = WindowParams::new(Duration::from_millis(HOUR), 1, LARGE as u64, P);
        let clock = Arc::new(ManualClock::new(SystemClock.now_ms() / HOUR * HOUR));
        let f = TimeWindowRedisFilter::create(conn, "w1-large", params)
            .await
            .unwrap()
            .with_clock(clock.clone());
        for b in data.chunks(BATCH) {
            f.insert_batch(b).await.unwrap();
        }
        let reader = TimeWindowRedisFilter::open(conn, "w1-large")
            .await
            .unwrap()
            .with_clock(clock);
        reader.contains_batch(&data[..BATCH]).await.unwrap(); // learns the generation
        reader
    };
    // The rows' labels hold: the small window's checks read byte ranges, the large one's
    // fields.
    let (ranges, fields) = reads_of(conn, async || {
        window_checks(&single, &data[..BATCH]).await;
    })
    .await;
    assert!(
        ranges > 0 && fields == 0,
        "{ranges} ranges, {fields} field reads"
    );
    let (ranges, fields) = reads_of(conn, async || {
        window_checks(&large, &data[..BATCH]).await;
    })
    .await;
    assert!(
        ranges == 0 && fields > 0,
        "{ranges} ranges, {fields} field reads"
    );
    // Interleaved passes: time window, plain filter, RedisBloom, large time window, ...
    let checks = ["bitfield_ro", "getrange", "exists"];
    let mut passes: Vec<Vec<Pass>> = Vec::new();
    let mut trips = 0;
    for _ in 0..PASSES {
        let before = conn.round_trips();
        let w = measure(conn, server, &checks, data.len(), async || {
            window_checks(&single, &data).await;
        })
        .await;
        trips += conn.round_trips() - before;
        let pl = measure(conn, server, &checks, data.len(), async || {
            for b in data.chunks(BATCH) {
                assert!(plain.contains_batch(b).await.unwrap().iter().all(|&x| x));
            }
        })
        .await;
        let mut pass = vec![w, pl];
        if redisbloom {
            pass.push(
                measure(conn, server, &["bf.mexists"], data.len(), async || {
                    mexists(conn, "rb", &data).await;
                })
                .await,
            );
        }
        pass.push(
            measure(conn, server, &checks, data.len(), async || {
                window_checks(&large, &data).await;
            })
            .await,
        );
        if redisbloom {
            pass.push(
                measure(conn, server, &["bf.mexists"], data.len(), async || {
                    mexists(conn, "rb-large", &data).await;
                })
                .await,
            );
        }
        passes.push(pass);
    }
    let trips = trips as f64 / (PASSES * data.len().div_ceil(BATCH)) as f64;
    let col = |i: usize, g: fn(&Pass) -> f64| median(passes.iter().map(|p| g(&p[i])).collect());
    let cpu = |p: &Pass| p.client_cpu_us + p.server_cpu_us;
    println!("| filter | generations read (with a key) | checks/s | measured FPR | round trips per batch | server µs/element (commandstats) | CPU µs/element client + server |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let fpr = absent_hits(&single, &absent).await;
    let mut rows = vec![
        format!("| time window, 1 generation, one filled | 1 | {{}} | {fpr:.4} | {trips:.2} | {{}} | {{}} |"),
        "| plain register filter (`RedisFilter`) | – | {} | – | 1 | {} | {} |".to_string(),
    ];
    if redisbloom {
        rows.push("| RedisBloom `BF.MEXISTS` | – | {} | – | 1 | {} | {} |".to_string());
    }
    let large_at = rows.len();
    rows.push("| time window, 1 generation sized for 5,000,000, same elements (field reads) | 1 | {} | – | 1 | {} | {} |".to_string());
    if redisbloom {
        rows.push(
            "| RedisBloom `BF.MEXISTS`, sized for 5,000,000, same elements | – | {} | – | 1 | {} | {} |"
                .to_string(),
        );
    }
    for (i, row) in rows.iter().enumerate() {
        let cells = [
            format!("{:.0}", col(i, |p| p.rate)),
            format!("{:.2}", col(i, |p| p.server_us)),
            format!(
                "{:.2} + {:.2}",
                col(i, |p| p.client_cpu_us),
                col(i, |p| p.server_cpu_us)
            ),
        ];
        let mut line = row.clone();
        for c in cells {
            line = line.replacen("{}", &c, 1);
        }
        println!("{line}");
    }
    if redisbloom {
        // (contender, the RedisBloom filter of its size)
        for (i, rb, what) in [
            (0, 2, "time window"),
            (1, 2, "plain filter"),
            (large_at, large_at + 1, "time window sized for 5,000,000"),
        ] {
            let by_rate: Vec<f64> = passes.iter().map(|p| p[i].rate / p[rb].rate).collect();
            let by_cpu: Vec<f64> = passes.iter().map(|p| cpu(&p[rb]) / cpu(&p[i])).collect();
            println!(
                "\n{what} checks ÷ BF.MEXISTS per pass: {} (median {:.2}); by CPU per element: {} (median {:.2})",
                show(&by_rate),
                median(by_rate.clone()),
                show(&by_cpu),
                median(by_cpu.clone())
            );
        }
    }
    plain.delete().await.unwrap();
    large.delete().await.unwrap();
    for (generations, filled) in [(1u32, 3u32), (8, 10), (30, 32)] {
        let (f, data) = window(
            conn,
            &format!("w{generations}-{filled}"),
            generations,
            filled,
            n,
        )
        .await;
        let before = conn.round_trips();
        let checks = median({
            let mut v = Vec::new();
            for _ in 0..3 {
                v.push(window_checks(&f, &data).await);
            }
            v
        });
        let trips = (conn.round_trips() - before) as f64 / (3 * data.len().div_ceil(BATCH)) as f64;
        println!(
            "| time window, {generations} generations, all filled | {filled} | {checks:.0} | {:.4} | {trips:.2} |",
            absent_hits(&f, &absent).await
        );
        f.delete().await.unwrap();
    }
    single.delete().await.unwrap();
}

/// Time-window adds on a standalone server: the transaction (`MULTI; EXISTS; BITFIELD;
/// PEXPIREAT; PTTL; EXEC`, the default) against the script it replaced (still used on a
/// cluster and for filters with a time to live), interleaved, each pass into an emptied
/// generation of its own filter.
async fn window_add_rows(conn: &Connection, server: u32) {
    let (n, per_pass) = (800_000u64, 200_000u64);
    println!(
        "\n### Time-window adds (4 generations, n = {n} per window, p = 1 %, {per_pass} new elements per pass, batches of {BATCH})\n"
    );
    let data = items(0..per_pass);
    let params = WindowParams::new(Duration::from_millis(4 * HOUR), 4, n, P);
    let clock = Arc::new(ManualClock::new(SystemClock.now_ms() / HOUR * HOUR));
    let open = async |name: &str| {
        TimeWindowRedisFilter::create(conn, name, params)
            .await
            .unwrap()
            .with_clock(clock.clone())
    };
    let tx = open("wa-tx").await;
    let script = open("wa-script").await.with_script_adds();
    let adds = async |f: &TimeWindowRedisFilter| {
        f.clear().await.unwrap();
        for b in data.chunks(BATCH) {
            assert!(f.insert_batch(b).await.unwrap().iter().any(|&x| x));
        }
    };
    let mut passes: Vec<[Pass; 2]> = Vec::new();
    for _ in 0..PASSES {
        let t = measure(conn, server, &["exec"], data.len(), async || {
            adds(&tx).await
        })
        .await;
        let s = measure(conn, server, &["evalsha"], data.len(), async || {
            adds(&script).await
        })
        .await;
        passes.push([t, s]);
    }
    let col = |i: usize, g: fn(&Pass) -> f64| median(passes.iter().map(|p| g(&p[i])).collect());
    println!("| add through | adds/s | server µs/element of the add command (commandstats) | CPU µs/element client + server |");
    println!("|---|---:|---:|---:|");
    for (i, what) in [(0, "transaction (`EXEC`)"), (1, "script (`EVALSHA`)")] {
        println!(
            "| {what} | {:.0} | {:.2} | {:.2} + {:.2} |",
            col(i, |p| p.rate),
            col(i, |p| p.server_us),
            col(i, |p| p.client_cpu_us),
            col(i, |p| p.server_cpu_us)
        );
    }
    let ratio: Vec<f64> = passes.iter().map(|p| p[0].rate / p[1].rate).collect();
    println!(
        "\ntransaction ÷ script adds/s per pass: {} (median {:.2})",
        show(&ratio),
        median(ratio.clone())
    );
    tx.delete().await.unwrap();
    script.delete().await.unwrap();
}

/// Microseconds the server has spent so far on the commands `top` (`INFO commandstats`).
/// Name the commands the client sends: a transaction's `EXEC` and a script's `EVALSHA`
/// include the commands they run, which are counted under their own names as well.
async fn server_usec(conn: &Connection, top: &[&str]) -> u64 {
    let stats = common::command_stats(conn).await;
    top.iter()
        .filter_map(|c| stats.get(*c))
        .map(|&(_, usec)| usec)
        .sum()
}

/// CPU time (ns) that the threads of process `pid` (0: this process) have run so far, from
/// `/proc/<pid>/task/*/schedstat`: unlike wall-clock time it does not grow when other jobs
/// share the cores.
fn cpu_ns(pid: u32) -> u64 {
    let dir = if pid == 0 {
        "/proc/self/task".to_string()
    } else {
        format!("/proc/{pid}/task")
    };
    let Ok(tasks) = std::fs::read_dir(dir) else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// One contender's pass: elements per second, the server's µs per element on its commands
/// (`INFO commandstats`), and the CPU µs per element of this client and of the server.
#[derive(Debug, Clone, Copy)]
struct Pass {
    rate: f64,
    server_us: f64,
    client_cpu_us: f64,
    server_cpu_us: f64,
}

/// Runs `f` over `n` elements and measures it (see [`Pass`]); `top` names the commands the
/// client sends (see [`server_usec`]), `server` is the server's process id.
async fn measure(
    conn: &Connection,
    server: u32,
    top: &[&str],
    n: usize,
    f: impl AsyncFnOnce(),
) -> Pass {
    let before = server_usec(conn, top).await;
    let (c0, s0) = (cpu_ns(0), cpu_ns(server));
    let rate = rate(n, f).await;
    let (c1, s1) = (cpu_ns(0), cpu_ns(server));
    let used = server_usec(conn, top).await - before;
    let per = |ns: u64| ns as f64 / 1000.0 / n as f64;
    Pass {
        rate,
        server_us: used as f64 / n as f64,
        client_cpu_us: per(c1 - c0),
        server_cpu_us: per(s1 - s0),
    }
}

/// The per-bit pipeline of the seed designs for a batch: `SETBIT perbit <pos> 1` (replies
/// ignored) or `GETBIT perbit <pos>` for every bit of every element.
fn per_bit(spec: &Spec, batch: &[String], set: bool) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    for x in batch {
        for pos in spec.positions(x) {
            if set {
                pipe.cmd("SETBIT").arg("perbit").arg(pos).arg(1).ignore();
            } else {
                pipe.cmd("GETBIT").arg("perbit").arg(pos);
            }
        }
    }
    pipe
}

/// The `GETRANGE` and `BITFIELD_RO` calls the server counted while `f` ran: which reads a
/// check used, so that a row's label ("byte ranges", "field reads") is checked, not assumed.
async fn reads_of(conn: &Connection, f: impl AsyncFnOnce()) -> (u64, u64) {
    common::reset_stats(conn).await;
    f().await;
    (
        common::calls(conn, "getrange").await,
        common::calls(conn, "bitfield_ro").await,
    )
}

async fn counting_rows(conn: &Connection, server: u32) {
    println!("\n### Counting adds and removes (p = 1 %, batches of {BATCH})\n");
    let n = 200_000;
    let data = items(0..n as u64);
    // The per-bit pipeline: a classic filter, one SETBIT per bit.
    let m = 50_000;
    let spec = Spec::for_capacity(m as u64, P).unwrap();
    let perbit = &data[..m];
    let f = CountingRedisFilter::create(conn, "cnt", n as u64, P)
        .await
        .unwrap();
    // The checks below read byte ranges (this filter's batches' counters lie close together):
    // the segment is 1.05 MB, so one range of 1 MiB, and the few counters in its last 3.7 KB
    // may be read as one command of fields.
    f.insert_batch(&data[..BATCH]).await.unwrap();
    let (ranges, fields) = reads_of(conn, async || {
        f.contains_batch(&data[..BATCH]).await.unwrap();
    })
    .await;
    assert!(
        ranges >= 1 && fields <= 1,
        "{ranges} ranges, {fields} field reads"
    );
    f.clear().await.unwrap();
    // Per pass: adds, then the per-bit pipeline, then removes of the same elements.
    let mut passes: Vec<[Pass; 5]> = Vec::new();
    for pass in 0..PASSES {
        let add = measure(conn, server, &["multi", "exec"], n, async || {
            for b in data.chunks(BATCH) {
                f.insert_batch(b).await.unwrap();
            }
        })
        .await;
        let bit = measure(conn, server, &["setbit"], m, async || {
            for b in perbit.chunks(BATCH) {
                let () = conn.pipe(&per_bit(&spec, b, true)).await.unwrap();
            }
        })
        .await;
        // Checks of the same elements: the counting filter's (a batch of 1,000 in this
        // filter's 1 MB segment reads byte ranges) against the per-bit GETBIT pipeline's.
        let check = measure(conn, server, &["getrange", "bitfield_ro"], n, async || {
            for b in data.chunks(BATCH) {
                assert!(f.contains_batch(b).await.unwrap().iter().all(|&x| x));
            }
        })
        .await;
        let bit_check = measure(conn, server, &["getbit"], m, async || {
            for b in perbit.chunks(BATCH) {
                let bits: Vec<u8> = conn.pipe(&per_bit(&spec, b, false)).await.unwrap();
                assert!(bits.iter().all(|&x| x == 1));
            }
        })
        .await;
        let remove = measure(conn, server, &["evalsha"], n, async || {
            for b in data.chunks(BATCH) {
                assert!(f.remove_batch(b).await.unwrap().iter().all(|&r| r));
            }
        })
        .await;
        if pass == 0 {
            let info = f.info().await.unwrap();
            assert_eq!(info.nonzero_counters, 0, "every counter back to 0");
        }
        passes.push([add, remove, bit, check, bit_check]);
    }
    let col = |i: usize, g: fn(&Pass) -> f64| median(passes.iter().map(|p| g(&p[i])).collect());
    let ratio = |i: usize, g: fn(&Pass) -> f64| {
        let v: Vec<f64> = passes.iter().map(|p| g(&p[i]) / g(&p[2])).collect();
        (median(v.clone()), v)
    };
    let cpu = |p: &Pass| 1.0 / (p.client_cpu_us + p.server_cpu_us);
    let k = f.layout().hashes();
    println!("| method | n | k | elements/s | ÷ per-bit | server µs/element (commandstats) | CPU µs/element client + server | ÷ per-bit by CPU |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let names = [
        "counting add (`MULTI`, `EXISTS`, `BITFIELD OVERFLOW SAT INCRBY u4`, `EXEC`)",
        "counting remove (script: `BITFIELD OVERFLOW FAIL INCRBY u4 … -1`, replay on refusal)",
        "per-bit `SETBIT` pipeline (classic filter)",
    ];
    let mut per_pass = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let (count, hashes) = if i == 2 { (m, spec.hashes()) } else { (n, k) };
        let (by_rate, rates) = ratio(i, |p| p.rate);
        let (by_cpu, _) = ratio(i, cpu);
        println!(
            "| {name} | {count} | {hashes} | {:.0} | {by_rate:.2} | {:.2} | {:.2} + {:.2} | {by_cpu:.2} |",
            col(i, |p| p.rate),
            col(i, |p| p.server_us),
            col(i, |p| p.client_cpu_us),
            col(i, |p| p.server_cpu_us),
        );
        per_pass.push(rates);
    }
    let checks: Vec<f64> = passes.iter().map(|p| p[3].rate / p[4].rate).collect();
    println!(
        "\nchecks: counting filter {:.0}/s (CPU µs/element {:.2} + {:.2}), per-bit GETBIT pipeline {:.0}/s ({:.2} + {:.2}); ratio per pass {} (median {:.2})",
        col(3, |p| p.rate),
        col(3, |p| p.client_cpu_us),
        col(3, |p| p.server_cpu_us),
        col(4, |p| p.rate),
        col(4, |p| p.client_cpu_us),
        col(4, |p| p.server_cpu_us),
        show(&checks),
        median(checks.clone()),
    );
    println!(
        "\nper pass, elements/s ÷ per-bit: adds {}; removes {}",
        show(&per_pass[0]),
        show(&per_pass[1])
    );
    f.delete().await.unwrap();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (server, conn, redisbloom) = common::bench_server().await;
    let _: () = conn
        .query(redis::cmd("CONFIG").arg("RESETSTAT"))
        .await
        .unwrap();
    // `-- window` or `-- counting` runs one part only.
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if only.as_deref() != Some("counting") {
        window_rows(&conn, server.pid(), redisbloom).await;
        window_add_rows(&conn, server.pid()).await;
    }
    if only.as_deref() != Some("window") {
        counting_rows(&conn, server.pid()).await;
    }
}
