//! Files: atomic saves that respect the path, and checked, bounded loads of the native format.
//!
//! [`write_atomic`] never leaves a torn file: it writes a temporary file in the same directory
//! as the real file, flushes it to disk (`fsync`), renames it over the target (atomic on POSIX
//! file systems) and flushes the directory, so that after a crash at any moment the path holds
//! either the old file or the new one. It respects what is at the path:
//!
//! - a symbolic link is followed, and the file it points to is replaced (the link stays);
//! - the replaced file's permissions and owner are given to the new one before the rename;
//! - a directory, FIFO, socket or device is never replaced, and neither is a read-only file
//!   (one without any write permission bit): these are errors that say so.
//!
//! Temporary files are named `.NAME.PID-N-NANOS.tmp`. One that a killed process left behind is
//! removed by the next [`write_atomic`] or [`crate::sharing::LockedFile::open`] of the same
//! file, once its process is gone (Linux; elsewhere such files stay until removed by hand).
//!
//! [`load`] reads at most the file's size as the file system declares it, refuses anything but
//! a regular file (a FIFO or `/dev/zero` would otherwise block or never end), and verifies the
//! checksum. Sharing a file between processes (locks, exclusive creation) is in
//! [`crate::sharing`].
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
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) fn io_error(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { context, source }
}

/// An [`Error::Io`] about `path` that no system call reported (a wrong kind of file, say).
pub(crate) fn refusal(path: &Path, what: &str, reason: String) -> Error {
    Error::Io {
        context: format!("{what} {}", path.display()),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, reason),
    }
}

/// What kind of file system object `meta` describes, for messages; `None` for a regular file.
pub(crate) fn not_regular(meta: &Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some(if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    })
}

/// Fails unless `meta` describes a regular file.
/// A directory is [`std::io::ErrorKind::IsADirectory`] (Python's `IsADirectoryError`).
pub(crate) fn require_regular(path: &Path, what: &str, meta: &Metadata) -> Result<()> {
    match not_regular(meta) {
        None => Ok(()),
        Some(kind) if meta.is_dir() => Err(Error::Io {
            context: format!("{what} {}", path.display()),
            source: std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                format!("it is {kind}, not a regular file"),
            ),
        }),
        Some(kind) => Err(refusal(
            path,
            what,
            format!("it is {kind}, not a regular file"),
        )),
    }
}

/// Fails if the file has no write permission bit at all (checked on the mode, not with
/// `access`, so that root is refused too: a read-only filter is meant to stay as it is).
pub(crate) fn require_writable(path: &Path, meta: &Metadata) -> Result<()> {
    if meta.permissions().readonly() {
        #[cfg(unix)]
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            format!(" (mode {:04o})", meta.permissions().mode() & 0o7777)
        };
        #[cfg(not(unix))]
        let mode = String::new();
        return Err(refusal(
            path,
            "writing",
            format!("the file is read-only{mode}; make it writable (chmod u+w) to change it"),
        ));
    }
    Ok(())
}

/// The file a path names: symbolic links resolved. A path that does not exist (yet) is
/// returned as it is, after resolving its directory.
pub fn real_path(path: &Path) -> Result<PathBuf> {
    match fs::canonicalize(path) {
        Ok(p) => Ok(p),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                // A link to nothing: writing through it would create a file elsewhere.
                return Err(refusal(
                    path,
                    "resolving",
                    "it is a symbolic link to a file that does not exist".into(),
                ));
            }
            Ok(path.to_path_buf())
        }
        Err(e) => Err(io_error(format!("resolving {}", path.display()))(e)),
    }
}

/// A temporary name next to `path`, unique within this process and unlikely across processes.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    path.with_file_name(format!(
        ".{}.{}-{n}-{nanos}.tmp",
        file_name(path),
        std::process::id()
    ))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "filter".into())
}

/// Removes the temporary files of the real file `path` (`.NAME.PID-N-NANOS.tmp`) whose process
/// has ended: what a save killed between creating its temporary file and renaming it left
/// behind. Best effort: errors are ignored, and on systems without `/proc` nothing is removed.
pub fn remove_stale_temps(path: &Path) {
    #[cfg(target_os = "linux")]
    {
        let prefix = format!(".{}.", file_name(path));
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(rest) = name
                .strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(".tmp"))
            else {
                continue;
            };
            // PID-N-NANOS
            let mut parts = rest.split('-');
            let (Some(pid), Some(n), Some(nanos), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !(numeric(pid) && numeric(n) && numeric(nanos)) {
                continue;
            }
            if pid != std::process::id().to_string() && !Path::new("/proc").join(pid).exists() {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}

/// What a save writes: bytes already encoded, or a filter in the native format, encoded as
/// it is written (so saving a large filter needs no second copy of it in memory).
#[derive(Clone, Copy)]
pub enum Content<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// This filter's native file ([`native::write_to`]), with the design it was sized for.
    Filter(&'a AnyFilter, Option<Design>),
}

impl Content<'_> {
    pub(crate) fn write_to(self, file: &mut File) -> std::io::Result<()> {
        match self {
            Content::Bytes(bytes) => file.write_all(bytes),
            Content::Filter(filter, design) => {
                let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
                native::write_to(filter, design, &mut out)?;
                out.flush()
            }
        }
    }
}

impl<'a> From<&'a [u8]> for Content<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Content::Bytes(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for Content<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Content::Bytes(bytes)
    }
}

