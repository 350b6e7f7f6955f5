//! Memory-mapped filters: a native file's payload used in place, as the filter's storage.
//!
//! The native format puts each payload at a 64-byte-aligned offset, little-endian, so a mapped
//! file *is* the filter's words: opening costs a header parse however large the filter, and a
//! query touches only the pages it probes. [`MappedFilter`] maps classic and blocked files.
//!
//! ## Why atomics
//! A file mapped `MAP_SHARED` may be written by other processes at any moment (see
//! `docs/FORMAT.md`, "Sharing a file between processes"). Under Rust's memory model, reading
//! memory through `&[u64]` while someone else writes it is undefined behaviour whatever the
//! values, so the whole mapping is viewed as [`AtomicU64`] words (and blocked payloads as
//! [`AtomicBlock`]s): bits are set with `fetch_or`, the element counter with `fetch_add`, and
//! every read is a relaxed atomic load (on common CPUs the same instruction as a plain load).
//! This is the atomic storage of [`crate::concurrent`], over the mapping instead of the heap,
//! and the probing code is the filters' own ([`crate::classic`]'s position loops,
//! [`crate::probe::blocked`]'s block loops): there is no separate copy of it here. A read-only
//! mapping is viewed the same way (atomic loads are allowed on read-only memory; no
//! read-modify-write ever touches it: inserts are refused first).
//!
//! ## The dirty mark and the checksum
//! Header offset 88 holds the dirty mark: `0` when the trailing checksum covers the file, `1`
//! while a writer has it open for in-place updates ([`mark_dirty`](MappedFilter::mark_dirty)
//! before the first bit is set). [`seal`](MappedFilter::seal) recomputes the checksum with the
//! mark cleared. The checksum is computed from atomic loads too, so sealing is sound even if a
//! process that ignores the locks writes at the same time (the result is then simply stale).
//!
//! [`MappedFilter`] takes no lock: callers follow the locking protocol of the design (an
//! exclusive `flock` on [`file`](MappedFilter::file) around each batch of inserts and around
//! `seal`). Another process must never truncate a mapped file (the mapping would fault with
//! `SIGBUS`; a program that owns its process can make that a clean exit with
//! [`exit_on_sigbus`]); bloomkit's own whole-file saves replace files by rename, which leaves
//! existing mappings on the old contents. A file with holes (a sparse copy) is made safe when
//! it is opened: for writing, its holes get their space first; for reading, they are read in
//! (on a full tmpfs even reading a hole needs a page). Either way a full file system is an
//! [`Error::Io`] with "No space left on device", not a fault.
//!
//! ```
//! use bloomkit::{BloomFilter, file, mmap::MappedFilter};
//! let path = std::env::temp_dir().join(format!("bloomkit-mmap-doc-{}.bloom", std::process::id()));
//! let mut f = BloomFilter::new(100_000, 0.01)?;
//! f.insert("x");
//! file::save(&path, &f.into(), None)?;
//! let shared = MappedFilter::open_shared(&path, &[])?;
//! shared.mark_dirty()?;
//! let mut new = [false; 2];
//! shared.insert_batch_into(&["x", "y"], &mut new)?;
//! assert_eq!(new, [false, true]);
//! shared.seal()?;
//! let mapped = MappedFilter::open(&path, &[])?;
//! assert!(mapped.contains("y") && !mapped.is_dirty());
//! mapped.verify()?;
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), bloomkit::Error>(())
//! ```

#![cfg(not(loom))]

use crate::any::AnyFilter;
use crate::blocked::BlockedBloomFilter;
use crate::classic::{contains_positions, insert_positions, BloomFilter};
use crate::codec::native::{
    self, Header, DIRTY_MARK_OFFSET, HEADER_LEN, LAYER_ENTRY_LEN, MAX_LAYERS,
};
use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::key::Key;
use crate::kind::Kind;
use crate::math::{self, Params};
use crate::probe::blocked::Path as BlockPath;
use crate::spec::{BlockSpec, Spec};
use crate::storage::{atomic_bit, atomic_set, AtomicBlock, AtomicU64, Ordering};
#[cfg(target_pointer_width = "64")]
use memmap2::Mmap;
use memmap2::MmapMut;
use std::fs::File;
use std::path::Path;

