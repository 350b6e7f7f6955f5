//! The in-memory filter classes: one base class, `bloomkit.Filter`, holding any kind, and one
//! thin subclass per Rust type (`BloomFilter`, `BlockedBloomFilter`, ...) with its constructor
//! and the operations only that kind has. Every operation is the Rust crate's.

use crate::arguments::{BytesLike, FsPath, Whole};
use crate::dleft::PyDLeftCountingFilter;
use crate::elements::{
    answers_hint, bool_list, for_each_hashed, for_each_key_chunk, with_key, Element,
};
use crate::errors;
use crate::guarded::Guarded;
use crate::mapped::MappedFilter;
use crate::windows::{PyCountWindowFilter, PyTimeWindowFilter};
use bloomkit::codec::native::{self, Design};
use bloomkit::codec::{go, guava};
use bloomkit::{
    file, sharing, AnyFilter, AtomicBlockedBloomFilter, AtomicBloomFilter, BlockSpec,
    BlockedBloomFilter, BloomFilter, CountingBloomFilter, Digest, Filter as _, Key, Preset,
    ScalableBloomFilter, Spec,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};
use pyo3::PyClassInitializer;
use std::sync::RwLock;

/// The Python class an object belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Classic,
    Blocked,
    Counting,
    Scalable,
    AtomicClassic,
    AtomicBlocked,
    CountWindow,
    TimeWindow,
    DLeft,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Classic => "BloomFilter",
            Class::Blocked => "BlockedBloomFilter",
            Class::Counting => "CountingBloomFilter",
            Class::Scalable => "ScalableBloomFilter",
            Class::AtomicClassic => "AtomicBloomFilter",
            Class::AtomicBlocked => "AtomicBlockedBloomFilter",
            Class::CountWindow => "CountWindowFilter",
            Class::TimeWindow => "TimeWindowFilter",
            Class::DLeft => "DLeftCountingFilter",
        }
    }

    fn from_name(name: &str) -> PyResult<Class> {
        Ok(match name {
            "BloomFilter" => Class::Classic,
            "BlockedBloomFilter" => Class::Blocked,
            "CountingBloomFilter" => Class::Counting,
            "ScalableBloomFilter" => Class::Scalable,
            "AtomicBloomFilter" => Class::AtomicClassic,
            "AtomicBlockedBloomFilter" => Class::AtomicBlocked,
            "CountWindowFilter" => Class::CountWindow,
            "TimeWindowFilter" => Class::TimeWindow,
            "DLeftCountingFilter" => Class::DLeft,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown filter class {other:?}"
                )))
            }
        })
    }

    /// The class that holds a filter of this kind as read from a file.
    fn of(filter: &AnyFilter) -> PyResult<Class> {
        Ok(match filter {
            AnyFilter::Classic(_) => Class::Classic,
            AnyFilter::Blocked(_) => Class::Blocked,
            AnyFilter::Counting(_) => Class::Counting,
            AnyFilter::Scalable(_) => Class::Scalable,
            AnyFilter::CountWindow(_) => Class::CountWindow,
            AnyFilter::TimeWindow(_) => Class::TimeWindow,
            AnyFilter::DLeft(_) => Class::DLeft,
            #[allow(unreachable_patterns)]
            other => {
                return Err(PyValueError::new_err(format!(
                "a {} is not a Bloom filter: open it with bloomkit.load (or the class of its kind)",
                other.kind()
            )))
            }
        })
    }
}

/// A lock-free filter; `None` only for the instant a snapshot converts it.
enum Atomic {
    Classic(AtomicBloomFilter),
    Blocked(AtomicBlockedBloomFilter),
}

enum Store {
    /// Kinds whose inserts need `&mut`: locked by the GIL, or by a mutex for the batches that
    /// probe without it (see `guarded.rs`).
    Local(Guarded<AnyFilter>),
    /// The concurrent kinds: inserts take `&self`; the write lock is only for snapshots.
    Atomic(RwLock<Option<Atomic>>),
}

/// A batch of elements as the filter's kind takes it: hashed while the GIL was held (so that
/// only numbers cross into the code that runs without it), or as keys for the other kinds.
enum Batch<'a> {
    /// Classic filters: each element's digest (`Spec::digest`).
    Digests(&'a [Digest]),
    /// Blocked filters: each element's hash words (`BlockedBloomFilter::hash`).
    Hashes(&'a [[u64; 2]]),
    /// The other kinds: the keys.
    Keys(&'a [Element<'a>]),
}

/// How a filter's batches hash their elements while holding the GIL (`None`: as keys).
enum Hasher {
    Classic(Spec),
    Blocked(BlockSpec),
}

impl Hasher {
    fn of(filter: &AnyFilter) -> Option<Hasher> {
        match filter {
            AnyFilter::Classic(f) => Some(Hasher::Classic(f.spec().clone())),
            AnyFilter::Blocked(f) => Some(Hasher::Blocked(f.spec().clone())),
            _ => None,
        }
    }
}

/// `len` new answers at the end of `out` (false until a batch writes them).
fn tail(out: &mut Vec<bool>, len: usize) -> &mut [bool] {
    let start = out.len();
    out.resize(start + len, false);
    &mut out[start..]
}

/// The error for a batch prepared for another kind than the filter's (which cannot happen:
/// a filter object keeps its kind).
fn mismatch() -> PyErr {
    PyRuntimeError::new_err("bloomkit: a batch was hashed for another kind of filter")
}

impl Store {
    fn new(class: Class, filter: AnyFilter) -> PyResult<Store> {
        Ok(match (class, filter) {
            (Class::AtomicClassic, AnyFilter::Classic(f)) => Store::Atomic(RwLock::new(Some(
                Atomic::Classic(AtomicBloomFilter::from(f)),
            ))),
            (Class::AtomicBlocked, AnyFilter::Blocked(f)) => Store::Atomic(RwLock::new(Some(
                Atomic::Blocked(AtomicBlockedBloomFilter::from(f)),
            ))),
            (class, filter) if Class::of(&filter)? == class => Store::Local(Guarded::new(filter)),
            (class, filter) => {
                return Err(PyValueError::new_err(format!(
                "the data holds a {} filter, which a {} cannot hold (bloomkit.load reads any kind)",
                filter.kind(),
                class.name()
            )))
            }
        })
    }

