//! `bloomkit.redis`: the filters of bloomkit-redis behind one base class, `SharedFilter`, with
//! a thin subclass per kind for its constructor. Network waits run without the GIL.
//!
//! Every kind is bloomkit-redis's blocking handle (`bloomkit_redis::blocking`), which runs the
//! async filter on a small runtime of its connection.

use crate::arguments::Whole;
use crate::elements::{for_each_chunk, with_key, Element};
use crate::errors;
use crate::windows::{generations_or_default, seconds};
use bloomkit_redis::blocking::{self, BlockingConnection};
use bloomkit_redis::{FilterOptions, Options, ScalableParams, WindowParams};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::PyClassInitializer;
use std::time::Duration;

type RedisResult<T> = bloomkit_redis::Result<T>;

/// The connection options of a `timeout` in seconds (`ValueError` unless it is at least a
/// millisecond and a duration Rust can hold).
fn options(timeout: f64) -> PyResult<Options> {
    match Duration::try_from_secs_f64(timeout) {
        Ok(timeout) if timeout >= Duration::from_millis(1) => Ok(Options { timeout }),
        _ => Err(PyValueError::new_err(format!(
            "timeout must be a number of seconds of at least 0.001, got {timeout:?}"
        ))),
    }
}

/// Both of capacity and fpp (create, or open if identical), or neither (open).
fn sizing(capacity: Option<Whole>, fpp: Option<f64>) -> PyResult<Option<(u64, f64)>> {
    match (capacity, fpp) {
        (Some(n), Some(p)) => Ok(Some((n.positive("capacity")?, p))),
        (None, None) => Ok(None),
        _ => Err(PyValueError::new_err(
            "give both capacity and fpp (to create the filter) or neither (to open it)",
        )),
    }
}

/// The filter kinds of bloomkit-redis.
enum Remote {
    Register(blocking::RedisFilter),
    Scalable(blocking::ScalableRedisFilter),
    Redisson(blocking::RedissonFilter),
    Counting(blocking::CountingRedisFilter),
    Window(blocking::TimeWindowRedisFilter),
}

/// `$body` for the filter `$f` of whichever kind `$remote` holds (the same method names on
/// every kind), or `$redisson` for a Redisson filter `$r` where it differs.
macro_rules! each_kind {
    ($remote:expr, $f:ident => $body:expr) => {
        each_kind!($remote, $f => $body; $f => $body)
    };
    ($remote:expr, $f:ident => $body:expr; $r:ident => $redisson:expr) => {
        match $remote {
            Remote::Register($f) => $body,
            Remote::Scalable($f) => $body,
            Remote::Redisson($r) => $redisson,
            Remote::Counting($f) => $body,
            Remote::Window($f) => $body,
        }
    };
}

impl Remote {
    fn insert(&self, key: &[u8]) -> RedisResult<bool> {
        each_kind!(self, f => f.insert(key))
    }

    fn contains(&self, key: &[u8]) -> RedisResult<bool> {
        each_kind!(self, f => f.contains(key))
    }