pub use crate::mmap_sigbus::exit_on_sigbus;

/// Byte offset of the first layer's "inserted" counter (header, then 24 bytes into the entry).
const INSERTED_OFFSET: usize = HEADER_LEN + 24;

/// What a mapped file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MappedKind {
    /// A classic filter of this spec.
    Classic(Spec),
    /// A blocked filter of this spec.
    Blocked(BlockSpec),
}

/// The mapping: read-only, or read-write and shared with the file (and other processes).
enum Map {
    #[cfg(target_pointer_width = "64")]
    ReadOnly(Mmap),
    #[cfg(not(target_pointer_width = "64"))]
    ReadOnly(MmapMut),
    Shared(MmapMut),
}

/// A classic or blocked filter whose bits stay in a memory-mapped native file (see the module
/// docs).
pub struct MappedFilter {
    file: File,
    map: Map,
    kind: MappedKind,
    /// How blocked queries run (decided once, as for in-memory filters).
    path: BlockPath,
    /// First word and word count of the payload.
    payload: (usize, usize),
    capacity: u64,
    fpp: f64,
}

fn io(path: &Path, what: &str) -> impl FnOnce(std::io::Error) -> Error {
    let context = format!("{what} {}", path.display());
    move |source| Error::Io { context, source }
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::Corrupt {
        format: "bloomkit",
        reason: reason.into(),
    }
}

impl MappedFilter {
    /// Maps a native classic or blocked file read-only. Checks the header, the layer table and
    /// the payload's shape, not the checksum (that would read every page; see
    /// [`verify`](Self::verify)). A dirty file opens (see [`is_dirty`](Self::is_dirty)).
    pub fn open(path: &Path, keys: &[Hashing]) -> Result<Self> {
        // Never blocks: a FIFO or device is refused before it is opened.
        let file = crate::file::open_regular(path, "opening")?;
        Self::from_file(file, path, keys)
    }

