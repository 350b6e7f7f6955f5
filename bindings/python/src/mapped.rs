//! `bloomkit.MappedFilter`: a classic or blocked filter's native file mapped into memory
//! (`BloomFilter.open_mmap`, `BlockedBloomFilter.open_mmap`), read-only or read-write.
//!
//! A read-write mapping follows the file-sharing protocol of docs/FORMAT.md: each add of an
//! element not yet present (or batch of 4096) holds the file's exclusive lock while it sets the
//! dirty mark and the bits, and `flush` (or `close`, or the object's end) seals the file under
//! the same lock. Bits set in the shared mapping are in the page cache when the call returns,
//! so many processes can add to one file at once and none of their elements is lost. An element
//! whose bits are all set is answered without the lock: bits are never cleared in place.
//! Under the lock, the check that the path still names the mapped file (a whole-file save by
//! another process renames a new file over it) reads an inotify queue instead of a `stat` of
//! the path where it can (`bloomkit::path_watch`).

use crate::elements::{answers_hint, for_each_chunk, with_key, Element};
use crate::errors;
use bloomkit::mmap::MappedFilter as RustMappedFilter;
use bloomkit::path_watch::PathWatch;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// `errno` of a stale file handle (Linux and the BSDs agree on the name, not the number; the
/// message says what happened either way).
#[cfg(target_os = "linux")]
const ESTALE: i32 = 116;
#[cfg(not(target_os = "linux"))]
const ESTALE: i32 = 70;

/// A classic or blocked filter whose bits stay in its file: opening costs a header read
/// however large the filter, and a query touches only the pages it probes. Made by
/// `BloomFilter.open_mmap` or `BlockedBloomFilter.open_mmap`; a context manager. Nothing may
/// truncate the file while it is mapped: an access past its new end raises SIGBUS, which ends
/// the interpreter (Python cannot catch it); bloomkit's own saves rename a new file over the
/// path, which is safe.
#[pyclass(name = "MappedFilter", module = "bloomkit", frozen)]
pub struct MappedFilter {
    map: RustMappedFilter,
    path: PathBuf,
    /// Checks that the path (made absolute at open) still names the mapped file (writable
    /// mappings only: an inotify watch is a limited resource).
    watch: Option<PathWatch>,
    /// Whether this object set bits since the file was last sealed.
    wrote: AtomicBool,
    /// Held with the file's lock: `flock` excludes other open files, not the threads of this
    /// process that share this object's, so without it one thread's `flush` could seal the file
    /// between another's dirty mark and its bits (a clean mark over a stale checksum).
    writer: Mutex<()>,
}

impl MappedFilter {
    pub fn open(py: Python<'_>, path: PathBuf, writable: bool) -> PyResult<Self> {
        let map = py
            .allow_threads(|| {
                if !writable {
                    return RustMappedFilter::open(&path, &[]);
                }
                // Later seals vouch for the whole file: check it first (unless a writer left it
                // dirty, whose checksum is stale by design). Under a shared lock: writers mark the
                // file dirty and set bits only under the exclusive one, so a clean mark read here
                // stays true while the checksum is verified.
                let map = RustMappedFilter::open_shared(&path, &[])?;
                let file = map.file();
                file.lock_shared().map_err(|source| bloomkit::Error::Io {
                    context: format!("locking {}", path.display()),
                    source,
                })?;
                let checked = if map.is_dirty() { Ok(()) } else { map.verify() };
                let _ = file.unlock();
                checked?;
                Ok(map)
            })
            .map_err(errors::core)?;
        let identity = bloomkit::sharing::identity_of(map.file()).map_err(errors::core)?;
        let absolute = std::path::absolute(&path).map_err(|source| {
            errors::core(bloomkit::Error::Io {
                context: format!("resolving {}", path.display()),
                source,
            })
        })?;
        Ok(MappedFilter {
            map,
            watch: writable.then(|| PathWatch::new(&absolute, identity)),
            path,
            wrote: AtomicBool::new(false),
            writer: Mutex::new(()),
        })
    }

    fn require_writable(&self) -> PyResult<()> {
        if self.map.is_writable() {
            Ok(())
        } else {
            Err(PyTypeError::new_err(
                "this filter was mapped read-only: open it with open_mmap(path, writable=True) to change or flush it",
            ))
        }
    }

    /// Runs `f` holding the file's exclusive lock, after checking that the path still names
    /// the mapped file: bits set in a file another process replaced would be lost, so that is
    /// an `OSError` (open the path again) instead. With `py` (the GIL held) the lock is tried
    /// first without giving up the GIL, which costs more than the lock itself; only when another
    /// process holds it does the wait release the GIL. Without `py`, call it without the GIL.
    fn locked<R>(
        &self,
        py: Option<Python<'_>>,
        f: impl FnOnce() -> bloomkit::Result<R>,
    ) -> bloomkit::Result<R> {
        let _writer = self.lock_writer(py);
        let file = self.map.file();
        let locking = match py {
            Some(py) => match file.try_lock() {
                Ok(()) => Ok(()),
                Err(std::fs::TryLockError::WouldBlock) => py.allow_threads(|| file.lock()),
                Err(std::fs::TryLockError::Error(e)) => Err(e),
            },
            None => file.lock(),
        };
        locking.map_err(|source| bloomkit::Error::Io {
            context: format!("locking {}", self.path.display()),
            source,
        })?;
        let here = match &self.watch {
            Some(watch) => watch.still_here(),
            None => bloomkit::sharing::still_at(file, &self.path),
        };
        let result = match here {
            Ok(true) => f(),
            Ok(false) => Err(bloomkit::Error::Io {
                context: format!(
                    "{}: another process replaced or removed the file since it was mapped (open it again)",
                    self.path.display()
                ),
                source: std::io::Error::from_raw_os_error(ESTALE),
            }),
            Err(e) => Err(e),
        };
        let _ = file.unlock();
        result
    }

