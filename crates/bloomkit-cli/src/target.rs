//! Targets: where a filter lives (a file or a Redis key) and the few operations every command
//! needs on it: open, create, insert/test/remove chunks, describe, snapshot.
//!
//! Commands never touch files or Redis directly; they go through [`Target`]. Its parts, one
//! concern each: [`location`] (parsing a TARGET), [`keys`] (`--key-file`), [`build`] (new
//! filters), [`describe`] (`info`), [`file`] (the file backend: locks, saves), [`mapped`]
//! (classic and blocked files used in place) and [`mapped_bitmap`] (dense bitmap files read in
//! place); the Redis backend is `crate::redis_target`.

use crate::redis_target::RedisTarget;
use crate::stream::Chunk;
use anyhow::{anyhow, bail, Result};
use bloomkit::codec::native::Design;
use bloomkit::{AnyFilter, Filter};

mod build;
mod describe;
mod file;
mod keys;
mod location;
mod mapped;
mod mapped_bitmap;

pub use build::{build, default_generations, new_filter, NewFilter};
pub use describe::{describe, scheme_name, Description, WindowInfo};
pub use file::FileTarget;
pub use keys::Context;
pub use location::Location;

/// Where an open filter's state is.
#[derive(Debug)]
enum Backend {
    /// A file (see [`file`]).
    File(FileTarget),
    /// In Redis.
    Redis(RedisTarget),
}

/// An opened filter and where it goes back to.
#[derive(Debug)]
pub struct Target {
    location: Location,
    backend: Backend,
}

impl Target {
    /// Whether a filter exists at `location`.
    pub fn exists(location: &Location) -> Result<bool> {
        match location {
            // Only "not found" means absent: a symbolic link loop or a directory that cannot
            // be searched is an error to report, not a filter to create.
            Location::File(p) => match std::fs::metadata(p) {
                Ok(_) => Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
                Err(e) => Err(anyhow!("{}: {e}", p.display())),
            },
            Location::Redis(url) => RedisTarget::exists(url),
        }
    }

    /// Opens an existing filter for reading.
    pub fn open(location: &Location, ctx: &Context) -> Result<Target> {
        Self::open_with(location, ctx, false)
    }

    /// Opens an existing filter to change it (a file must be a writable regular file).
    pub fn open_for_update(location: &Location, ctx: &Context) -> Result<Target> {
        Self::open_with(location, ctx, true)
    }

    fn open_with(location: &Location, ctx: &Context, update: bool) -> Result<Target> {
        let backend = match location {
            Location::File(path) if update => {
                Backend::File(FileTarget::open_for_update(path, ctx.keys())?)
            }
            Location::File(path) => Backend::File(FileTarget::open(path, ctx.keys())?),
            Location::Redis(url) => Backend::Redis(RedisTarget::open(url, ctx)?),
        };
        Ok(Target {
            location: location.clone(),
            backend,
        })
    }

    /// Creates a new filter at `location` (a file is written at once). Refuses to replace an
    /// existing one unless `force`; without it, creation is exclusive: of several processes
    /// creating the same file at once, exactly one succeeds.
    pub fn create(
        location: &Location,
        new: NewFilter,
        force: bool,
        ctx: &Context,
    ) -> Result<Target> {
        match location {
            Location::File(path) => {
                crate::commands::check_parent(path)?;
                let design = Some(Design {
                    capacity: new.capacity,
                    fpp: new.fpp,
                });
                Self::replace(location, build(new, ctx)?, design, force, ctx)
            }
            Location::Redis(url) => {
                if !force && Self::exists(location)? {
                    bail!(
                        "{}: a filter already exists (use --force to replace it)",
                        location.display()
                    );
                }
                Ok(Target {
                    location: location.clone(),
                    backend: Backend::Redis(RedisTarget::create(url, new, force, ctx)?),
                })
            }
        }
    }

    /// Writes `filter` as a new file at `location` (at once). Refuses to replace an existing
    /// filter unless `force`. Only files can take a whole filter.
    pub fn replace(
        location: &Location,
        filter: AnyFilter,
        design: Option<Design>,
        force: bool,
        ctx: &Context,
    ) -> Result<Target> {
        match location {
            Location::File(path) => Ok(Target {
                backend: Backend::File({
                    crate::commands::check_parent(path)?;
                    FileTarget::create(path, filter, design, force, ctx.keys())?
                }),
                location: location.clone(),
            }),
            Location::Redis(_) => bail!(
                "{}: a whole filter can only be written to a file target (Redis filters are filled with add)",
                location.display()
            ),
        }
    }

    /// Where the filter lives.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The filter's kind.
    pub fn kind(&self) -> bloomkit::Kind {
        match &self.backend {
            Backend::File(f) => f.kind(),
            Backend::Redis(r) => r.kind(),
        }
    }

