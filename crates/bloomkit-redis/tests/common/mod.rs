//! Real redis-server processes for the tests: standalone and a 3-master cluster, each on free
//! loopback ports in a temporary directory, killed when the guard is dropped (also when a test
//! fails and unwinds).

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Filter options whose segments hold at most `bits` bits, so that a small filter spans
/// several keys (and, on a cluster, several nodes).
pub fn segments_of(bits: u64) -> bloomkit_redis::FilterOptions {
    bloomkit_redis::FilterOptions {
        max_segment_bits: bits,
        ..Default::default()
    }
}

/// A free loopback port (bound then released; the server binds it right after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A free loopback port for a cluster node: its cluster bus port (the port + 10000, which
/// redis-server also binds) is free too at the time of the check.
fn free_cluster_port() -> u16 {
    loop {
        let port = free_port();
        if port <= u16::MAX - 10_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

/// One redis-server process; killed (SIGKILL) on drop.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    args: Vec<String>,
    child: Option<Child>,
    _tmp: Option<tempfile::TempDir>,
}

impl Server {
    /// Starts a standalone server with no persistence.
    pub fn start() -> Server {
        Server::start_with(&["--save", "", "--appendonly", "no"])
    }

    /// Starts a standalone server that writes every acknowledged write to its AOF before
    /// answering (`appendfsync always`), so a SIGKILL loses none.
    pub fn start_durable() -> Server {
        Server::start_with(&[
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
        ])
    }

    /// Starts a server with extra arguments, on another free port if the one it was given is
    /// taken before the server binds it (free ports are only free when checked; a cluster node
    /// also needs its bus port, the port + 10000).
    pub fn start_with(extra: &[&str]) -> Server {
        let cluster = extra.contains(&"--cluster-enabled");
        for _ in 0..5 {
            let tmp = tempfile::tempdir().unwrap();
            let mut s = Server {
                port: if cluster {
                    free_cluster_port()
                } else {
                    free_port()
                },
                dir: tmp.path().to_path_buf(),
                args: extra.iter().map(|s| s.to_string()).collect(),
                child: None,
                _tmp: Some(tmp),
            };
            if s.try_spawn() {
                return s;
            }
            s.kill();
        }
        panic!("redis-server did not start on any of 5 free ports");
    }

    /// Starts the process on `self.port`; panics if it does not come up.
    fn spawn(&mut self) {
        assert!(
            self.try_spawn(),
            "redis-server on port {} did not start",
            self.port
        );
    }

    /// Starts the process on `self.port`; false if it exits (its port taken) or does not
    /// answer within 20 seconds.
    fn try_spawn(&mut self) -> bool {
        let child = Command::new("redis-server")
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install redis-server)");
        self.child = Some(child);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            // A server that reloads an AOF answers LOADING until done.
            if cli(self.port, &["PING"]) == "PONG" {
                return true;
            }
            let exited = self.child.as_mut().map(|c| c.try_wait());
            if matches!(exited, Some(Ok(Some(_)))) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGKILL, no chance to save anything.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts again on the same port and directory (reloads the AOF if enabled).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn cli(&self, args: &[&str]) -> String {
        cli(self.port, args)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Three masters joined with `redis-cli --cluster create`; all killed on drop.
pub struct Cluster {
    pub nodes: Vec<Server>,
}

impl Cluster {
    pub fn start() -> Cluster {
        let nodes: Vec<Server> = (0..3)
            .map(|_| {
                Server::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ])
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let mut args: Vec<&str> = vec!["--cluster", "create"];
        args.extend(addrs.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        let out = Command::new("redis-cli").args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let start = Instant::now();
        for n in &nodes {
            while !n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok") {
                assert!(start.elapsed() < Duration::from_secs(30), "cluster not ok");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Cluster { nodes }
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }
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
        Some(m) => Server::start_with(&["--save", "", "--loadmodule", m]),
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
