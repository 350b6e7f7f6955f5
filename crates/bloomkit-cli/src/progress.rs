//! A progress bar on standard error, only when it is a terminal, the work is long (it appears
//! after a second) and neither `--no-progress` nor `-q` is given. Piped or redirected runs
//! stay silent.
//!
//! It shows items (lines) read and the rate in lines per second, averaged since the command
//! started (a rate measured over the first instants of a run, when a whole buffer arrives at
//! once, would be meaningless), and, when the input's size is known, a bar and an ETA.

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

/// A count for people: `950`, `12.3 k`, `4.56 M`.
pub fn human_count(x: f64) -> String {
    if x < 1e3 {
        format!("{x:.0}")
    } else if x < 1e6 {
        format!("{:.1} k", x / 1e3)
    } else if x < 1e9 {
        format!("{:.2} M", x / 1e6)
    } else {
        format!("{:.2} G", x / 1e9)
    }
}

/// A duration for people: `42s`, `3m05s`, `2h10m`.
fn human_duration(secs: f64) -> String {
    let s = secs.round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    }
}

impl Progress {
    /// A progress reporter (shown only if `wanted` and standard error is a terminal);
    /// `total_bytes` is the input's size when it is known.
    pub fn new(wanted: bool, total_bytes: Option<u64>) -> Self {
        Progress {
            enabled: wanted && std::io::stderr().is_terminal(),
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
        let elapsed = self.start.elapsed();
        if self.bar.is_none() {
            if elapsed < DELAY {
                return;
            }
            let (len, template) = match self.total_bytes {
                Some(total) if total > 0 => (Some(total), "{bar:30} {percent:>3}% {msg}"),
                _ => (None, "{spinner} {msg}"),
            };
            let style = ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            self.bar = Some(
                ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr()).with_style(style),
            );
        }
        let secs = elapsed.as_secs_f64().max(1e-3);
        let rate = items as f64 / secs;
        let mut msg = format!(
            "{} lines, {} lines/s",
            human_count(items as f64),
            human_count(rate)
        );
        if let Some(total) = self.total_bytes.filter(|&t| t > 0 && bytes > 0) {
            let left = total.saturating_sub(bytes) as f64 / (bytes as f64 / secs);
            msg.push_str(&format!(", about {} left", human_duration(left)));
        }
        if let Some(bar) = &self.bar {
            bar.set_position(bytes);
            bar.set_message(msg);
        }
    }

    /// Removes the bar.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_units() {
        assert_eq!(human_count(950.0), "950");
        assert_eq!(human_count(12_345.0), "12.3 k");
        assert_eq!(human_count(4_560_000.0), "4.56 M");
        assert_eq!(human_duration(42.0), "42s");
        assert_eq!(human_duration(185.0), "3m05s");
        assert_eq!(human_duration(7800.0), "2h10m");
    }
}
