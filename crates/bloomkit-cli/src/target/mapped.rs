//! Classic and blocked files used in place, through a memory mapping shared with the file
//! (and with every other process that maps it): nothing is loaded, a query touches only the
//! pages it probes, and an insert sets its bits straight in the file.
//!
//! A writer takes the file's exclusive lock around each chunk: it checks that the path still
//! names the file it mapped (another process may have replaced it whole), sets the dirty mark
//! if it is not set (the trailing checksum is stale from then on), sets the chunk's bits with
//! atomic ORs and releases the lock. Bits set in a shared mapping are in the page cache at
//! once, so they survive the death of the process: the command acknowledges a chunk only after
//! this. On a clean close the writer seals the file (checksum recomputed, mark cleared) under
//! the lock. A reader that finds the mark set and can take the lock (no writer in a chunk)
//! seals it too. See docs/FORMAT.md, "Sharing a file between processes".

use crate::stream::Chunk;
use crate::target::{scheme_name, Description};
use anyhow::{anyhow, bail, Result};
use bloomkit::codec::native::Design;
use bloomkit::mmap::{Fill, MappedFilter};
use bloomkit::{AnyFilter, Hashing};
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// A mapped classic or blocked file.
pub struct Mapped {
    /// The real path (symbolic links resolved).
    real: PathBuf,
    map: MappedFilter,
    /// Whether this process set bits that it has not sealed yet (it seals them when it closes,
    /// or when it describes the filter).
    wrote: Cell<bool>,
    /// The file's set bits as [`describe`](Mapped::describe) last found them (in the pass that
    /// sealed what this process wrote, or in a pass of its own). Cleared by inserts.
    fill: Cell<Option<Fill>>,
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapped").field("real", &self.real).finish()
    }
}

/// Whether a mapping failed only because the file's kind is not mapped (scalable, counting)
/// or the machine cannot map it; the caller then loads the file instead.
fn not_mappable(e: &bloomkit::Error) -> bool {
    matches!(
        e,
        bloomkit::Error::NotMappable { .. } | bloomkit::Error::NotRepresentable { .. }
    )
}

/// A mapped file cut short by another process (or whose storage fails) ends the command with
/// a one-line error naming it and exit status 2, not a "Bus error" crash (see
/// [`bloomkit::mmap::exit_on_sigbus`]).
fn sigbus_names(shown: &Path) {
    let message = format!(
        "bloomkit: {}: the mapped filter file was cut short while in use (truncated by another \
         process, or its storage failed: SIGBUS); stopped there",
        crate::shown::path(shown)
    );
    // Without the handler the fault still stops the command, only less clearly.
    let _ = bloomkit::mmap::exit_on_sigbus(&message, 2);
}

impl Mapped {
    /// Maps the regular file at `real` read-only, or `None` if its kind is not mapped. A file
    /// left dirty by a writer that is no longer in a chunk is sealed first (when the file is
    /// writable), with a note on standard error.
    pub fn open(real: &Path, shown: &Path, keys: &[Hashing]) -> Result<Option<Mapped>> {
        // Never blocks (a FIFO is refused before it is opened).
        let file = bloomkit::file::open_regular(real, "opening")
            .map_err(|e| super::file::file_error(shown, e))?;
        sigbus_names(shown);
        let map = match MappedFilter::from_file(file, real, keys) {
            Ok(m) => m,
            Err(e) if not_mappable(&e) => return Ok(None),
            Err(e) => return Err(super::file::file_error(shown, e)),
        };
        if map.is_dirty() {
            let read_only = map
                .file()
                .metadata()
                .map_or(true, |m| m.permissions().readonly());
            // A read-only file is left exactly as it is (even for root).
            if !read_only && map.file().try_lock().is_ok() {
                // No writer is inside a chunk: seal it (best effort: a read-only user cannot).
                if let Ok(shared) = MappedFilter::open_shared(real, keys) {
                    if shared.is_dirty() && shared.seal().is_ok() {
                        crate::shown::say!(
                            "bloomkit: note: {}: a writer had left its checksum stale (interrupted, or between updates); recomputed it",
                            shown.display()
                        );
                    }
                }
                let _ = map.file().unlock();
            }
        } else {
            // A sealed file: its checksum must hold. Under the shared lock, so that no writer
            // starts changing it (writers mark it dirty under the exclusive lock) meanwhile.
            map.file()
                .lock_shared()
                .map_err(|e| anyhow!("locking {}: {e}", shown.display()))?;
            let verified = if map.is_dirty() { Ok(()) } else { map.verify() };
            let _ = map.file().unlock();
            verified.map_err(|e| super::file::file_error(shown, e))?;
        }
        Ok(Some(Mapped {
            real: real.to_path_buf(),
            map,
            wrote: Cell::new(false),
            fill: Cell::new(None),
        }))
    }

