//! `bloomkit.MappedBloomFilter`: a classic filter's native file mapped into memory
//! (`BloomFilter.open_mmap`), read-only or read-write. The library's `MappedFilter` does the
//! work: a read-write mapping is shared with the file and written through atomics, so adds need
//! no lock here; the first add marks the file dirty and `flush` seals it again.

use crate::elements::{for_each_chunk, with_key};
use crate::errors;
use bloomkit::mmap::MappedFilter;
use bloomkit::{Key, Kind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;

/// A classic filter whose bits stay in its file: opening costs a header read however large the
/// filter, and a query touches only the pages it probes. Made by `BloomFilter.open_mmap`.
#[pyclass(name = "MappedBloomFilter", module = "bloomkit", frozen)]
pub struct MappedBloomFilter {
    map: MappedFilter,
    path: PathBuf,
}

impl MappedBloomFilter {
    pub fn open(py: Python<'_>, path: PathBuf, writable: bool) -> PyResult<Self> {
        let map = py
            .allow_threads(|| {
                if !writable {
                    return MappedFilter::open(&path, &[]);
                }
                // Later seals vouch for the whole file: check it first (unless a writer left it
                // dirty, whose checksum is stale by design).
                let m = MappedFilter::open_shared(&path, &[])?;
                if !m.is_dirty() {
                    m.verify()?;
                }
                Ok(m)
            })
            .map_err(errors::core)?;
        if map.kind() != Kind::Classic {
            return Err(PyValueError::new_err(format!(
                "only classic filters map as a MappedBloomFilter; {} holds a {} filter",
                path.display(),
                map.kind()
            )));
        }
        Ok(MappedBloomFilter { map, path })
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.map.contains(key)
    }

    /// The mapping, marked dirty, for adds (read-write mappings only).
    fn writer(&self) -> PyResult<&MappedFilter> {
        if !self.map.is_writable() {
            return Err(PyTypeError::new_err(
                "this filter was mapped read-only: open it with open_mmap(path, writable=True) to add",
            ));
        }
        self.map.mark_dirty().map_err(errors::core)?;
        Ok(&self.map)
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
        with_key(element, |k| writer.insert(k))?
            .map(|_| ())
            .map_err(errors::core)
    }

    /// Adds an element and returns whether it was (probably) present before.
    fn check_and_add(&self, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        let writer = self.writer()?;
        let new = with_key(element, |k| writer.insert(k))?.map_err(errors::core)?;
        Ok(!new)
    }

    /// Adds every element of any iterable without the GIL (read-write mappings only).
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<()> {
        let writer = self.writer()?;
        for_each_chunk(elements, |keys| {
            let mut new = vec![false; keys.len()];
            writer
                .insert_batch_into(keys, &mut new)
                .map(|_| ())
                .map_err(errors::core)
        })
    }

    /// Updates the checksum and writes every change to the file now.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        if !self.map.is_writable() {
            return Err(PyTypeError::new_err("this filter was mapped read-only"));
        }
        py.allow_threads(|| self.map.seal()).map_err(errors::core)
    }

    /// Verifies the file's checksum (reads every page; read-only mappings).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        if self.map.is_writable() {
            return Ok(());
        }
        py.allow_threads(|| self.map.verify()).map_err(errors::core)
    }

    /// Whether adds are allowed.
    #[getter]
    fn writable(&self) -> bool {
        self.map.is_writable()
    }

    /// Number of bits.
    #[getter]
    fn bits(&self) -> u64 {
        self.map.params().bits
    }

    /// Number of hash functions.
    #[getter]
    fn hashes(&self) -> u32 {
        self.map.params().hashes
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
