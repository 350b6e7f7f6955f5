//! Real redis-server processes for the live tests of this crate and of the CLI (whose tests
//! include this file by path, so that both run one harness): standalone servers and a
//! three-master cluster on free loopback ports, each server in a temporary directory of its
//! own, killed (SIGKILL) when dropped, also when a test fails and unwinds.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (bound then released; the server binds it right after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
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

/// Sends one inline command and returns the raw reply (enough for PING, FLUSHALL and CLUSTER
/// INFO); `None` if the server does not answer.
pub fn command(port: u16, cmd: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(format!("{cmd}\r\n").as_bytes()).ok()?;
    let mut buf = vec![0u8; 8192];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// One redis-server process.
pub struct Server {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its working directory (AOF, RDB, cluster config).
    pub dir: PathBuf,
    args: Vec<String>,
    child: Option<Child>,
    _tmp: tempfile::TempDir,
}

impl Server {
    /// A standalone server with no persistence.
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// A standalone server that writes every acknowledged write to its AOF before answering
    /// (`appendfsync always`), so a SIGKILL loses none.
    pub fn start_durable() -> Server {
        Server::start_with(&["--appendonly", "yes", "--appendfsync", "always"])
    }

    /// A server with extra arguments, which override the defaults (no persistence). Started
    /// on another free port if the one it was given is taken before the server binds it (free
    /// ports are only free when checked; a cluster node also needs its bus port).
    pub fn start_with(extra: &[&str]) -> Server {
        let cluster = extra.contains(&"--cluster-enabled");
        for _ in 0..5 {
            let tmp = tempfile::tempdir().unwrap();
            let mut server = Server {
                port: if cluster {
                    free_cluster_port()
                } else {
                    free_port()
                },
                dir: tmp.path().to_path_buf(),
                args: extra.iter().map(|s| s.to_string()).collect(),
                child: None,
                _tmp: tmp,
            };
            if server.run() {
                return server;
            }
        }
        panic!("redis-server did not start on any of 5 free ports");
    }

    /// Starts the process on `self.port`; false if it exits (its port taken) or does not
    /// answer within 20 seconds.
    fn run(&mut self) -> bool {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install redis-server)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            // A server reloading its AOF answers LOADING until done; with --requirepass, PING
            // answers NOAUTH: up all the same.
            if command(self.port, "PING")
                .is_some_and(|r| r.starts_with("+PONG") || r.starts_with("-NOAUTH"))
            {
                return true;
            }
            if let Some(c) = self.child.as_mut() {
                if c.try_wait().ok().flatten().is_some() {
                    break; // lost the port to someone else
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        false
    }

    /// SIGKILL: no chance to save anything.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port and directory (reloading its AOF, if enabled).
    pub fn restart(&mut self) {
        self.kill();
        assert!(
            self.run(),
            "redis-server did not restart on port {}",
            self.port
        );
    }

    /// The process id (0 once killed).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Its working directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// `redis://127.0.0.1:PORT/NAME`, the CLI's target for filter `name`.
    pub fn target(&self, name: &str) -> String {
        format!("{}{name}", self.url())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Three masters joined with `redis-cli --cluster create`; all killed on drop.
pub struct Cluster {
    /// The nodes.
    pub nodes: Vec<Server>,
}

impl Cluster {
    /// Starts three cluster-enabled servers, joins them and waits for `cluster_state:ok`.
    pub fn start() -> Cluster {
        let nodes: Vec<Server> = (0..3)
            .map(|_| {
                Server::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                ])
            })
            .collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)))
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli must be installed (apt-get install redis-tools)");
        assert!(status.success(), "redis-cli --cluster create failed");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !nodes.iter().all(|n| {
            command(n.port, "CLUSTER INFO").is_some_and(|r| r.contains("cluster_state:ok"))
        }) {
            assert!(
                Instant::now() < deadline,
                "the cluster did not become ready"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Cluster { nodes }
    }

    /// The nodes' `redis://` URLs.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }

    /// `redis+cluster://127.0.0.1:PORT/NAME` (the first node), the CLI's target.
    pub fn target(&self, name: &str) -> String {
        format!("redis+cluster://127.0.0.1:{}/{name}", self.nodes[0].port)
    }
}