    /// [`open`](Self::open) for a file already open (for example the one the caller locked,
    /// so that the mapping is of exactly that file); `path` is for messages.
    pub fn from_file(file: File, path: &Path, keys: &[Hashing]) -> Result<Self> {
        check_length(&file, path)?;
        // SAFETY: the mapping is only ever read, through atomic loads (`words`), so writes by
        // other processes are no data race; a relaxed atomic load of a pointer-sized word is
        // allowed on read-only memory (on narrower targets the mapping is a private writable
        // copy instead, never written). A truncation by another process would fault; the
        // module docs rule it out.
        #[cfg(target_pointer_width = "64")]
        let map = unsafe { Mmap::map(&file) };
        #[cfg(not(target_pointer_width = "64"))]
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) };
        let map = map.map_err(io(path, "mapping"))?;
        #[cfg(target_pointer_width = "64")]
        read_in_holes(&file, &map, path)?;
        Self::new(file, Map::ReadOnly(map), keys)
    }

    /// Maps a native classic or blocked file read-write and shared (`MAP_SHARED`): inserts go
    /// straight to the file, visible to every process that maps it. Checks as
    /// [`open`](Self::open).
    pub fn open_shared(path: &Path, keys: &[Hashing]) -> Result<Self> {
        let file = crate::file::open_regular_for_writing(path, "opening")?;
        Self::shared_from_file(file, path, keys)
    }

    /// [`open_shared`](Self::open_shared) for a file already open for reading and writing
    /// (for example the one the caller locked); `path` is for messages.
    pub fn shared_from_file(file: File, path: &Path, keys: &[Hashing]) -> Result<Self> {
        check_length(&file, path)?;
        // Before the mapping is touched at all (on tmpfs even a read of a hole allocates it).
        reserve_space(&file, path)?;
        // SAFETY: every access to the mapping goes through atomics (`words`, `blocks`), which
        // is sound while other processes read and write the same file. A truncation by another
        // process would fault; the module docs rule it out.
        let map = unsafe { MmapMut::map_mut(&file) }.map_err(io(path, "mapping"))?;
        Self::new(file, Map::Shared(map), keys)
    }

    fn new(file: File, map: Map, keys: &[Hashing]) -> Result<Self> {
        if cfg!(target_endian = "big") {
            return Err(Error::NotRepresentable {
                format: "bloomkit",
                reason: "memory mapping needs a little-endian machine; use file::load".into(),
            });
        }
        let len = match &map {
            Map::ReadOnly(m) => m.len(),
            Map::Shared(m) => m.len(),
        };
        check_len(len as u64)?;
        let mut f = MappedFilter {
            file,
            map,
            kind: MappedKind::Classic(Spec::with_bits(64, 1)?),
            path: BlockPath::Portable,
            payload: (0, 0),
            capacity: 0,
            fpp: 0.0,
        };
        let header = f.header(keys)?;
        f.check_and_fill(header)?;
        Ok(f)
    }

    /// Parses the header and layer table from an atomic copy of the file's first bytes.
    fn header(&self, keys: &[Hashing]) -> Result<Header> {
        let all = self.words();
        let table = (HEADER_LEN + LAYER_ENTRY_LEN * MAX_LAYERS as usize) / 8;
        let bytes: Vec<u8> = all[..all.len().min(table)]
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        native::parse_header(&bytes, self.len() as u64, keys)
    }

    /// Checks that the payload can be used in place and records where it is.
    fn check_and_fill(&mut self, header: Header) -> Result<()> {
        // Only 0 (sealed) and 1 (dirty) are marks: a file with any other value there is
        // damaged, and resealing it would give the damage a valid checksum.
        let mark = self.words()[DIRTY_MARK_OFFSET / 8].load(Ordering::Relaxed);
        if mark > 1 {
            return Err(corrupt(format!(
                "the dirty mark is {mark:#x}, neither 0 (sealed) nor 1 (being written)"
            )));
        }
        let layer = header.layers[0];
        self.payload = (layer.offset / 8, layer.words);
        self.capacity = header.capacity;
        self.fpp = header.fpp;
        self.kind = match (header.spec, header.block_spec) {
            (Some(spec), None) if header.kind == Kind::Classic => {
                // Bits past m must be clear, as in a BitVec.
                let tail = spec.bits() % 64;
                let last = self.payload_words()[layer.words - 1].load(Ordering::Relaxed);
                if tail != 0 && last >> tail != 0 {
                    return Err(corrupt("bits are set past the last bit"));
                }
                MappedKind::Classic(spec)
            }
            (None, Some(spec)) if header.kind == Kind::Blocked => {
                self.path = BlockPath::for_cells::<AtomicBlock>(spec.layout(), spec.hashing());
                MappedKind::Blocked(spec)
            }
            _ if matches!(header.kind, Kind::Classic | Kind::Blocked) => {
                return Err(corrupt("the header's sizing does not match its kind"))
            }
            _ => return Err(crate::codec::native::not_mappable(header.kind)),
        };
        Ok(())
    }

    /// The file's length in bytes (as mapped).
    pub fn file_len(&self) -> u64 {
        self.len() as u64
    }

    /// The mapped file's length in bytes.
    fn len(&self) -> usize {
        match &self.map {
            Map::ReadOnly(m) => m.len(),
            Map::Shared(m) => m.len(),
        }
    }

    /// The whole mapping as atomic words.
    fn words(&self) -> &[AtomicU64] {
        let ptr = match &self.map {
            Map::ReadOnly(m) => m.as_ptr(),
            Map::Shared(m) => m.as_ptr(),
        };
        // SAFETY: the mapping is `len` bytes, page-aligned (so 8-byte aligned), and `len` is a
        // multiple of 8 (`check_length`). `AtomicU64` has the size and alignment of `u64` on
        // every platform with 64-bit atomics, any bit pattern is valid, and all access goes
        // through atomic operations, so writes by other processes are no data race. The slice
        // borrows `self`, which owns the mapping, so it cannot outlive it.
        unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU64>(), self.len() / 8) }
    }

    /// The payload as atomic words.
    fn payload_words(&self) -> &[AtomicU64] {
        let (first, count) = self.payload;
        &self.words()[first..first + count]
    }

    /// The payload as atomic blocks (blocked files).
    fn blocks(&self) -> &[AtomicBlock] {
        let words = self.payload_words();
        // SAFETY: the payload starts at a multiple of 64 bytes from the page-aligned mapping
        // (the format aligns it; `parse_header` checks the offset), so it is 64-byte aligned;
        // a blocked payload is a whole number of 8-word blocks (`parse_header` checks it), and
        // `AtomicBlock` is `repr(C)` over eight `AtomicU64`s with no padding.
        unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<AtomicBlock>(), words.len() / 8) }
    }

    /// Whether the element may be present.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        match &self.kind {
            MappedKind::Classic(spec) => {
                let words = self.payload_words();
                contains_positions(spec, &spec.digest(key), |i| atomic_bit(words, i))
            }
            MappedKind::Blocked(spec) => self.path.contains(spec, self.blocks(), key),
        }
    }

    /// Tests every element of `keys` into `out` (`out.len()` must equal `keys.len()`).
    pub fn contains_batch_into<K: Key>(&self, keys: &[K], out: &mut [bool]) {
        match &self.kind {
            MappedKind::Classic(_) => {
                for (k, o) in keys.iter().zip(out.iter_mut()) {
                    *o = self.contains(k);
                }
            }
            MappedKind::Blocked(spec) => self.path.contains_batch(spec, self.blocks(), keys, out),
        }
    }

    /// Adds every element of `keys` in place (check-and-insert): `new[i]` says whether key `i`
    /// was new (`new.len()` must equal `keys.len()`). Adds the number of new elements to the
    /// layer's element counter when the file tracks one. Fails on a read-only mapping.
    pub fn insert_batch_into<K: Key>(&self, keys: &[K], new: &mut [bool]) -> Result<u64> {
        self.shared("insert")?;
        match &self.kind {
            MappedKind::Classic(spec) => {
                let words = self.payload_words();
                for (k, n) in keys.iter().zip(new.iter_mut()) {
                    *n = insert_positions(spec, &spec.digest(k), |i| atomic_set(words, i));
                }
            }
            MappedKind::Blocked(spec) => {
                let blocks = self.blocks();
                self.path
                    .insert_batch(spec, blocks, keys, |i, fresh| new[i] = fresh);
            }
        }
        let count = new[..keys.len().min(new.len())]
            .iter()
            .filter(|&&n| n)
            .count() as u64;
        self.count_inserted(count);
        Ok(count)
    }

    /// Adds one element in place; `true` if it was new (see
    /// [`insert_batch_into`](Self::insert_batch_into)).
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> Result<bool> {
        let mut new = [false];
        self.insert_batch_into(std::slice::from_ref(&key), &mut new)?;
        Ok(new[0])
    }

    /// Adds `count` to the layer's "inserted" counter, unless the file does not track it
    /// (`u64::MAX`, which bloomkit writes for classic and blocked filters).
    fn count_inserted(&self, count: u64) {
        let counter = &self.words()[INSERTED_OFFSET / 8];
        if count > 0 && counter.load(Ordering::Relaxed) != u64::MAX {
            counter.fetch_add(count, Ordering::Relaxed);
        }
    }

    /// The layer's element counter, if the file tracks one.
    pub fn inserted(&self) -> Option<u64> {
        let v = self.words()[INSERTED_OFFSET / 8].load(Ordering::Relaxed);
        (v != u64::MAX).then_some(v)
    }

    /// Whether the mapping is read-write.
    pub fn is_writable(&self) -> bool {
        matches!(self.map, Map::Shared(_))
    }

    /// The kind of filter: [`Kind::Classic`] or [`Kind::Blocked`] (with [`spec`](Self::spec)
    /// or [`block_spec`](Self::block_spec)).
    pub fn kind(&self) -> Kind {
        match self.kind {
            MappedKind::Classic(_) => Kind::Classic,
            MappedKind::Blocked(_) => Kind::Blocked,
        }
    }

    /// The spec of a classic file.
    pub fn spec(&self) -> Option<&Spec> {
        match &self.kind {
            MappedKind::Classic(s) => Some(s),
            MappedKind::Blocked(_) => None,
        }
    }

    /// The spec of a blocked file.
    pub fn block_spec(&self) -> Option<&BlockSpec> {
        match &self.kind {
            MappedKind::Blocked(s) => Some(s),
            MappedKind::Classic(_) => None,
        }
    }

    /// Bits and hash functions.
    pub fn params(&self) -> Params {
        match &self.kind {
            MappedKind::Classic(s) => s.params(),
            MappedKind::Blocked(s) => s.params(),
        }
    }

    /// The design capacity recorded in the header (0 if unknown).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The design false-positive probability recorded in the header (0 if unknown).
    pub fn fpp(&self) -> f64 {
        self.fpp
    }

    /// Number of set bits (reads every page; a snapshot).
    pub fn count_ones(&self) -> u64 {
        self.fill().ones
    }

    /// Estimated number of distinct elements (reads every page).
    pub fn estimated_len(&self) -> f64 {
        self.fill().estimated_len
    }

    /// Estimated false-positive probability given the current bits (reads every page).
    pub fn estimated_fpp(&self) -> f64 {
        self.fill().estimated_fpp
    }

    /// The set bits and what follows from them, in one pass over the payload (every page):
    /// what [`count_ones`](Self::count_ones), [`estimated_len`](Self::estimated_len) and
    /// [`estimated_fpp`](Self::estimated_fpp) give, for the price of one of them.
    pub fn fill(&self) -> Fill {
        let (first, count) = self.payload;
        let mut fill = FillSum::new(&self.kind);
        scan(&self.words()[first..first + count], 0..count, false, |ws| {
            fill.add(ws)
        });
        fill.finish(self.params())
    }

    /// One pass over the whole file: its checksum (of every word before the trailing one),
    /// adding the payload to `fill` when given (a pass without it is several times faster:
    /// a blocked filter's FPR is computed block by block).
    fn checksum_adding(&self, fill: Option<&mut FillSum>) -> u64 {
        let words = self.words();
        let body = &words[..words.len() - 1];
        match fill {
            Some(fill) => {
                let (first, count) = self.payload;
                scan(body, first..first + count, true, |ws| fill.add(ws))
            }
            None => scan(body, 0..0, true, |_| {}),
        }
    }

    /// The payload's words (a snapshot).
    pub fn to_words(&self) -> Vec<u64> {
        self.payload_words()
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect()
    }

    /// An in-memory copy of the filter.
    pub fn to_filter(&self) -> Result<AnyFilter> {
        Ok(match &self.kind {
            MappedKind::Classic(s) => BloomFilter::from_words(s.clone(), self.to_words())?.into(),
            MappedKind::Blocked(s) => {
                BlockedBloomFilter::from_words(&self.to_words(), s.layout(), s.hashing().clone())?
                    .into()
            }
        })
    }

    /// The open file (for example to `flock` it).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Whether the dirty mark is set: a writer has (or had, if it died) the file open for
    /// in-place updates, and the trailing checksum may be stale.
    pub fn is_dirty(&self) -> bool {
        self.words()[DIRTY_MARK_OFFSET / 8].load(Ordering::Relaxed) != 0
    }

    /// Sets the dirty mark and writes the header page to the file. Call before the first
    /// insert (under the exclusive lock).
    pub fn mark_dirty(&self) -> Result<()> {
        self.shared("write")?;
        if !self.is_dirty() {
            self.words()[DIRTY_MARK_OFFSET / 8].store(1, Ordering::Relaxed);
            self.flush_range(0, HEADER_LEN)?;
        }
        Ok(())
    }

    /// Recomputes the checksum with the dirty mark cleared, writes both, and writes every
    /// changed page to the file. Call under the exclusive lock.
    pub fn seal(&self) -> Result<()> {
        self.seal_adding(None)
    }

    /// [`seal`](Self::seal), giving the [`Fill`] of the bits it sealed, read in the same pass
    /// (so a writer that wants its filter's state after its changes reads the file once, not
    /// twice).
    pub fn seal_with_fill(&self) -> Result<Fill> {
        self.with_fill(|fill| self.seal_adding(fill))
    }

    fn seal_adding(&self, fill: Option<&mut FillSum>) -> Result<()> {
        self.shared("write")?;
        let words = self.words();
        words[DIRTY_MARK_OFFSET / 8].store(0, Ordering::Relaxed);
        let sum = self.checksum_adding(fill);
        words[words.len() - 1].store(sum, Ordering::Relaxed);
        self.flush()
    }

    /// Verifies the trailing checksum (reads every page). A dirty file's checksum is stale
    /// until it is sealed, so this fails for it.
    pub fn verify(&self) -> Result<()> {
        self.verify_adding(None)
    }

    /// [`verify`](Self::verify), giving the [`Fill`] of the bits it verified, read in the same
    /// pass.
    pub fn verify_with_fill(&self) -> Result<Fill> {
        self.with_fill(|fill| self.verify_adding(fill))
    }

    /// The [`Fill`] that `pass` sums while it reads the payload.
    fn with_fill(&self, pass: impl FnOnce(Option<&mut FillSum>) -> Result<()>) -> Result<Fill> {
        let mut fill = FillSum::new(&self.kind);
        pass(Some(&mut fill))?;
        Ok(fill.finish(self.params()))
    }

    fn verify_adding(&self, fill: Option<&mut FillSum>) -> Result<()> {
        let words = self.words();
        let stored = words[words.len() - 1].load(Ordering::Relaxed);
        let computed = self.checksum_adding(fill);
        if stored != computed {
            return Err(Error::Checksum {
                format: "bloomkit",
                stored,
                computed,
            });
        }
        Ok(())
    }

    /// Writes every changed page of a read-write mapping to the file (`msync`); nothing to do
    /// for a read-only one.
    pub fn flush(&self) -> Result<()> {
        self.flush_range(0, self.len())
    }

    fn flush_range(&self, offset: usize, len: usize) -> Result<()> {
        match &self.map {
            Map::ReadOnly(_) => Ok(()),
            Map::Shared(m) => m.flush_range(offset, len).map_err(|source| Error::Io {
                context: "flushing the mapped filter".into(),
                source,
            }),
        }
    }

    fn shared(&self, what: &'static str) -> Result<()> {
        if self.is_writable() {
            Ok(())
        } else {
            Err(Error::Unsupported {
                operation: what,
                kind: "read-only mapped",
            })
        }
    }
}

