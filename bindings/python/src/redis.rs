//! `bloomkit.redis`: the blocking filters of bloomkit-redis behind one base class,
//! `SharedFilter`, with a thin subclass per kind for its constructor. Network waits run
//! without the GIL.

use crate::elements::{for_each_chunk, with_key, Element};
use crate::errors;
use crate::filters::positive;
use bloomkit_redis::blocking::{self, BlockingConnection};
use bloomkit_redis::{FilterOptions, Options, ScalableParams};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::PyClassInitializer;
use std::time::Duration;

fn connect(py: Python<'_>, url: &str, timeout: f64) -> PyResult<BlockingConnection> {
    if !(timeout > 0.0 && timeout.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "timeout must be a positive number of seconds, got {timeout}"
        )));
    }
    let options = Options {
        timeout: Duration::from_secs_f64(timeout),
    };
    py.allow_threads(|| BlockingConnection::open(url, &options))
        .map_err(errors::redis)
}

/// Both of capacity and fpp (create, or open if identical), or neither (open).
fn sizing(capacity: Option<i128>, fpp: Option<f64>) -> PyResult<Option<(u64, f64)>> {
    match (capacity, fpp) {
        (Some(n), Some(p)) => Ok(Some((positive("capacity", n)?, p))),
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
}

impl Remote {
    fn insert(&self, key: &[u8]) -> bloomkit_redis::Result<bool> {
        match self {
            Remote::Register(f) => f.insert(key),
            Remote::Scalable(f) => f.insert(key),
            Remote::Redisson(f) => f.insert(key),
        }
    }

    fn contains(&self, key: &[u8]) -> bloomkit_redis::Result<bool> {
        match self {
            Remote::Register(f) => f.contains(key),
            Remote::Scalable(f) => f.contains(key),
            Remote::Redisson(f) => f.contains(key),
        }
    }

    fn insert_batch(&self, keys: &[Element<'_>]) -> bloomkit_redis::Result<Vec<bool>> {
        match self {
            Remote::Register(f) => f.insert_batch(keys),
            Remote::Scalable(f) => f.insert_batch(keys),
            Remote::Redisson(f) => keys.iter().map(|k| f.insert(k)).collect(),
        }
    }

    fn contains_batch(&self, keys: &[Element<'_>]) -> bloomkit_redis::Result<Vec<bool>> {
        match self {
            Remote::Register(f) => f.contains_batch(keys),
            Remote::Scalable(f) => f.contains_batch(keys),
            Remote::Redisson(f) => keys.iter().map(|k| f.contains(k)).collect(),
        }
    }

    fn count(&self) -> bloomkit_redis::Result<f64> {
        match self {
            Remote::Register(f) => f.count(),
            Remote::Scalable(f) => f.count(),
            Remote::Redisson(f) => f.count().map(|n| n as f64),
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
    fn init(remote: Remote, name: &str, class: &'static str) -> PyClassInitializer<Self> {
        PyClassInitializer::from(SharedFilter {
            remote,
            name: name.to_owned(),
            class,
        })
    }

    fn unsupported(&self, what: &str) -> PyErr {
        PyTypeError::new_err(format!("a {} cannot {what}", self.class))
    }
}

#[pymethods]
impl SharedFilter {
    /// Adds an element; returns whether it was new.
    fn add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = with_key(element, |k| k.to_vec())?;
        py.allow_threads(|| self.remote.insert(&key))
            .map_err(errors::redis)
    }

    /// Adds an element and returns whether it was (probably) present before.
    fn check_and_add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(!self.add(py, element)?)
    }

    fn __contains__(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = with_key(element, |k| k.to_vec())?;
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

    /// The estimated number of distinct elements added (Redisson's own count for a
    /// `RedissonFilter`).
    fn estimated_len(&self, py: Python<'_>) -> PyResult<f64> {
        py.allow_threads(|| self.remote.count())
            .map_err(errors::redis)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.estimated_len(py)?.max(0.0).round() as usize)
    }

    /// Removes every element; the filter stays (`RedisFilter` only).
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        match &self.remote {
            Remote::Register(f) => py.allow_threads(|| f.clear()).map_err(errors::redis),
            _ => Err(self.unsupported("be cleared")),
        }
    }

    /// Deletes the filter from Redis (`RedisFilter` and `ScalableRedisFilter`).
    fn delete(&self, py: Python<'_>) -> PyResult<()> {
        let result = match &self.remote {
            Remote::Register(f) => {
                let f = f.clone();
                py.allow_threads(|| f.delete())
            }
            Remote::Scalable(f) => {
                let f = f.clone();
                py.allow_threads(|| f.delete())
            }
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

/// A filter in bloomkit's register-blocked layout (an element's bits in one 64-bit word: one
/// round trip per add or check). `RedisFilter(url, name, capacity, fpp)` creates it (or opens
/// an identical one); `RedisFilter(url, name)` opens an existing one.
#[pyclass(name = "RedisFilter", module = "bloomkit.redis", extends = SharedFilter, frozen)]
pub struct PyRedisFilter;

#[pymethods]
impl PyRedisFilter {
    #[new]
    #[pyo3(signature = (url, name, capacity = None, fpp = None, timeout = 5.0))]
    fn new(
        py: Python<'_>,
        url: &str,
        name: &str,
        capacity: Option<i128>,
        fpp: Option<f64>,
        timeout: f64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let sizing = sizing(capacity, fpp)?;
        let conn = connect(py, url, timeout)?;
        let filter = py
            .allow_threads(|| match sizing {
                Some((n, p)) => {
                    blocking::RedisFilter::create_on(&conn, name, n, p, FilterOptions::default())
                }
                None => blocking::RedisFilter::open(&conn, name),
            })
            .map_err(errors::redis)?;
        Ok(
            SharedFilter::init(Remote::Register(filter), name, "RedisFilter")
                .add_subclass(PyRedisFilter),
        )
    }
}

/// A scalable filter in Redis: grows by layers, keeping the compound false-positive bound
/// `fpp`. Created with `capacity` (the first layer's) and `fpp`, opened without them.
#[pyclass(name = "ScalableRedisFilter", module = "bloomkit.redis", extends = SharedFilter, frozen)]
pub struct PyScalableRedisFilter;

#[pymethods]
impl PyScalableRedisFilter {
    #[new]
    #[pyo3(signature = (url, name, capacity = None, fpp = None, growth = 2, tightening = 0.5, timeout = 5.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &str,
        name: &str,
        capacity: Option<i128>,
        fpp: Option<f64>,
        growth: u64,
        tightening: f64,
        timeout: f64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let sizing = sizing(capacity, fpp)?;
        let conn = connect(py, url, timeout)?;
        let filter = py
            .allow_threads(|| match sizing {
                Some((n, p)) => {
                    let mut params = ScalableParams::new(n, p);
                    params.growth = growth;
                    params.tightening = tightening;
                    blocking::ScalableRedisFilter::create(&conn, name, params)
                }
                None => blocking::ScalableRedisFilter::open(&conn, name),
            })
            .map_err(errors::redis)?;
        Ok(
            SharedFilter::init(Remote::Scalable(filter), name, "ScalableRedisFilter")
                .add_subclass(PyScalableRedisFilter),
        )
    }
}

/// A filter bit-exact with Redisson's `RBloomFilter` (Java): `RedissonFilter(url, name,
/// capacity, fpp)` is `tryInit(capacity, fpp)`; without them it opens one Redisson created.
#[pyclass(name = "RedissonFilter", module = "bloomkit.redis", extends = SharedFilter, frozen)]
pub struct PyRedissonFilter;

#[pymethods]
impl PyRedissonFilter {
    #[new]
    #[pyo3(signature = (url, name, capacity = None, fpp = None, timeout = 5.0))]
    fn new(
        py: Python<'_>,
        url: &str,
        name: &str,
        capacity: Option<i128>,
        fpp: Option<f64>,
        timeout: f64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let sizing = sizing(capacity, fpp)?;
        let conn = connect(py, url, timeout)?;
        let filter = py
            .allow_threads(|| match sizing {
                Some((n, p)) => blocking::RedissonFilter::create(&conn, name, n, p),
                None => blocking::RedissonFilter::open(&conn, name),
            })
            .map_err(errors::redis)?;
        Ok(
            SharedFilter::init(Remote::Redisson(filter), name, "RedissonFilter")
                .add_subclass(PyRedissonFilter),
        )
    }
}