    fn insert_batch(&self, keys: &[Element<'_>]) -> RedisResult<Vec<bool>> {
        // Redisson's layout has no batch: one element at a time.
        each_kind!(self, f => f.insert_batch(keys); r => keys.iter().map(|k| r.insert(k)).collect())
    }

    fn contains_batch(&self, keys: &[Element<'_>]) -> RedisResult<Vec<bool>> {
        each_kind!(self, f => f.contains_batch(keys); r => keys.iter().map(|k| r.contains(k)).collect())
    }

    fn count(&self) -> RedisResult<f64> {
        match self {
            Remote::Register(f) => f.count(),
            Remote::Scalable(f) => f.count(),
            Remote::Redisson(r) => r.count().map(|n| n as f64),
            Remote::Counting(f) => Ok(f.info()?.estimated_count),
            Remote::Window(f) => f.count(),
        }
    }
}

/// Base class of the filters kept in Redis and shared by every process that opens them by
/// name: Python, the `bloomkit` CLI (`redis://HOST:PORT/NAME`) and Rust services.
#[pyclass(name = "SharedFilter", module = "bloomkit.redis", subclass, frozen)]
pub struct SharedFilter {
    remote: Remote,
    name: String,
    class: &'static str,
}

impl SharedFilter {
    /// Opens or creates a filter with `open` (given the connection options), without the GIL.
    fn build(
        py: Python<'_>,
        class: &'static str,
        name: &str,
        timeout: f64,
        open: impl FnOnce(&Options) -> RedisResult<Remote> + Send,
    ) -> PyResult<PyClassInitializer<Self>> {
        let options = options(timeout)?;
        let remote = py.allow_threads(|| open(&options)).map_err(errors::redis)?;
        Ok(PyClassInitializer::from(SharedFilter {
            remote,
            name: name.to_owned(),
            class,
        }))
    }

    fn unsupported(&self, what: &str) -> PyErr {
        PyTypeError::new_err(format!("a {} cannot {what}", self.class))
    }

    /// The counting filter, or a `TypeError` saying that this kind cannot `what`.
    fn counting(&self, what: &str) -> PyResult<&blocking::CountingRedisFilter> {
        match &self.remote {
            Remote::Counting(f) => Ok(f),
            _ => Err(self.unsupported(what)),
        }
    }
}

/// The key bytes of an element, owned (they cross into code without the GIL).
fn owned_key(element: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    with_key(element, |k| k.to_vec())
}

#[pymethods]
impl SharedFilter {
    /// Adds an element; returns whether it was new.
    fn add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = owned_key(element)?;
        py.allow_threads(|| self.remote.insert(&key))
            .map_err(errors::redis)
    }

    /// Adds an element and returns whether it was (probably) present before.
    fn check_and_add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(!self.add(py, element)?)
    }

    fn __contains__(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = owned_key(element)?;
        py.allow_threads(|| self.remote.contains(&key))
            .map_err(errors::redis)
    }

    /// Adds every element of any iterable, 4096 per batch of commands; for each, whether it
    /// was new. A failure stops it after the batches before it.
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            answers.extend(self.remote.insert_batch(keys).map_err(errors::redis)?);
            Ok(())
        })?;
        Ok(answers)
    }

    /// Tests every element of any iterable, 4096 per batch of commands; a list of bools.
    fn contains_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            answers.extend(self.remote.contains_batch(keys).map_err(errors::redis)?);
            Ok(())
        })?;
        Ok(answers)
    }

    /// Removes one occurrence of an element (`CountingRedisFilter` only; `TypeError`
    /// otherwise); `KeyError` if it cannot be in the filter (one of its counters is 0).
    fn remove(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<()> {
        let f = self.counting("remove elements")?;
        let key = owned_key(element)?;
        py.allow_threads(|| f.remove(key.as_slice()))
            .map_err(errors::redis)
    }

    /// Removes one occurrence of every element of any iterable (`CountingRedisFilter` only),
    /// 4096 per batch of commands; for each, whether it was there to remove.
    fn remove_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let f = self.counting("remove elements")?;
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            answers.extend(f.remove_batch(keys).map_err(errors::redis)?);
            Ok(())
        })?;
        Ok(answers)
    }

    /// An upper bound on how many times the element was added, at most 15
    /// (`CountingRedisFilter` only).
    fn count(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<u8> {
        let f = self.counting("count elements")?;
        let key = owned_key(element)?;
        let counts = py
            .allow_threads(|| f.count_batch(&[key.as_slice()]))
            .map_err(errors::redis)?;
        Ok(counts.first().copied().unwrap_or(0))
    }

    /// The estimated number of distinct elements added (Redisson's own count for a
    /// `RedissonFilter`).
    fn estimated_len(&self, py: Python<'_>) -> PyResult<f64> {
        py.allow_threads(|| self.remote.count())
            .map_err(errors::redis)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(crate::filters::len_of(self.estimated_len(py)?))
    }

    /// Removes every element; the filter stays (not a `ScalableRedisFilter` or a
    /// `RedissonFilter`).
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        let result = match &self.remote {
            Remote::Register(f) => py.allow_threads(|| f.clear()),
            Remote::Counting(f) => py.allow_threads(|| f.clear()),
            Remote::Window(f) => py.allow_threads(|| f.clear()),
            _ => return Err(self.unsupported("be cleared")),
        };
        result.map_err(errors::redis)
    }

    /// Deletes the filter from Redis (every kind but `RedissonFilter`).
    fn delete(&self, py: Python<'_>) -> PyResult<()> {
        let result = match &self.remote {
            Remote::Register(f) => py.allow_threads(|| f.clone().delete()),
            Remote::Scalable(f) => py.allow_threads(|| f.clone().delete()),
            Remote::Counting(f) => py.allow_threads(|| f.clone().delete()),
            Remote::Window(f) => py.allow_threads(|| f.clone().delete()),
            Remote::Redisson(_) => return Err(self.unsupported("be deleted from here")),
        };
        result.map_err(errors::redis)
    }

    /// The filter's name in Redis.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let name = pyo3::types::PyString::new(py, &self.name).repr()?;
        Ok(format!("{}(name={name})", self.class))
    }
}

