//! Blocking versions of the filters, for code without an async runtime.
//!
//! Each handle owns a small single-threaded tokio runtime and runs the async operation on it;
//! the per-operation timeout of [`Options`] applies in the same way. Every method is the async
//! filter's method of the same name (see there); [`as_async`](RedisFilter::as_async) gives the
//! async filter underneath.
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

use crate::counting::{CountingInfo, Inserted};
use crate::error::{Error, Result};
use crate::{AddMethod, Connection, FilterOptions, Info, Options};
use bloomkit::probe::register::RegisterLayout;
use bloomkit::{Hashing, Key};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

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

/// Declares the blocking wrapper `$name` of the async filter `crate::$inner`: the struct, a
/// constructor running an async one on the connection's runtime, `as_async`, and the listed
/// methods, each running the async method of the same name. Method kinds: `one` (an element
/// `&K`), `batch` (`&[K]`), `none` (no argument), `ttl` (a `Duration`), `consume` (`self`).
macro_rules! blocking_filter {
    ($name:ident, $inner:ident { $($kind:ident $method:ident -> $ret:ty;)* }) => {
        #[doc = concat!("Blocking [`crate::", stringify!($inner), "`].")]
        #[derive(Debug, Clone)]
        pub struct $name {
            rt: Arc<tokio::runtime::Runtime>,
            inner: crate::$inner,
        }

        impl $name {
            /// Runs `make` (which opens or creates the async filter) on the connection's runtime.
            fn made(
                c: &BlockingConnection,
                make: impl Future<Output = Result<crate::$inner>>,
            ) -> Result<Self> {
                Ok($name {
                    rt: c.rt.clone(),
                    inner: c.rt.block_on(make)?,
                })
            }

            /// The async filter underneath.
            pub fn as_async(&self) -> &crate::$inner {
                &self.inner
            }

            $(blocking_filter!(@method $kind $inner $method -> $ret);)*
        }
    };
    (@method one $inner:ident $method:ident -> $ret:ty) => {
        #[doc = concat!("See [`crate::", stringify!($inner), "::", stringify!($method), "`].")]
        pub fn $method<K: Key + ?Sized>(&self, key: &K) -> Result<$ret> {
            self.rt.block_on(self.inner.$method(key))
        }
    };
    (@method batch $inner:ident $method:ident -> $ret:ty) => {
        #[doc = concat!("See [`crate::", stringify!($inner), "::", stringify!($method), "`].")]
        pub fn $method<K: Key>(&self, keys: &[K]) -> Result<$ret> {
            self.rt.block_on(self.inner.$method(keys))
        }
    };
    (@method none $inner:ident $method:ident -> $ret:ty) => {
        #[doc = concat!("See [`crate::", stringify!($inner), "::", stringify!($method), "`].")]
        pub fn $method(&self) -> Result<$ret> {
            self.rt.block_on(self.inner.$method())
        }
    };
    (@method ttl $inner:ident $method:ident -> $ret:ty) => {
        #[doc = concat!("See [`crate::", stringify!($inner), "::", stringify!($method), "`].")]
        pub fn $method(&self, ttl: Duration) -> Result<$ret> {
            self.rt.block_on(self.inner.$method(ttl))
        }
    };
    (@method consume $inner:ident $method:ident -> $ret:ty) => {
        #[doc = concat!("See [`crate::", stringify!($inner), "::", stringify!($method), "`].")]
        pub fn $method(self) -> Result<$ret> {
            self.rt.block_on(self.inner.$method())
        }
    };
}

blocking_filter!(RedisFilter, RedisFilter {
    one insert -> bool;
    batch insert_batch -> Vec<bool>;
    batch insert_bulk -> Vec<bool>;
    one contains -> bool;
    batch contains_batch -> Vec<bool>;
    none count -> f64;
    none info -> Info;
    none clear -> ();
    ttl expire -> ();
    consume delete -> ();
});

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
        Self::made(
            c,
            crate::RedisFilter::create_with(&c.conn, name, n, p, options),
        )
    }

    /// Creates from `(m, k)`.
    pub fn create_with_bits(
        c: &BlockingConnection,
        name: &str,
        m: u64,
        k: u32,
        options: FilterOptions,
    ) -> Result<Self> {
        Self::made(
            c,
            crate::RedisFilter::create_with_bits(&c.conn, name, m, k, options),
        )
    }

    /// Opens an existing filter by name.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        Self::made(c, crate::RedisFilter::open(&c.conn, name))
    }

    /// Chooses how online adds are sent.
    pub fn set_add_method(&mut self, method: AddMethod) {
        self.inner.set_add_method(method);
    }

    /// The layout.
    pub fn layout(&self) -> &RegisterLayout {
        self.inner.layout()
    }
}