/// The set bits of a mapped filter and what follows from them (see [`MappedFilter::fill`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fill {
    /// Bits set.
    pub ones: u64,
    /// Estimated number of distinct elements, from `ones`.
    pub estimated_len: f64,
    /// Estimated false-positive probability given the bits.
    pub estimated_fpp: f64,
}

/// A [`Fill`] being summed over a payload, chunk by chunk.
struct FillSum {
    /// The blocked layout, whose FPR is summed block by block (`None`: classic).
    layout: Option<crate::probe::blocked::BlockLayout>,
    ones: u64,
    /// Sum of the blocks' FPRs (blocked).
    fpp_sum: f64,
    blocks: u64,
}

impl FillSum {
    fn new(kind: &MappedKind) -> Self {
        FillSum {
            layout: match kind {
                MappedKind::Classic(_) => None,
                MappedKind::Blocked(s) => Some(s.layout()),
            },
            ones: 0,
            fpp_sum: 0.0,
            blocks: 0,
        }
    }

    /// Adds a chunk of the payload (a whole number of blocks, from a block's start).
    fn add(&mut self, words: &[u64]) {
        self.ones += words.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
        if let Some(layout) = self.layout {
            for block in words.chunks_exact(8) {
                let block: &[u64; 8] = block.try_into().expect("8 words");
                self.fpp_sum += crate::blocked::block_fpp(layout, block);
                self.blocks += 1;
            }
        }
    }

