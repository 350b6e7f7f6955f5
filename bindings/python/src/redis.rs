//! `bloomkit.redis`: the blocking filters of bloomkit-redis. Network waits run without the GIL.

use crate::elements::{for_each_chunk, with_key};
use crate::errors;
use crate::filters::positive;
use bloomkit_redis::blocking::{self, BlockingConnection};
use bloomkit_redis::{FilterOptions, Options, ScalableParams};
use pyo3::prelude::*;
use std::time::Duration;

fn connect(py: Python<'_>, url: &str, timeout: f64) -> PyResult<BlockingConnection> {
    if !(timeout > 0.0 && timeout.is_finite()) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
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
        _ => Err(pyo3::exceptions::PyValueError::new_err(
            "give both capacity and fpp (to create the filter) or neither (to open it)",
        )),
    }
}

fn key(element: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    with_key(element, |k| k.to_vec())
}

/// A filter kept in Redis under `name` (bloomkit's register-blocked layout), shared by every
/// process that opens it: Python, the `bloomkit` CLI and Rust services.
///
/// `RedisFilter(url, name, capacity, fpp)` creates it (or opens it if an identical one
/// exists); `RedisFilter(url, name)` opens an existing one.
#[pyclass(name = "RedisFilter", module = "bloomkit.redis", frozen)]
pub struct PyRedisFilter {
    inner: blocking::RedisFilter,
    name: String,
}

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
    ) -> PyResult<Self> {
        let sizing = sizing(capacity, fpp)?;
        let conn = connect(py, url, timeout)?;
        let inner = py
            .allow_threads(|| match sizing {
                Some((n, p)) => {
                    blocking::RedisFilter::create_on(&conn, name, n, p, FilterOptions::default())
                }
                None => blocking::RedisFilter::open(&conn, name),
            })
            .map_err(errors::redis)?;
        Ok(PyRedisFilter {
            inner,
            name: name.to_owned(),
        })
    }

    /// Adds an element; returns whether it was new.
    fn add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = key(element)?;
        py.allow_threads(|| self.inner.add(k.as_slice()))
            .map_err(errors::redis)
    }

    /// Adds an element and returns whether it was (probably) present before.
    fn check_and_add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(!self.add(py, element)?)
    }

    fn __contains__(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = key(element)?;
        py.allow_threads(|| self.inner.check(k.as_slice()))
            .map_err(errors::redis)
    }

    /// Adds every element of any iterable in a few round trips; for each, whether it was new.
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            answers.extend(self.inner.add_many(keys).map_err(errors::redis)?);
            Ok(())
        })?;
        Ok(answers)
    }

    /// Tests every element of any iterable in a few round trips; a list of bools.
    fn contains_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            answers.extend(self.inner.check_many(keys).map_err(errors::redis)?);
            Ok(())
        })?;
        Ok(answers)
    }

    /// The estimated number of distinct elements added.
    fn estimated_len(&self, py: Python<'_>) -> PyResult<f64> {
        py.allow_threads(|| self.inner.count())
            .map_err(errors::redis)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.estimated_len(py)?.max(0.0).round() as usize)
    }

    /// Removes every element (the filter stays, empty).
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.clear())
            .map_err(errors::redis)
    }

    /// Deletes the filter from Redis.
    fn delete(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.inner.clone();
        py.allow_threads(|| inner.delete()).map_err(errors::redis)
    }

    /// The filter's name in Redis.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("RedisFilter(name={:?})", self.name)
    }
}

/// A scalable filter in Redis: grows by layers, keeping the compound false-positive bound.
/// Created with `capacity` and `fpp` (the first layer's), opened without them.
#[pyclass(name = "ScalableRedisFilter", module = "bloomkit.redis", frozen)]
pub struct PyScalableRedisFilter {
    inner: blocking::ScalableRedisFilter,
    name: String,
}

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
    ) -> PyResult<Self> {
        let sizing = sizing(capacity, fpp)?;
        let conn = connect(py, url, timeout)?;
        let inner = py
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
        Ok(PyScalableRedisFilter {
            inner,
            name: name.to_owned(),
        })
    }

    /// Adds an element; returns whether it was new.
    fn add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = key(element)?;
        py.allow_threads(|| self.inner.add(k.as_slice()))
            .map_err(errors::redis)
    }

    /// Adds an element and returns whether it was (probably) present before.
    fn check_and_add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(!self.add(py, element)?)
    }

    fn __contains__(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = key(element)?;
        py.allow_threads(|| self.inner.check(k.as_slice()))
            .map_err(errors::redis)
    }

    /// Adds every element of any iterable; for each, whether it was new.
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            answers.extend(self.inner.add_many(keys).map_err(errors::redis)?);
            Ok(())
        })?;
        Ok(answers)
    }

    /// Tests every element of any iterable; a list of bools.
    fn contains_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            answers.extend(self.inner.check_many(keys).map_err(errors::redis)?);
            Ok(())
        })?;
        Ok(answers)
    }

    /// The estimated number of distinct elements added.
    fn estimated_len(&self, py: Python<'_>) -> PyResult<f64> {
        py.allow_threads(|| self.inner.count())
            .map_err(errors::redis)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.estimated_len(py)?.max(0.0).round() as usize)
    }

    /// Deletes the filter from Redis.
    fn delete(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.inner.clone();
        py.allow_threads(|| inner.delete()).map_err(errors::redis)
    }

    /// The filter's name in Redis.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("ScalableRedisFilter(name={:?})", self.name)
    }
}

/// A filter bit-exact with Redisson's `RBloomFilter` (Java): `RedissonFilter(url, name,
/// capacity, fpp)` is `tryInit(capacity, fpp)`; without them it opens one Redisson created.
#[pyclass(name = "RedissonFilter", module = "bloomkit.redis", frozen)]
pub struct PyRedissonFilter {
    inner: blocking::RedissonFilter,
    name: String,
}

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
    ) -> PyResult<Self> {
        let sizing = sizing(capacity, fpp)?;
        let conn = connect(py, url, timeout)?;
        let inner = py
            .allow_threads(|| match sizing {
                Some((n, p)) => blocking::RedissonFilter::create(&conn, name, n, p),
                None => blocking::RedissonFilter::open(&conn, name),
            })
            .map_err(errors::redis)?;
        Ok(PyRedissonFilter {
            inner,
            name: name.to_owned(),
        })
    }

    /// Adds an element; returns whether it was new.
    fn add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = key(element)?;
        py.allow_threads(|| self.inner.add(k.as_slice()))
            .map_err(errors::redis)
    }

    /// Adds an element and returns whether it was (probably) present before.
    fn check_and_add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(!self.add(py, element)?)
    }

    fn __contains__(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = key(element)?;
        py.allow_threads(|| self.inner.check(k.as_slice()))
            .map_err(errors::redis)
    }

    /// Adds every element of any iterable, one round trip each.
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            for k in keys {
                answers.push(self.inner.add(k).map_err(errors::redis)?);
            }
            Ok(())
        })?;
        Ok(answers)
    }

    /// Tests every element of any iterable; a list of bools.
    fn contains_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::new();
        for_each_chunk(elements, |keys| {
            for k in keys {
                answers.push(self.inner.check(k).map_err(errors::redis)?);
            }
            Ok(())
        })?;
        Ok(answers)
    }

    /// Redisson's `count()`: its estimate of the elements added.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let n = py
            .allow_threads(|| self.inner.count())
            .map_err(errors::redis)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The filter's name in Redis.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("RedissonFilter(name={:?})", self.name)
    }
}
