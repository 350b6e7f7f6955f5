//! The machine's memory, so that a filter too large for it is refused with a clear message
//! before anything is allocated (rather than the process being killed by the kernel).

use anyhow::{bail, Result};

/// The environment variable that sets the memory to assume available, in bytes, instead of
/// `MemAvailable`: for a container whose memory limit `/proc/meminfo` does not show, and for
/// the tests of the checks below.
pub const AVAILABLE_VAR: &str = "BLOOMKIT_MEM_AVAILABLE";

/// The memory available for new allocations without swapping ([`AVAILABLE_VAR`], else
/// `MemAvailable` of `/proc/meminfo`), or `None` where it is not known.
pub fn available() -> Result<Option<u64>> {
    if let Some(value) = std::env::var_os(AVAILABLE_VAR) {
        let value = value.to_string_lossy();
        return match crate::cli::parse_count(&value) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) => bail!("{AVAILABLE_VAR}: {e} (give the memory to assume available, in bytes)"),
        };
    }
    Ok(std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| parse_meminfo(&text)))
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Fails, in the user's terms, when `bytes` (what a new filter, `what`, needs in memory) is
/// more than this machine has available.
pub fn ensure_fits(bytes: u64, what: &str) -> Result<()> {
    ensure(
        bytes,
        what,
        "lower --capacity, raise --fpp, use --kind scalable (it grows as it fills) or a Redis target",
    )
}

/// Fails when the filter file at `path`, which is loaded whole (the kinds that are not used in
/// place), is larger than the memory this machine has available.
pub fn ensure_loadable(path: &std::path::Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) => ensure(
            m.len(),
            &format!("{}: loading this filter", path.display()),
            "use it on a machine with more memory",
        ),
        Err(_) => Ok(()),
    }
}

fn ensure(bytes: u64, what: &str, hint: &str) -> Result<()> {
    if let Some(avail) = available()? {
        if bytes > avail {
            bail!(
                "{what} needs {} of memory, more than this machine has available ({}); {hint}",
                crate::commands::human_bytes(bytes),
                crate::commands::human_bytes(avail)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(parse_meminfo(text), Some(2048 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
    }
}