blocking_filter!(RedissonFilter, RedissonFilter {
    one insert -> bool;
    batch insert_batch -> Vec<bool>;
    one contains -> bool;
    batch contains_batch -> Vec<bool>;
    none count -> u64;
    ttl expire -> ();
    consume delete -> ();
});

impl RedissonFilter {
    /// Like Redisson's `tryInit(n, p)` (see [`crate::RedissonFilter::create`]).
    pub fn create(c: &BlockingConnection, name: &str, n: u64, p: f64) -> Result<Self> {
        Self::made(c, crate::RedissonFilter::create(&c.conn, name, n, p))
    }

    /// Opens a filter Redisson created.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        Self::made(c, crate::RedissonFilter::open(&c.conn, name))
    }
}

blocking_filter!(ScalableRedisFilter, ScalableRedisFilter {
    batch insert_batch -> Vec<bool>;
    one insert -> bool;
    batch contains_batch -> Vec<bool>;
    one contains -> bool;
    none count -> f64;
    none info -> crate::ScalableInfo;
    ttl expire -> ();
    consume delete -> ();
});

impl ScalableRedisFilter {
    /// Creates (or opens, if identical) a scalable filter.
    pub fn create(
        c: &BlockingConnection,
        name: &str,
        params: crate::ScalableParams,
    ) -> Result<Self> {
        Self::made(c, crate::ScalableRedisFilter::create(&c.conn, name, params))
    }

    /// Opens an existing scalable filter.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        Self::made(c, crate::ScalableRedisFilter::open(&c.conn, name))
    }
}

blocking_filter!(CountingRedisFilter, CountingRedisFilter {
    one insert -> bool;
    batch insert_batch -> Vec<bool>;
    batch insert_batch_report -> Inserted;
    one contains -> bool;
    batch contains_batch -> Vec<bool>;
    batch count_batch -> Vec<u8>;
    one remove -> ();
    batch remove_batch -> Vec<bool>;
    none info -> CountingInfo;
    none clear -> ();
    ttl expire -> ();
    consume delete -> ();
});

impl CountingRedisFilter {
    /// Creates (or opens, if identical) the counting filter `name` for `n` elements at FPR
    /// `p`, hashing with XXH3 (see [`crate::CountingRedisFilter::create`]).
    pub fn create(c: &BlockingConnection, name: &str, n: u64, p: f64) -> Result<Self> {
        Self::create_with(c, name, n, p, FilterOptions::default())
    }

    /// [`create`](Self::create) with options (hashing and segment size).
    pub fn create_with(
        c: &BlockingConnection,
        name: &str,
        n: u64,
        p: f64,
        options: FilterOptions,
    ) -> Result<Self> {
        Self::made(
            c,
            crate::CountingRedisFilter::create_with(&c.conn, name, n, p, options),
        )
    }

    /// Opens an existing counting filter by name.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        Self::made(c, crate::CountingRedisFilter::open(&c.conn, name))
    }

    /// Opens an existing counting filter with this hash function (it must match the stored
    /// hashing id).
    pub fn open_with(c: &BlockingConnection, name: &str, hashing: Hashing) -> Result<Self> {
        Self::made(
            c,
            crate::CountingRedisFilter::open_with(&c.conn, name, hashing),
        )
    }

    /// The layout.
    pub fn layout(&self) -> &crate::CountingLayout {
        self.inner.layout()
    }
}

blocking_filter!(TimeWindowRedisFilter, TimeWindowRedisFilter {
    one insert -> bool;
    batch insert_batch -> Vec<bool>;
    one contains -> bool;
    batch contains_batch -> Vec<bool>;
    none count -> f64;
    none info -> crate::WindowInfo;
    none clear -> ();
    ttl expire -> ();
    consume delete -> ();
});

impl TimeWindowRedisFilter {
    /// Creates (or opens, if identical) the time-window filter `name`, hashing with XXH3 and
    /// reading the system clock (see [`crate::TimeWindowRedisFilter::create`]).
    pub fn create(c: &BlockingConnection, name: &str, params: crate::WindowParams) -> Result<Self> {
        Self::made(
            c,
            crate::TimeWindowRedisFilter::create(&c.conn, name, params),
        )
    }

    /// Opens an existing time-window filter by name.
    pub fn open(c: &BlockingConnection, name: &str) -> Result<Self> {
        Self::made(c, crate::TimeWindowRedisFilter::open(&c.conn, name))
    }

    /// The window parameters.
    pub fn params(&self) -> &crate::WindowParams {
        self.inner.params()
    }
}
