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

/// Declares the blocking wrapper `$name` of the async filter `crate::$inner`: the struct,
/// `as_async`, the constructors `new { f = g(args); }` (`f(connection, args)` runs the async
/// `g(connection, args)` on the connection's runtime) and the methods, each running the async
/// method of the same name. Method kinds: `one` (an element `&K`), `batch` (`&[K]`), `none`
/// (no argument), `ttl` (a `Duration`), `consume` (`self`).
macro_rules! blocking_filter {
    (
        $name:ident, $inner:ident,
        new { $($ctor:ident = $async_ctor:ident($($arg:ident: $ty:ty),*);)* }
        { $($kind:ident $method:ident -> $ret:ty;)* }
    ) => {
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

            $(
                #[doc = concat!(
                    "[`crate::", stringify!($inner), "::", stringify!($async_ctor),
                    "`] on the connection `c`."
                )]
                pub fn $ctor(c: &BlockingConnection, $($arg: $ty),*) -> Result<Self> {
                    Self::made(c, crate::$inner::$async_ctor(&c.conn, $($arg),*))
                }
            )*

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

blocking_filter!(RedisFilter, RedisFilter, new {
    create_on = create_with(name: &str, n: u64, p: f64, options: FilterOptions);
    create_with_bits = create_with_bits(name: &str, m: u64, k: u32, options: FilterOptions);
    open = open(name: &str);
} {
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

    /// Chooses how online adds are sent.
    pub fn set_add_method(&mut self, method: AddMethod) {
        self.inner.set_add_method(method);
    }

    /// The layout.
    pub fn layout(&self) -> &RegisterLayout {
        self.inner.layout()
    }
}

blocking_filter!(RedissonFilter, RedissonFilter, new {
    create = create(name: &str, n: u64, p: f64);
    open = open(name: &str);
} {
    one insert -> bool;
    batch insert_batch -> Vec<bool>;
    one contains -> bool;
    batch contains_batch -> Vec<bool>;
    none count -> u64;
    ttl expire -> ();
    consume delete -> ();
});

blocking_filter!(ScalableRedisFilter, ScalableRedisFilter, new {
    create = create(name: &str, params: crate::ScalableParams);
    open = open(name: &str);
} {
    batch insert_batch -> Vec<bool>;
    one insert -> bool;
    batch contains_batch -> Vec<bool>;
    one contains -> bool;
    none count -> f64;
    none info -> crate::ScalableInfo;
    ttl expire -> ();
    consume delete -> ();
});

blocking_filter!(CountingRedisFilter, CountingRedisFilter, new {
    create = create(name: &str, n: u64, p: f64);
    create_with = create_with(name: &str, n: u64, p: f64, options: FilterOptions);
    open = open(name: &str);
    open_with = open_with(name: &str, hashing: Hashing);
} {
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
    /// The layout.
    pub fn layout(&self) -> &crate::CountingLayout {
        self.inner.layout()
    }

    /// The stored layout name, which fixes the probing (see
    /// [`crate::CountingRedisFilter::layout_name`]).
    pub fn layout_name(&self) -> &'static str {
        self.inner.layout_name()
    }
}

blocking_filter!(TimeWindowRedisFilter, TimeWindowRedisFilter, new {
    create = create(name: &str, params: crate::WindowParams);
    open = open(name: &str);
} {
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
    /// The window parameters.
    pub fn params(&self) -> &crate::WindowParams {
        self.inner.params()
    }
}
