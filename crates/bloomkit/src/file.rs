//! Files: atomic saves and checked loads of the native format.
//!
//! [`write_atomic`] never leaves a torn file: it writes a temporary file in the same directory,
//! flushes it to disk (`fsync`), renames it over the target (atomic on POSIX file systems) and
//! flushes the directory, so that after a crash at any moment the path holds either the old
//! file or the new one. [`load`] verifies the checksum.
//!
//! ```
//! use bloomkit::{BloomFilter, file};
//! let dir = std::env::temp_dir().join(format!("bloomkit-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("seen.bloom");
//! let mut f = BloomFilter::new(1000, 0.01)?;
//! f.insert("x");
//! file::save(&path, &f.clone().into(), None)?;
//! assert_eq!(file::load(&path, &[])?.filter, f.into());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::any::AnyFilter;
use crate::codec::native::{self, Decoded, Design};
use crate::error::{Error, Result};
use crate::hash::Hashing;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

fn io_error(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { context, source }
}

/// A temporary name next to `path`, unique within this process and unlikely across processes.
fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "filter".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    path.with_file_name(format!(".{name}.{}-{n}-{nanos}.tmp", std::process::id()))
}

/// Replaces the file at `path` with `bytes` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_error(format!("creating {}", tmp.display())))?;
        file.write_all(bytes)
            .map_err(io_error(format!("writing {}", tmp.display())))?;
        file.sync_all()
            .map_err(io_error(format!("flushing {}", tmp.display())))?;
        drop(file);
        fs::rename(&tmp, path).map_err(io_error(format!(
            "renaming {} to {}",
            tmp.display(),
            path.display()
        )))?;
        sync_parent(path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Flushes the directory entry of `path` (so the rename itself survives a crash).
fn sync_parent(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error(format!("flushing directory {}", dir.display())))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Saves a filter in the native format, atomically.
pub fn save(path: &Path, filter: &AnyFilter, design: Option<Design>) -> Result<()> {
    write_atomic(path, &native::to_bytes(filter, design)?)
}

/// Loads a native file, verifying its checksum. `keys` supplies keyed or custom hashers.
pub fn load(path: &Path, keys: &[Hashing]) -> Result<Decoded> {
    let bytes = fs::read(path).map_err(io_error(format!("reading {}", path.display())))?;
    native::from_bytes(&bytes, keys)
}
