//! [`Clock`]: where filters that forget read the time.
//!
//! A time-window filter (in memory, in a file or in Redis) needs "now" to know which generation
//! is current. Reading it through a [`Clock`] lets tests move time forward without sleeping, and
//! lets a Redis test give each client its own skew.
//!
//! ```
//! use bloomkit::clock::{Clock, ManualClock};
//! use std::time::Duration;
//! let clock = ManualClock::new(1_000);
//! clock.advance(Duration::from_secs(2));
//! assert_eq!(clock.now_ms(), 3_000);
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time, in milliseconds since the Unix epoch.
///
/// Implementations must be cheap: filters read the clock once per call (per batch).
/// A clock may go backwards (NTP steps); filters treat that as no time passing.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        // A clock set before 1970 reads as the epoch: no generation is ever "before" it.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock that only moves when told to: for tests and simulations.
///
/// Shared by reference (or in an `Arc`) between the filters that read it.
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicU64,
}

impl ManualClock {
    /// A clock that reads `now_ms` until moved.
    pub fn new(now_ms: u64) -> Self {
        ManualClock {
            now_ms: AtomicU64::new(now_ms),
        }
    }

    /// Sets the time (it may go backwards, to test how filters take it).
    pub fn set(&self, now_ms: u64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `by` (saturating).
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        let _ = self
            .now_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(by))
            });
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = Arc::new(ManualClock::new(10));
        assert_eq!(clock.now_ms(), 10);
        clock.advance(Duration::from_millis(5));
        assert_eq!(clock.now_ms(), 15);
        clock.set(3);
        assert_eq!(clock.now_ms(), 3, "a manual clock may go backwards");
        clock.set(u64::MAX - 1);
        clock.advance(Duration::from_secs(1));
        assert_eq!(clock.now_ms(), u64::MAX, "advance saturates");
    }

    #[test]
    fn system_clock_is_after_2020() {
        // 2020-01-01T00:00:00Z in milliseconds: a clock reading before it is broken.
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
