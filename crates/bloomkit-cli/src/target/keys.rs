//! Key files: the SipHash key of a keyed filter, from `--key-file`.

use anyhow::{anyhow, bail, Context as _, Result};
use bloomkit::Hashing;
use std::path::Path;

/// Options that apply to every target (from global flags).
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The SipHash key from `--key-file`, if any.
    pub key: Option<Hashing>,
}

impl Context {
    /// Reads `--key-file`: 16 raw bytes, or 32 hex digits (surrounding whitespace ignored).
    pub fn load_key(path: &Path) -> Result<Hashing> {
        // A key file is tiny: refuse anything else before reading it (a FIFO or /dev/zero
        // would block or never end).
        bloomkit::sharing::require_regular_file(path, "reading key file")
            .map_err(|e| anyhow!("{e}"))?;
        let len = std::fs::metadata(path)
            .with_context(|| format!("reading key file {}", path.display()))?
            .len();
        if len > 4096 {
            bail!(
                "key file {}: expected 16 raw bytes or 32 hex digits, found {len} bytes",
                path.display()
            );
        }
        let bytes = bloomkit::file::read_regular(path).map_err(|e| anyhow!("key file: {e}"))?;
        let key: [u8; 16] = if bytes.len() == 16 {
            bytes.try_into().expect("16 bytes")
        } else {
            let text = std::str::from_utf8(&bytes).unwrap_or("").trim();
            let mut out = Vec::new();
            crate::items::ItemFormat::Hex
                .encode(text.as_bytes(), &mut out)
                .ok()
                .and_then(|_| out.try_into().ok())
                .ok_or_else(|| {
                    anyhow!(
                        "key file {}: expected 16 raw bytes or 32 hex digits",
                        path.display()
                    )
                })?
        };
        Ok(Hashing::siphash(key))
    }

    /// The hashers to open keyed filters with.
    pub fn keys(&self) -> Vec<Hashing> {
        self.key.iter().cloned().collect()
    }
}