/// Writes `bytes` to a new temporary file next to `real` and flushes it. When `like` is given
/// (the file being replaced), the temporary file gets its permissions and owner. Returns its
/// name and the open file.
pub(crate) fn write_temp(
    real: &Path,
    content: Content<'_>,
    like: Option<&Metadata>,
) -> Result<(PathBuf, File)> {
    let tmp = temp_path(real);
    // Messages name the file the user knows, not the temporary one (which is removed).
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_error(format!("creating {}", real.display())))?;
        if let Some(meta) = like {
            keep_mode_and_owner(&file, &tmp, real, meta)?;
        }
        content
            .write_to(&mut file)
            .map_err(io_error(format!("writing {}", real.display())))?;
        file.sync_all()
            .map_err(io_error(format!("flushing {}", real.display())))?;
        Ok(file)
    })();
    match result {
        Ok(file) => Ok((tmp, file)),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Gives the new file `file` the permissions and owner of the file it replaces (`fchown` and
/// `fchmod` on the open file, before it is renamed into place).
fn keep_mode_and_owner(file: &File, tmp: &Path, real: &Path, meta: &Metadata) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mine = file
            .metadata()
            .map_err(io_error(format!("reading {}", tmp.display())))?;
        if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid()) {
            std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())).map_err(|e| {
                refusal(
                    real,
                    "replacing",
                    format!(
                        "it belongs to uid {} gid {}, and a replacement could not keep that owner ({e})",
                        meta.uid(),
                        meta.gid()
                    ),
                )
            })?;
        }
    }
    file.set_permissions(meta.permissions())
        .map_err(io_error(format!(
            "setting the permissions of {}",
            tmp.display()
        )))
}

/// Renames `tmp` over `real` and flushes the directory; removes `tmp` on failure.
pub(crate) fn rename_into_place(tmp: &Path, real: &Path) -> Result<()> {
    let result = fs::rename(tmp, real)
        .map_err(io_error(format!(
            "renaming {} to {}",
            tmp.display(),
            real.display()
        )))
        .and_then(|()| sync_parent(real));
    if result.is_err() {
        let _ = fs::remove_file(tmp);
    }
    result
}

/// Replaces the file at `path` with `content` atomically (see the module docs): through a
/// symbolic link, keeping permissions and owner, refusing what is not a writable regular file,
/// and holding the existing file's exclusive lock ([`crate::sharing::LockedFile`]) while it is
/// swapped, so a save never slips between another process's locked batch and its
/// acknowledgement.
pub fn write_atomic<'a>(path: &Path, content: impl Into<Content<'a>>) -> Result<()> {
    let content = content.into();
    let real = real_path(path)?;
    match fs::metadata(&real) {
        // An existing file is replaced under its exclusive lock, like every other change to a
        // shared file: an in-place writer (which locks each batch) is never between a batch's
        // bits and its acknowledgement when the file is swapped, and sees the new file after.
        Ok(meta) => {
            require_regular(path, "replacing", &meta)?;
            crate::sharing::LockedFile::open(path, crate::sharing::LockMode::Exclusive)?
                .replace(content)
                .map(drop)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            remove_stale_temps(&real);
            let (tmp, _) = write_temp(&real, content, None)?;
            rename_into_place(&tmp, &real)
        }
        Err(e) => Err(io_error(format!("reading {}", path.display()))(e)),
    }
}

/// Flushes the directory entry of `path` (so the rename itself survives a crash).
pub(crate) fn sync_parent(path: &Path) -> Result<()> {
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
    write_atomic(path, Content::Filter(filter, design))
}

/// Opens a regular file for reading without ever blocking on it: the type is checked before
/// opening (a FIFO would block `open` itself) and again on the open file. `what` names the
/// action for messages (`"opening"`, `"reading"`, …).
pub fn open_regular(path: &Path, what: &str) -> Result<File> {
    open_regular_with(path, what, false)
}

/// [`open_regular`] for reading and writing (a file to map shared, say).
pub fn open_regular_for_writing(path: &Path, what: &str) -> Result<File> {
    open_regular_with(path, what, true)
}