    /// A plain copy of the filter (for the concurrent kinds, of its bits at this moment).
    fn snapshot(&self, py: Python<'_>) -> AnyFilter {
        match self {
            Store::Local(g) => g.with(py, |f| f.clone()),
            Store::Atomic(lock) => {
                let mut guard = lock.write().unwrap_or_else(|p| p.into_inner());
                let (plain, back) = match guard.take().expect("an atomic filter is always present")
                {
                    Atomic::Classic(f) => {
                        let plain = f.into_inner();
                        (
                            AnyFilter::Classic(plain.clone()),
                            Atomic::Classic(AtomicBloomFilter::from(plain)),
                        )
                    }
                    Atomic::Blocked(f) => {
                        let plain = f.into_inner();
                        (
                            AnyFilter::Blocked(plain.clone()),
                            Atomic::Blocked(AtomicBlockedBloomFilter::from(plain)),
                        )
                    }
                };
                *guard = Some(back);
                plain
            }
        }
    }

    /// Runs `f` on the plain filter with the GIL held: in place for the locked kinds, on a
    /// snapshot for the concurrent ones.
    fn with_plain<R>(&self, py: Python<'_>, f: impl FnOnce(&AnyFilter) -> R) -> R {
        match self {
            Store::Local(g) => g.with(py, |filter| f(filter)),
            Store::Atomic(_) => f(&self.snapshot(py)),
        }
    }

    /// Runs `f` on the plain filter without the GIL (as `with_plain`).
    fn with_plain_without_gil<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&AnyFilter) -> R + Send,
    ) -> R {
        match self {
            Store::Local(g) => g.without_gil(py, |filter| f(filter)),
            Store::Atomic(_) => {
                let plain = self.snapshot(py);
                py.allow_threads(|| f(&plain))
            }
        }
    }

    /// Runs `f` on this store's filter and the other's, both in place, so that a large
    /// filter is not copied to be compared or combined with another: only for two distinct
    /// locked kinds, and only if no batch is using the other (waiting for that batch inside
    /// this store's cell could release the GIL while the cell is in use). `None` otherwise:
    /// the caller then copies the other side first.
    fn with_both_in_place<R>(
        &self,
        other: &Store,
        py: Python<'_>,
        f: impl FnOnce(&mut AnyFilter, &AnyFilter) -> R,
    ) -> Option<R> {
        match (self, other) {
            (Store::Local(a), Store::Local(b)) if !std::ptr::eq(a, b) => {
                a.with(py, |mine| b.try_with(py, |theirs| f(mine, theirs)))
            }
            _ => None,
        }
    }

    /// Whether the two stores hold equal filters (in place where [`Store::with_both_in_place`]
    /// allows, else against a copy of the other side).
    fn equals(&self, other: &Store, py: Python<'_>) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        if let Some(equal) = self.with_both_in_place(other, py, |a, b| *a == *b) {
            return equal;
        }
        let theirs = other.snapshot(py);
        self.with_plain(py, |a| *a == theirs)
    }

    /// Bits and hash functions.
    fn params(&self, py: Python<'_>) -> bloomkit::Params {
        match self {
            Store::Local(g) => g.with(py, |f| f.params()),
            Store::Atomic(l) => {
                let classic = Store::atomic(l, |a| match a {
                    Atomic::Classic(f) => Some(f.spec().params()),
                    Atomic::Blocked(_) => None,
                });
                classic.unwrap_or_else(|| self.snapshot(py).params())
            }
        }
    }

    /// How batches hash their elements.
    fn hasher(&self, py: Python<'_>) -> Option<Hasher> {
        match self {
            Store::Local(g) => g.with(py, |f| Hasher::of(f)),
            Store::Atomic(l) => Some(Store::atomic(l, |a| match a {
                Atomic::Classic(f) => Hasher::Classic(f.spec().clone()),
                Atomic::Blocked(f) => Hasher::Blocked(f.spec().clone()),
            })),
        }
    }

    /// Runs `f` on the concurrent filter.
    fn atomic<R>(lock: &RwLock<Option<Atomic>>, f: impl FnOnce(&Atomic) -> R) -> R {
        let guard = lock.read().unwrap_or_else(|p| p.into_inner());
        f(guard.as_ref().expect("an atomic filter is always present"))
    }

    #[inline]
    fn insert(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
        match self {
            Store::Local(g) => g.with(py, |f| f.insert_encoded(key)).map_err(errors::core),
            Store::Atomic(l) => Ok(Store::atomic(l, |a| match a {
                Atomic::Classic(f) => f.insert(key),
                Atomic::Blocked(f) => f.insert(key),
            })),
        }
    }

    #[inline]
    fn contains(&self, py: Python<'_>, key: &[u8]) -> bool {
        match self {
            Store::Local(g) => g.with(py, |f| f.contains_encoded(key)),
            Store::Atomic(l) => Store::atomic(l, |a| match a {
                Atomic::Classic(f) => f.contains(key),
                Atomic::Blocked(f) => f.contains(key),
            }),
        }
    }

    /// Adds a batch, probing without the GIL.
    fn insert_batch(&self, py: Python<'_>, batch: Batch<'_>) -> PyResult<()> {
        match self {
            Store::Local(g) => g.without_gil(py, |filter| {
                match (filter, batch) {
                    (AnyFilter::Classic(f), Batch::Digests(ds)) => f.insert_digest_batch(ds),
                    (AnyFilter::Blocked(f), Batch::Hashes(hs)) => f.insert_hash_batch(hs),
                    (AnyFilter::Blocked(f), Batch::Keys(keys)) => f.insert_batch(keys),
                    (other, Batch::Keys(keys)) => {
                        for key in keys {
                            key.with_bytes(|b| other.insert_encoded(b))
                                .map_err(errors::core)?;
                        }
                    }
                    _ => return Err(mismatch()),
                }
                Ok(())
            }),
            Store::Atomic(l) => py.allow_threads(|| {
                Store::atomic(l, |a| -> PyResult<()> {
                    match (a, batch) {
                        (Atomic::Classic(f), Batch::Digests(ds)) => f.insert_digest_batch(ds),
                        (Atomic::Blocked(f), Batch::Hashes(hs)) => f.insert_hash_batch(hs),
                        (Atomic::Classic(f), Batch::Keys(keys)) => f.insert_batch(keys),
                        (Atomic::Blocked(f), Batch::Keys(keys)) => f.insert_batch(keys),
                        _ => return Err(mismatch()),
                    }
                    Ok(())
                })
            }),
        }
    }

    /// Tests a batch without the GIL, appending the answers to `out`.
    fn contains_batch(
        &self,
        py: Python<'_>,
        batch: Batch<'_>,
        out: &mut Vec<bool>,
    ) -> PyResult<()> {
        match self {
            Store::Local(g) => g.without_gil(py, |filter| {
                match (&*filter, batch) {
                    (AnyFilter::Classic(f), Batch::Digests(ds)) => {
                        f.contains_digest_batch_into(ds, tail(out, ds.len()))
                    }
                    (AnyFilter::Blocked(f), Batch::Hashes(hs)) => {
                        f.contains_hash_batch_into(hs, tail(out, hs.len()))
                    }
                    (other, Batch::Keys(keys)) => out.extend(
                        keys.iter()
                            .map(|k| k.with_bytes(|b| other.contains_encoded(b))),
                    ),
                    _ => return Err(mismatch()),
                }
                Ok(())
            }),
            Store::Atomic(l) => py.allow_threads(|| {
                Store::atomic(l, |a| -> PyResult<()> {
                    match (a, batch) {
                        (Atomic::Classic(f), Batch::Digests(ds)) => {
                            f.contains_digest_batch_into(ds, tail(out, ds.len()))
                        }
                        (Atomic::Blocked(f), Batch::Hashes(hs)) => {
                            f.contains_hash_batch_into(hs, tail(out, hs.len()))
                        }
                        (Atomic::Classic(f), Batch::Keys(keys)) => {
                            f.contains_batch_into(keys, tail(out, keys.len()))
                        }
                        (Atomic::Blocked(f), Batch::Keys(keys)) => {
                            f.contains_batch_into(keys, tail(out, keys.len()))
                        }
                        _ => return Err(mismatch()),
                    }
                    Ok(())
                })
            }),
        }
    }
}

