//! The single-element methods (`add`, `check_and_add`, and the bitmaps' `add`), defined the
//! `METH_O` way.
//!
//! Under the stable ABI of CPython 3.9, the wheel's floor, PyO3 defines a method with
//! `METH_VARARGS | METH_KEYWORDS`: every call packs its argument into a new tuple, which the
//! method unpacks again by name. An `add` otherwise costs one cache miss and a hash, so that
//! round trip was half of its time (measured: 206–271 ns per `add` in a Python loop before,
//! 109–127 after; docs/BENCHMARKS.md). `METH_O`, in the stable ABI since 3.2, hands the one
//! argument over as it is. These methods are therefore defined here by hand: a method
//! descriptor (`PyDescr_NewMethod`) per class, set on the class when the module is imported,
//! calling through PyO3's own trampoline (GIL bookkeeping, a panic becomes an exception; it is
//! public but internal to PyO3, hence the exact `pyo3` version in Cargo.toml). They take their
//! argument by position only, as `set.add` does.

use crate::bitmaps::{PyBitmap, PyTwoBitMap};
use crate::filters::Filter;
use crate::mapped::MappedFilter;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;
use pyo3::IntoPyObjectExt;
use std::ffi::CStr;

/// Defines `extern "C" fn $name(self, element)` for a `METH_O` method of the class `$class`:
/// `$body` runs with `$this: &Bound<$class>` and `$element: &Bound<PyAny>`, and its `PyResult`
/// value is converted to Python (`()` would become an empty tuple: map it to `None`).
macro_rules! meth_o {
    ($name:ident, $class:ty, |$py:ident, $this:ident, $element:ident| $body:expr) => {
        unsafe extern "C" fn $name(
            slf: *mut ffi::PyObject,
            arg: *mut ffi::PyObject,
        ) -> *mut ffi::PyObject {
            unsafe fn body(
                $py: Python<'_>,
                slf: *mut ffi::PyObject,
                arg: *mut ffi::PyObject,
            ) -> PyResult<*mut ffi::PyObject> {
                // SAFETY: CPython passes borrowed references to live objects, valid for the
                // call, with the GIL held; `slf` is an instance of the class the descriptor was
                // made for (method descriptors check that before they call), and `install`
                // only makes this function's descriptors for `$class` and its subclasses.
                let (slf, $element) =
                    unsafe { (Borrowed::from_ptr($py, slf), Borrowed::from_ptr($py, arg)) };
                // SAFETY: see above: `slf` is a `$class` (a subclass instance starts with its
                // base's layout).
                let $this: &Bound<'_, $class> = unsafe { slf.downcast_unchecked::<$class>() };
                let $element = &*$element;
                Ok($body?.into_py_any($py)?.into_ptr())
            }
            // SAFETY: CPython calls a `METH_O` function with the GIL held and the two object
            // pointers, as the trampoline expects.
            unsafe { pyo3::impl_::trampoline::binaryfunc(slf, arg, body) }
        }
    };
}

meth_o!(filter_add, Filter, |py, this, element| this
    .get()
    .add(element)
    .map(|()| py.None()));
meth_o!(filter_check_and_add, Filter, |py, this, element| this
    .get()
    .check_and_add(element));
meth_o!(mapped_add, MappedFilter, |py, this, element| this
    .get()
    .add(py, element)
    .map(|()| py.None()));
meth_o!(mapped_check_and_add, MappedFilter, |py, this, element| this
    .get()
    .check_and_add(py, element));
// The bitmaps are not frozen: `add` borrows them mutably (a `RuntimeError` if already borrowed).
meth_o!(bitmap_add, PyBitmap, |py, this, element| this
    .try_borrow_mut()?
    .add(element));
meth_o!(two_bit_map_add, PyTwoBitMap, |py, this, element| this
    .try_borrow_mut()?
    .add(element));

/// Sets `name` on the class `ty` to a `METH_O` method descriptor calling `meth`. `doc` starts
/// with the signature (`name($self, element, /)\n--\n\n`), which `inspect.signature` and
/// `help()` read.
fn install(
    ty: &Bound<'_, PyType>,
    name: &'static CStr,
    doc: &'static CStr,
    meth: ffi::PyCFunction,
) -> PyResult<()> {
    // A descriptor keeps a pointer to its definition: one definition per class and method,
    // made once when the module is imported and never freed.
    let def: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunction: meth },
        ml_flags: ffi::METH_O,
        ml_doc: doc.as_ptr(),
    }));
    // SAFETY: `ty` is a live type object and `def` a valid definition that lives for the rest
    // of the process; `PyDescr_NewMethod` returns a new reference, or NULL with an exception.
    let descr = unsafe {
        Bound::from_owned_ptr_or_err(ty.py(), ffi::PyDescr_NewMethod(ty.as_ptr().cast(), def))?
    };
    ty.setattr(name.to_str()?, descr)
}

/// Defines `add` and `check_and_add` on `Filter` or one of its subclasses (the hot kinds get
/// their own, so that a call on them checks the exact class, not the base).
pub fn install_on_filter_class(ty: &Bound<'_, PyType>) -> PyResult<()> {
    // The functions read `self` as a `Filter` (see `meth_o!`).
    assert!(ty.is_subclass_of::<Filter>()?, "not a filter class");
    install(
        ty,
        c"add",
        c"add($self, element, /)\n--\n\nAdds an element (`str`, `bytes` or `int`).",
        filter_add,
    )?;
    install(
        ty,
        c"check_and_add",
        c"check_and_add($self, element, /)\n--\n\nAdds an element and returns whether it was \
          (probably) present before: the first-seen test of a deduplicating pipeline in one step.",
        filter_check_and_add,
    )
}

/// Defines `add` and `check_and_add` on `MappedFilter`.
pub fn install_on_mapped_filter(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<MappedFilter>();
    install(
        &ty,
        c"add",
        c"add($self, element, /)\n--\n\nAdds an element in place (read-write mappings only).",
        mapped_add,
    )?;
    install(
        &ty,
        c"check_and_add",
        c"check_and_add($self, element, /)\n--\n\nAdds an element and returns whether it was \
          (probably) present before. An element whose bits are all set already is answered \
          without the lock (bits are never cleared in place, and a reader may read them as they \
          are); only a (probably) new one takes the lock, under which it is added and the answer \
          decided, so of many processes adding one element exactly one is told it was new.",
        mapped_check_and_add,
    )
}

/// Defines `add` on `Bitmap` and `TwoBitMap` (which cannot be subclassed).
pub fn install_on_bitmaps(py: Python<'_>) -> PyResult<()> {
    install(
        &py.get_type::<PyBitmap>(),
        c"add",
        c"add($self, value, /)\n--\n\nAdds an integer; returns whether it was new. `ValueError` \
          outside the range.",
        bitmap_add,
    )?;
    install(
        &py.get_type::<PyTwoBitMap>(),
        c"add",
        c"add($self, value, /)\n--\n\nRecords one occurrence of an integer; returns its cell \
          before: 0 (absent), 1 (once) or 2 (more than once). `ValueError` outside the range.",
        two_bit_map_add,
    )
}