fn open_regular_with(path: &Path, what: &str, write: bool) -> Result<File> {
    let meta = fs::metadata(path).map_err(io_error(format!("{what} {}", path.display())))?;
    require_regular(path, what, &meta)?;
    let mut options = OpenOptions::new();
    options.read(true).write(write);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Swapped for a FIFO between the check and the open: do not wait for a writer.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(io_error(format!("{what} {}", path.display())))?;
    let meta = file
        .metadata()
        .map_err(io_error(format!("{what} {}", path.display())))?;
    require_regular(path, what, &meta)?;
    Ok(file)
}

/// Reads an open regular file whole, but never more than the size it had when this began
/// (a file that grows meanwhile is read as it was then, and then rejected by its checksum).
pub(crate) fn read_bounded(file: &File, path: &Path) -> Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let context = || format!("reading {}", path.display());
    let len = file.metadata().map_err(io_error(context()))?.len();
    let mut f = file;
    f.seek(SeekFrom::Start(0)).map_err(io_error(context()))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(len).unwrap_or(usize::MAX))
        .map_err(|_| refusal(path, "reading", format!("{len} bytes do not fit in memory")))?;
    f.take(len)
        .read_to_end(&mut bytes)
        .map_err(io_error(context()))?;
    Ok(bytes)
}

/// Reads a regular file whole, no further than the size it had when the read began; FIFOs
/// and devices are refused.
pub fn read_regular(path: &Path) -> Result<Vec<u8>> {
    let file = open_regular(path, "reading")?;
    read_bounded(&file, path)
}

/// Whether `bytes` is a classic or blocked native file whose dirty mark is set: a writer had
/// it open for in-place updates, so its trailing checksum may be stale.
pub fn is_dirty(bytes: &[u8]) -> bool {
    let word = |at: usize| {
        bytes
            .get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    bytes.len() >= native::HEADER_LEN + 8
        && bytes.starts_with(b"BLOOMKIT")
        && matches!(u16::from_le_bytes([bytes[10], bytes[11]]), 1 | 4)
        && word(native::DIRTY_MARK_OFFSET) == Some(1)
}

/// Decodes a native file's bytes, verifying the checksum; a dirty file (see [`is_dirty`]) is
/// checked with its checksum recomputed, so every structural check still applies but
/// damage to its bits cannot be detected.
pub fn decode(mut bytes: Vec<u8>, keys: &[Hashing]) -> Result<Decoded> {
    if is_dirty(&bytes) {
        bytes[native::DIRTY_MARK_OFFSET..native::DIRTY_MARK_OFFSET + 8].fill(0);
        let body = bytes.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
    }
    native::from_bytes(&bytes, keys)
}

/// Loads a native file, verifying its checksum (see [`decode`]). `keys` supplies keyed or
/// custom hashers.
pub fn load(path: &Path, keys: &[Hashing]) -> Result<Decoded> {
    let bytes = read_regular(path)?;
    if let Ok(real) = fs::canonicalize(path) {
        remove_stale_temps(&real);
    }
    decode(bytes, keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BloomFilter, ScalableBloomFilter};

    fn with_stale_checksum(filter: AnyFilter, mark: u64) -> Vec<u8> {
        let mut bytes = native::to_bytes(&filter, None).unwrap();
        // An in-place writer set a bit (the payload's first byte) after the checksum was
        // written, with the dirty mark `mark`.
        let payload = u64::from_le_bytes(bytes[72..80].try_into().unwrap()) as usize;
        bytes[payload] |= 0x80;
        bytes[native::DIRTY_MARK_OFFSET..native::DIRTY_MARK_OFFSET + 8]
            .copy_from_slice(&mark.to_le_bytes());
        bytes
    }

    #[test]
    fn a_dirty_classic_file_decodes_with_its_new_bits() {
        let f: AnyFilter = BloomFilter::new(1000, 0.01).unwrap().into();
        let bytes = with_stale_checksum(f.clone(), 1);
        assert!(is_dirty(&bytes));
        let decoded = decode(bytes, &[]).unwrap();
        assert_ne!(decoded.filter, f, "the bit set in place is there");
    }

    #[test]
    fn a_sealed_file_with_a_stale_checksum_is_rejected() {
        let f: AnyFilter = BloomFilter::new(1000, 0.01).unwrap().into();
        assert!(matches!(
            decode(with_stale_checksum(f, 0), &[]),
            Err(Error::Checksum { .. })
        ));
        // Only classic and blocked files are written in place: the mark means nothing on a
        // scalable file, whose damage is still detected.
        let s: AnyFilter = ScalableBloomFilter::new(1000, 0.01).unwrap().into();
        let bytes = with_stale_checksum(s, 1);
        assert!(!is_dirty(&bytes));
        assert!(decode(bytes, &[]).is_err());
    }
}
