//! Blocking versions of the filters, for code without an async runtime.
//!
//! Each handle owns a small single-threaded tokio runtime and runs the async operation on it;
//! the per-operation timeout of [`Options`] applies in the same way.
//!
//! ```no_run
//! use bloomkit_redis::blocking::RedisFilter;
//! use bloomkit_redis::Options;
//! let filter = RedisFilter::create("redis://127.0.0.1:6379/", "emails", 100_000, 0.01,
//!     &Options::default())?;
//! filter.insert("a@example.com")?;
//! assert!(filter.contains("a@example.com")?);
//! # Ok::<(), bloomkit_redis::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::{AddMethod, Connection, FilterOptions, Info, Options};
use bloomkit::probe::register::RegisterLayout;
use bloomkit::Key;
use std::sync::Arc;

fn runtime() -> Result<Arc<tokio::runtime::Runtime>> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Connection(redis::RedisError::from(e)))
}

/// A blocking connection (standalone or cluster) with its own runtime.
#[derive(Debug, Clone)]
pub struct BlockingConnection {
    rt: Arc<tokio::runtime::Runtime>,
    conn: Connection,
}

impl BlockingConnection {
    /// Connects to one server.
    pub fn open(url: &str, options: &Options) -> Result<Self> {
        let rt = runtime()?;
        let conn = rt.block_on(Connection::open(url, options))?;
        Ok(BlockingConnection { rt, conn })
    }

    /// Connects to a cluster.
    pub fn open_cluster(urls: &[&str], options: &Options) -> Result<Self> {
        let rt = runtime()?;
        let conn = rt.block_on(Connection::open_cluster(urls, options))?;
        Ok(BlockingConnection { rt, conn })
    }
}

/// Blocking [`crate::RedisFilter`].
#[derive(Debug, Clone)]
pub struct RedisFilter {
    rt: Arc<tokio::runtime::Runtime>,
    inner: crate::RedisFilter,
}

impl RedisFilter {
    /// Connects to `url` and creates (or opens, if identical) the filter `name` for `n`
    /// elements at FPR `p`.
    pub fn create(url: &str, name: &str, n: u64, p: f64, options: &Options) -> Result<Self> {
        let c = BlockingConnection::open(url, options)?;
        Self::create_on(&c, name, n, p, FilterOptions::default())
    }

    /// Creates (or opens, if identical) on an existing connection.
    pub fn create_on(
        c: &BlockingConnection,
        name: &str,
        n: u64,
        p: f64,
        options: FilterOptions,
    ) -> Result<Self> {
        let inner = c.rt.block_on(crate::RedisFilter::create_with(
            &c.conn, name, n, p, options,
        ))?;
        Ok(RedisFilter {
            rt: c.rt.clone(),
            inner,
        })
    }

    /// Creates from `(m, k)`.
    pub fn create_with_bits(
        c: &BlockingConnection,
        name: &str,
        m: u64,
        k: u32,
        options: FilterOptions,
    ) -> Result<Self> {
        let inner = c.rt.block_on(crate::RedisFilter::create_with_bits(
            &c.conn, name, m, k, options,
        ))?;
        Ok(RedisFilter {
            rt: c.rt.clone(),
            inner,
        })
    }

    /// Opens an existing filter by name.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        let inner = c.rt.block_on(crate::RedisFilter::open(&c.conn, name))?;
        Ok(RedisFilter {
            rt: c.rt.clone(),
            inner,
        })
    }

    /// The async filter underneath.
    pub fn as_async(&self) -> &crate::RedisFilter {
        &self.inner
    }

    /// Chooses how online adds are sent.
    pub fn set_add_method(&mut self, method: AddMethod) {
        self.inner.set_add_method(method);
    }

    /// The layout.
    pub fn layout(&self) -> &RegisterLayout {
        self.inner.layout()
    }

    /// See [`crate::RedisFilter::insert`].
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        self.rt.block_on(self.inner.insert(key))
    }

    /// See [`crate::RedisFilter::insert_batch`].
    pub fn insert_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        self.rt.block_on(self.inner.insert_batch(keys))
    }

    /// See [`crate::RedisFilter::insert_bulk`].
    pub fn insert_bulk<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        self.rt.block_on(self.inner.insert_bulk(keys))
    }

    /// See [`crate::RedisFilter::contains`].
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        self.rt.block_on(self.inner.contains(key))
    }

    /// See [`crate::RedisFilter::contains_batch`].
    pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        self.rt.block_on(self.inner.contains_batch(keys))
    }

    /// See [`crate::RedisFilter::count`].
    pub fn count(&self) -> Result<f64> {
        self.rt.block_on(self.inner.count())
    }

    /// See [`crate::RedisFilter::info`].
    pub fn info(&self) -> Result<Info> {
        self.rt.block_on(self.inner.info())
    }

    /// See [`crate::RedisFilter::clear`].
    pub fn clear(&self) -> Result<()> {
        self.rt.block_on(self.inner.clear())
    }

    /// See [`crate::RedisFilter::delete`].
    pub fn delete(self) -> Result<()> {
        self.rt.block_on(self.inner.delete())
    }
}