    /// Maps the regular file at `real` read-write and shared, or `None` if its kind is not
    /// mapped. The caller holds the file's exclusive lock (`locked`) and has checked that the
    /// file is writable; a sealed file's checksum is verified.
    pub fn open_shared(
        locked: &bloomkit::sharing::LockedFile,
        shown: &Path,
        keys: &[Hashing],
    ) -> Result<Option<Mapped>> {
        let real = locked.path();
        sigbus_names(shown);
        let map = match MappedFilter::open_shared(real, keys) {
            Ok(map) => map,
            Err(e) if not_mappable(&e) => return Ok(None),
            Err(e) => return Err(super::file::file_error(shown, e)),
        };
        if bloomkit::sharing::identity_of(map.file()).ok() != Some(locked.identity()) {
            bail!(
                "{}: the file was replaced while it was being opened; try again",
                shown.display()
            );
        }
        if !map.is_dirty() {
            map.verify()
                .map_err(|e| super::file::file_error(shown, e))?;
        }
        Ok(Some(Mapped {
            real: real.to_path_buf(),
            map,
            wrote: Cell::new(false),
            fill: Cell::new(None),
        }))
    }

    /// The filter's kind.
    pub fn kind(&self) -> bloomkit::Kind {
        self.map.kind()
    }

    /// Inserts a chunk in place under the file's exclusive lock; `new[i]` says whether
    /// element `i` was new. Returns `false` (and inserts nothing) when the path no longer
    /// names the mapped file: another process replaced it, and the caller must open the new
    /// one.
    pub fn insert(&mut self, shown: &Path, chunk: &Chunk, new: &mut Vec<bool>) -> Result<bool> {
        let file = self.map.file();
        file.lock()
            .map_err(|e| anyhow!("locking {}: {e}", shown.display()))?;
        let result = (|| {
            if !bloomkit::sharing::still_at(file, &self.real)
                .map_err(|e| super::file::file_error(shown, e))?
            {
                return Ok(false);
            }
            // Before the first bit: from here on the checksum is stale.
            self.map
                .mark_dirty()
                .map_err(|e| super::file::file_error(shown, e))?;
            self.wrote.set(true);
            self.fill.set(None);
            new.clear();
            let mut part = Vec::new();
            for elements in chunk.element_batches() {
                part.clear();
                part.resize(elements.len(), false);
                self.map
                    .insert_batch_into(elements, &mut part)
                    .map_err(|e| super::file::file_error(shown, e))?;
                new.extend_from_slice(&part);
            }
            Ok(true)
        })();
        let _ = file.unlock();
        result
    }

    /// Tests a batch.
    pub fn contains_batch(&self, elements: &[Vec<u8>], present: &mut Vec<bool>) {
        present.clear();
        present.resize(elements.len(), false);
        self.map.contains_batch_into(elements, present);
    }

    /// The design recorded in the header, if any.
    fn design(&self) -> Option<Design> {
        (self.map.capacity() != 0).then(|| Design {
            capacity: self.map.capacity(),
            fpp: self.map.fpp(),
        })
    }

    /// An in-memory copy, with its design.
    pub fn snapshot(&self, shown: &Path) -> Result<(AnyFilter, Option<Design>)> {
        let filter = self
            .map
            .to_filter()
            .map_err(|e| super::file::file_error(shown, e))?;
        Ok((filter, self.design()))
    }

    /// Seals what this process wrote (under the file's lock, if the path still names the
    /// mapped file), and with `fill` reads the filter's state in the same pass. `None` when
    /// nothing was sealed (or no fill was asked for).
    fn seal(&self, fill: bool) -> Option<Fill> {
        let file = self.map.file();
        file.lock().ok()?;
        let sealed = if bloomkit::sharing::still_at(file, &self.real).unwrap_or(false) {
            match fill {
                true => self.map.seal_with_fill().map(Some),
                false => self.map.seal().map(|()| None),
            }
        } else {
            Ok(None)
        };
        let _ = file.unlock();
        if sealed.is_ok() {
            self.wrote.set(false);
        }
        sealed.ok().flatten()
    }

    /// What `info` reports, read from the mapping: in one pass over the file, the one that
    /// seals what this process wrote when it wrote (done now rather than when it closes, so
    /// that a writer's description costs no pass of its own).
    pub fn describe(&self) -> Description {
        if self.wrote.get() {
            self.fill.set(self.seal(true));
        }
        let fill = self.fill.get().unwrap_or_else(|| self.map.fill());
        self.fill.set(Some(fill));
        let params = self.map.params();
        let (scheme, hashing, layout) = match (self.map.spec(), self.map.block_spec()) {
            (Some(spec), _) => (scheme_name(spec), spec.hashing().id(), None),
            (None, Some(spec)) => (
                "default".to_string(),
                spec.hashing().id(),
                Some(spec.name()),
            ),
            (None, None) => (String::new(), String::new(), None),
        };
        let design = self.design();
        Description {
            kind: self.map.kind().name(),
            scheme,
            hashing,
            bits: params.bits,
            hashes: params.hashes,
            bytes: params.bits.div_ceil(64) * 8,
            capacity: design.map(|d| d.capacity),
            fpp: design.map(|d| d.fpp),
            layout,
            estimated_items: fill.estimated_len,
            fill_ratio: fill.ones as f64 / params.bits as f64,
            estimated_fpp: fill.estimated_fpp,
            ..Default::default()
        }
    }
}

impl Drop for Mapped {
    /// A writer's clean close: seal the file under its lock (if it is still the one at the
    /// path), so that its checksum covers it again.
    fn drop(&mut self) {
        if self.wrote.get() {
            self.seal(false);
        }
    }
}
