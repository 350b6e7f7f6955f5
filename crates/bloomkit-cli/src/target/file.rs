//! The file backend: a filter in a native file, shared safely with other processes.
//!
//! Readers load the file (it is only ever replaced whole, by rename, so a load sees one
//! complete version). Writers change it in *updates*: take the file's exclusive lock, re-read
//! it if another process replaced it since this one last saw it, apply the change, write the
//! new version next to it and rename it into place, release the lock. An update is complete
//! (saved) before the command acknowledges anything it did, so a signal or a crash can never
//! lose an acknowledged change, and concurrent writers never lose each other's changes.
//! See docs/FORMAT.md, "Sharing a file between processes".

use anyhow::{anyhow, bail, Result};
use bloomkit::codec::native::{self, Design};
use bloomkit::sharing::{self, LockMode, LockedFile};
use bloomkit::{AnyFilter, Hashing};
use std::path::{Path, PathBuf};

/// A filter file and this process's copy of it.
#[derive(Debug)]
pub struct FileTarget {
    path: PathBuf,
    keys: Vec<Hashing>,
    filter: AnyFilter,
    design: Option<Design>,
    /// The file the copy equals, held open (so that its inode number cannot be reused by a
    /// later file), with its device and inode; `None` when the copy may differ from every
    /// file.
    held: Option<(std::fs::File, (u64, u64))>,
}

/// A file to hold, with its identity.
fn hold(file: std::fs::File, path: &Path) -> Result<Option<(std::fs::File, (u64, u64))>> {
    let id = sharing::identity_of(&file).map_err(|e| file_error(path, e))?;
    Ok(Some((file, id)))
}

/// Whether a library error is "no such file".
fn not_found(e: &bloomkit::Error) -> bool {
    matches!(e, bloomkit::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}

/// Whether a library error is "already exists".
fn already_exists(e: &bloomkit::Error) -> bool {
    matches!(e, bloomkit::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists)
}

/// A library error about `path` in the user's terms.
pub fn file_error(path: &Path, e: bloomkit::Error) -> anyhow::Error {
    match e {
        bloomkit::Error::MissingKey(_) => {
            anyhow!("{}: {e} (pass the key with --key-file)", path.display())
        }
        // I/O errors name the file already.
        e @ bloomkit::Error::Io { .. } => anyhow!("{e}"),
        e => anyhow!("{}: {e}", path.display()),
    }
}

fn no_such_filter(path: &Path) -> anyhow::Error {
    anyhow!(
        "{}: no such filter (create it with: bloomkit create {} --capacity N --fpp P)",
        path.display(),
        path.display()
    )
}

impl FileTarget {
    /// Loads the filter at `path` for reading.
    pub fn open(path: &Path, keys: Vec<Hashing>) -> Result<FileTarget> {
        let decoded = bloomkit::file::load(path, &keys).map_err(|e| {
            if not_found(&e) {
                no_such_filter(path)
            } else {
                file_error(path, e)
            }
        })?;
        Ok(FileTarget {
            path: path.to_path_buf(),
            keys,
            filter: decoded.filter,
            design: decoded.design,
            held: None,
        })
    }

    /// Loads the filter at `path` for changing it: under its exclusive lock, which also
    /// refuses read-only files before anything is read.
    pub fn open_for_update(path: &Path, keys: Vec<Hashing>) -> Result<FileTarget> {
        let locked = LockedFile::open(path, LockMode::Exclusive).map_err(|e| {
            if not_found(&e) {
                no_such_filter(path)
            } else {
                file_error(path, e)
            }
        })?;
        let decoded = locked.load(&keys).map_err(|e| file_error(path, e))?;
        let held = hold(locked.unlock().map_err(|e| file_error(path, e))?, path)?;
        Ok(FileTarget {
            path: path.to_path_buf(),
            keys,
            filter: decoded.filter,
            design: decoded.design,
            held,
        })
    }

    /// Writes `filter` to `path` now. Without `force` only if nothing is there (exclusive:
    /// of concurrent creators exactly one succeeds); with it, replacing an existing filter
    /// under its lock.
    pub fn create(
        path: &Path,
        filter: AnyFilter,
        design: Option<Design>,
        force: bool,
        keys: Vec<Hashing>,
    ) -> Result<FileTarget> {
        let bytes = native::to_bytes(&filter, design).map_err(|e| file_error(path, e))?;
        let exists = || {
            anyhow!(
                "{}: a filter already exists (use --force to replace it)",
                path.display()
            )
        };
        let mut held = None;
        let mut created = false;
        // With --force the path may be replaced or removed between the attempts; a few rounds
        // settle it.
        for _ in 0..100 {
            if force {
                match LockedFile::open(path, LockMode::Exclusive) {
                    Ok(locked) => {
                        let new = locked.replace(&bytes).map_err(|e| file_error(path, e))?;
                        held = hold(new, path)?;
                        created = true;
                        break;
                    }
                    Err(e) if not_found(&e) => {}
                    Err(e) => return Err(file_error(path, e)),
                }
            }
            match sharing::create_new(path, &bytes) {
                Ok(()) => {
                    created = true;
                    break;
                }
                Err(e) if already_exists(&e) && !force => {
                    if let Some(kind) = sharing::special_file(path) {
                        bail!("{}: it is {kind}, not a filter file", path.display());
                    }
                    return Err(exists());
                }
                Err(e) if already_exists(&e) => {}
                Err(e) => return Err(file_error(path, e)),
            }
        }
        if !created {
            bail!(
                "{}: the file kept being replaced and removed by other processes; try again",
                path.display()
            );
        }
        Ok(FileTarget {
            path: path.to_path_buf(),
            keys,
            filter,
            design,
            held,
        })
    }

    /// The filter as this process last saw it.
    pub fn filter(&self) -> &AnyFilter {
        &self.filter
    }

    /// Its design (capacity and FPR), if recorded.
    pub fn design(&self) -> Option<Design> {
        self.design
    }

    /// Changes the filter and saves it, as one step under the file's exclusive lock (see the
    /// module docs). `change` returns its result and whether it changed anything (nothing is
    /// written if not). When `change` fails nothing is written.
    pub fn update<R>(
        &mut self,
        change: impl FnOnce(&mut AnyFilter) -> Result<(R, bool)>,
    ) -> Result<R> {
        let path = self.path.clone();
        let locked =
            LockedFile::open(&path, LockMode::Exclusive).map_err(|e| file_error(&path, e))?;
        if self.held.as_ref().map(|h| h.1) != Some(locked.identity()) {
            let decoded = locked.load(&self.keys).map_err(|e| file_error(&path, e))?;
            self.filter = decoded.filter;
            self.design = decoded.design;
        }
        // Until the new version is in place the copy may differ from the file.
        self.held = None;
        let (result, changed) = change(&mut self.filter)?;
        let file = if changed {
            let bytes =
                native::to_bytes(&self.filter, self.design).map_err(|e| file_error(&path, e))?;
            locked
                .replace(&bytes)
                .map_err(|e| anyhow!("saving {}: {}", path.display(), file_error(&path, e)))?
        } else {
            locked.unlock().map_err(|e| file_error(&path, e))?
        };
        self.held = hold(file, &path)?;
        Ok(result)
    }
}
