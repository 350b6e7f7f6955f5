//! Python elements to bloomkit keys: the bytes the Rust `Key` trait gives the same value.
//!
//! | Python | Rust | bytes |
//! |---|---|---|
//! | `str` | `&str` | UTF-8 |
//! | `bytes`, `bytearray` | `&[u8]` | themselves |
//! | `int` (and `bool`, an `int`) | `i64` | 8 bytes little-endian |
//!
//! The encoding itself is the core library's (`bloomkit::Key`); this module only picks the Rust
//! type a Python value stands for.

use bloomkit::Key;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyString};

/// The supported element types, as error messages name them.
pub const SUPPORTED: &str = "str, bytes or int";

fn type_error(obj: &Bound<'_, PyAny>) -> PyErr {
    let name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!("bloomkit elements must be {SUPPORTED}, not {name}"))
}

fn int_key(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    obj.extract::<i64>().map_err(|_| {
        PyOverflowError::new_err(
            "int elements must fit in a signed 64-bit integer (they are encoded as Rust i64)",
        )
    })
}

extern "C" {
    // Exported by the interpreter of every CPython 3 with this signature; part of the limited
    // API from 3.10 on, which is why pyo3's abi3-py39 declarations leave it out. Without it a
    // `str` would be copied into a new `bytes` object for every call.
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut pyo3::ffi::PyObject,
        size: *mut pyo3::ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}

/// The UTF-8 bytes of a `str`, without copying them (CPython keeps them in the object);
/// `UnicodeEncodeError` for a string with lone surrogates.
#[inline]
fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a [u8]> {
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live `str` (checked by the downcast) and the GIL is held (a `Bound`
    // exists). The function returns NULL with an exception set, or a pointer to `size` bytes
    // of UTF-8 that CPython caches inside the string object and keeps until the object dies;
    // the returned slice borrows `s`, so it cannot outlive the object.
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size);
        if data.is_null() {
            return Err(PyErr::fetch(s.py()));
        }
        Ok(std::slice::from_raw_parts(data.cast::<u8>(), size as usize))
    }
}

/// One element's key, borrowed from the Python object where that object is immutable.
pub enum Element<'a> {
    /// The UTF-8 of a `str` (as Rust's `&str`) or the contents of a `bytes` (as `&[u8]`).
    Bytes(&'a [u8]),
    /// An `int`, as Rust's `i64`.
    Int(i64),
    /// A copy of a `bytearray` (mutable, so not borrowed).
    Owned(Vec<u8>),
}

impl<'a> Element<'a> {
    /// The key of a Python object; a `TypeError` naming the supported types for others.
    #[inline]
    pub fn of(obj: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = obj.downcast::<PyString>() {
            return Ok(Element::Bytes(utf8(s)?));
        }
        if let Ok(b) = obj.downcast::<PyBytes>() {
            return Ok(Element::Bytes(b.as_bytes()));
        }
        if obj.is_instance_of::<PyInt>() {
            return Ok(Element::Int(int_key(obj)?));
        }
        if let Ok(b) = obj.downcast::<PyByteArray>() {
            return Ok(Element::Owned(b.to_vec()));
        }
        Err(type_error(obj))
    }
}

/// The encoding is the Rust types' own.
impl Key for Element<'_> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Element::Bytes(b) => b.encode(out),
            Element::Int(i) => i.encode(out),
            Element::Owned(v) => v.encode(out),
        }
    }

    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Element::Bytes(b) => b.with_bytes(f),
            Element::Int(i) => i.with_bytes(f),
            Element::Owned(v) => v.with_bytes(f),
        }
    }
}

/// Calls `f` with the element's key bytes; a `TypeError` for unsupported types.
#[inline]
pub fn with_key<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    Ok(Element::of(obj)?.with_bytes(f))
}

/// Batch methods take elements from their iterable this many at a time.
pub const CHUNK: usize = 4096;

/// Calls `f` without the GIL on the keys of each chunk of up to [`CHUNK`] elements of
/// `iterable` (any iterable: list, tuple, generator, ...). A chunk is checked completely
/// before `f` sees it; an element that is refused stops the iteration there, after the chunks
/// before it.
pub fn for_each_chunk(
    iterable: &Bound<'_, PyAny>,
    mut f: impl FnMut(&[Element<'_>]) -> PyResult<()> + Send,
) -> PyResult<()> {
    let py = iterable.py();
    let hint = iterable.len().unwrap_or(CHUNK).min(CHUNK);
    let mut iter = iterable.try_iter()?;
    let mut items = Vec::with_capacity(hint);
    loop {
        items.clear();
        for item in iter.by_ref().take(CHUNK) {
            items.push(item?);
        }
        if items.is_empty() {
            return Ok(());
        }
        let keys = items
            .iter()
            .map(Element::of)
            .collect::<PyResult<Vec<_>>>()?;
        py.allow_threads(|| f(&keys))?;
        if items.len() < CHUNK {
            return Ok(());
        }
    }
}