/// Base class of every in-memory filter kind. Not created directly: use a subclass.
#[pyclass(name = "Filter", module = "bloomkit", subclass, frozen)]
pub struct Filter {
    store: Store,
    class: Class,
    design: Option<Design>,
}

impl Filter {
    fn from_any(class: Class, filter: AnyFilter, design: Option<Design>) -> PyResult<Filter> {
        Ok(Filter {
            store: Store::new(class, filter)?,
            class,
            design,
        })
    }

    /// Wraps a filter in the Python class `class`.
    pub fn wrap(py: Python<'_>, filter: Filter) -> PyResult<PyObject> {
        let class = filter.class;
        let init = PyClassInitializer::from(filter);
        Ok(match class {
            Class::Classic => Py::new(py, init.add_subclass(PyBloomFilter))?.into_any(),
            Class::Blocked => Py::new(py, init.add_subclass(PyBlockedBloomFilter))?.into_any(),
            Class::Counting => Py::new(py, init.add_subclass(PyCountingBloomFilter))?.into_any(),
            Class::Scalable => Py::new(py, init.add_subclass(PyScalableBloomFilter))?.into_any(),
            Class::AtomicClassic => Py::new(py, init.add_subclass(PyAtomicBloomFilter))?.into_any(),
            Class::AtomicBlocked => {
                Py::new(py, init.add_subclass(PyAtomicBlockedBloomFilter))?.into_any()
            }
            Class::CountWindow => Py::new(py, init.add_subclass(PyCountWindowFilter))?.into_any(),
            Class::TimeWindow => Py::new(py, init.add_subclass(PyTimeWindowFilter))?.into_any(),
            Class::DLeft => Py::new(py, init.add_subclass(PyDLeftCountingFilter))?.into_any(),
        })
    }

    /// Decodes native-format bytes into the class `class` (any class when `None`).
    pub fn decode(
        py: Python<'_>,
        class: Option<Class>,
        decoded: native::Decoded,
    ) -> PyResult<PyObject> {
        let class = match class {
            Some(c) => c,
            None => Class::of(&decoded.filter)?,
        };
        Filter::wrap(py, Filter::from_any(class, decoded.filter, decoded.design)?)
    }

