//! Real redis-server processes for the end-to-end tests: started on free loopback ports,
//! killed when dropped (also when a test fails and unwinds).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
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

/// Sends one inline command and returns the raw reply (enough for PING and CLUSTER INFO).
pub fn command(port: u16, cmd: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(format!("{cmd}\r\n").as_bytes()).ok()?;
    let mut buf = vec![0u8; 8192];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// One redis-server.
pub struct Server {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    args: Vec<String>,
    dir: PathBuf,
}

impl Server {
    fn spawn(extra: &[&str], dir: &Path) -> Server {
        let cluster = extra.contains(&"--cluster-enabled");
        for _ in 0..5 {
            let mut server = Server {
                child: None,
                port: if cluster {
                    free_cluster_port()
                } else {
                    free_port()
                },
                args: extra.iter().map(|s| s.to_string()).collect(),
                dir: dir.to_path_buf(),
            };
            if server.run() {
                return server;
            }
        }
        panic!("redis-server did not start");
    }

    /// Starts the process on `self.port`; false if it did not come up (port taken).
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
            .expect("redis-server is installed");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            // With --requirepass, PING answers NOAUTH: up all the same.
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

    /// A standalone server.
    pub fn start() -> (Server, tempfile::TempDir) {
        Self::start_with(&[])
    }

    /// A standalone server with extra arguments (they override the defaults: no persistence).
    pub fn start_with(extra: &[&str]) -> (Server, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        (Server::spawn(extra, dir.path()), dir)
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

    /// `redis://127.0.0.1:PORT/NAME`.
    pub fn target(&self, name: &str) -> String {
        format!("redis://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A three-master Redis Cluster on loopback.
pub struct Cluster {
    /// The nodes (killed on drop).
    pub nodes: Vec<Server>,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Starts three cluster-enabled servers and joins them (redis-cli --cluster create).
    pub fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let nodes: Vec<Server> = (0..3)
            .map(|i| {
                let node_dir = dir.path().join(format!("n{i}"));
                std::fs::create_dir_all(&node_dir).unwrap();
                Server::spawn(
                    &[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                    ],
                    &node_dir,
                )
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli is installed");
        assert!(status.success(), "redis-cli --cluster create failed");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if nodes.iter().all(|n| {
                command(n.port, "CLUSTER INFO").is_some_and(|r| r.contains("cluster_state:ok"))
            }) {
                return Cluster { nodes, _dir: dir };
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the cluster did not become ready");
    }

    /// `redis+cluster://127.0.0.1:PORT/NAME` (the first node).
    pub fn target(&self, name: &str) -> String {
        format!("redis+cluster://127.0.0.1:{}/{name}", self.nodes[0].port)
    }
}
