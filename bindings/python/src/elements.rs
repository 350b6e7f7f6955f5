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
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyList, PyString, PyTuple};
use pyo3::Borrowed;

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
    /// An `int`: the key bytes of Rust's `i64` of the same value.
    Int([u8; 8]),
    /// A copy of a `bytearray` (mutable, so not borrowed).
    Owned(Vec<u8>),
}

impl<'a> Element<'a> {
    /// The key of a Python object; a `TypeError` naming the supported types for others.
    #[inline(always)]
    pub fn of(obj: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        // SAFETY: `obj` is a live object; the check compares its type pointer with `str`'s.
        if unsafe { pyo3::ffi::PyUnicode_CheckExact(obj.as_ptr()) } != 0 {
            // SAFETY: the object is exactly a `str` (checked just above).
            return Ok(Element::Bytes(utf8(unsafe { obj.downcast_unchecked() })?));
        }
        Element::of_other(obj)
    }

    /// [`of`](Self::of) for everything but an exact `str`.
    #[inline(never)]
    fn of_other(obj: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = obj.downcast::<PyString>() {
            return Ok(Element::Bytes(utf8(s)?));
        }
        if let Ok(b) = obj.downcast::<PyBytes>() {
            return Ok(Element::Bytes(b.as_bytes()));
        }
        if obj.is_instance_of::<PyInt>() {
            let mut bytes = [0; 8];
            int_key(obj)?.with_bytes(|b| bytes.copy_from_slice(b));
            return Ok(Element::Int(bytes));
        }
        if let Ok(b) = obj.downcast::<PyByteArray>() {
            return Ok(Element::Owned(b.to_vec()));
        }
        Err(type_error(obj))
    }
}

impl Element<'_> {
    /// The key bytes.
    #[inline(always)]
    pub fn bytes(&self) -> &[u8] {
        match self {
            Element::Bytes(b) => b,
            Element::Int(b) => b,
            Element::Owned(v) => v,
        }
    }
}

/// The encoding is the Rust types' own (taken in [`Element::of`]).
impl Key for Element<'_> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.bytes().encode(out)
    }

    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.bytes())
    }
}

/// Calls `f` with the element's key bytes; a `TypeError` for unsupported types. An exact `str`
/// (the common case) goes straight to its UTF-8 bytes, without an [`Element`] in between (moving
/// that enum through memory cost a store-forwarding stall per call).
#[inline(always)]
pub fn with_key<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    // SAFETY: `obj` is a live object; the check compares its type pointer with `str`'s.
    if unsafe { pyo3::ffi::PyUnicode_CheckExact(obj.as_ptr()) } != 0 {
        // SAFETY: the object is exactly a `str` (checked just above).
        return Ok(f(utf8(unsafe { obj.downcast_unchecked() })?));
    }
    Ok(Element::of_other(obj)?.with_bytes(f))
}

/// Batch methods take elements from their iterable this many at a time.
pub const CHUNK: usize = 4096;

/// How many answers to make room for at first: the length of a `list` or `tuple`, which is
/// theirs, and at most one chunk's for other iterables, whose `__len__` may say anything.
pub fn answers_hint(iterable: &Bound<'_, PyAny>) -> usize {
    let exact =
        iterable.is_exact_instance_of::<PyList>() || iterable.is_exact_instance_of::<PyTuple>();
    let len = iterable.len().unwrap_or(0);
    if exact {
        len
    } else {
        len.min(CHUNK)
    }
}