/// Blocking [`crate::RedissonFilter`].
#[derive(Debug, Clone)]
pub struct RedissonFilter {
    rt: Arc<tokio::runtime::Runtime>,
    inner: crate::RedissonFilter,
}

impl RedissonFilter {
    /// Like Redisson's `tryInit(n, p)` (see [`crate::RedissonFilter::create`]).
    pub fn create(c: &BlockingConnection, name: &str, n: u64, p: f64) -> Result<Self> {
        let inner =
            c.rt.block_on(crate::RedissonFilter::create(&c.conn, name, n, p))?;
        Ok(RedissonFilter {
            rt: c.rt.clone(),
            inner,
        })
    }

    /// Opens a filter Redisson created.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        let inner = c.rt.block_on(crate::RedissonFilter::open(&c.conn, name))?;
        Ok(RedissonFilter {
            rt: c.rt.clone(),
            inner,
        })
    }

    /// See [`crate::RedissonFilter::insert`].
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        self.rt.block_on(self.inner.insert(key))
    }

    /// See [`crate::RedissonFilter::contains`].
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        self.rt.block_on(self.inner.contains(key))
    }

    /// See [`crate::RedissonFilter::count`].
    pub fn count(&self) -> Result<u64> {
        self.rt.block_on(self.inner.count())
    }
}

/// Blocking [`crate::ScalableRedisFilter`].
#[derive(Debug, Clone)]
pub struct ScalableRedisFilter {
    rt: Arc<tokio::runtime::Runtime>,
    inner: crate::ScalableRedisFilter,
}

impl ScalableRedisFilter {
    /// Creates (or opens, if identical) a scalable filter.
    pub fn create(
        c: &BlockingConnection,
        name: &str,
        params: crate::ScalableParams,
    ) -> Result<Self> {
        let inner =
            c.rt.block_on(crate::ScalableRedisFilter::create(&c.conn, name, params))?;
        Ok(ScalableRedisFilter {
            rt: c.rt.clone(),
            inner,
        })
    }

    /// Opens an existing scalable filter.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        let inner =
            c.rt.block_on(crate::ScalableRedisFilter::open(&c.conn, name))?;
        Ok(ScalableRedisFilter {
            rt: c.rt.clone(),
            inner,
        })
    }

    /// See [`crate::ScalableRedisFilter::insert_batch`].
    pub fn insert_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        self.rt.block_on(self.inner.insert_batch(keys))
    }

    /// See [`crate::ScalableRedisFilter::insert`].
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        self.rt.block_on(self.inner.insert(key))
    }

    /// See [`crate::ScalableRedisFilter::contains_batch`].
    pub fn contains_batch<K: Key>(&self, keys: &[K]) -> Result<Vec<bool>> {
        self.rt.block_on(self.inner.contains_batch(keys))
    }

    /// See [`crate::ScalableRedisFilter::contains`].
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        self.rt.block_on(self.inner.contains(key))
    }

    /// See [`crate::ScalableRedisFilter::count`].
    pub fn count(&self) -> Result<f64> {
        self.rt.block_on(self.inner.count())
    }

    /// See [`crate::ScalableRedisFilter::info`].
    pub fn info(&self) -> Result<crate::ScalableInfo> {
        self.rt.block_on(self.inner.info())
    }

    /// See [`crate::ScalableRedisFilter::delete`].
    pub fn delete(self) -> Result<()> {
        self.rt.block_on(self.inner.delete())
    }
}
