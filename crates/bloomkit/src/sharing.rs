//! Sharing a filter file between processes: advisory locks, exclusive creation, and whole-file
//! replacement under a lock.
//!
//! - [`LockedFile::open`] locks the real file behind a path (symbolic links resolved) with
//!   `flock` (shared or exclusive). After the lock is granted it checks that the path still
//!   names the file it locked (device and inode): if another process replaced the file
//!   meanwhile, it locks the new one instead (at most [`MAX_REOPENS`] times).
//! - [`LockedFile::replace`] writes a new file next to the locked one and renames it into
//!   place while the exclusive lock on the old file is held, so a load → change → save cycle
//!   under one exclusive lock can never lose another process's change: the other process
//!   waits for the lock, finds the path now names a new file, and starts over on that.
//! - [`create_new`] creates a file only if nothing is at the path (`link(2)` of a complete
//!   temporary file, so the file appears whole or not at all): of many processes creating the
//!   same path at once, exactly one succeeds.
//!
//! The locks are advisory: they order bloomkit processes (and anything else that uses
//! `flock` the same way), not arbitrary writers. docs/FORMAT.md ("Sharing a file between
//! processes") describes the whole protocol.
//!
//! ```
//! use bloomkit::{BloomFilter, Filter, codec::native, sharing::{self, LockedFile, LockMode}};
//! let dir = std::env::temp_dir().join(format!("bloomkit-sharing-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("seen.bloom");
//! let f = BloomFilter::new(1000, 0.01)?;
//! sharing::create_new(&path, &native::to_bytes(&f.into(), None)?)?;
//! let locked = LockedFile::open(&path, LockMode::Exclusive)?;
//! let mut loaded = locked.load(&[])?;
//! loaded.filter.insert_encoded(b"x")?;
//! let _new_file = locked.replace(&native::to_bytes(&loaded.filter, loaded.design)?)?;
//! assert!(bloomkit::file::load(&path, &[])?.filter.contains_encoded(b"x"));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::codec::native::Decoded;
use crate::error::{Error, Result};
use crate::file::{
    io_error, open_regular, read_bounded, real_path, refusal, remove_stale_temps,
    rename_into_place, require_regular, require_writable, sync_parent, write_temp, Content,
};
use crate::hash::Hashing;
use std::fs::{self, File, Metadata};
use std::path::{Path, PathBuf};

/// How many times [`LockedFile::open`] starts over because the file was replaced while it
/// waited for the lock. Each restart means another process completed a save, so this bounds
/// how long one process can be overtaken, not how long it waits.
pub const MAX_REOPENS: u32 = 10_000;

/// Which lock to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// Several holders at once (`LOCK_SH`): readers that need the file to stay as it is.
    Shared,
    /// One holder (`LOCK_EX`): a writer. Also refuses read-only files.
    Exclusive,
}

/// A filter file, open and locked (see the [module docs](self)). The lock is released when
/// this is dropped.
#[derive(Debug)]
pub struct LockedFile {
    file: File,
    path: PathBuf,
    meta: Metadata,
    mode: LockMode,
}