    /// Whether large adds can take a bulk path (see [`Target::insert_chunk`]).
    pub fn has_bulk(&self) -> bool {
        match &self.backend {
            Backend::File(_) => false,
            Backend::Redis(r) => r.has_bulk(),
        }
    }

    /// Most lines worth applying at once: `save_every` for a file that is saved whole, one
    /// batch where every batch is applied as it comes (Redis).
    pub fn chunk_lines(&self, save_every: usize) -> usize {
        match &self.backend {
            Backend::File(f) if f.saved_whole() => save_every.max(1),
            Backend::File(_) => crate::stream::BATCH,
            Backend::Redis(_) => crate::stream::BATCH,
        }
    }

    /// Inserts every element of a chunk; `new[i]` says whether element `i` was new. With
    /// `bulk` on a target that [has a bulk path](Target::has_bulk), the batches take it. A
    /// file is saved before this returns.
    pub fn insert_chunk(&mut self, chunk: &Chunk, new: &mut Vec<bool>, bulk: bool) -> Result<()> {
        new.clear();
        match &mut self.backend {
            Backend::Redis(r) => {
                let mut part = Vec::new();
                for elements in chunk.element_batches() {
                    r.insert_batch(elements, &mut part, bulk)?;
                    new.extend_from_slice(&part);
                }
            }
            Backend::File(f) => f.insert_chunk(chunk, new)?,
        }
        Ok(())
    }

    /// Tests every element of a batch.
    pub fn contains_batch(&self, elements: &[Vec<u8>], present: &mut Vec<bool>) -> Result<()> {
        present.clear();
        match &self.backend {
            Backend::File(f) => f.contains_batch(elements, present),
            Backend::Redis(r) => r.contains_batch(elements, present)?,
        }
        Ok(())
    }

    /// Removes every element of a chunk (counting filters only), saving a file before it
    /// returns. Fails naming the first element (by its index in the chunk) that cannot be
    /// removed; nothing of the chunk is then saved.
    pub fn remove_chunk(
        &mut self,
        chunk: &Chunk,
    ) -> std::result::Result<(), (usize, anyhow::Error)> {
        let display = self.location.display();
        match &mut self.backend {
            Backend::File(f) => {
                let mut failed = None;
                let result = f.update(|filter| {
                    if !matches!(
                        filter,
                        AnyFilter::Counting(_) | AnyFilter::DLeft(_) | AnyFilter::Bitmap(_)
                    ) {
                        failed = Some(0);
                        bail!(
                            "{display}: a {} filter cannot remove items; only counting filters, d-left filters and bitmaps can (create one with --kind counting, or --kind dleft)",
                            filter.kind()
                        );
                    }
                    for (i, (_, e)) in chunk.iter().enumerate() {
                        if let Err(err) = filter.remove_encoded(e) {
                            failed = Some(i);
                            bail!("{err}");
                        }
                    }
                    Ok(((), true))
                });
                result.map_err(|e| (failed.unwrap_or(0), e))
            }
            Backend::Redis(r) => {
                let mut removed = Vec::new();
                let mut first = 0;
                for elements in chunk.element_batches() {
                    let applied = r
                        .remove_batch(elements, &mut removed)
                        .map_err(|e| (first, e))?;
                    if let Some(i) = removed.iter().position(|&x| !x) {
                        let done = removed.iter().filter(|&&x| x).count();
                        let rest = if !applied || done == 0 {
                            "nothing of its batch was removed".to_string()
                        } else {
                            format!("{done} other items of its batch were removed")
                        };
                        return Err((
                            first + i,
                            crate::stream::Settled::as_said(anyhow!("{display}: one of its counters is 0: it was never added, or already removed ({rest})")),
                        ));
                    }
                    first += elements.len();
                }
                Ok(())
            }
        }
    }

    /// Changes a file's whole filter and saves it, under the file's lock (see
    /// [`FileTarget::update`]).
    pub fn update_whole(
        &mut self,
        change: impl FnOnce(&mut AnyFilter) -> Result<()>,
    ) -> Result<()> {
        match &mut self.backend {
            Backend::File(f) => f.update(|filter| change(filter).map(|()| ((), true))),
            Backend::Redis(_) => bail!(
                "{}: a whole filter can only be written to a file target (Redis filters are filled with add)",
                self.location.display()
            ),
        }
    }

    /// Describes the filter.
    pub fn describe(&self) -> Result<Description> {
        match &self.backend {
            Backend::File(f) => Ok(f.describe()),
            Backend::Redis(r) => r.describe(),
        }
    }

    /// The filter as it is now, with its design (file targets only).
    pub fn snapshot(&self) -> Result<(AnyFilter, Option<Design>)> {
        match &self.backend {
            Backend::File(f) => f.snapshot(),
            Backend::Redis(_) => bail!(
                "{}: a Redis filter cannot be read back whole; merge, intersect and export take file targets",
                self.location.display()
            ),
        }
    }
}