/// The signature of the kinds created with `capacity` and `fpp` or opened without them:
/// `$open(options, url, name, sizing)` connects and opens or creates the filter.
macro_rules! sized_class {
    ($(#[$doc:meta])* $class:ident, $name:literal, $open:expr) => {
        $(#[$doc])*
        #[pyclass(name = $name, module = "bloomkit.redis", extends = SharedFilter, frozen)]
        pub struct $class;

        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (url, name, capacity = None, fpp = None, timeout = 5.0))]
            fn new(
                py: Python<'_>,
                url: &str,
                name: &str,
                capacity: Option<Whole>,
                fpp: Option<f64>,
                timeout: f64,
            ) -> PyResult<PyClassInitializer<Self>> {
                let sizing = sizing(capacity, fpp)?;
                let open: fn(&Options, &str, &str, Option<(u64, f64)>) -> RedisResult<Remote> =
                    $open;
                let init = SharedFilter::build(py, $name, name, timeout, |options| {
                    open(options, url, name, sizing)
                })?;
                Ok(init.add_subclass($class))
            }
        }
    };
}

sized_class!(
    /// A filter in bloomkit's register-blocked layout (an element's bits in one 64-bit word:
    /// one round trip per add or check). `RedisFilter(url, name, capacity, fpp)` creates it
    /// (or opens an identical one); `RedisFilter(url, name)` opens an existing one.
    PyRedisFilter,
    "RedisFilter",
    |options, url, name, sizing| {
        let conn = BlockingConnection::open(url, options)?;
        Ok(Remote::Register(match sizing {
            Some((n, p)) => {
                blocking::RedisFilter::create_on(&conn, name, n, p, FilterOptions::default())
            }
            None => blocking::RedisFilter::open(&conn, name),
        }?))
    }
);

sized_class!(
    /// A filter bit-exact with Redisson's `RBloomFilter` (Java): `RedissonFilter(url, name,
    /// capacity, fpp)` is `tryInit(capacity, fpp)`; without them it opens one Redisson
    /// created.
    PyRedissonFilter,
    "RedissonFilter",
    |options, url, name, sizing| {
        let conn = BlockingConnection::open(url, options)?;
        Ok(Remote::Redisson(match sizing {
            Some((n, p)) => blocking::RedissonFilter::create(&conn, name, n, p),
            None => blocking::RedissonFilter::open(&conn, name),
        }?))
    }
);

sized_class!(
    /// A counting filter in Redis (4-bit counters): `remove` works, and `count` bounds how
    /// many times an element was added. The CLI's `--kind counting` on
    /// `redis://HOST:PORT/NAME`. Created with `capacity` and `fpp`, opened without them.
    PyCountingRedisFilter,
    "CountingRedisFilter",
    |options, url, name, sizing| {
        let conn = BlockingConnection::open(url, options)?;
        Ok(Remote::Counting(match sizing {
            Some((n, p)) => blocking::CountingRedisFilter::create(&conn, name, n, p),
            None => blocking::CountingRedisFilter::open(&conn, name),
        }?))
    }
);