    /// Takes this object's writer mutex: tried first with the GIL held (as the file's lock);
    /// only a wait for another thread releases the GIL.
    fn lock_writer(&self, py: Option<Python<'_>>) -> MutexGuard<'_, ()> {
        loop {
            match (self.writer.try_lock(), py) {
                (Ok(guard), _) => return guard,
                // A thread that panicked under the mutex left nothing half-done that it guards.
                (Err(TryLockError::Poisoned(p)), _) => return p.into_inner(),
                // Waits without the GIL (a guard cannot leave `allow_threads`), then tries again.
                (Err(TryLockError::WouldBlock), Some(py)) => {
                    py.allow_threads(|| drop(self.writer.lock()))
                }
                (Err(TryLockError::WouldBlock), None) => {
                    return self.writer.lock().unwrap_or_else(|p| p.into_inner())
                }
            }
        }
    }

    /// Adds a batch in place under the lock; for each element, whether it was new.
    fn insert(
        &self,
        py: Option<Python<'_>>,
        keys: &[Element<'_>],
        new: &mut [bool],
    ) -> bloomkit::Result<()> {
        self.locked(py, || {
            self.map.mark_dirty()?;
            self.wrote.store(true, Ordering::Relaxed);
            self.map.insert_batch_into(keys, new).map(|_| ())
        })
    }

    fn seal(&self) -> bloomkit::Result<()> {
        if self.map.is_writable() && self.wrote.swap(false, Ordering::Relaxed) {
            match self.locked(None, || self.map.seal()) {
                // Replaced meanwhile: the new file is its writer's to seal.
                Err(bloomkit::Error::Io { source, .. })
                    if source.raw_os_error() == Some(ESTALE) => {}
                other => other?,
            }
        }
        Ok(())
    }
}

impl Drop for MappedFilter {
    fn drop(&mut self) {
        // A clean end seals the file; if this fails (or the process dies first) the file stays
        // marked dirty, and the next writer or checked reader re-seals it.
        let _ = self.seal();
    }
}

/// The single-element methods, which `meth_o.rs` defines on the Python class.
impl MappedFilter {
    /// Adds an element in place (read-write mappings only).
    pub(crate) fn add(&self, py: Python<'_>, element: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check_and_add(py, element).map(|_| ())
    }

    /// Adds an element and returns whether it was (probably) present before; only a
    /// (probably) new element takes the lock (the Python docstring in `meth_o.rs` says why).
    pub(crate) fn check_and_add(
        &self,
        py: Python<'_>,
        element: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.require_writable()?;
        let key = Element::of(element)?;
        if self.map.contains(&key) {
            return Ok(true);
        }
        let mut new = [false];
        self.insert(Some(py), std::slice::from_ref(&key), &mut new)
            .map_err(errors::core)?;
        Ok(!new[0])
    }
}

#[pymethods]
impl MappedFilter {
    fn __contains__(&self, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        with_key(element, |k| self.map.contains(k))
    }

    /// Tests every element of any iterable without the GIL; a list of bools.
    fn contains_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let mut answers = Vec::with_capacity(answers_hint(elements));
        for_each_chunk(elements, |keys| {
            let start = answers.len();
            answers.resize(start + keys.len(), false);
            self.map.contains_batch_into(keys, &mut answers[start..]);
            Ok(())
        })?;
        Ok(answers)
    }

    /// Adds every element of any iterable in place, 4096 per lock, without the GIL.
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<()> {
        self.require_writable()?;
        let mut new = Vec::new();
        for_each_chunk(elements, |keys| {
            new.resize(keys.len(), false);
            self.insert(None, keys, &mut new).map_err(errors::core)
        })
    }

    /// Seals the file now: recomputes its checksum and writes every change to disk.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.require_writable()?;
        self.wrote.store(true, Ordering::Relaxed);
        py.allow_threads(|| self.seal()).map_err(errors::core)
    }

    /// Seals the file if this object added to it (as `flush`); the mapping stays usable.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.seal()).map_err(errors::core)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Verifies the file's checksum (reads every page); `ValueError` if it does not match,
    /// as for a file a writer has open (see `dirty`).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.map.verify()).map_err(errors::core)
    }

    /// Whether adds are allowed.
    #[getter]
    fn writable(&self) -> bool {
        self.map.is_writable()
    }

    /// Whether the file is marked as open for in-place writing (its checksum is stale).
    #[getter]
    fn dirty(&self) -> bool {
        self.map.is_dirty()
    }

    /// `classic` or `blocked`.
    #[getter]
    fn kind(&self) -> String {
        self.map.kind().to_string()
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

    /// The design capacity recorded in the file.
    #[getter]
    fn capacity(&self) -> u64 {
        self.map.capacity()
    }

    /// The design false-positive probability recorded in the file.
    #[getter]
    fn fpp(&self) -> f64 {
        self.map.fpp()
    }

    /// The estimated number of distinct elements added, rounded (reads every page);
    /// `sys.maxsize` for a saturated filter (every bit set), whose estimate is infinite.
    fn __len__(&self) -> usize {
        crate::filters::len_of(self.map.estimated_len())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let path = PyString::new(py, &self.path.display().to_string()).repr()?;
        Ok(format!(
            "MappedFilter({path}, kind={}, writable={}, bits={}, hashes={})",
            self.kind(),
            if self.writable() { "True" } else { "False" },
            self.bits(),
            self.hashes()
        ))
    }
}
