//! The file backend: a filter in a native file, shared safely with other processes.
//!
//! Classic and blocked files are used in place through a shared memory mapping (see
//! [`mapped`](super::mapped)): nothing is loaded, inserts set bits straight in the file under
//! the file's lock. The other kinds (scalable, counting), which cannot grow or count in place,
//! are loaded whole and changed in *updates*: take the file's exclusive lock, re-read it if
//! another process replaced it since this one last saw it, apply the change, write the new
//! version next to it and rename it into place, release the lock. Either way a change is in
//! the file before the command acknowledges it, so a signal or a crash can never lose an
//! acknowledged change, and concurrent writers never lose each other's changes. See
//! docs/FORMAT.md, "Sharing a file between processes".

use super::mapped::Mapped;
use super::mapped_bitmap::MappedBitmapFile;
use super::{describe, Description};
use crate::stream::Chunk;
use anyhow::{anyhow, bail, Result};
use bloomkit::codec::native::Design;
use bloomkit::file::Content;
use bloomkit::sharing::{self, LockMode, LockedFile};
use bloomkit::{AnyFilter, Filter, Hashing};
use std::path::{Path, PathBuf};

/// How many times an insert starts over because the file was replaced meanwhile.
const MAX_REOPENS: u32 = 1000;

/// A filter file and how this process uses it.
#[derive(Debug)]
pub struct FileTarget {
    path: PathBuf,
    keys: Vec<Hashing>,
    state: State,
}

#[derive(Debug)]
enum State {
    /// Loaded whole.
    Whole(Whole),
    /// Mapped in place.
    Mapped(Mapped),
    /// A dense bitmap mapped read-only (changes load it whole: see [`FileTarget::update`]).
    MappedBitmap(MappedBitmapFile),
}

/// A copy of the whole filter.
#[derive(Debug)]
struct Whole {
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

/// When the file at `path` is not a bloomkit filter at all, what it is (for an error that
/// names the real problem rather than the first check that failed), or `None`.
fn not_a_filter(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    // The whole file when it is small enough to look at (foreign formats are recognised by
    // their length), else its first bytes.
    let mut bytes = Vec::new();
    file.by_ref()
        .take(len.min(64 << 20))
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.starts_with(&bloomkit::codec::native::MAGIC) {
        return None;
    }
    let shown = crate::shown::path(path);
    Some(match bloomkit::codec::detect(&bytes) {
        Some(d) => format!(
            "{shown}: not a bloomkit filter file: it looks like {} (import it: bloomkit import {} NEW.bloom)",
            d.describe(),
            crate::shown::path_arg(path)
        ),
        None if len == 0 => format!("{shown}: an empty file, not a bloomkit filter file"),
        None => format!(
            "{shown}: not a bloomkit filter file ({len} bytes that do not start with bloomkit's header)"
        ),
    })
}

/// A library error about `path` in the user's terms.
pub fn file_error(path: &Path, e: bloomkit::Error) -> anyhow::Error {
    if matches!(
        e,
        bloomkit::Error::Truncated { .. } | bloomkit::Error::Corrupt { .. }
    ) {
        if let Some(what) = not_a_filter(path) {
            return anyhow!("{what}");
        }
    }
    match e {
        bloomkit::Error::MissingKey(_) => {
            anyhow!("{}: {e} (give its key with --key-file: no key given matches the one it was made with)", path.display())
        }
        // I/O errors name the file already.
        e @ bloomkit::Error::Io { .. } => anyhow!("{e}"),
        e => anyhow!("{}: {e}", path.display()),
    }
}

fn no_such_filter(path: &Path) -> anyhow::Error {
    anyhow!(
        "{}: no such filter (create it with: bloomkit create {} --capacity N --fpp P)",
        crate::shown::path(path),
        crate::shown::path_arg(path)
    )
}

fn open_error(path: &Path) -> impl FnOnce(bloomkit::Error) -> anyhow::Error + '_ {
    move |e| {
        if not_found(&e) {
            no_such_filter(path)
        } else {
            file_error(path, e)
        }
    }
}

impl FileTarget {
    /// Opens the filter at `path` for reading: mapped (classic, blocked) or loaded.
    pub fn open(path: &Path, keys: Vec<Hashing>) -> Result<FileTarget> {
        // Checks the path (regular file, symbolic links) without blocking on a FIFO.
        let real = bloomkit::file::real_path(path).map_err(open_error(path))?;
        sharing::require_regular_file(&real, "opening").map_err(open_error(path))?;
        bloomkit::file::remove_stale_temps(&real);
        let state = if let Some(m) = Mapped::open(&real, path, &keys)? {
            State::Mapped(m)
        } else if let Some(m) = MappedBitmapFile::open(&real, path)? {
            State::MappedBitmap(m)
        } else {
            crate::memory::ensure_loadable(path)?;
            let decoded = bloomkit::file::load(&real, &keys).map_err(open_error(path))?;
            State::Whole(Whole {
                filter: decoded.filter,
                design: decoded.design,
                held: None,
            })
        };
        Ok(FileTarget {
            path: path.to_path_buf(),
            keys,
            state,
        })
    }

    /// Opens the filter at `path` for changing it: mapped read-write (classic, blocked) or
    /// loaded under its exclusive lock. Read-only files are refused before anything is read.
    pub fn open_for_update(path: &Path, keys: Vec<Hashing>) -> Result<FileTarget> {
        let state = Self::update_state(path, &keys)?;
        Ok(FileTarget {
            path: path.to_path_buf(),
            keys,
            state,
        })
    }

