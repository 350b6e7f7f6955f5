//! `Guarded<T>`: a filter shared by the Python threads of one object, locked by the GIL for
//! single operations and by a mutex for the batches that run without the GIL.
//!
//! A `std::sync::Mutex` around the filter costs two locked instructions per call, as much as a
//! third of a single `add` or `in`. Most calls hold the GIL anyway, and the GIL already keeps
//! every other thread that holds it away; only the batch methods, which release the GIL while
//! they probe, need more. So:
//!
//! - a thread that holds the GIL and sees `busy` false uses the filter directly, for as long as
//!   it keeps the GIL (it never releases it meanwhile);
//! - a thread that works on the filter without the GIL first takes `worker` and sets `busy`,
//!   both while it holds the GIL, then releases the GIL, works, clears `busy` and unlocks.
//!
//! `busy` only becomes true under the GIL, so it cannot become true while a direct user holds
//! the GIL; and a direct user only starts when no worker is active. Workers exclude each other
//! by the mutex. Anyone who finds the filter busy waits for the worker without the GIL.

use pyo3::Python;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// A value used with the GIL held ([`with`](Guarded::with)) or without it
/// ([`without_gil`](Guarded::without_gil)), never by two threads at once.
pub struct Guarded<T> {
    value: UnsafeCell<T>,
    /// True while a worker uses `value` without the GIL.
    busy: AtomicBool,
    /// Held by the worker for as long as `busy` is true.
    worker: Mutex<()>,
}

// SAFETY: `value` is only reached through `with` and `without_gil`, which give one thread at a
// time access to it (see the module documentation), so sharing a `Guarded` between threads is
// sharing exclusive access to a `T: Send`.
unsafe impl<T: Send> Sync for Guarded<T> {}

/// A pointer to the value, moved into the closure run without the GIL.
struct Exclusive<T>(*mut T);

// SAFETY: the pointer is dereferenced only by the worker that holds `worker` and set `busy`,
// which gives it exclusive access; `T: Send` may be used from that thread.
unsafe impl<T: Send> Send for Exclusive<T> {}

/// Clears `busy` when the worker's closure ends, even by a panic (so the filter never stays
/// locked).
struct Done<'a>(&'a AtomicBool);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl<T: Send> Guarded<T> {
    /// A new cell holding `value`.
    pub fn new(value: T) -> Self {
        Guarded {
            value: UnsafeCell::new(value),
            busy: AtomicBool::new(false),
            worker: Mutex::new(()),
        }
    }

    /// Runs `f` on the value with the GIL held (waiting, without the GIL, for a worker to
    /// finish first). `f` must not release the GIL, run Python code or use this cell again.
    #[inline]
    pub fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&mut T) -> R) -> R {
        loop {
            if !self.busy.load(Ordering::Acquire) {
                // SAFETY: no worker is active (`busy` is false, and the Acquire load makes the
                // last worker's writes visible), none can start while this thread holds the GIL
                // (workers set `busy` only with the GIL held), and every other direct user needs
                // the GIL, which this thread keeps until `f` returns (`f` does not release it or
                // re-enter this cell).
                return f(unsafe { &mut *self.value.get() });
            }
            self.wait(py);
        }
    }

    /// Runs `f` on the value with the GIL held, or returns `None` at once if a worker is using
    /// it: for a caller that may not wait, such as one already inside another cell's `with`
    /// (waiting releases the GIL). `f` must not release the GIL, run Python code or use this
    /// cell again.
    #[inline]
    pub fn try_with<R>(&self, _py: Python<'_>, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        if self.busy.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: as in `with` (`_py` proves that this thread holds the GIL).
        Some(f(unsafe { &mut *self.value.get() }))
    }

    /// Runs `f` on the value without the GIL, excluding every other user meanwhile.
    pub fn without_gil<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut T) -> R + Send) -> R {
        loop {
            let guard: Option<MutexGuard<'_, ()>> = match self.worker.try_lock() {
                Ok(g) => Some(g),
                // A worker panicked; `Done` cleared `busy`, and the value is still whole.
                Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(TryLockError::WouldBlock) => None,
            };
            if let Some(_guard) = guard {
                // With the GIL and the mutex held: no direct user is active (they hold the GIL)
                // and no other worker (they hold the mutex).
                self.busy.store(true, Ordering::Relaxed);
                let value = Exclusive(self.value.get());
                let busy = &self.busy;
                return py.allow_threads(move || {
                    let _done = Done(busy);
                    let value = value;
                    // SAFETY: this thread holds `worker` and set `busy` while it held the GIL,
                    // so no other thread uses the value until `_done` clears `busy`.
                    f(unsafe { &mut *value.0 })
                });
            }
            self.wait(py);
        }
    }

    /// Waits, without the GIL, until the current worker unlocks the mutex.
    #[cold]
    fn wait(&self, py: Python<'_>) {
        py.allow_threads(|| drop(self.worker.lock()));
    }
}
