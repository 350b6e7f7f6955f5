//! Memory-mapped classic filters: open a saved filter without reading it.
//!
//! The native format puts the bit array at a 64-byte-aligned offset, little-endian, so a
//! mapped file *is* the filter's words: opening costs a header parse however large the filter,
//! and a query touches only the `k` pages (usually cache lines) it probes.
//!
//! - [`MmapBloomFilter`]: read-only. [`open`](MmapBloomFilter::open) checks the header and the
//!   layout but not the checksum (that would read every page); call
//!   [`verify`](MmapBloomFilter::verify) for that.
//! - [`MmapBloomFilterMut`]: read-write, for adding in place. Changes reach the file when the
//!   kernel writes the pages back; [`flush`](MmapBloomFilterMut::flush) updates the checksum and
//!   writes them now. A file whose mapping was modified but not flushed fails its checksum on
//!   the next [`crate::file::load`], and is detected rather than misread.
//!
//! Another process must not truncate a file while it is mapped (the mapping would fault); saves
//! through [`crate::file::write_atomic`] replace the file by rename and leave existing mappings
//! on the old contents, which is safe.
//!
//! ```
//! use bloomkit::{BloomFilter, file, mmap::MmapBloomFilter};
//! let path = std::env::temp_dir().join(format!("bloomkit-mmap-doc-{}.bloom", std::process::id()));
//! let mut f = BloomFilter::new(100_000, 0.01)?;
//! f.insert("x");
//! file::save(&path, &f.into(), None)?;
//! let mapped = MmapBloomFilter::open(&path, &[])?;
//! assert!(mapped.contains("x") && !mapped.contains("y"));
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::classic::BloomFilter;
use crate::codec::native::{self, Header};
use crate::error::{Error, Result};
use crate::hash::Hashing;
use crate::key::Key;
use crate::math;
use crate::spec::Spec;
use memmap2::{Mmap, MmapMut};
use std::fs::{File, OpenOptions};
use std::path::Path;

fn io(path: &Path, what: &str) -> impl FnOnce(std::io::Error) -> Error {
    let context = format!("{what} {}", path.display());
    move |source| Error::Io { context, source }
}

/// Checks that a mapped native file is a classic filter whose words can be used in place.
fn check_layout(bytes: &[u8], keys: &[Hashing]) -> Result<(Header, usize, usize)> {
    if cfg!(target_endian = "big") {
        return Err(Error::NotRepresentable {
            format: "bloomkit",
            reason: "memory mapping needs a little-endian machine; use file::load".into(),
        });
    }
    let header = native::parse_header(bytes, bytes.len() as u64, keys)?;
    if header.kind != crate::Kind::Classic {
        return Err(Error::Corrupt {
            format: "bloomkit",
            reason: "only classic filters can be memory-mapped".into(),
        });
    }
    let layer = header.layers[0];
    if (bytes.as_ptr() as usize + layer.offset) % 8 != 0 {
        return Err(Error::Corrupt {
            format: "bloomkit",
            reason: "payload is not 8-byte aligned in memory".into(),
        });
    }
    // Bits past m must be clear, as in a BitVec.
    let spec = header.spec.as_ref().expect("classic filters have a spec");
    let tail = spec.bits() % 64;
    let last = &bytes[layer.offset + (layer.words - 1) * 8..][..8];
    if tail != 0 && u64::from_le_bytes(last.try_into().expect("8 bytes")) >> tail != 0 {
        return Err(Error::Corrupt {
            format: "bloomkit",
            reason: "bits are set past the last bit".into(),
        });
    }
    Ok((header.clone(), layer.offset, layer.words))
}

/// Views `len` words at `offset` of a checked mapping.
fn words(bytes: &[u8], offset: usize, len: usize) -> &[u64] {
    let region = &bytes[offset..offset + len * 8];
    // SAFETY: `check_layout` verified that the region lies inside the mapping (parse_header
    // bounds every layer by the file length, and slicing above re-checks it), that its start is
    // 8-byte aligned, and that the machine is little-endian, the byte order of the format. Any
    // bit pattern is a valid u64, and the returned slice borrows `bytes`, so it cannot outlive
    // the mapping.
    unsafe { std::slice::from_raw_parts(region.as_ptr().cast::<u64>(), len) }
}

fn words_mut(bytes: &mut [u8], offset: usize, len: usize) -> &mut [u64] {
    let region = &mut bytes[offset..offset + len * 8];
    // SAFETY: as in `words`; the exclusive borrow of `bytes` makes the slice unique.
    unsafe { std::slice::from_raw_parts_mut(region.as_mut_ptr().cast::<u64>(), len) }
}