    /// Runs `f` on the filter of a kind that is not a concurrent one (`None` for those).
    pub(crate) fn local<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut AnyFilter) -> R,
    ) -> Option<R> {
        match &self.store {
            Store::Local(g) => Some(g.with(py, f)),
            Store::Atomic(_) => None,
        }
    }

    fn combine(&self, py: Python<'_>, other: &Filter, op: Op) -> PyResult<()> {
        let in_place = |mine: &mut AnyFilter, theirs: &AnyFilter| combine(mine, theirs, op);
        if let Some(r) = self.store.with_both_in_place(&other.store, py, in_place) {
            return r;
        }
        // Else a copy of the other side first: a concurrent kind, one a batch is using, or the
        // same filter (`a |= a` must not use one filter twice at once).
        let other = other.store.snapshot(py);
        match &self.store {
            Store::Local(g) => g.with(py, |mine| combine(mine, &other, op)),
            Store::Atomic(l) => {
                // Bits are only ever set while shared; a combination needs the plain filter,
                // under the write lock (adds from other threads wait for it).
                let mut guard = l.write().unwrap_or_else(|p| p.into_inner());
                let (mut plain, atomic_classic) =
                    match guard.take().expect("an atomic filter is always present") {
                        Atomic::Classic(f) => (AnyFilter::Classic(f.into_inner()), true),
                        Atomic::Blocked(f) => (AnyFilter::Blocked(f.into_inner()), false),
                    };
                let result = combine(&mut plain, &other, op);
                *guard = Some(match (plain, atomic_classic) {
                    (AnyFilter::Classic(f), true) => Atomic::Classic(f.into()),
                    (AnyFilter::Blocked(f), false) => Atomic::Blocked(f.into()),
                    _ => unreachable!("combine keeps the kind"),
                });
                result
            }
        }
    }

    fn copy(&self, py: Python<'_>) -> PyResult<Filter> {
        let plain = self.store.snapshot(py);
        Filter::from_any(self.class, plain, self.design)
    }

    fn class_of(cls: &Bound<'_, PyType>) -> PyResult<Option<Class>> {
        let name = cls.name()?.to_string();
        if name == "Filter" {
            return Ok(None);
        }
        Class::from_name(&name).map(Some)
    }
}

/// A set operation on two filters.
#[derive(Debug, Clone, Copy)]
enum Op {
    Union,
    Intersection,
}

/// `mine |= other` or `mine &= other`, as the Rust filters do them.
fn combine(mine: &mut AnyFilter, other: &AnyFilter, op: Op) -> PyResult<()> {
    let result = match (mine, other, op) {
        (AnyFilter::Classic(a), AnyFilter::Classic(b), Op::Union) => a.union(b),
        (AnyFilter::Classic(a), AnyFilter::Classic(b), Op::Intersection) => a.intersect(b),
        (AnyFilter::Blocked(a), AnyFilter::Blocked(b), Op::Union) => a.union(b),
        (AnyFilter::Blocked(a), AnyFilter::Blocked(b), Op::Intersection) => a.intersect(b),
        (AnyFilter::Counting(a), AnyFilter::Counting(b), Op::Union) => a.union(b),
        (mine, other, _) if mine.kind() != other.kind() => {
            return Err(PyValueError::new_err(format!(
                "cannot combine a {} filter with a {} filter",
                mine.kind(),
                other.kind()
            )))
        }
        (mine, _, op) => {
            return Err(PyTypeError::new_err(format!(
                "a {} filter has no {}",
                mine.kind(),
                if matches!(op, Op::Union) {
                    "union"
                } else {
                    "intersection"
                }
            )))
        }
    };
    result.map_err(errors::core)
}

fn path_design(design: Option<Design>) -> (Option<u64>, Option<f64>) {
    (design.map(|d| d.capacity), design.map(|d| d.fpp))
}

/// The single-element methods, which `meth_o.rs` defines on the Python classes.
impl Filter {
    /// Adds an element (`str`, `bytes` or `int`).
    pub(crate) fn add(&self, element: &Bound<'_, PyAny>) -> PyResult<()> {
        with_key(element, |k| self.store.insert(element.py(), k))??;
        Ok(())
    }

    /// Adds an element and returns whether it was (probably) present before.
    pub(crate) fn check_and_add(&self, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(!with_key(element, |k| self.store.insert(element.py(), k))??)
    }
}

#[pymethods]
impl Filter {
    fn __contains__(&self, element: &Bound<'_, PyAny>) -> PyResult<bool> {
        with_key(element, |k| self.store.contains(element.py(), k))
    }

    /// Adds every element of any iterable, taking 4096 at a time and probing without the GIL.
    /// An element of an unsupported type stops it with a `TypeError`: the chunks of 4096
    /// before it have been added, nothing from its chunk on.
    fn add_many(&self, elements: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = elements.py();
        let store = &self.store;
        match store.hasher(py) {
            Some(Hasher::Classic(spec)) => for_each_hashed(
                elements,
                |b| spec.digest_bytes(b),
                |ds| store.insert_batch(py, Batch::Digests(ds)),
            ),
            Some(Hasher::Blocked(spec)) => for_each_hashed(
                elements,
                |b| spec.hash(b),
                |hs| store.insert_batch(py, Batch::Hashes(hs)),
            ),
            None => for_each_key_chunk(elements, |keys| store.insert_batch(py, Batch::Keys(keys))),
        }
    }

