//! [`MappedBitmap`]: a dense bitmap file used in place, read-only, through a memory mapping.
//!
//! A dense plane is stored as little-endian words at a 64-byte-aligned offset (see
//! `docs/FORMAT.md`, "Bitmaps"), so the mapped file *is* the bit array: opening costs a header
//! parse however large the bitmap, and a query touches one page. As in [`crate::mmap`], the
//! mapping is viewed as atomic words read with relaxed loads, so that another process
//! replacing or writing the file can never make a read undefined behaviour.

#![cfg(not(loom))]

use super::{bitmap_params, Bitmap, BitmapForm, KeyRange, Store};
use crate::codec::native::{parse_bitmap_header, BitmapHeader, BITMAP_HEAD_LEN};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::math::Params;
use crate::storage::{atomic_get, AtomicU64, BitVec, Ordering};
use memmap2::Mmap;
use std::fs::File;
use std::path::Path;

/// A dense [`Bitmap`] file mapped read-only (see the module docs).
///
/// ```
/// use bloomkit::bitmap::{Bitmap, BitmapForm, KeyRange, MappedBitmap};
/// let path = std::env::temp_dir().join(format!("bloomkit-bitmap-doc-{}.bloom", std::process::id()));
/// let mut ids = Bitmap::with_form(KeyRange::new(0, 1 << 20)?, BitmapForm::Dense)?;
/// ids.insert_batch(&[3u32, 70_000])?;
/// bloomkit::file::save(&path, &ids.into(), None)?;
/// let mapped = MappedBitmap::open(&path)?;
/// assert!(mapped.contains(70_000u32) && !mapped.contains(4u32));
/// assert_eq!(mapped.iter().collect::<Vec<_>>(), [3, 70_000]);
/// mapped.verify()?;
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub struct MappedBitmap {
    map: Mmap,
    header: BitmapHeader,
}

impl std::fmt::Debug for MappedBitmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MappedBitmap({})", self.header.range)
    }
}

fn io(path: &Path, what: &str) -> impl FnOnce(std::io::Error) -> Error {
    let context = format!("{what} {}", path.display());
    move |source| Error::Io { context, source }
}

impl MappedBitmap {
    /// Maps the dense bitmap file at `path`. Checks the header and the planes' places, not
    /// the checksum (that would read every page; see [`verify`](Self::verify)). A roaring
    /// bitmap or another kind of file is refused with [`Error::Unsupported`] or
    /// [`Error::Corrupt`]: load those with [`crate::file::load`].
    pub fn open(path: &Path) -> Result<MappedBitmap> {
        let file = crate::file::open_regular(path, "opening")?;
        Self::from_file(&file, path)
    }

    /// [`open`](Self::open) for a file already open; `path` is for messages.
    pub fn from_file(file: &File, path: &Path) -> Result<MappedBitmap> {
        if cfg!(target_endian = "big") || cfg!(not(target_pointer_width = "64")) {
            return Err(Error::NotRepresentable {
                format: "bloomkit",
                reason: "memory mapping needs a little-endian 64-bit machine; use file::load"
                    .into(),
            });
        }
        let len = file.metadata().map_err(io(path, "reading"))?.len();
        if len < (BITMAP_HEAD_LEN + 8) as u64 || len % 8 != 0 {
            return Err(Error::Truncated {
                format: "bloomkit",
                what: "bitmap file",
                needed: (BITMAP_HEAD_LEN + 8) as u64,
                available: len,
            });
        }
        // SAFETY: the mapping is only ever read, through atomic loads (`words`), so writes by
        // other processes are no data race, and a relaxed atomic load is allowed on read-only
        // memory. A truncation by another process would fault; bloomkit replaces files by
        // rename, which leaves this mapping on the old contents.
        let map = unsafe { Mmap::map(file) }.map_err(io(path, "mapping"))?;
        crate::mmap::read_in_holes(file, &map, path)?;
        let mut m = MappedBitmap {
            header: BitmapHeader {
                kind: Kind::Bitmap,
                form: BitmapForm::Dense,
                range: KeyRange::new(0, 1)?,
                capacity: 0,
                count: 0,
                planes: vec![(0, 0)],
            },
            map,
        };
        let head: Vec<u8> = m.words()[..BITMAP_HEAD_LEN / 8]
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        let header = parse_bitmap_header(&head, m.map.len() as u64)?;
        if header.kind != Kind::Bitmap {
            return Err(Error::Unsupported {
                operation: "memory-map",
                kind: header.kind.name(),
            });
        }
        if header.form != BitmapForm::Dense {
            return Err(Error::Unsupported {
                operation: "memory-map",
                kind: "roaring bitmap",
            });
        }
        m.header = header;
        // Bits past the range must be clear, as in a BitVec.
        let tail = (m.header.range.width() % 64) as u32;
        let plane = m.plane();
        if tail != 0 && plane[plane.len() - 1].load(Ordering::Relaxed) >> tail != 0 {
            return Err(Error::Corrupt {
                format: "bloomkit",
                reason: "bits are set past the end of the range".into(),
            });
        }
        Ok(m)
    }

