//! Connections to standalone Redis or Redis Cluster, with a timeout on every operation and
//! automatic reconnection.

use crate::error::{Error, Result};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, Script};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Connection options.
#[derive(Debug, Clone)]
pub struct Options {
    /// The longest any one operation (connect, command, batch) may take before it fails with
    /// [`Error::Timeout`]. Default: 5 s.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(5),
        }
    }
}

#[derive(Clone)]
enum Inner {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

/// A clone of either connection, to run one request on.
enum Either {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl redis::aio::ConnectionLike for Either {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Either::Single(c) => c.req_packed_command(cmd),
            Either::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Either::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Either::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Either::Single(c) => c.get_db(),
            Either::Cluster(c) => c.get_db(),
        }
    }
}

/// A cheap-to-clone, multiplexed connection to Redis (standalone or cluster).
///
/// Concurrent commands on one connection are pipelined automatically. After a broken
/// connection the next operations fail with [`Error::Connection`] or [`Error::Timeout`] while
/// the client reconnects in the background; once the server is back they succeed again.
#[derive(Clone)]
pub struct Connection {
    inner: Inner,
    timeout: Duration,
    round_trips: Arc<AtomicU64>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.inner {
            Inner::Single(_) => "standalone",
            Inner::Cluster(_) => "cluster",
        };
        f.debug_struct("Connection")
            .field("kind", &kind)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A URL's connection settings; [`Error::InvalidUrl`] if it does not parse.
fn connection_info(url: &str) -> Result<redis::ConnectionInfo> {
    redis::IntoConnectionInfo::into_connection_info(url)
        .map_err(|e| Error::InvalidUrl(e.to_string()))
}

impl Connection {
    /// Connects to one Redis server, e.g. `redis://127.0.0.1:6379/`.
    pub async fn open(url: &str, options: &Options) -> Result<Self> {
        Self::open_info(connection_info(url)?, options).await
    }

    /// Connects to one Redis server described by a [`redis::ConnectionInfo`] (which can carry
    /// a password without it ever being in a URL).
    pub async fn open_info(info: redis::ConnectionInfo, options: &Options) -> Result<Self> {
        let t = options.timeout;
        let client = redis::Client::open(info)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(t))
            .set_response_timeout(Some(t))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(200));
        let manager = timed(t, async {
            ConnectionManager::new_with_config(client, config)
                .await
                .map_err(Error::from)
        })
        .await?;
        Ok(Connection {
            inner: Inner::Single(manager),
            timeout: t,
            round_trips: Arc::default(),
        })
    }

    /// Connects to a Redis Cluster through any of its nodes.
    pub async fn open_cluster(urls: &[&str], options: &Options) -> Result<Self> {
        let nodes = urls
            .iter()
            .map(|u| connection_info(u))
            .collect::<Result<Vec<_>>>()?;
        Self::open_cluster_nodes(nodes, options).await
    }

    /// Connects to a Redis Cluster through any of these nodes; the first node's username and
    /// password (if any) are used for every node.
    pub async fn open_cluster_nodes(
        nodes: Vec<redis::ConnectionInfo>,
        options: &Options,
    ) -> Result<Self> {
        let t = options.timeout;
        let auth = nodes.first().map(|n| n.redis_settings().clone());
        let mut builder = redis::cluster::ClusterClient::builder(nodes);
        if let Some(a) = auth {
            if let Some(u) = a.username() {
                builder = builder.username(u);
            }
            if let Some(p) = a.password() {
                builder = builder.password(p);
            }
        }
        let client = builder
            .connection_timeout(t)
            .response_timeout(t)
            .retries(2)
            .build()?;
        let conn = timed(t, async {
            client.get_async_connection().await.map_err(Error::from)
        })
        .await?;
        Ok(Connection {
            inner: Inner::Cluster(conn),
            timeout: t,
            round_trips: Arc::default(),
        })
    }

    /// Whether this is a cluster connection.
    pub fn is_cluster(&self) -> bool {
        matches!(self.inner, Inner::Cluster(_))
    }

    /// The per-operation timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How many requests (commands, pipelines, script calls) this connection and its clones
    /// have sent: on a standalone server each is one round trip (concurrent ones overlap).
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// A clone of the connection for one request, counted as one round trip.
    fn start(&self) -> Either {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        match &self.inner {
            Inner::Single(c) => Either::Single(c.clone()),
            Inner::Cluster(c) => Either::Cluster(c.clone()),
        }
    }

    /// Runs one command.
    pub async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T> {
        let mut c = self.start();
        let r = timed(self.timeout, async move {
            cmd.query_async(&mut c).await.map_err(Error::from)
        })
        .await;
        self.name_wrong_types(r, std::iter::once(cmd)).await
    }

    /// Runs a pipeline (standalone: one round trip; on a cluster every command of the pipeline
    /// must address the same hash slot).
    pub async fn pipe<T: FromRedisValue>(&self, pipe: &redis::Pipeline) -> Result<T> {
        let r = self.pipe_unnamed(pipe).await;
        self.name_wrong_types(r, pipe.cmd_iter()).await
    }

    /// [`Connection::pipe`] without naming the keys of a `WRONGTYPE` answer.
    async fn pipe_unnamed<T: FromRedisValue>(&self, pipe: &redis::Pipeline) -> Result<T> {
        let mut c = self.start();
        timed(self.timeout, async move {
            pipe.query_async(&mut c).await.map_err(Error::from)
        })
        .await
    }

    /// Turns a `WRONGTYPE` answer to `cmds` into [`Error::WrongType`] naming the keys (of those
    /// the commands address) that hold another type than bloomkit writes there: one more round
    /// trip (`TYPE` of each), on this error path only. (The keys of one request share a slot,
    /// so this works on a cluster too.)
    async fn name_wrong_types<'a, T>(
        &self,
        r: Result<T>,
        cmds: impl Iterator<Item = &'a Cmd>,
    ) -> Result<T> {
        let Err(Error::Server(e)) = r else { return r };
        if !crate::error::has_code(&e, "WRONGTYPE") {
            return Err(Error::Server(e));
        }
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for cmd in cmds {
            keys_of(cmd, &mut keys);
        }
        keys.sort();
        keys.dedup();
        keys.truncate(64);
        let mut types = redis::pipe();
        for k in &keys {
            types.cmd("TYPE").arg(k);
        }
        let Ok(types) = self.pipe_unnamed::<Vec<String>>(&types).await else {
            return Err(Error::Server(e));
        };
        let wrong = keys
            .iter()
            .zip(types)
            .filter(|(k, t)| t != "none" && t != expected_type(k))
            .map(|(k, t)| (String::from_utf8_lossy(k).into_owned(), t))
            .collect();
        Err(Error::WrongType(wrong))
    }

    /// Runs a Lua script by its SHA (EVALSHA), loading it on first use.
    pub async fn script<T: FromRedisValue>(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<T> {
        let mut cmd = script_cmd(script, keys, args.len());
        for a in args {
            cmd.arg(*a);
        }
        self.eval(script, &cmd).await
    }

    /// Runs `cmd`, an `EVALSHA` of `script` built by [`script_cmd`]; if the server does not
    /// know the script yet (`NOSCRIPT`), loads it and runs `cmd` again. (The `redis` crate's
    /// own `ScriptInvocation` allocates a buffer per argument; scripts here take thousands.)
    pub(crate) async fn eval<T: FromRedisValue>(&self, script: &Script, cmd: &Cmd) -> Result<T> {
        let mut c = self.start();
        let r = timed(self.timeout, async move {
            let no_script = redis::ErrorKind::Server(redis::ServerErrorKind::NoScript);
            let r = match cmd.query_async(&mut c).await {
                Err(e) if e.kind() == no_script => match script.load_async(&mut c).await {
                    Ok(_) => cmd.query_async(&mut c).await,
                    Err(e) => Err(e),
                },
                r => r,
            };
            r.map_err(Error::from)
        })
        .await;
        self.name_wrong_types(r, std::iter::once(cmd)).await
    }
}