    /// Tests every element of any iterable, probing without the GIL; a list of bools.
    fn contains_many<'py>(&self, elements: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let py = elements.py();
        let store = &self.store;
        let mut out = Vec::with_capacity(answers_hint(elements));
        match store.hasher(py) {
            Some(Hasher::Classic(spec)) => for_each_hashed(
                elements,
                |b| spec.digest_bytes(b),
                |ds| store.contains_batch(py, Batch::Digests(ds), &mut out),
            ),
            Some(Hasher::Blocked(spec)) => for_each_hashed(
                elements,
                |b| spec.hash(b),
                |hs| store.contains_batch(py, Batch::Hashes(hs), &mut out),
            ),
            None => for_each_key_chunk(elements, |keys| {
                store.contains_batch(py, Batch::Keys(keys), &mut out)
            }),
        }?;
        bool_list(py, &out)
    }

    /// Adds the elements of every iterable given (as `set.update`).
    #[pyo3(signature = (*iterables))]
    fn update(&self, iterables: &Bound<'_, PyTuple>) -> PyResult<()> {
        for iterable in iterables.iter() {
            self.add_many(&iterable)?;
        }
        Ok(())
    }

    /// Removes one occurrence of an element: counting filters only (`TypeError` for the other
    /// kinds); `KeyError` if the element cannot be in the filter.
    fn remove(&self, element: &Bound<'_, PyAny>) -> PyResult<()> {
        let removed = with_key(element, |k| {
            self.local(element.py(), |f| f.remove_encoded(k))
        })?;
        match removed {
            Some(r) => r.map_err(errors::core),
            None => Err(PyTypeError::new_err(
                "a concurrent filter cannot remove elements",
            )),
        }
    }

    /// Removes every element.
    fn clear(&self, py: Python<'_>) {
        match &self.store {
            Store::Local(g) => g.with(py, |f| f.clear()),
            Store::Atomic(l) => {
                let mut guard = l.write().unwrap_or_else(|p| p.into_inner());
                *guard = Some(match guard.take().expect("always present") {
                    Atomic::Classic(f) => {
                        let mut plain = f.into_inner();
                        plain.clear();
                        Atomic::Classic(plain.into())
                    }
                    Atomic::Blocked(f) => {
                        let mut plain = f.into_inner();
                        plain.clear();
                        Atomic::Blocked(plain.into())
                    }
                });
            }
        }
    }

    /// The estimated number of distinct elements added, rounded; `sys.maxsize` for a saturated
    /// filter (every bit set), whose estimate is infinite.
    fn __len__(&self, py: Python<'_>) -> usize {
        len_of(self.estimated_len(py))
    }

    /// The estimated number of distinct elements added.
    fn estimated_len(&self, py: Python<'_>) -> f64 {
        let direct = match &self.store {
            Store::Local(g) => Some(g.with(py, |f| f.estimated_len())),
            Store::Atomic(l) => Store::atomic(l, |a| match a {
                Atomic::Classic(f) => Some(f.estimated_len()),
                Atomic::Blocked(_) => None,
            }),
        };
        direct
            .unwrap_or_else(|| self.store.snapshot(py).estimated_len())
            .max(0.0)
    }

    /// The false-positive probability the filter was designed for (`None` if unknown, as for
    /// a filter imported from Guava or built from a bit count).
    #[getter]
    fn fpp(&self, py: Python<'_>) -> Option<f64> {
        match (&self.store, self.class) {
            (Store::Local(g), Class::Scalable) => g.with(py, |f| match f {
                AnyFilter::Scalable(f) => Some(f.config().fpp),
                _ => None,
            }),
            _ => path_design(self.design).1,
        }
    }

    /// The number of elements the filter was designed for (a scalable filter: the capacity of
    /// its layers so far).
    #[getter]
    fn capacity(&self, py: Python<'_>) -> Option<u64> {
        match (&self.store, self.class) {
            (Store::Local(g), Class::Scalable) => g.with(py, |f| match f {
                AnyFilter::Scalable(f) => Some(f.capacity()),
                _ => None,
            }),
            _ => path_design(self.design).0,
        }
    }

    /// The false-positive probability expected now, from the bits set.
    fn estimated_fpp(&self, py: Python<'_>) -> f64 {
        self.store.with_plain(py, |f| f.estimated_fpp())
    }

    /// Number of bits (counters for a counting filter; of the newest layer for a scalable one).
    #[getter]
    fn bits(&self, py: Python<'_>) -> u64 {
        self.store.params(py).bits
    }

    /// Number of hash functions (probes per element).
    #[getter]
    fn hashes(&self, py: Python<'_>) -> u32 {
        self.store.params(py).hashes
    }

    /// Bytes of memory held by the filter's bits or counters.
    #[getter]
    fn memory_bytes(&self, py: Python<'_>) -> usize {
        match &self.store {
            Store::Local(g) => g.with(py, |f| f.memory_bytes()),
            Store::Atomic(l) => Store::atomic(l, |a| match a {
                Atomic::Classic(f) => f.spec().bits().div_ceil(64) as usize * 8,
                Atomic::Blocked(f) => f.memory_bytes(),
            }),
        }
    }

    /// The kind's stable name, as the CLI's `info` prints it: `classic`, `blocked`, ...
    #[getter]
    fn kind(&self) -> &'static str {
        match self.class {
            Class::Classic | Class::AtomicClassic => "classic",
            Class::Blocked | Class::AtomicBlocked => "blocked",
            Class::Counting => "counting",
            Class::Scalable => "scalable",
            Class::CountWindow => "count-window",
            Class::TimeWindow => "time-window",
            Class::DLeft => "dleft",
        }
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let params = self.store.params(py);
        let mut s = format!("{}(", self.class.name());
        if let (Some(n), Some(p)) = (self.capacity(py), self.fpp(py)) {
            // A count window's design is its window (the argument it was made with).
            let name = if self.class == Class::CountWindow {
                "window"
            } else {
                "capacity"
            };
            s += &format!("{name}={n}, fpp={p:?}, ");
        }
        let estimate = self.estimated_len(py);
        s += &format!("bits={}, hashes={}, ", params.bits, params.hashes);
        s += &if estimate.is_finite() {
            format!("len≈{})", len_of(estimate))
        } else {
            "saturated)".to_string()
        };
        s
    }

    /// A new filter with the elements of both (bitwise OR); the filters must match in kind,
    /// size and hashing (`ValueError` otherwise).
    fn __or__(&self, py: Python<'_>, other: &Bound<'_, Filter>) -> PyResult<PyObject> {
        let result = self.copy(py)?;
        result.combine(py, other.get(), Op::Union)?;
        Filter::wrap(py, result)
    }

    /// A new filter with the bits set in both (bitwise AND): every element of both stays in.
    fn __and__(&self, py: Python<'_>, other: &Bound<'_, Filter>) -> PyResult<PyObject> {
        let result = self.copy(py)?;
        result.combine(py, other.get(), Op::Intersection)?;
        Filter::wrap(py, result)
    }

    fn __ior__(&self, other: &Bound<'_, Filter>) -> PyResult<()> {
        self.combine(other.py(), other.get(), Op::Union)
    }

    fn __iand__(&self, other: &Bound<'_, Filter>) -> PyResult<()> {
        self.combine(other.py(), other.get(), Op::Intersection)
    }

    /// Whether `other` is a filter of the same class with the same parameters and the same bits
    /// (a copy, or a pickled and unpickled filter, equals its original). Filters change as
    /// elements are added, so, like `set`, they are not hashable.
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, Filter>) -> bool {
        if slf.is(other) {
            return true;
        }
        let (mine, theirs) = (slf.get(), other.get());
        mine.class == theirs.class && mine.store.equals(&theirs.store, slf.py())
    }

    /// A copy of the filter.
    fn __copy__(&self, py: Python<'_>) -> PyResult<PyObject> {
        Filter::wrap(py, self.copy(py)?)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.__copy__(py)
    }

    /// The filter in bloomkit's native file format (what `save` writes).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self
            .store
            .with_plain_without_gil(py, |f| native::to_bytes(f, self.design))
            .map_err(errors::core)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A filter from bloomkit's native format (any bytes-like object); `ValueError` if the
    /// data is damaged or of another kind than the class.
    #[classmethod]
    fn from_bytes(cls: &Bound<'_, PyType>, data: BytesLike<'_>) -> PyResult<PyObject> {
        let py = cls.py();
        let data = data.as_bytes();
        let decoded = py
            .allow_threads(|| native::from_bytes(data, &[]))
            .map_err(errors::core)?;
        Filter::decode(py, Filter::class_of(cls)?, decoded)
    }

    /// Saves the filter to `path` in bloomkit's native format, atomically (the file holds
    /// the old filter or the new one, whatever happens). The `bloomkit` CLI reads it.
    fn save(&self, py: Python<'_>, path: FsPath) -> PyResult<()> {
        self.store
            .with_plain_without_gil(py, |f| file::save(&path, f, self.design))
            .map_err(errors::core)
    }

    /// Saves the filter to a new file at `path`, only if nothing is there yet
    /// (`FileExistsError` otherwise): the file appears whole or not at all, and of many
    /// processes creating one path at once exactly one succeeds.
    fn save_new(&self, py: Python<'_>, path: FsPath) -> PyResult<()> {
        self.store
            .with_plain_without_gil(py, |f| {
                sharing::create_new(&path, file::Content::Filter(f, self.design))
            })
            .map_err(errors::core)
    }

    /// Loads a native file (one the CLI or `save` wrote), verifying its checksum.
    /// `OSError` if it cannot be read, `ValueError` if it is damaged or of another kind.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, path: FsPath) -> PyResult<PyObject> {
        let py = cls.py();
        let decoded = py
            .allow_threads(|| file::load(&path, &[]))
            .map_err(errors::core)?;
        Filter::decode(py, Filter::class_of(cls)?, decoded)
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(PyObject, (&'static str, Bound<'py, PyBytes>))> {
        let restore = py.import("bloomkit._bloomkit")?.getattr("_restore")?;
        Ok((restore.unbind(), (self.class.name(), self.to_bytes(py)?)))
    }
}

