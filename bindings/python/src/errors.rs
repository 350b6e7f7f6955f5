//! bloomkit's errors as Python exceptions, keeping the Rust error's message.
//!
//! - bad parameters (a Redis URL or filter name among them), corrupt or foreign data,
//!   incompatible filters: `ValueError`;
//! - files: `OSError` with the operating system's `errno` (so `FileNotFoundError` and friends);
//! - a removal of an element that is not there: `KeyError`, as `set.remove`;
//! - an operation the kind does not have: `TypeError`;
//! - memory: `MemoryError`; Redis: `bloomkit.RedisError`.

use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyKeyError,
    PyMemoryError, PyOSError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

create_exception!(
    bloomkit,
    RedisError,
    PyException,
    "A Redis filter operation failed: the server is unreachable or timed out, answered with an error, or holds no (or a damaged) filter under the name."
);

/// Converts a core library error.
pub fn core(e: bloomkit::Error) -> PyErr {
    use bloomkit::Error as E;
    let message = e.to_string();
    match e {
        E::Io { source, .. } => match (source.raw_os_error(), source.kind()) {
            (Some(errno), _) => PyOSError::new_err((errno, message)),
            // Errors the library makes itself carry a kind, not an errno.
            (None, std::io::ErrorKind::AlreadyExists) => PyFileExistsError::new_err(message),
            (None, std::io::ErrorKind::NotFound) => PyFileNotFoundError::new_err(message),
            (None, std::io::ErrorKind::IsADirectory) => PyIsADirectoryError::new_err(message),
            (None, _) => PyOSError::new_err(message),
        },
        E::Alloc { .. } => PyMemoryError::new_err(message),
        E::NotPresent => PyKeyError::new_err(message),
        E::Unsupported { .. } => PyTypeError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// Converts a bloomkit-redis error.
pub fn redis(e: bloomkit_redis::Error) -> PyErr {
    use bloomkit_redis::Error as E;
    match e {
        E::Core(core_error) => core(core_error),
        E::InvalidName(_) | E::InvalidUrl(_) => PyValueError::new_err(e.to_string()),
        other => RedisError::new_err(other.to_string()),
    }
}
