//! A progress bar on standard error, only when it is a terminal, the work is long (it appears
//! after a second) and `--quiet` is not given. Piped or redirected runs stay silent.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Shows how many items (and, when the input size is known, how much of it) were processed.
pub struct Progress {
    enabled: bool,
    start: Instant,
    total_bytes: Option<u64>,
    bar: Option<ProgressBar>,
}

/// How long work must run before a bar appears.
const DELAY: Duration = Duration::from_secs(1);

impl Progress {
    /// A progress reporter; `total_bytes` is the input's size when it is a regular file.
    pub fn new(quiet: bool, total_bytes: Option<u64>) -> Self {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            start: Instant::now(),
            total_bytes,
            bar: None,
        }
    }

    /// Records progress: `items` processed and `bytes` of input consumed.
    pub fn update(&mut self, items: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() {
            if self.start.elapsed() < DELAY {
                return;
            }
            let bar = match self.total_bytes {
                Some(total) => {
                    ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
                        .with_style(
                            ProgressStyle::with_template(
                                "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}",
                            )
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                        )
                }
                None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                    .with_style(
                        ProgressStyle::with_template(
                            "{spinner} {bytes} read, {bytes_per_sec} {msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    ),
            };
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(bytes);
            bar.set_message(format!("{items} items"));
        }
    }

    /// Removes the bar.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The size of standard input when it is a regular file (for the bar's ETA).
pub fn stdin_size() -> Option<u64> {
    #[cfg(unix)]
    {
        std::fs::metadata("/dev/stdin")
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }
    #[cfg(not(unix))]
    {
        None
    }
}
