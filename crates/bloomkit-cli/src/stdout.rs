//! Standard output whose write errors say where they happened: `bloomkit … > /dev/full`
//! fails with "writing standard output: No space left on device", not a bare system message.
//! The error keeps its kind, so a closed pipe is still recognised (`stream::is_closed_output`).

use std::io::{Result, StdoutLock, Write};

/// Standard output, locked, naming itself in its errors.
pub struct Stdout(StdoutLock<'static>);

/// Locks standard output (see the module docs).
pub fn lock() -> Stdout {
    Stdout(std::io::stdout().lock())
}

fn named(e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("writing standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn flush(&mut self) -> Result<()> {
        self.0.flush().map_err(named)
    }
}