/// Calls `f` without the GIL on the keys of each chunk of up to [`CHUNK`] elements of
/// `iterable` (any iterable: list, tuple, generator, ...). A chunk is checked completely
/// before `f` sees it; an element that is refused stops the iteration there, after the chunks
/// before it.
pub fn for_each_chunk(
    iterable: &Bound<'_, PyAny>,
    mut f: impl FnMut(&[Element<'_>]) -> PyResult<()> + Send,
) -> PyResult<()> {
    let py = iterable.py();
    for_each_key_chunk(iterable, |keys| py.allow_threads(|| f(keys)))
}

/// As [`for_each_chunk`], calling `f` with the GIL held (`f` may release it: the chunk's
/// objects are kept alive until it returns).
pub fn for_each_key_chunk(
    iterable: &Bound<'_, PyAny>,
    mut f: impl FnMut(&[Element<'_>]) -> PyResult<()>,
) -> PyResult<()> {
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
        f(&keys)?;
        if items.len() < CHUNK {
            return Ok(());
        }
    }
}

/// Calls `hash` on the key bytes of every element of `iterable` (any iterable; `list` and
/// `tuple` are read in place, without an iterator or a reference count per element) and `f`
/// on the hashes of each run of up to [`CHUNK`] elements, all with the GIL held (`f` may
/// release it: only hashes cross over, no reference into a Python object). A chunk is checked
/// completely before `f` sees it; an element that is refused stops the iteration there, after
/// the chunks before it.
pub fn for_each_hashed<H>(
    iterable: &Bound<'_, PyAny>,
    hash: impl Fn(&[u8]) -> H,
    mut f: impl FnMut(&[H]) -> PyResult<()>,
) -> PyResult<()> {
    let py = iterable.py();
    let mut hashes = Vec::with_capacity(iterable.len().unwrap_or(CHUNK).min(CHUNK));
    let mut objects = Vec::with_capacity(hashes.capacity());
    let mut run = |objects: &[*mut pyo3::ffi::PyObject]| -> PyResult<()> {
        hashes.clear();
        hash_objects(py, objects, &hash, &mut hashes)?;
        f(&hashes)
    };
    if let Ok(list) = iterable.downcast_exact::<PyList>() {
        // The list may change while `f` runs without the GIL: its length is read again for
        // every chunk, and a chunk's items are hashed before `f` runs.
        let mut start = 0;
        while start < list.len() {
            let end = list.len().min(start + CHUNK);
            objects.clear();
            for i in start..end {
                objects.push(list_item(list, i)?);
            }
            run(&objects)?;
            start = end;
        }
        return Ok(());
    }
    if let Ok(tuple) = iterable.downcast_exact::<PyTuple>() {
        // A tuple cannot change: read it in place.
        let mut start = 0;
        while start < tuple.len() {
            let end = tuple.len().min(start + CHUNK);
            objects.clear();
            for i in start..end {
                objects.push(tuple.get_borrowed_item(i)?.as_ptr());
            }
            run(&objects)?;
            start = end;
        }
        return Ok(());
    }
    let mut iter = iterable.try_iter()?;
    loop {
        // The chunk's objects are owned here, alive until they are hashed.
        let items = iter.by_ref().take(CHUNK).collect::<PyResult<Vec<_>>>()?;
        if items.is_empty() {
            return Ok(());
        }
        objects.clear();
        objects.extend(items.iter().map(Bound::as_ptr));
        run(&objects)?;
        if items.len() < CHUNK {
            return Ok(());
        }
    }
}

/// Appends `hash` of the key bytes of each object to `out`, in one pass that loads the objects
/// a few ahead; the first refusal if one is refused. The caller keeps every object alive, and
/// nothing here runs Python code or releases the GIL.
fn hash_objects<H>(
    py: Python<'_>,
    objects: &[*mut pyo3::ffi::PyObject],
    hash: impl Fn(&[u8]) -> H,
    out: &mut Vec<H>,
) -> PyResult<()> {
    // A string's header and its first bytes of text span two cache lines, usually in memory
    // rather than in a cache for a large batch: loading them this many elements early hides
    // most of that wait (measured: 8 was too few on a loaded machine).
    const AHEAD: usize = 24;
    for (i, &object) in objects.iter().enumerate() {
        if let Some(&next) = objects.get(i + AHEAD) {
            prefetch(next);
        }
        // SAFETY: `object` is a live object (the caller keeps it alive; see above) and the
        // GIL is held.
        let item = unsafe { Borrowed::from_ptr(py, object) };
        out.push(with_key(&item, &hash)?);
    }
    Ok(())
}

/// Item `i` of a list, borrowed from it (`IndexError` past its end).
fn list_item(list: &Bound<'_, PyList>, i: usize) -> PyResult<*mut pyo3::ffi::PyObject> {
    // SAFETY: `list` is a live list and the GIL is held; `PyList_GetItem` checks the index and
    // returns a borrowed reference, or NULL with an `IndexError` set. The reference is valid
    // while the list holds the item: callers use it before anything runs Python code or
    // releases the GIL (`for_each_hashed` hashes a chunk before `f` sees it).
    let item = unsafe { pyo3::ffi::PyList_GetItem(list.as_ptr(), i as pyo3::ffi::Py_ssize_t) };
    if item.is_null() {
        return Err(PyErr::fetch(list.py()));
    }
    Ok(item)
}

/// A new `list` of the answers (`True`/`False`). Built as `[majority] * len` (CPython fills
/// it in one C loop) with the other answers then set one by one: under the stable ABI every
/// item set is a function call, twice as many per element as that fill.
pub fn bool_list<'py>(py: Python<'py>, answers: &[bool]) -> PyResult<Bound<'py, PyList>> {
    let trues = answers.iter().filter(|&&a| a).count();
    let majority = trues * 2 >= answers.len();
    let one = PyList::new(py, [majority])?;
    let list = one
        .as_any()
        .mul(answers.len())?
        .downcast_into::<PyList>()
        .map_err(PyErr::from)?;
    let value = PyBool::new(py, !majority);
    for (i, _) in answers.iter().enumerate().filter(|(_, &a)| a != majority) {
        list.set_item(i, value)?;
    }
    Ok(list)
}

/// Starts loading the first two cache lines of an object (a hint: no effect on results).
#[inline(always)]
fn prefetch(obj: *mut pyo3::ffi::PyObject) {
    let p = obj.cast::<u8>().cast_const();
    prefetch_line(p);
    prefetch_line(p.wrapping_add(64));
}

/// Starts loading the cache line at `p`, which may be any address (a hint: it never faults
/// and has no effect on results).
#[inline(always)]
fn prefetch_line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` is only a hint: it never faults and does not change what the
        // program computes, whatever the address; SSE is part of the x86_64 baseline.
        // Exercised by every batch test.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