/// `len()` of an estimated count: rounded, and `sys.maxsize` (the most `len()` may return) for
/// an infinite estimate, which a saturated filter (every bit set) gives.
pub(crate) fn len_of(estimate: f64) -> usize {
    // A float-to-integer `as` saturates: infinity becomes `usize::MAX`.
    (estimate.max(0.0).round() as usize).min(isize::MAX as usize)
}

fn preset(name: &str) -> PyResult<Preset> {
    Ok(match name {
        "bloomkit" | "default" => Preset::Bloomkit,
        "bloomkit64" => Preset::Bloomkit64,
        "guava" => Preset::Guava,
        "guava32" => Preset::Guava32,
        "go" => Preset::Go,
        "redisson" => Preset::Redisson,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown preset {other:?}: expected bloomkit, bloomkit64, guava, guava32, go or redisson"
            )))
        }
    })
}

pub(crate) fn new_filter(
    class: Class,
    filter: AnyFilter,
    design: Option<Design>,
) -> PyResult<PyClassInitializer<Filter>> {
    Ok(PyClassInitializer::from(Filter::from_any(
        class, filter, design,
    )?))
}

/// A filter of `class` built for `capacity` elements at `fpp` by `build`, recording that design.
pub(crate) fn sized<T: Into<AnyFilter>>(
    class: Class,
    capacity: Whole,
    fpp: f64,
    build: impl FnOnce(u64, f64) -> bloomkit::Result<T>,
) -> PyResult<PyClassInitializer<Filter>> {
    let capacity = capacity.positive("capacity")?;
    ensure_fits(class, capacity, fpp)?;
    let filter = build(capacity, fpp).map_err(errors::core)?;
    new_filter(class, filter.into(), Some(Design { capacity, fpp }))
}

/// A `MemoryError` (before anything is allocated) when a filter of `class` for `capacity`
/// elements at `fpp` needs more memory than the machine has available. The need counted is
/// the library's own sizing of that kind where it has one (d-left), else a classic filter's
/// bits of that design (4 bits each for a counting filter; the blocked kinds use up to 1.1× as
/// many). Parameters the library refuses are left to it. Windows are checked by
/// [`ensure_fits_bytes`] with the size of their own design.
pub(crate) fn ensure_fits(class: Class, capacity: u64, fpp: f64) -> PyResult<()> {
    let planned = match class {
        Class::DLeft => {
            bloomkit::math::DLeftParams::for_capacity(capacity, fpp).map(|d| d.bits().div_ceil(8))
        }
        _ => bloomkit::math::params_for(capacity, fpp).map(|params| {
            let per_bit = if class == Class::Counting { 4 } else { 1 };
            params.bits.div_ceil(8).saturating_mul(per_bit)
        }),
    };
    match planned {
        Ok(bytes) => ensure_fits_bytes(class, capacity, fpp, bytes),
        Err(_) => Ok(()),
    }
}

/// A `MemoryError` when `bytes`, what a filter of `class` for `capacity` elements at `fpp`
/// holds, is more than the machine has available.
pub(crate) fn ensure_fits_bytes(class: Class, capacity: u64, fpp: f64, bytes: u64) -> PyResult<()> {
    crate::memory::ensure_fits(bytes, || {
        format!("a {} for {capacity} elements at fpp {fpp:?}", class.name())
    })
}

