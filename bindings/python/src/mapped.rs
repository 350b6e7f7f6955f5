//! `bloomkit.MappedBloomFilter`: a classic filter's native file mapped into memory
//! (`BloomFilter.open_mmap`), read-only or read-write.

use crate::elements::{for_each_chunk, with_key};
use crate::errors;
use bloomkit::mmap::{MmapBloomFilter, MmapBloomFilterMut};
use bloomkit::Key;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

enum Map {
    ReadOnly(MmapBloomFilter),
    Writable(Mutex<MmapBloomFilterMut>),
}

fn lock(m: &Mutex<MmapBloomFilterMut>) -> MutexGuard<'_, MmapBloomFilterMut> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A classic filter whose bits stay in its file: opening costs a header read however large the
/// filter, and a query touches only the pages it probes. Made by `BloomFilter.open_mmap`.
#[pyclass(name = "MappedBloomFilter", module = "bloomkit", frozen)]
pub struct MappedBloomFilter {
    map: Map,
    path: PathBuf,
}

impl MappedBloomFilter {
    pub fn open(py: Python<'_>, path: PathBuf, writable: bool) -> PyResult<Self> {
        let map = py
            .allow_threads(|| {
                if writable {
                    MmapBloomFilterMut::open(&path, &[]).map(|m| Map::Writable(Mutex::new(m)))
                } else {
                    MmapBloomFilter::open(&path, &[]).map(Map::ReadOnly)
                }
            })
            .map_err(errors::core)?;
        Ok(MappedBloomFilter { map, path })
    }

    fn contains(&self, key: &[u8]) -> bool {
        match &self.map {
            Map::ReadOnly(m) => m.contains(key),
            Map::Writable(m) => lock(m).contains(key),
        }
    }

    fn writer(&self) -> PyResult<&Mutex<MmapBloomFilterMut>> {
        match &self.map {
            Map::Writable(m) => Ok(m),
            Map::ReadOnly(_) => Err(PyTypeError::new_err(
                "this filter was mapped read-only: open it with open_mmap(path, writable=True) to add",
            )),
        }
    }

    fn spec(&self) -> bloomkit::Spec {
        match &self.map {
            Map::ReadOnly(m) => m.spec().clone(),
            Map::Writable(m) => lock(m).spec().clone(),
        }
    }
}

#[pymethods]
impl MappedBloomFilter {
    fn __contains__(&self, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        with_key(element, |k| self.contains(k))
    }

    /// Tests every element of any iterable without the GIL; a list of bools.
    fn contains_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::with_capacity(elements.len().unwrap_or(0));
        for_each_chunk(elements, |keys| {
            answers.extend(keys.iter().map(|k| k.with_bytes(|b| self.contains(b))));
            Ok(())
        })?;
        Ok(answers)
    }

    /// Adds an element in place (read-write mappings only).
    fn add(&self, element: &Bound<'_, PyAny>) -> PyResult<()> {
        let writer = self.writer()?;
        with_key(element, |k| {
            lock(writer).insert(k);
        })
    }

    /// Adds an element and returns whether it was (probably) present before.
    fn check_and_add(&self, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let writer = self.writer()?;
        with_key(element, |k| !lock(writer).insert(k))
    }

    /// Adds every element of any iterable without the GIL (read-write mappings only).
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<()> {
        let writer = self.writer()?;
        for_each_chunk(elements, |keys| {
            let mut w = lock(writer);
            for k in keys {
                w.insert(k);
            }
            Ok(())
        })
    }

    /// Updates the checksum and writes every change to the file now.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let writer = self.writer()?;
        py.allow_threads(|| lock(writer).flush())
            .map_err(errors::core)
    }

    /// Verifies the file's checksum (reads every page; read-only mappings).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        match &self.map {
            Map::ReadOnly(m) => py.allow_threads(|| m.verify()).map_err(errors::core),
            Map::Writable(_) => Ok(()),
        }
    }

    /// Whether adds are allowed.
    #[getter]
    fn writable(&self) -> bool {
        matches!(self.map, Map::Writable(_))
    }

    /// Number of bits.
    #[getter]
    fn bits(&self) -> u64 {
        self.spec().bits()
    }

    /// Number of hash functions.
    #[getter]
    fn hashes(&self) -> u32 {
        self.spec().hashes()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let path = pyo3::types::PyString::new(py, &self.path.display().to_string()).repr()?;
        Ok(format!(
            "MappedBloomFilter({path}, writable={}, bits={}, hashes={})",
            if self.writable() { "True" } else { "False" },
            self.bits(),
            self.hashes()
        ))
    }
}