    fn finish(self, params: Params) -> Fill {
        Fill {
            ones: self.ones,
            estimated_len: math::estimate_count(params.bits, params.hashes, self.ones),
            estimated_fpp: match self.layout {
                None => math::fpp_from_fill(self.ones as f64 / params.bits as f64, params.hashes),
                Some(_) => self.fpp_sum / self.blocks as f64,
            },
        }
    }
}

/// Words read at a time by [`scan`] (8 KiB, a whole number of 8-word blocks).
const SCAN_WORDS: usize = 1024;

/// One pass over `words`, read with atomic loads a few KiB at a time (nothing the size of the
/// file is allocated): returns their XXH3-64 as little-endian bytes (the native checksum) when
/// `hash` (else 0), and hands `payload`'s words to `on_payload` in chunks that start at
/// `payload.start` plus a multiple of [`SCAN_WORDS`].
pub(crate) fn scan(
    words: &[AtomicU64],
    payload: std::ops::Range<usize>,
    hash: bool,
    mut on_payload: impl FnMut(&[u64]),
) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    let mut buf = [0u64; SCAN_WORDS];
    let mut bytes = [0u8; SCAN_WORDS * 8];
    let mut at = 0;
    while at < words.len() {
        // Chunks end at the payload's start and end, so that payload chunks start on blocks.
        let cut = [payload.start, payload.end]
            .into_iter()
            .find(|&c| c > at)
            .unwrap_or(usize::MAX);
        let n = SCAN_WORDS.min(words.len() - at).min(cut - at);
        for (b, w) in buf[..n].iter_mut().zip(&words[at..at + n]) {
            *b = w.load(Ordering::Relaxed);
        }
        if hash {
            for (out, w) in bytes.chunks_exact_mut(8).zip(&buf[..n]) {
                out.copy_from_slice(&w.to_le_bytes());
            }
            h.update(&bytes[..n * 8]);
        }
        if payload.contains(&at) {
            on_payload(&buf[..n]);
        }
        at += n;
    }
    if hash {
        h.digest()
    } else {
        0
    }
}