/// A scalable filter in Redis: grows by layers, keeping the compound false-positive bound
/// `fpp`. Created with `capacity` (the first layer's) and `fpp`, opened without them.
#[pyclass(name = "ScalableRedisFilter", module = "bloomkit.redis", extends = SharedFilter, frozen)]
pub struct PyScalableRedisFilter;

#[pymethods]
impl PyScalableRedisFilter {
    #[new]
    #[pyo3(
        signature = (url, name, capacity = None, fpp = None, growth = Whole::from(2), tightening = 0.5, timeout = 5.0),
        text_signature = "(url, name, capacity=None, fpp=None, growth=2, tightening=0.5, timeout=5.0)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &str,
        name: &str,
        capacity: Option<Whole>,
        fpp: Option<f64>,
        growth: Whole,
        tightening: f64,
        timeout: f64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let sizing = sizing(capacity, fpp)?;
        let growth = growth.u64_from("growth", 0)?;
        let init = SharedFilter::build(py, "ScalableRedisFilter", name, timeout, |options| {
            let conn = BlockingConnection::open(url, options)?;
            Ok(Remote::Scalable(match sizing {
                Some((n, p)) => {
                    let mut params = ScalableParams::new(n, p);
                    params.growth = growth;
                    params.tightening = tightening;
                    blocking::ScalableRedisFilter::create(&conn, name, params)
                }
                None => blocking::ScalableRedisFilter::open(&conn, name),
            }?))
        })?;
        Ok(init.add_subclass(PyScalableRedisFilter))
    }
}

/// A filter of what was added within the last `window` seconds, kept in Redis as generations
/// that Redis expires by itself (the CLI's `--window` on `redis://HOST:PORT/NAME`). Created
/// with `window`, `capacity` (insertions per window) and `fpp`, and `generations` (default:
/// 30, or `capacity` if smaller, as the CLI); opened with none of them. Each generation is
/// sized for `capacity / generations` insertions (an even rate): a burst beyond that within
/// one generation raises the FPR.
#[pyclass(name = "TimeWindowRedisFilter", module = "bloomkit.redis", extends = SharedFilter, frozen)]
pub struct PyTimeWindowRedisFilter;

#[pymethods]
impl PyTimeWindowRedisFilter {
    #[new]
    #[pyo3(signature = (url, name, window = None, capacity = None, fpp = None, generations = None, timeout = 5.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &str,
        name: &str,
        window: Option<f64>,
        capacity: Option<Whole>,
        fpp: Option<f64>,
        generations: Option<Whole>,
        timeout: f64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let params = match (window, sizing(capacity, fpp)?) {
            (Some(w), Some((n, p))) => {
                let generations = generations_or_default(generations, n)?;
                Some(WindowParams::new(seconds("window", w)?, generations, n, p))
            }
            (None, None) if generations.is_none() => None,
            _ => return Err(PyValueError::new_err(
                "give window, capacity and fpp (to create the filter) or none of them (to open it)",
            )),
        };
        let init = SharedFilter::build(py, "TimeWindowRedisFilter", name, timeout, |options| {
            let conn = BlockingConnection::open(url, options)?;
            Ok(Remote::Window(match params {
                Some(params) => blocking::TimeWindowRedisFilter::create(&conn, name, params),
                None => blocking::TimeWindowRedisFilter::open(&conn, name),
            }?))
        })?;
        Ok(init.add_subclass(PyTimeWindowRedisFilter))
    }

    /// The window, in seconds.
    #[getter]
    fn window(slf: PyRef<'_, Self>) -> f64 {
        match &slf.as_super().remote {
            Remote::Window(f) => f.params().window.as_secs_f64(),
            _ => 0.0,
        }
    }

    /// The number of generations.
    #[getter]
    fn generations(slf: PyRef<'_, Self>) -> u32 {
        match &slf.as_super().remote {
            Remote::Window(f) => f.params().generations,
            _ => 0,
        }
    }
}
