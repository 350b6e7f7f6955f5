//! The `bloomkit._bloomkit` extension module: bloomkit's filters, files and Redis filters for
//! Python. A thin layer: element types become Rust keys (`elements.rs`), errors become Python
//! exceptions (`errors.rs`), and every operation is the Rust crates'.

mod arguments;
mod bitmaps;
mod dleft;
mod elements;
mod errors;
mod filters;
mod guarded;
mod mapped;
mod memory;
mod meth_o;
mod redis;
mod windows;

use pyo3::prelude::*;

#[pymodule]
fn _bloomkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<filters::Filter>()?;
    m.add_class::<filters::PyBloomFilter>()?;
    m.add_class::<filters::PyBlockedBloomFilter>()?;
    m.add_class::<filters::PyCountingBloomFilter>()?;
    m.add_class::<filters::PyScalableBloomFilter>()?;
    m.add_class::<filters::PyAtomicBloomFilter>()?;
    m.add_class::<filters::PyAtomicBlockedBloomFilter>()?;
    m.add_class::<windows::PyCountWindowFilter>()?;
    m.add_class::<windows::PyTimeWindowFilter>()?;
    m.add_class::<dleft::PyDLeftCountingFilter>()?;
    m.add_class::<mapped::MappedFilter>()?;
    m.add_class::<bitmaps::PyBitmap>()?;
    m.add_class::<bitmaps::PyTwoBitMap>()?;
    m.add_class::<bitmaps::IntIterator>()?;
    m.add_class::<redis::SharedFilter>()?;
    m.add_class::<redis::PyRedisFilter>()?;
    m.add_class::<redis::PyScalableRedisFilter>()?;
    m.add_class::<redis::PyRedissonFilter>()?;
    m.add_class::<redis::PyCountingRedisFilter>()?;
    m.add_class::<redis::PyTimeWindowRedisFilter>()?;
    // After `add_class`: these set methods on the classes made there.
    let py = m.py();
    meth_o::install_on_filter_class(&py.get_type::<filters::Filter>())?;
    meth_o::install_on_filter_class(&py.get_type::<filters::PyBloomFilter>())?;
    meth_o::install_on_filter_class(&py.get_type::<filters::PyBlockedBloomFilter>())?;
    meth_o::install_on_mapped_filter(py)?;
    meth_o::install_on_bitmaps(py)?;
    m.add("RedisError", m.py().get_type::<errors::RedisError>())?;
    m.add_function(wrap_pyfunction!(filters::load, m)?)?;
    m.add_function(wrap_pyfunction!(filters::_restore, m)?)?;
    Ok(())
}
