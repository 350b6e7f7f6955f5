//! The atomic word type of the lock-free storages: the standard library's, or loom's when the
//! crate is built for model checking (`RUSTFLAGS="--cfg loom"`, see `tests/loom.rs`), so that
//! loom can explore every interleaving of concurrent inserts.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