fn classic_of(py: Python<'_>, filter: &Filter) -> PyResult<BloomFilter> {
    match filter.store.snapshot(py) {
        AnyFilter::Classic(f) => Ok(f),
        other => Err(PyTypeError::new_err(format!(
            "expected a classic filter, got {}",
            other.kind()
        ))),
    }
}

fn wrap_classic(py: Python<'_>, f: BloomFilter) -> PyResult<PyObject> {
    Filter::wrap(py, Filter::from_any(Class::Classic, f.into(), None)?)
}

/// `$body`, the methods of a subclass, and `__contains__` defined on the subclass itself:
/// called on an object of exactly this class it skips CPython's subtype walk
/// (`PyType_IsSubtype`) that a method of the base class costs on every call. For the kinds
/// whose single calls compete on speed (classic and blocked; `meth_o.rs` defines their `add`
/// and `check_and_add` on them for the same reason).
macro_rules! with_hot_methods {
    (#[pymethods] impl $ty:ident { $($body:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($body)*

            fn __contains__(slf: PyRef<'_, Self>, element: &Bound<'_, PyAny>) -> PyResult<bool> {
                slf.as_super().__contains__(element)
            }
        }
    };
}

/// A classic Bloom filter: one bit array, `hashes` probes per element. The preset `"bloomkit64"`
/// is bloomkit's own from one 64-bit hash per element (cheaper for long keys; other bits than
/// `"bloomkit"`'s). With the preset of another library it is bit-exact with Guava (`"guava"`,
/// `"guava32"`), Go bits-and-blooms (`"go"`) or Redisson (`"redisson"`), and exports to their
/// formats.
#[pyclass(name = "BloomFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyBloomFilter;

with_hot_methods! {
    #[pymethods]
    impl PyBloomFilter {
    #[new]
    #[pyo3(signature = (capacity, fpp, preset = "bloomkit"))]
    fn new(capacity: Whole, fpp: f64, preset: &str) -> PyResult<PyClassInitializer<Self>> {
        let capacity = capacity.positive("capacity")?;
        let spec = Spec::preset(self::preset(preset)?, capacity, fpp).map_err(errors::core)?;
        crate::memory::ensure_fits(spec.bits().div_ceil(8), || {
            format!("a BloomFilter for {capacity} elements at fpp {fpp:?}")
        })?;
        let f = BloomFilter::from_spec(spec).map_err(errors::core)?;
        Ok(
            new_filter(Class::Classic, f.into(), Some(Design { capacity, fpp }))?
                .add_subclass(PyBloomFilter),
        )
    }

    /// A filter of exactly `bits` bits and `hashes` probes, hashed and probed as `preset` does.
    #[staticmethod]
    #[pyo3(signature = (bits, hashes, preset = "bloomkit"))]
    fn with_params(py: Python<'_>, bits: Whole, hashes: Whole, preset: &str) -> PyResult<PyObject> {
        let bits = bits.positive("bits")?;
        let hashes = hashes.u32_from("hashes", 1)?;
        crate::memory::ensure_fits(bits.div_ceil(8), || format!("a filter of {bits} bits"))?;
        let p = self::preset(preset)?;
        let spec = Spec::with_bits(bits, hashes)
            .map_err(errors::core)?
            .with_scheme(p.scheme())
            .with_hashing(p.hashing());
        wrap_classic(py, BloomFilter::from_spec(spec).map_err(errors::core)?)
    }

    /// The filter in Guava's `BloomFilter.writeTo` format (a filter built with preset
    /// `"guava"` or `"guava32"`; `ValueError` for others).
    fn to_guava<'py>(slf: PyRef<'py, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let f = classic_of(slf.py(), slf.as_super())?;
        Ok(PyBytes::new(
            py,
            &guava::to_bytes(&f).map_err(errors::core)?,
        ))
    }

    /// Reads Guava's `BloomFilter.writeTo` format (any bytes-like object).
    #[staticmethod]
    fn from_guava(py: Python<'_>, data: BytesLike<'_>) -> PyResult<PyObject> {
        wrap_classic(py, guava::from_bytes(data.as_bytes()).map_err(errors::core)?)
    }

    /// The filter in Go bits-and-blooms' binary `WriteTo` format (preset `"go"`).
    fn to_go<'py>(slf: PyRef<'py, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let f = classic_of(slf.py(), slf.as_super())?;
        Ok(PyBytes::new(py, &go::to_bytes(&f).map_err(errors::core)?))
    }

    /// Reads Go bits-and-blooms' binary `WriteTo` format (any bytes-like object).
    #[staticmethod]
    fn from_go(py: Python<'_>, data: BytesLike<'_>) -> PyResult<PyObject> {
        wrap_classic(py, go::from_bytes(data.as_bytes()).map_err(errors::core)?)
    }

    /// The filter as Go bits-and-blooms' `MarshalJSON` writes it.
    fn to_go_json(slf: PyRef<'_, Self>) -> PyResult<String> {
        let f = classic_of(slf.py(), slf.as_super())?;
        go::to_json(&f).map_err(errors::core)
    }

    /// Reads Go bits-and-blooms' JSON (a `str` or any bytes-like object).
    #[staticmethod]
    fn from_go_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let json = match data.downcast::<PyString>() {
            Ok(s) => go::from_json(s.to_cow()?.as_bytes()),
            Err(_) => go::from_json(data.extract::<BytesLike<'_>>()?.as_bytes()),
        };
        wrap_classic(py, json.map_err(errors::core)?)
    }

    /// Maps a native file of a classic filter without reading it: `writable=False` for
    /// queries only, `True` to add in place (shared with other processes).
    #[staticmethod]
    #[pyo3(signature = (path, writable = false))]
    fn open_mmap(py: Python<'_>, path: FsPath, writable: bool) -> PyResult<MappedFilter> {
        MappedFilter::open(py, path.0, writable)
    }
    }
}

