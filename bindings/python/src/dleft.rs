//! `bloomkit.DLeftCountingFilter`: the d-left counting filter (fingerprints in a d-left hash
//! table), which removes elements like a counting Bloom filter in about half its memory.

use crate::arguments::Whole;
use crate::elements::with_key;
use crate::filters::{sized, Class, Filter};
use bloomkit::{AnyFilter, DLeftCountingFilter};
use pyo3::prelude::*;
use pyo3::PyClassInitializer;

/// A d-left counting filter: elements can be removed (`remove`), and `len()` is the number
/// of fingerprints held (elements with equal fingerprints in one bucket share a cell).
#[pyclass(name = "DLeftCountingFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyDLeftCountingFilter;

#[pymethods]
impl PyDLeftCountingFilter {
    #[new]
    fn new(capacity: Whole, fpp: f64) -> PyResult<PyClassInitializer<Self>> {
        Ok(
            sized(Class::DLeft, capacity, fpp, DLeftCountingFilter::new)?
                .add_subclass(PyDLeftCountingFilter),
        )
    }

    /// How many times the element's fingerprint is held (an upper bound on how many times the
    /// element was added and not removed).
    fn count(slf: PyRef<'_, Self>, element: &Bound<'_, PyAny>) -> PyResult<u8> {
        let base = slf.as_super();
        with_key(element, |k| {
            base.local(element.py(), |f| match f {
                AnyFilter::DLeft(d) => d.count(k),
                _ => 0,
            })
            .unwrap_or(0)
        })
    }

    /// Cells whose counter reached its maximum: their fingerprints are never removed.
    #[getter]
    fn saturated(slf: PyRef<'_, Self>) -> u64 {
        slf.as_super()
            .local(slf.py(), |f| match f {
                AnyFilter::DLeft(d) => d.saturated(),
                _ => 0,
            })
            .unwrap_or(0)
    }

    /// The fraction of the table's cells in use.
    #[getter]
    fn load_factor(slf: PyRef<'_, Self>) -> f64 {
        slf.as_super()
            .local(slf.py(), |f| match f {
                AnyFilter::DLeft(d) => d.load(),
                _ => 0.0,
            })
            .unwrap_or(0.0)
    }
}