#[inline]
fn contains_in(spec: &Spec, words: &[u64], key_bytes: &[u8]) -> bool {
    let d = spec.digest_bytes(key_bytes);
    spec.for_each_position(&d, |i| words[(i >> 6) as usize] & (1 << (i & 63)) != 0)
}

/// A read-only classic filter whose bits stay in a memory-mapped file.
pub struct MmapBloomFilter {
    map: Mmap,
    spec: Spec,
    offset: usize,
    len: usize,
}

impl MmapBloomFilter {
    /// Maps a native file of a classic filter. Checks the header and layout, not the checksum.
    pub fn open(path: &Path, keys: &[Hashing]) -> Result<Self> {
        let file = File::open(path).map_err(io(path, "opening"))?;
        // SAFETY: the mapping is read-only. Its contents could change if another process wrote
        // the file in place; bloomkit's own writers replace files by rename (which leaves this
        // mapping on the old file) or go through `MmapBloomFilterMut`, whose writes are plain
        // bit sets that can only make answers more positive, never invalid memory.
        let map = unsafe { Mmap::map(&file) }.map_err(io(path, "mapping"))?;
        let (header, offset, len) = check_layout(&map, keys)?;
        Ok(MmapBloomFilter {
            spec: header.spec.expect("checked: classic"),
            map,
            offset,
            len,
        })
    }

    /// The filter's spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The bit array, as words, straight from the mapping.
    pub fn as_words(&self) -> &[u64] {
        words(&self.map, self.offset, self.len)
    }

    /// Whether the element may be present.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_bytes(|b| contains_in(&self.spec, self.as_words(), b))
    }

    /// Verifies the file's checksum (reads every page).
    pub fn verify(&self) -> Result<()> {
        native::verify_checksum(&self.map)
    }

    /// Number of set bits (reads every page).
    pub fn count_ones(&self) -> u64 {
        self.as_words()
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// Estimated number of distinct elements (reads every page).
    pub fn estimated_len(&self) -> f64 {
        math::estimate_count(self.spec.bits(), self.spec.hashes(), self.count_ones())
    }

    /// An in-memory copy.
    pub fn to_bloom_filter(&self) -> Result<BloomFilter> {
        BloomFilter::from_words(self.spec.clone(), self.as_words().to_vec())
    }
}

/// A classic filter whose bits live in a file mapped read-write: inserts change the file.
pub struct MmapBloomFilterMut {
    map: MmapMut,
    spec: Spec,
    offset: usize,
    len: usize,
}

impl MmapBloomFilterMut {
    /// Maps a native file of a classic filter for reading and writing. Verifies the checksum
    /// first, since later flushes will vouch for the whole file.
    pub fn open(path: &Path, keys: &[Hashing]) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io(path, "opening"))?;
        // SAFETY: the mapping is shared with the file. Concurrent writers through other
        // mappings only set bits; a concurrent truncation would fault, which the module docs
        // rule out. All access goes through bounds-checked slices of the mapping.
        let map = unsafe { MmapMut::map_mut(&file) }.map_err(io(path, "mapping"))?;
        native::verify_checksum(&map)?;
        let (header, offset, len) = check_layout(&map, keys)?;
        Ok(MmapBloomFilterMut {
            spec: header.spec.expect("checked: classic"),
            map,
            offset,
            len,
        })
    }

    /// The filter's spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// Adds an element in place. Returns `true` if it was new.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let d = self.spec.digest(key);
        let words = words_mut(&mut self.map, self.offset, self.len);
        let mut new = false;
        self.spec.for_each_position(&d, |i| {
            let (w, mask) = ((i >> 6) as usize, 1u64 << (i & 63));
            new |= words[w] & mask == 0;
            words[w] |= mask;
            true
        });
        new
    }

    /// Whether the element may be present.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        let words = words(&self.map, self.offset, self.len);
        key.with_bytes(|b| contains_in(&self.spec, words, b))
    }

    /// Updates the checksum and writes every change to the file.
    pub fn flush(&mut self) -> Result<()> {
        let body_len = self.map.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&self.map[..body_len]);
        self.map[body_len..].copy_from_slice(&sum.to_le_bytes());
        self.map.flush().map_err(|source| Error::Io {
            context: "flushing the mapped filter".into(),
            source,
        })
    }
}