/// A cache-blocked Bloom filter: every probe of an element falls in one 64-byte block, so an
/// add or a query costs one cache miss. The fastest kind, a few more bits per element.
#[pyclass(name = "BlockedBloomFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyBlockedBloomFilter;

with_hot_methods! {
    #[pymethods]
    impl PyBlockedBloomFilter {
    /// Maps a native file of a blocked filter without reading it (see
    /// `BloomFilter.open_mmap`).
    #[staticmethod]
    #[pyo3(signature = (path, writable = false))]
    fn open_mmap(py: Python<'_>, path: FsPath, writable: bool) -> PyResult<MappedFilter> {
        MappedFilter::open(py, path.0, writable)
    }

    #[new]
    fn new(capacity: Whole, fpp: f64) -> PyResult<PyClassInitializer<Self>> {
        Ok(
            sized(Class::Blocked, capacity, fpp, BlockedBloomFilter::new)?
                .add_subclass(PyBlockedBloomFilter),
        )
    }
    }
}

/// A counting Bloom filter: small counters instead of bits, so elements can be removed.
#[pyclass(name = "CountingBloomFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyCountingBloomFilter;

#[pymethods]
impl PyCountingBloomFilter {
    #[new]
    fn new(capacity: Whole, fpp: f64) -> PyResult<PyClassInitializer<Self>> {
        Ok(
            sized(Class::Counting, capacity, fpp, CountingBloomFilter::new)?
                .add_subclass(PyCountingBloomFilter),
        )
    }

    /// An upper bound on how many times the element was added (the smallest of its counters).
    fn count(slf: PyRef<'_, Self>, element: &Bound<'_, PyAny>) -> PyResult<u8> {
        let base = slf.as_super();
        with_key(element, |k| {
            base.local(element.py(), |f| match f {
                AnyFilter::Counting(c) => c.count(k),
                _ => 0,
            })
            .unwrap_or(0)
        })
    }
}

/// A scalable Bloom filter: adds layers as it fills, keeping the compound false-positive
/// probability under `fpp` however many elements arrive.
#[pyclass(name = "ScalableBloomFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyScalableBloomFilter;

#[pymethods]
impl PyScalableBloomFilter {
    #[new]
    #[pyo3(
        signature = (initial_capacity, fpp, growth = Whole::from(2), tightening = 0.5, max_layers = None, max_capacity = None),
        text_signature = "(initial_capacity, fpp, growth=2, tightening=0.5, max_layers=None, max_capacity=None)"
    )]
    fn new(
        initial_capacity: Whole,
        fpp: f64,
        growth: Whole,
        tightening: f64,
        max_layers: Option<Whole>,
        max_capacity: Option<Whole>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let initial_capacity = initial_capacity.positive("initial_capacity")?;
        ensure_fits(Class::Scalable, initial_capacity, fpp)?;
        let mut config = bloomkit::ScalableConfig::new(initial_capacity, fpp);
        config.growth = growth.u32_from("growth", 0)?;
        config.tightening = tightening;
        config.max_layers = max_layers
            .map(|n| n.u32_from("max_layers", 0))
            .transpose()?;
        config.max_capacity = max_capacity
            .map(|n| n.u64_from("max_capacity", 0))
            .transpose()?;
        let f = ScalableBloomFilter::with_config(config).map_err(errors::core)?;
        Ok(new_filter(Class::Scalable, f.into(), None)?.add_subclass(PyScalableBloomFilter))
    }

    /// The number of layers so far.
    #[getter]
    fn layers(slf: PyRef<'_, Self>) -> usize {
        slf.as_super()
            .local(slf.py(), |f| match f {
                AnyFilter::Scalable(s) => s.layers().len(),
                _ => 0,
            })
            .unwrap_or(0)
    }
}

/// A classic filter whose adds take no lock: many threads add at once (with the GIL released
/// in `add_many`), and no element added is ever lost.
#[pyclass(name = "AtomicBloomFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyAtomicBloomFilter;

#[pymethods]
impl PyAtomicBloomFilter {
    #[new]
    fn new(capacity: Whole, fpp: f64) -> PyResult<PyClassInitializer<Self>> {
        Ok(
            sized(Class::AtomicClassic, capacity, fpp, BloomFilter::new)?
                .add_subclass(PyAtomicBloomFilter),
        )
    }
}

/// A blocked filter whose adds take no lock (see `AtomicBloomFilter`).
#[pyclass(name = "AtomicBlockedBloomFilter", module = "bloomkit", extends = Filter, frozen)]
pub struct PyAtomicBlockedBloomFilter;

#[pymethods]
impl PyAtomicBlockedBloomFilter {
    #[new]
    fn new(capacity: Whole, fpp: f64) -> PyResult<PyClassInitializer<Self>> {
        Ok(
            sized(Class::AtomicBlocked, capacity, fpp, BlockedBloomFilter::new)?
                .add_subclass(PyAtomicBlockedBloomFilter),
        )
    }
}

/// Unpickles a filter (`__reduce__`'s constructor).
#[pyfunction]
pub fn _restore(py: Python<'_>, class: &str, data: &[u8]) -> PyResult<PyObject> {
    let decoded = native::from_bytes(data, &[]).map_err(errors::core)?;
    Filter::decode(py, Some(Class::from_name(class)?), decoded)
}

/// Loads a native file of any kind, as the class of that kind (`Bitmap` and `TwoBitMap` for
/// the bitmap kinds).
#[pyfunction]
pub fn load(py: Python<'_>, path: FsPath) -> PyResult<PyObject> {
    let native::Decoded { filter, design } = py
        .allow_threads(|| file::load(&path, &[]))
        .map_err(errors::core)?;
    match crate::bitmaps::wrap_any(py, filter)? {
        Ok(bitmap) => Ok(bitmap),
        Err(filter) => Filter::decode(py, None, native::Decoded { filter, design }),
    }
}
