//! Integer arguments as Python passes them: any `int`, however large, range-checked here so
//! that a value out of range is a `ValueError` naming the argument. (pyo3's own conversion to
//! a Rust integer raises `OverflowError` in C's words, "Python int too large to convert to C
//! long", or "out of range integral type conversion attempted", naming nothing.)

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;

/// A Python `int` argument (`TypeError` for other types, as for a Rust integer argument):
/// its value, or its decimal text when it does not fit in an `i128`.
pub struct Whole(Result<i128, String>);

impl<'py> FromPyObject<'py> for Whole {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<i128>() {
            Ok(v) => Ok(Whole(Ok(v))),
            Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
                Ok(Whole(Err(obj.str()?.to_string())))
            }
            Err(e) => Err(e),
        }
    }
}

impl From<i128> for Whole {
    /// A default value.
    fn from(v: i128) -> Self {
        Whole(Ok(v))
    }
}

impl Whole {
    /// The value, if it is in `min..=max`; else a `ValueError` naming `name`.
    fn in_range(self, name: &str, min: i128, max: i128) -> PyResult<i128> {
        let (text, low) = match self.0 {
            Ok(v) if (min..=max).contains(&v) => return Ok(v),
            Ok(v) => (v.to_string(), v < min),
            Err(text) => (text.clone(), text.starts_with('-')),
        };
        Err(PyValueError::new_err(match (low, min) {
            (true, 1) => format!("{name} must be a positive integer, got {text}"),
            (true, _) => format!("{name} must be at least {min}, got {text}"),
            (false, _) => format!("{name} {text} is too large: at most {max}"),
        }))
    }

    /// Any integer that fits in an `i128`.
    pub fn i128(self, name: &str) -> PyResult<i128> {
        self.in_range(name, i128::MIN, i128::MAX)
    }

    /// A count of at least 1 that fits in 64 bits.
    pub fn positive(self, name: &str) -> PyResult<u64> {
        Ok(self.in_range(name, 1, u64::MAX.into())? as u64)
    }

    /// A `u32` of at least `min`.
    pub fn u32_from(self, name: &str, min: u32) -> PyResult<u32> {
        Ok(self.in_range(name, min.into(), u32::MAX.into())? as u32)
    }

    /// A `u64` of at least `min`.
    pub fn u64_from(self, name: &str, min: u64) -> PyResult<u64> {
        Ok(self.in_range(name, min.into(), u64::MAX.into())? as u64)
    }
}