/// Refuses anything but a regular file, and files too short for a header or whose length is
/// not whole words (before mapping; `new` checks the mapping's own length again, in case the
/// file changed in between).
fn check_length(file: &File, path: &Path) -> Result<()> {
    let meta = file.metadata().map_err(io(path, "reading the size of"))?;
    crate::file::require_regular(path, "mapping", &meta)?;
    check_len(meta.len())
}

/// Reads in the holes of a file mapped read-only, before anything reads it. On tmpfs even a
/// read of a hole needs a page, and when the file system is full that read kills the process
/// with SIGBUS (in Python, the interpreter); here the kernel faults every page in at once
/// (`MADV_POPULATE_READ`) and reports a failure as an error instead. A file without holes
/// (every file bloomkit writes) is left alone, as is every file on a kernel older than Linux
/// 5.14 (which does not know the advice). A file whose blocks take less room than its length
/// for another reason (a compressing file system) is read in whole: slower to open, no
/// different after.
#[cfg(target_os = "linux")]
pub(crate) fn read_in_holes(file: &File, map: &memmap2::Mmap, path: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().map_err(io(path, "reading the size of"))?;
    if meta.blocks().saturating_mul(512) >= meta.len() {
        return Ok(());
    }
    match map.advise(memmap2::Advice::PopulateRead) {
        Err(e) if e.raw_os_error() != Some(libc::EINVAL) => Err(Error::Io {
            context: format!(
                "reading {} (a file with holes, which its file system could not fill in)",
                path.display()
            ),
            // The kernel says EFAULT ("a SIGBUS would have been generated"); on a full
            // tmpfs, the case this guards, the cause is the space.
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        }),
        _ => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn read_in_holes(_file: &File, _map: &memmap2::Mmap, _path: &Path) -> Result<()> {
    Ok(())
}

/// Gives every block of a file to be written through a shared mapping its space on disk
/// first: a write through the mapping into a hole (a sparse copy, `cp --sparse=always`) on a
/// full disk would kill the process with SIGBUS; this makes it an error instead. A file without
/// holes (every file bloomkit writes) is left alone; one whose holes need more than the disk
/// has free is refused before anything is allocated (a partial `fallocate` would fill the
/// disk). File systems without `fallocate` or `statvfs` are left as they are, and so is a file
/// that does not start like a native file (the header checks refuse it after).
#[cfg(target_os = "linux")]
fn reserve_space(file: &File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileExt, MetadataExt};
    let meta = file.metadata().map_err(io(path, "reading the size of"))?;
    let missing = meta.len().saturating_sub(meta.blocks().saturating_mul(512));
    let mut magic = [0u8; 8];
    if missing == 0 || file.read_exact_at(&mut magic, 0).is_err() || magic != native::MAGIC {
        return Ok(());
    }
    let full = |source| Error::Io {
        context: format!(
            "reserving the space of {} (a file with holes: {missing} bytes to allocate)",
            path.display()
        ),
        source,
    };
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `fstatvfs` writes a `statvfs` into the buffer it is given, which is that size,
    // and is read only when the call succeeded; the descriptor is owned by `file`.
    if unsafe { libc::fstatvfs(file.as_raw_fd(), stat.as_mut_ptr()) } == 0 {
        // SAFETY: initialised by the successful call above.
        let stat = unsafe { stat.assume_init() };
        // `fsblkcnt_t` and `c_ulong` are narrower than u64 on some 32-bit targets.
        #[allow(clippy::useless_conversion)]
        let free = u64::from(stat.f_bavail).saturating_mul(u64::from(stat.f_frsize));
        if missing > free {
            return Err(full(std::io::Error::from_raw_os_error(libc::ENOSPC)));
        }
    }
    let Ok(len) = libc::off_t::try_from(meta.len()) else {
        return Ok(());
    };
    // SAFETY: `fallocate` touches no memory of this process; the descriptor stays open (owned
    // by `file`) for the duration of the call. Mode 0 over the file's own length never changes
    // its size or contents, only allocates the blocks of its holes.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => Err(full(e)),
        _ => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
fn reserve_space(_file: &File, _path: &Path) -> Result<()> {
    Ok(())
}

fn check_len(len: u64) -> Result<()> {
    if len < (HEADER_LEN + 8) as u64 {
        return Err(Error::Truncated {
            format: "bloomkit",
            what: "header",
            needed: (HEADER_LEN + 8) as u64,
            available: len,
        });
    }
    if !len.is_multiple_of(8) || usize::try_from(len).is_err() {
        return Err(corrupt(format!(
            "{len} bytes is not a native file's length"
        )));
    }
    Ok(())
}
