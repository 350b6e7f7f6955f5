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

/// Calls `f` with the element's key bytes; a `TypeError` for unsupported types.
#[inline]
pub fn with_key<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(s) = obj.downcast::<PyString>() {
        // A `str` is the bytes of its UTF-8 encoding, as Rust's `&str`.
        return Ok(utf8(s)?.with_bytes(f));
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(b.as_bytes().with_bytes(f));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(int_key(obj)?.with_bytes(f));
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        return Ok(b.to_vec().with_bytes(f));
    }
    Err(type_error(obj))
}

/// Many elements' key bytes in one buffer, collected while holding the GIL so that the
/// probing can run without it.
#[derive(Default)]
pub struct Batch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Batch {
    /// Collects every element of `iterable` (any iterable: list, tuple, generator, ...).
    pub fn collect(iterable: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut batch = Batch::default();
        if let Ok(hint) = iterable.len() {
            batch.ends.reserve(hint);
        }
        for item in iterable.try_iter()? {
            let item = item?;
            with_key(&item, |b| batch.bytes.extend_from_slice(b))?;
            batch.ends.push(batch.bytes.len());
        }
        Ok(batch)
    }

    /// The keys, in order.
    pub fn keys(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let key = &self.bytes[start..end];
                start = end;
                key
            })
            .collect()
    }
}