/// Appends the keys `cmd` addresses: an `EVAL`/`EVALSHA`'s declared keys, else its first
/// argument (which, for the few commands here that take no key, names no existing key and is
/// then left out by `TYPE`'s `none`).
fn keys_of(cmd: &Cmd, out: &mut Vec<Vec<u8>>) {
    let args: Vec<&[u8]> = cmd
        .args_iter()
        .filter_map(|a| match a {
            redis::Arg::Simple(d) => Some(d),
            _ => None,
        })
        .collect();
    let Some(name) = args.first() else { return };
    if name.eq_ignore_ascii_case(b"EVALSHA") || name.eq_ignore_ascii_case(b"EVAL") {
        let n = args
            .get(2)
            .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
            .unwrap_or(0);
        out.extend(args.iter().skip(3).take(n).map(|k| k.to_vec()));
    } else if let Some(k) = args.get(1) {
        out.push(k.to_vec());
    }
}

/// The Redis type bloomkit keeps at `key`: a hash for metadata (`…:meta`) and Redisson configs
/// (`…:config`), a string for everything else.
fn expected_type(key: &[u8]) -> &'static str {
    if key.ends_with(b":meta") || key.ends_with(b":config") {
        "hash"
    } else {
        "string"
    }
}

/// An `EVALSHA` command of `script` with these keys, with room for `args` more arguments
/// (append them with `arg`, then run it with [`Connection::eval`]).
pub(crate) fn script_cmd(script: &Script, keys: &[&str], args: usize) -> Cmd {
    let mut cmd = Cmd::with_capacity(3 + keys.len() + args, 64 + 16 * args);
    cmd.arg("EVALSHA").arg(script.get_hash()).arg(keys.len());
    for k in keys {
        cmd.arg(*k);
    }
    cmd
}

/// Runs `fut` with a deadline; a timeout anywhere inside becomes `Error::Timeout(limit)`.
pub(crate) async fn timed<T>(
    limit: Duration,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(limit, fut).await {
        Ok(Err(Error::Timeout(_))) | Err(_) => Err(Error::Timeout(limit)),
        Ok(r) => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// URLs that do not parse are a typed error whose message names the reason and the
    /// expected form, never the URL (which may hold a password).
    #[test]
    fn bad_urls_are_invalid_url_errors_without_the_url() {
        for url in [
            "http://x",
            "not a url",
            "redis://host:6379/NAME",
            "redis://:s3cret@host:port/",
            "",
        ] {
            let e = connection_info(url).unwrap_err();
            let message = e.to_string();
            assert!(matches!(e, Error::InvalidUrl(_)), "{url}: {e:?}");
            assert!(message.contains("expected redis://"), "{message}");
            assert!(!message.contains("s3cret"), "{message}");
        }
        assert!(connection_info("redis://127.0.0.1:6379/0").is_ok());
    }
}
