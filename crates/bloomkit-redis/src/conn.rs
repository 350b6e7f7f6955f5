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

impl Connection {
    /// Connects to one Redis server, e.g. `redis://127.0.0.1:6379/`.
    pub async fn open(url: &str, options: &Options) -> Result<Self> {
        let info = redis::IntoConnectionInfo::into_connection_info(url)?;
        Self::open_info(info, options).await
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
            .map(|u| redis::IntoConnectionInfo::into_connection_info(*u))
            .collect::<redis::RedisResult<Vec<_>>>()?;
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

    fn count_round_trip(&self) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs one command.
    pub async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T> {
        self.count_round_trip();
        let fut = async {
            let r: redis::RedisResult<T> = match &self.inner {
                Inner::Single(c) => cmd.query_async(&mut c.clone()).await,
                Inner::Cluster(c) => cmd.query_async(&mut c.clone()).await,
            };
            r.map_err(Error::from)
        };
        timed(self.timeout, fut).await
    }

    /// Runs a pipeline (standalone: one round trip; on a cluster every command of the pipeline
    /// must address the same hash slot).
    pub async fn pipe<T: FromRedisValue>(&self, pipe: &redis::Pipeline) -> Result<T> {
        self.count_round_trip();
        let fut = async {
            let r: redis::RedisResult<T> = match &self.inner {
                Inner::Single(c) => pipe.query_async(&mut c.clone()).await,
                Inner::Cluster(c) => pipe.query_async(&mut c.clone()).await,
            };
            r.map_err(Error::from)
        };
        timed(self.timeout, fut).await
    }

    /// Runs a Lua script by its SHA (EVALSHA), loading it on first use.
    pub async fn script<T: FromRedisValue>(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<T> {
        let mut inv = script.prepare_invoke();
        for k in keys {
            inv.key(*k);
        }
        for a in args {
            inv.arg(*a);
        }
        self.invoke(&inv).await
    }

    /// Runs a prepared script invocation (EVALSHA, loading the script on first use).
    pub(crate) async fn invoke<T: FromRedisValue>(
        &self,
        inv: &redis::ScriptInvocation<'_>,
    ) -> Result<T> {
        self.count_round_trip();
        let fut = async {
            let r: redis::RedisResult<T> = match &self.inner {
                Inner::Single(c) => inv.invoke_async(&mut c.clone()).await,
                Inner::Cluster(c) => inv.invoke_async(&mut c.clone()).await,
            };
            r.map_err(Error::from)
        };
        timed(self.timeout, fut).await
    }
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
