//! The machine's memory, so that a filter too large for it is refused with a `MemoryError`
//! before anything is allocated. An allocation larger than the free memory often succeeds
//! (Linux overcommits), and the process is then killed by the kernel as the filter's zeroed
//! pages are first touched: no Python error at all. The `bloomkit` CLI checks the same way.

use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::PyResult;

/// The environment variable that sets the memory to assume available, in bytes, instead of
/// `MemAvailable` (for a container whose limit `/proc/meminfo` does not show); the CLI's too.
const AVAILABLE_VAR: &str = "BLOOMKIT_MEM_AVAILABLE";

/// Allocations below this size are not checked (reading `/proc/meminfo` costs more than they).
const CHECKED_FROM: u64 = 64 << 20;

/// The memory available for new allocations without swapping, or `None` where unknown.
fn available() -> PyResult<Option<u64>> {
    if let Some(value) = std::env::var_os(AVAILABLE_VAR) {
        let value = value.to_string_lossy();
        return match value.trim().parse::<u64>() {
            Ok(bytes) => Ok(Some(bytes)),
            Err(_) => Err(PyValueError::new_err(format!(
                "{AVAILABLE_VAR}={value:?} is not a number of bytes"
            ))),
        };
    }
    let Ok(text) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(None);
    };
    let kib = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok());
    Ok(kib.and_then(|k| k.checked_mul(1024)))
}

/// A `MemoryError` when `bytes` (what `what` needs) is more than this machine has available.
pub fn ensure_fits(bytes: u64, what: impl FnOnce() -> String) -> PyResult<()> {
    if bytes < CHECKED_FROM {
        return Ok(());
    }
    match available()? {
        Some(avail) if bytes > avail => Err(PyMemoryError::new_err(format!(
            "{} needs {bytes} bytes of memory, more than this machine has available ({avail} \
             bytes; {AVAILABLE_VAR} sets it): lower the capacity or raise the fpp",
            what()
        ))),
        _ => Ok(()),
    }
}
