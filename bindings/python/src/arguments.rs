//! Arguments as Python passes them, checked here so that a bad one is refused in the user's
//! terms, naming it.
//!
//! - Integers ([`Whole`]): any `int`, however large, range-checked here so that a value out of
//!   range is a `ValueError` naming the argument. (pyo3's own conversion to a Rust integer
//!   raises `OverflowError` in C's words, "Python int too large to convert to C long", or "out
//!   of range integral type conversion attempted", naming nothing, and takes `True` as 1.)
//!   A `bool` or a non-integer is a `TypeError`: "capacity must be an integer, not bool".
//! - Binary data ([`BytesLike`]): `bytes`, `bytearray`, `memoryview` or any other object of the
//!   buffer protocol (pyo3's `&[u8]` takes `bytes` only).
//! - File paths ([`FsPath`]): `str`, `bytes` or any `os.PathLike`, as `open()` takes them
//!   (pyo3's `PathBuf` refuses `bytes`).

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyMemoryView};
use std::path::PathBuf;

/// What an integer argument held.
enum Given {
    /// An `int` that fits in an `i128`.
    Fits(i128),
    /// The decimal text of a larger `int`.
    Huge(String),
    /// The type name of something that is not an integer (`bool` included).
    NotInt(String),
}

/// An integer argument: a Python `int` or an object with `__index__`, refused by name when out
/// of range, a `bool` or of another type.
pub struct Whole(Given);

impl<'py> FromPyObject<'py> for Whole {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if obj.is_instance_of::<PyBool>() {
            return Ok(Whole(Given::NotInt("bool".into())));
        }
        let int = if obj.is_instance_of::<PyInt>() {
            obj.clone()
        } else {
            // `operator.index`: the `int` of an object with `__index__` (a NumPy integer);
            // pyo3's conversion under the limited API takes `int`s only.
            let index = obj.py().import("operator")?.getattr("index")?;
            match index.call1((obj,)) {
                Ok(int) => int,
                Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => {
                    return Ok(Whole(Given::NotInt(obj.get_type().name()?.to_string())))
                }
                Err(e) => return Err(e),
            }
        };
        match int.extract::<i128>() {
            Ok(v) => Ok(Whole(Given::Fits(v))),
            Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
                Ok(Whole(Given::Huge(int.str()?.to_string())))
            }
            Err(e) => Err(e),
        }
    }
}

impl From<i128> for Whole {
    /// A default value.
    fn from(v: i128) -> Self {
        Whole(Given::Fits(v))
    }
}

impl Whole {
    /// The value, if it is in `min..=max`; else a `ValueError` naming `name` (a `TypeError`
    /// for a `bool` or a non-integer).
    pub fn between(self, name: &str, min: i128, max: i128) -> PyResult<i128> {
        let (text, low) = match self.0 {
            Given::Fits(v) if (min..=max).contains(&v) => return Ok(v),
            Given::Fits(v) => (v.to_string(), v < min),
            Given::Huge(text) => (text.clone(), text.starts_with('-')),
            Given::NotInt(type_name) => {
                return Err(PyTypeError::new_err(format!(
                    "{name} must be an integer, not {type_name}"
                )))
            }
        };
        Err(PyValueError::new_err(match (low, min) {
            (true, 1) => format!("{name} must be a positive integer, got {text}"),
            (true, _) => format!("{name} must be at least {min}, got {text}"),
            (false, _) => format!("{name} {text} is too large: at most {max}"),
        }))
    }

    /// Any integer that fits in an `i128`.
    pub fn i128(self, name: &str) -> PyResult<i128> {
        self.between(name, i128::MIN, i128::MAX)
    }

    /// A count of at least 1 that fits in 64 bits.
    pub fn positive(self, name: &str) -> PyResult<u64> {
        Ok(self.between(name, 1, u64::MAX.into())? as u64)
    }

    /// A `u32` of at least `min`.
    pub fn u32_from(self, name: &str, min: u32) -> PyResult<u32> {
        Ok(self.between(name, min.into(), u32::MAX.into())? as u32)
    }

    /// A `u64` of at least `min`.
    pub fn u64_from(self, name: &str, min: u64) -> PyResult<u64> {
        Ok(self.between(name, min.into(), u64::MAX.into())? as u64)
    }
}

/// A binary-data argument: the `bytes` given (borrowed, not copied), or one copy of any other
/// bytes-like object (a `bytearray` or a buffer may change while the data is in use, the GIL
/// released). Anything else is a `TypeError`, "a bytes-like object is required, not 'str'",
/// in CPython's words.
pub struct BytesLike<'py>(Bound<'py, PyBytes>);

impl<'py> FromPyObject<'py> for BytesLike<'py> {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = obj.downcast::<PyBytes>() {
            return Ok(BytesLike(bytes.clone()));
        }
        // The buffer protocol itself is not in the limited API before Python 3.11; a
        // `memoryview` of the object is, and its `tobytes` is the one copy.
        let view = PyMemoryView::from(obj).map_err(|_| {
            let type_name = obj
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into());
            PyTypeError::new_err(format!(
                "a bytes-like object is required, not '{type_name}'"
            ))
        })?;
        Ok(BytesLike(view.call_method0("tobytes")?.downcast_into()?))
    }
}

impl BytesLike<'_> {
    /// The data.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// A file path argument: `str`, `bytes` or an `os.PathLike` of either, as `open()` takes them;
/// anything else is a `TypeError` in CPython's words ("expected str, bytes or os.PathLike
/// object, not int").
pub struct FsPath(pub PathBuf);

impl<'py> FromPyObject<'py> for FsPath {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let os = obj.py().import("os")?;
        #[cfg(unix)]
        {
            // A path is bytes to the OS: `os.fsencode` gives them, with the file system's
            // encoding and its escapes for undecodable names.
            use std::os::unix::ffi::OsStringExt;
            let encoded = os.getattr("fsencode")?.call1((obj,))?;
            let bytes = encoded.downcast::<PyBytes>()?.as_bytes().to_vec();
            Ok(FsPath(PathBuf::from(std::ffi::OsString::from_vec(bytes))))
        }
        #[cfg(not(unix))]
        {
            Ok(FsPath(os.getattr("fsdecode")?.call1((obj,))?.extract()?))
        }
    }
}

impl std::ops::Deref for FsPath {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}
