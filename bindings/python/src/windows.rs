//! `bloomkit.CountWindowFilter` and `bloomkit.TimeWindowFilter`: filters that forget, the
//! last `window` insertions or what was added within the last `window` seconds.

use crate::arguments::Whole;
use crate::errors;
use crate::filters::{new_filter, Class, Filter};
use bloomkit::codec::native::Design;
use bloomkit::window::sizing::blocked_age_partitioned_for;
use bloomkit::window::{CountWindowFilter, TimeWindowFilter};
use bloomkit::{AnyFilter, Hashing};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::PyClassInitializer;
use std::time::Duration;

/// A filter of the last `window` insertions (age-partitioned): each of them is found, with
/// an FPR of at most `fpp`, and older ones are forgotten as new ones arrive.
#[pyclass(name = "CountWindowFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyCountWindowFilter;

fn count_window<R>(
    slf: &PyRef<'_, PyCountWindowFilter>,
    f: impl FnOnce(&CountWindowFilter) -> R,
) -> Option<R> {
    slf.as_super()
        .local(slf.py(), |any| match any {
            AnyFilter::CountWindow(w) => Some(f(w)),
            _ => None,
        })
        .flatten()
}

#[pymethods]
impl PyCountWindowFilter {
    #[new]
    fn new(window: Whole, fpp: f64) -> PyResult<PyClassInitializer<Self>> {
        let window = window.positive("window")?;
        // Sized once: the memory check and the filter use the same shape (the search is most
        // of what making a small count window costs).
        let shape = blocked_age_partitioned_for(window, fpp).map_err(errors::core)?;
        let bytes = shape.blocks.saturating_mul(64);
        crate::filters::ensure_fits_bytes(Class::CountWindow, window, fpp, bytes)?;
        let f = CountWindowFilter::from_blocked_shape(shape, window, fpp, Hashing::Xxh3)
            .map_err(errors::core)?;
        let design = Design {
            capacity: window,
            fpp,
        };
        Ok(new_filter(Class::CountWindow, f.into(), Some(design))?
            .add_subclass(PyCountWindowFilter))
    }

    /// How many of the last insertions are remembered (the `window` it was made with).
    #[getter]
    fn window(slf: PyRef<'_, Self>) -> u64 {
        count_window(&slf, |w| w.window()).unwrap_or(0)
    }

    /// How many of the last insertions are always found (at least `window`).
    #[getter]
    fn guaranteed_window(slf: PyRef<'_, Self>) -> u64 {
        count_window(&slf, |w| w.guaranteed_window()).unwrap_or(0)
    }

    /// After this many later insertions an element is surely forgotten.
    #[getter]
    fn forgotten_after(slf: PyRef<'_, Self>) -> u64 {
        count_window(&slf, |w| w.forgotten_after()).unwrap_or(0)
    }

    /// Insertions ever made.
    #[getter]
    fn inserted(slf: PyRef<'_, Self>) -> u64 {
        count_window(&slf, |w| w.inserted()).unwrap_or(0)
    }
}

/// A positive number of seconds as a duration (`ValueError` otherwise, naming `name`).
pub(crate) fn seconds(name: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{name} must be a positive number of seconds, got {value:?}"
            ))
        })
}

/// The generations of a time window: those given, else 30, or `capacity` if smaller (as the
/// CLI).
pub(crate) fn generations_or_default(given: Option<Whole>, capacity: u64) -> PyResult<u32> {
    match given {
        Some(n) => n.u32_from("generations", 0),
        None => Ok(capacity.clamp(1, 30) as u32),
    }
}

/// A filter of what was added within the last `window` seconds: generations of blocked
/// filters by the system clock, `capacity` insertions per window at FPR `fpp`. Each generation
/// (`window / generations` seconds) is sized for `capacity / generations` of them, an even
/// rate: a burst beyond that in one generation raises the FPR, so give the capacity as
/// `generations` times the most one generation may receive.
#[pyclass(name = "TimeWindowFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyTimeWindowFilter;

fn time_window<R>(
    slf: &PyRef<'_, PyTimeWindowFilter>,
    f: impl FnOnce(&TimeWindowFilter) -> R,
) -> Option<R> {
    slf.as_super()
        .local(slf.py(), |any| match any {
            AnyFilter::TimeWindow(w) => Some(f(w)),
            _ => None,
        })
        .flatten()
}

#[pymethods]
impl PyTimeWindowFilter {
    /// `window` in seconds; `generations` (default: 30, or `capacity` if smaller, as the CLI)
    /// is how finely it forgets: an element stays between `window` and `window` plus one
    /// generation.
    #[new]
    #[pyo3(signature = (window, capacity, fpp, generations = None))]
    fn new(
        window: f64,
        capacity: Whole,
        fpp: f64,
        generations: Option<Whole>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let window = seconds("window", window)?;
        let capacity = capacity.positive("capacity")?;
        let generations = generations_or_default(generations, capacity)?;
        if let Ok(bytes) = TimeWindowFilter::planned_bytes(window, generations, capacity, fpp) {
            crate::filters::ensure_fits_bytes(Class::TimeWindow, capacity, fpp, bytes)?;
        }
        let f = TimeWindowFilter::new(window, generations, capacity, fpp).map_err(errors::core)?;
        Ok(
            new_filter(Class::TimeWindow, f.into(), Some(Design { capacity, fpp }))?
                .add_subclass(PyTimeWindowFilter),
        )
    }

    /// The window, in seconds.
    #[getter]
    fn window(slf: PyRef<'_, Self>) -> f64 {
        time_window(&slf, |w| w.window().as_secs_f64()).unwrap_or(0.0)
    }

    /// The number of generations.
    #[getter]
    fn generations(slf: PyRef<'_, Self>) -> u32 {
        time_window(&slf, |w| w.generations()).unwrap_or(0)
    }

    /// The length of one generation, in seconds.
    #[getter]
    fn generation_length(slf: PyRef<'_, Self>) -> f64 {
        time_window(&slf, |w| w.generation_length().as_secs_f64()).unwrap_or(0.0)
    }
}