/// Device and inode of `meta` (on systems without them: always equal).
pub(crate) fn identity(meta: &Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

impl LockedFile {
    /// Opens the existing regular file that `path` names (through symbolic links) and locks
    /// it. Waits while another process holds a conflicting lock. Directories, FIFOs and
    /// devices are refused, and with [`LockMode::Exclusive`] so are read-only files.
    pub fn open(path: &Path, mode: LockMode) -> Result<LockedFile> {
        for _ in 0..MAX_REOPENS {
            let real = real_path(path)?;
            let file = open_regular(&real, "opening")?;
            match mode {
                LockMode::Shared => file.lock_shared(),
                LockMode::Exclusive => file.lock(),
            }
            .map_err(io_error(format!("locking {}", path.display())))?;
            let meta = file
                .metadata()
                .map_err(io_error(format!("reading {}", path.display())))?;
            match fs::metadata(&real) {
                Ok(now) if identity(&now) == identity(&meta) => {
                    if mode == LockMode::Exclusive {
                        require_writable(path, &meta)?;
                    }
                    remove_stale_temps(&real);
                    return Ok(LockedFile {
                        file,
                        path: real,
                        meta,
                        mode,
                    });
                }
                // Replaced (or removed) while we waited: start over with what is there now.
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error(format!("reading {}", path.display()))(e)),
            }
        }
        Err(refusal(
            path,
            "locking",
            format!("the file was replaced {MAX_REOPENS} times while waiting for its lock"),
        ))
    }

    /// The real file's path (symbolic links resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file (for mapping it, say). Its lock belongs to this value.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The file's metadata when it was locked.
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The file's device and inode: equal for two locks of the same file, different once a
    /// [`replace`](Self::replace) put a new file at the path. An inode number can be reused
    /// once its file is deleted and closed: compare with a file you still hold open (see
    /// [`identity_of`]).
    pub fn identity(&self) -> (u64, u64) {
        identity(&self.meta)
    }

    /// Releases the lock and keeps the file open (so that its inode number cannot be given
    /// to another file while it is held).
    pub fn unlock(self) -> Result<File> {
        self.file
            .unlock()
            .map_err(io_error(format!("unlocking {}", self.path.display())))?;
        Ok(self.file)
    }

    /// Reads the file (at most its size when it was locked) and decodes it, verifying the
    /// checksum (see [`crate::file::decode`]).
    pub fn load(&self, keys: &[Hashing]) -> Result<Decoded> {
        crate::file::decode(read_bounded(&self.file, &self.path)?, keys)
    }

    /// Replaces the file with `bytes`: a new file next to it with the same permissions and
    /// owner, flushed, then renamed over the real path while this exclusive lock is still
    /// held. Consumes the lock (it locks the old file, which is no longer at the path).
    /// Returns the new file, open (not locked).
    pub fn replace<'a>(self, content: impl Into<Content<'a>>) -> Result<File> {
        if self.mode != LockMode::Exclusive {
            return Err(refusal(
                &self.path,
                "replacing",
                "it is locked shared; replacing needs the exclusive lock".into(),
            ));
        }
        let (tmp, new) = write_temp(&self.path, content.into(), Some(&self.meta))?;
        let result = rename_into_place(&tmp, &self.path);
        drop(self); // releases the lock after the rename
        result.map(|()| new)
    }
}

/// Creates a file holding `bytes` at `path`, only if nothing is there: the file appears whole
/// or not at all, and of concurrent creators of one path exactly one succeeds. Fails with an
/// [`Error::Io`] of kind [`std::io::ErrorKind::AlreadyExists`] when the path is taken.
pub fn create_new<'a>(path: &Path, content: impl Into<Content<'a>>) -> Result<()> {
    let content = content.into();
    let exists = |source| Error::Io {
        context: format!("creating {}", path.display()),
        source,
    };
    let real = real_path(path)?;
    if fs::symlink_metadata(path).is_ok() {
        return Err(exists(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "a file already exists there",
        )));
    }
    remove_stale_temps(&real);
    let (tmp, _) = write_temp(&real, content, None)?;
    let linked = fs::hard_link(&tmp, &real);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => sync_parent(&real),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(exists(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a file already exists there",
            )))
        }
        // File systems without hard links: an exclusive open, then the bytes (a reader may
        // then briefly see a short file, which its checksum rejects).
        Err(_) => {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&real)
                .map_err(exists)?;
            let written = content.write_to(&mut file).and_then(|()| file.sync_all());
            if let Err(e) = written {
                // Ours (created exclusively above): never leave it torn (a full disk, say).
                let _ = fs::remove_file(&real);
                return Err(io_error(format!("writing {}", path.display()))(e));
            }
            sync_parent(&real)
        }
    }
}

/// The device and inode of an open file (see [`LockedFile::identity`]).
pub fn identity_of(file: &File) -> Result<(u64, u64)> {
    file.metadata()
        .map(|m| identity(&m))
        .map_err(io_error("reading an open filter file".into()))
}

/// Whether `path` still names the open file `file` (same device and inode): false once
/// another process replaced or removed it.
pub fn still_at(file: &File, path: &Path) -> Result<bool> {
    names(path, identity_of(file)?)
}

/// Whether `path` names the file of device and inode `id` (a `stat` of the path).
pub(crate) fn names(path: &Path, id: (u64, u64)) -> Result<bool> {
    match fs::metadata(path) {
        Ok(meta) => Ok(identity(&meta) == id),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_error(format!("reading {}", path.display()))(e)),
    }
}

/// Whether `path` names an existing file system object that is not a regular file (a
/// directory, FIFO, socket or device), with what it is.
pub fn special_file(path: &Path) -> Option<&'static str> {
    fs::metadata(path)
        .ok()
        .and_then(|m| crate::file::not_regular(&m))
}

/// Fails unless `path` names a regular file (following symbolic links); `what` names the
/// action for the message (`"reading"`, `"importing"`, …).
pub fn require_regular_file(path: &Path, what: &str) -> Result<()> {
    let meta = fs::metadata(path).map_err(io_error(format!("{what} {}", path.display())))?;
    require_regular(path, what, &meta)
}