    /// The whole mapping as atomic words.
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned (so 8-byte aligned) and its length is a
        // multiple of 8 (checked in `from_file`); `AtomicU64` has the size and alignment of
        // `u64`, any bit pattern is valid, and every access is an atomic load. The slice
        // borrows `self`, which owns the mapping.
        unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), self.map.len() / 8)
        }
    }

    /// The dense plane's words.
    fn plane(&self) -> &[AtomicU64] {
        let (at, len) = self.header.planes[0];
        &self.words()[at / 8..(at + len) / 8]
    }

    /// The integers it can hold.
    pub fn range(&self) -> KeyRange {
        self.header.range
    }

    /// The number of integers present, as the header records it (checked by
    /// [`verify`](Self::verify)).
    pub fn len(&self) -> u64 {
        self.header.count
    }

    /// Whether the header records no integer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the integer is present (`false` outside the range).
    pub fn contains(&self, value: impl Into<i128>) -> bool {
        self.header
            .range
            .index(value.into())
            .is_ok_and(|i| atomic_get(self.plane(), i))
    }

    /// Whether an 8-byte integer key is present (`false` for any other key).
    pub fn contains_encoded(&self, bytes: &[u8]) -> bool {
        self.header
            .range
            .decode_key(bytes)
            .is_ok_and(|v| self.contains(v))
    }

    /// The integers present, ascending (read from the mapping as it goes).
    pub fn iter(&self) -> impl Iterator<Item = i128> + '_ {
        let range = self.header.range;
        self.plane().iter().enumerate().flat_map(move |(w, word)| {
            let mut bits = word.load(Ordering::Relaxed);
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(range.value(w as u64 * 64 + u64::from(b)))
            })
        })
    }

    /// The design capacity recorded in the file (0 if unknown).
    pub fn capacity(&self) -> u64 {
        self.header.capacity
    }

    /// The bit count of the integers' plane, as [`Filter::params`](crate::Filter::params) of
    /// the loaded [`Bitmap`] gives it (no hashes).
    pub fn params(&self) -> Params {
        bitmap_params(self.header.range, 1)
    }

    /// Bytes of the bit array (what [`Bitmap::memory_bytes`] gives for the loaded bitmap); they
    /// stay in the file, in the page cache, not in this process's memory.
    pub fn memory_bytes(&self) -> usize {
        self.plane().len() * 8
    }

    /// Verifies the file's checksum and its integer count, in one pass over every page (a few
    /// KiB at a time: nothing the size of the file is allocated).
    pub fn verify(&self) -> Result<()> {
        let words = self.words();
        let (at, len) = self.header.planes[0];
        let mut ones = 0u64;
        let computed = crate::mmap::scan(
            &words[..words.len() - 1],
            at / 8..(at + len) / 8,
            true,
            |plane| ones += plane.iter().map(|w| u64::from(w.count_ones())).sum::<u64>(),
        );
        let stored = words[words.len() - 1].load(Ordering::Relaxed);
        if stored != computed {
            return Err(Error::Checksum {
                format: "bloomkit",
                stored,
                computed,
            });
        }
        if ones != self.header.count {
            return Err(Error::Corrupt {
                format: "bloomkit",
                reason: format!(
                    "the header counts {} integers, the plane holds {ones}",
                    self.header.count
                ),
            });
        }
        Ok(())
    }

    /// An in-memory copy.
    pub fn to_bitmap(&self) -> Result<Bitmap> {
        let words = self
            .plane()
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect();
        let bits = BitVec::from_words(words, self.header.range.width() as u64)?;
        Ok(Bitmap::from_store(
            self.header.range,
            Store::from_bits(bits),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dense_bitmap_files_map_and_damage_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.bloom");
        let range = KeyRange::new(-70, 1000).unwrap();
        let mut b = Bitmap::with_form(range, BitmapForm::Dense).unwrap();
        b.insert_batch(&[-70i32, 0, 999, 500]).unwrap();
        crate::file::save(&path, &b.clone().into(), None).unwrap();
        let m = MappedBitmap::open(&path).unwrap();
        assert_eq!(m.len(), 4);
        assert!(m.contains(-70) && m.contains(999) && !m.contains(1000) && !m.contains(1));
        assert!(m.contains_encoded(&(-70i64).to_le_bytes()) && !m.contains_encoded(b"-70"));
        assert_eq!(m.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>());
        assert_eq!(m.to_bitmap().unwrap(), b);
        assert_eq!(m.params(), crate::Filter::params(&b));
        assert_eq!(m.memory_bytes(), b.memory_bytes());
        assert_eq!(m.capacity(), 0);
        m.verify().unwrap();
        drop(m);

        // A flipped bit in the plane: opens (no checksum on open), verify finds it.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[BITMAP_HEAD_LEN + 1] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let m = MappedBitmap::open(&path).unwrap();
        assert!(matches!(m.verify(), Err(Error::Checksum { .. })));
        drop(m);

        std::fs::write(&path, &bytes[..100]).unwrap();
        assert!(matches!(
            MappedBitmap::open(&path),
            Err(Error::Truncated { .. })
        ));
        let roaring = b.to_form(BitmapForm::Roaring).unwrap();
        crate::file::save(&path, &roaring.into(), None).unwrap();
        assert!(matches!(
            MappedBitmap::open(&path),
            Err(Error::Unsupported { .. })
        ));
        crate::file::save(
            &path,
            &crate::BloomFilter::new(10, 0.1).unwrap().into(),
            None,
        )
        .unwrap();
        assert!(matches!(
            MappedBitmap::open(&path),
            Err(Error::Corrupt { .. })
        ));
    }
}