    fn update_state(path: &Path, keys: &[Hashing]) -> Result<State> {
        let locked = LockedFile::open(path, LockMode::Exclusive).map_err(open_error(path))?;
        if let Some(m) = Mapped::open_shared(&locked, path, keys)? {
            return Ok(State::Mapped(m));
        }
        crate::memory::ensure_loadable(path)?;
        let decoded = locked.load(keys).map_err(|e| file_error(path, e))?;
        let held = hold(locked.unlock().map_err(|e| file_error(path, e))?, path)?;
        Ok(State::Whole(Whole {
            filter: decoded.filter,
            design: decoded.design,
            held,
        }))
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
        // Encoded as it is written: no second copy of a large filter in memory.
        let content = Content::Filter(&filter, design);
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
                        let new = locked.replace(content).map_err(|e| file_error(path, e))?;
                        held = hold(new, path)?;
                        created = true;
                        break;
                    }
                    Err(e) if not_found(&e) => {}
                    Err(e) => return Err(file_error(path, e)),
                }
            }
            match sharing::create_new(path, content) {
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
            state: State::Whole(Whole {
                filter,
                design,
                held,
            }),
        })
    }

    /// The filter's kind.
    pub fn kind(&self) -> bloomkit::Kind {
        match &self.state {
            State::Whole(w) => w.filter.kind(),
            State::Mapped(m) => m.kind(),
            State::MappedBitmap(_) => bloomkit::Kind::Bitmap,
        }
    }

    /// Whether changes are saved by rewriting the whole file (rather than in place).
    pub fn saved_whole(&self) -> bool {
        !matches!(self.state, State::Mapped(_))
    }

    /// Inserts a chunk; `new[i]` says whether element `i` was new. The chunk is in the file
    /// when this returns.
    pub fn insert_chunk(&mut self, chunk: &Chunk, new: &mut Vec<bool>) -> Result<()> {
        for _ in 0..MAX_REOPENS {
            match &mut self.state {
                State::Mapped(m) => {
                    if m.insert(&self.path, chunk, new)? {
                        return Ok(());
                    }
                    // Replaced whole by another process: use the new file.
                    self.state = Self::update_state(&self.path, &self.keys)?;
                }
                State::Whole(_) | State::MappedBitmap(_) => {
                    let display = self.path.display().to_string();
                    *new = self.update(|filter| {
                        let mut new = Vec::with_capacity(chunk.len());
                        for (_, e) in chunk.iter() {
                            new.push(
                                filter
                                    .insert_encoded(e)
                                    .map_err(|err| anyhow!("{display}: {err}"))?,
                            );
                        }
                        // Counters change even when nothing is new.
                        let counts = matches!(filter, AnyFilter::Counting(_) | AnyFilter::DLeft(_));
                        let changed = counts || new.contains(&true);
                        Ok((new, changed))
                    })?;
                    return Ok(());
                }
            }
        }
        bail!(
            "{}: the file was replaced {MAX_REOPENS} times while adding; try again",
            self.path.display()
        )
    }

    /// Tests a batch.
    pub fn contains_batch(&self, elements: &[Vec<u8>], present: &mut Vec<bool>) {
        match &self.state {
            State::Whole(w) => {
                present.clear();
                present.extend(elements.iter().map(|e| w.filter.contains_encoded(e)));
            }
            State::Mapped(m) => m.contains_batch(elements, present),
            State::MappedBitmap(m) => m.contains_batch(elements, present),
        }
    }

    /// Describes the filter.
    pub fn describe(&self) -> Description {
        match &self.state {
            State::Whole(w) => describe(&w.filter, w.design),
            State::Mapped(m) => m.describe(),
            State::MappedBitmap(m) => m.describe(),
        }
    }

    /// An in-memory copy of the filter, with its design.
    pub fn snapshot(&self) -> Result<(AnyFilter, Option<Design>)> {
        match &self.state {
            State::Whole(w) => Ok((w.filter.clone(), w.design)),
            State::Mapped(m) => m.snapshot(&self.path),
            State::MappedBitmap(m) => m.snapshot(&self.path),
        }
    }

    /// Changes the whole filter and saves it, as one step under the file's exclusive lock
    /// (see the module docs). `change` returns its result and whether it changed anything
    /// (nothing is written if not). When `change` fails nothing is written.
    pub fn update<R>(
        &mut self,
        change: impl FnOnce(&mut AnyFilter) -> Result<(R, bool)>,
    ) -> Result<R> {
        let path = self.path.clone();
        let locked =
            LockedFile::open(&path, LockMode::Exclusive).map_err(|e| file_error(&path, e))?;
        let cached = match &self.state {
            // Kinds written in place change without a new file: always re-read them.
            State::Whole(w) => {
                !matches!(w.filter, AnyFilter::Classic(_) | AnyFilter::Blocked(_))
                    && w.held.as_ref().map(|h| h.1) == Some(locked.identity())
            }
            State::Mapped(_) | State::MappedBitmap(_) => false,
        };
        if !cached {
            let decoded = locked.load(&self.keys).map_err(|e| file_error(&path, e))?;
            self.state = State::Whole(Whole {
                filter: decoded.filter,
                design: decoded.design,
                held: None,
            });
        }
        let State::Whole(whole) = &mut self.state else {
            bail!("{}: internal error: no loaded copy", path.display());
        };
        // Until the new version is in place the copy may differ from the file.
        whole.held = None;
        let (result, changed) = change(&mut whole.filter)?;
        let file = if changed {
            locked
                .replace(Content::Filter(&whole.filter, whole.design))
                .map_err(|e| anyhow!("saving {}: {}", path.display(), file_error(&path, e)))?
        } else {
            locked.unlock().map_err(|e| file_error(&path, e))?
        };
        whole.held = hold(file, &path)?;
        Ok(result)
    }
}
