//! Dense bitmap files read in place (`check`, `info`, and the inputs of `merge`): the
//! library's read-only [`MappedBitmap`], so that a bitmap of a billion integers is queried
//! without loading its 125 MB; a query touches the one page it reads.
//!
//! Bitmap files are never changed in place: every change writes a new file and renames it over
//! the old one, under the file's lock (see [`file`](super::file)), so the mapping keeps the
//! contents it was opened on. A sealed file's checksum is verified when it is opened, as for a
//! loaded one. Roaring bitmaps and two-bit maps, which have no bit array to map, are loaded.

use crate::target::describe::Bitmap;
use crate::target::Description;
use anyhow::Result;
use bloomkit::bitmap::{BitmapForm, MappedBitmap};
use bloomkit::codec::native::Design;
use bloomkit::AnyFilter;
use std::path::Path;

/// A dense bitmap file mapped read-only.
#[derive(Debug)]
pub struct MappedBitmapFile {
    map: MappedBitmap,
}

impl MappedBitmapFile {
    /// Maps the file at `real` if it is a dense bitmap, or `None` (another kind, a roaring
    /// bitmap, a file that cannot be mapped here, or one the loader must judge: loading gives
    /// the precise error). A dense bitmap whose checksum or count is wrong is an error.
    pub fn open(real: &Path, shown: &Path) -> Result<Option<MappedBitmapFile>> {
        let file = bloomkit::file::open_regular(real, "opening")
            .map_err(|e| super::file::file_error(shown, e))?;
        let Ok(map) = MappedBitmap::from_file(&file, real) else {
            return Ok(None);
        };
        map.verify()
            .map_err(|e| super::file::file_error(shown, e))?;
        Ok(Some(MappedBitmapFile { map }))
    }

    /// Tests a batch of encoded integers (8-byte keys; any other key is absent).
    pub fn contains_batch(&self, elements: &[Vec<u8>], present: &mut Vec<bool>) {
        present.clear();
        present.extend(elements.iter().map(|e| self.map.contains_encoded(e)));
    }

    /// The design recorded in the file, if any.
    fn design(&self) -> Option<Design> {
        (self.map.capacity() != 0).then(|| Design {
            capacity: self.map.capacity(),
            fpp: 0.0,
        })
    }

    /// What `info` reports: the same as for the loaded bitmap.
    pub fn describe(&self) -> Description {
        Bitmap {
            kind: bloomkit::Kind::Bitmap,
            range: self.map.range(),
            form: BitmapForm::Dense,
            len: self.map.len(),
            bits: self.map.params().bits,
            bytes: self.map.memory_bytes() as u64,
            capacity: self.design().map(|d| d.capacity),
        }
        .describe()
    }

    /// An in-memory copy, with its design.
    pub fn snapshot(&self, shown: &Path) -> Result<(AnyFilter, Option<Design>)> {
        let bitmap = self
            .map
            .to_bitmap()
            .map_err(|e| super::file::file_error(shown, e))?;
        Ok((bitmap.into(), self.design()))
    }
}
