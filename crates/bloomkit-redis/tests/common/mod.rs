//! The tests' shared setup: the redis-server processes (`server.rs`, shared with the CLI's
//! tests), connections to them, the benchmarks' items and small helpers.

#![allow(dead_code)]

mod server;

pub use server::{Cluster, Server};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Filter options whose segments hold at most `bits` bits, so that a small filter spans
/// several keys (and, on a cluster, several nodes).
pub fn segments_of(bits: u64) -> bloomkit_redis::FilterOptions {
    bloomkit_redis::FilterOptions {
        max_segment_bits: bits,
        ..Default::default()
    }
}

impl Server {
    /// [`cli`] on this server.
    pub fn cli(&self, args: &[&str]) -> String {
        cli(self.port, args)
    }
}

/// Runs `redis-cli -p PORT ARGS…` and returns its output, trimmed.
pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A connection to the standalone server `s`.
pub async fn connect(s: &Server) -> bloomkit_redis::Connection {
    bloomkit_redis::Connection::open(&s.url(), &bloomkit_redis::Options::default())
        .await
        .unwrap()
}

/// A connection to the standalone server `s` whose commands time out after `ms` milliseconds
/// (the tests that kill or pause the server).
pub async fn connect_with_timeout(
    s: &Server,
    ms: u64,
) -> bloomkit_redis::Result<bloomkit_redis::Connection> {
    let options = bloomkit_redis::Options {
        timeout: Duration::from_millis(ms),
    };
    bloomkit_redis::Connection::open(&s.url(), &options).await
}

/// A connection to the cluster `c`.
pub async fn connect_cluster(c: &Cluster) -> bloomkit_redis::Connection {
    let urls = c.urls();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    bloomkit_redis::Connection::open_cluster(&refs, &bloomkit_redis::Options::default())
        .await
        .unwrap()
}

/// ~45-byte items, the benchmarks' keys: `user-<i>@mail.example.com/session-<i mod 9973>`.
pub fn items(range: std::ops::Range<u64>) -> Vec<String> {
    range
        .map(|i| format!("user-{i:012}@mail.example.com/session-{:04}", i % 9973))
        .collect()
}

/// FPR bound: with `t` trials at true rate at most p, allow 4 sd above: t·p + 4·sqrt(t·p).
pub fn fpr_bound(p: f64, trials: usize) -> usize {
    let e = p * trials as f64;
    (e + 4.0 * e.sqrt()).ceil() as usize
}

/// Per command (`INFO commandstats`): calls and microseconds since the last `CONFIG
/// RESETSTAT`.
pub async fn command_stats(
    conn: &bloomkit_redis::Connection,
) -> std::collections::HashMap<String, (u64, u64)> {
    let stats: String = conn
        .query(redis::cmd("INFO").arg("commandstats"))
        .await
        .unwrap();
    stats
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let field = |f: &str| -> Option<u64> {
                rest.split(',')
                    .find_map(|kv| kv.strip_prefix(f)?.strip_prefix('='))?
                    .parse()
                    .ok()
            };
            Some((name.to_string(), (field("calls")?, field("usec")?)))
        })
        .collect()
}

/// Zeroes the server's command statistics (`CONFIG RESETSTAT`).
pub async fn reset_stats(conn: &bloomkit_redis::Connection) {
    let _: () = conn
        .query(redis::cmd("CONFIG").arg("RESETSTAT"))
        .await
        .unwrap();
}

/// Calls of command `name` (lower case) since the last reset, from [`command_stats`].
pub async fn calls(conn: &bloomkit_redis::Connection, name: &str) -> u64 {
    command_stats(conn).await.get(name).map_or(0, |c| c.0)
}

/// The median of `v` (the upper one for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// A standalone server and a connection to it.
pub async fn start() -> (Server, bloomkit_redis::Connection) {
    let server = Server::start();
    let conn = connect(&server).await;
    (server, conn)
}

/// Asserts that nothing (no filter of any kind) is stored under `name`.
pub async fn assert_absent(conn: &bloomkit_redis::Connection, name: &str) {
    assert_eq!(
        bloomkit_redis::stored_kind(conn, name).await.unwrap(),
        None,
        "{name}"
    );
}

/// How many of `v` are true.
pub fn count_true(v: &[bool]) -> usize {
    v.iter().filter(|&&x| x).count()
}

/// `v` as `1.23, 4.56, …`.
pub fn show(v: &[f64]) -> String {
    v.iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// For the benchmarks: a server with RedisBloom loaded when `BLOOMKIT_REDISBLOOM` names an
/// existing `redisbloom.so` (else without, saying that the RedisBloom rows are skipped), a
/// connection, and whether RedisBloom is there.
pub async fn bench_server() -> (Server, bloomkit_redis::Connection, bool) {
    let module = std::env::var("BLOOMKIT_REDISBLOOM")
        .ok()
        .filter(|p| Path::new(p).exists());
    let server = match &module {
        Some(m) => Server::start_with(&["--loadmodule", m]),
        None => {
            eprintln!("RedisBloom rows skipped: set BLOOMKIT_REDISBLOOM to redisbloom.so");
            Server::start()
        }
    };
    let conn = connect(&server).await;
    (server, conn, module.is_some())
}

/// A standalone server and a blocking connection to it.
pub fn start_blocking() -> (Server, bloomkit_redis::blocking::BlockingConnection) {
    let server = Server::start();
    let c = bloomkit_redis::blocking::BlockingConnection::open(
        &server.url(),
        &bloomkit_redis::Options::default(),
    )
    .unwrap();
    (server, c)
}

/// A time-window filter `name` of one hour in 4 generations, `n` insertions per window at 1 %.
pub async fn hour_window(
    conn: &bloomkit_redis::Connection,
    name: &str,
    n: u64,
) -> bloomkit_redis::TimeWindowRedisFilter {
    let params = bloomkit_redis::WindowParams::new(Duration::from_secs(3600), 4, n, 0.01);
    bloomkit_redis::TimeWindowRedisFilter::create(conn, name, params)
        .await
        .unwrap()
}
