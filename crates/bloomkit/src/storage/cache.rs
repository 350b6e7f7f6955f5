//! How much the core's own cache holds, for batch loops that choose whether to prefetch.
//!
//! A batch over a filter larger than the core's caches computes each element's cache lines
//! ahead of its probe and prefetches them, so that many elements' misses overlap. Over a
//! filter that the core's level-2 cache already holds there is nothing to wait for, and that
//! walk only costs instructions: batch inserts of a classic filter (`k` = 7 lines per element,
//! digests computed before) took 1.4–1.9× as long with it as without it for bit arrays of
//! 12 KB to 0.96 MB on a core with 2 MiB of L2, but 0.76× as long at 1.8 MB
//! (docs/BENCHMARKS.md, "The classic filter's batches"). Half the L2 leaves room for the keys
//! streaming through it and for a second hardware thread on the core.

/// The level-2 cache size assumed where the system does not say: a small one (Intel's client
/// cores had 256 KiB until 2019).
const FALLBACK_L2_BYTES: u64 = 256 << 10;

/// Whether a structure of `bytes` fits in half of one core's level-2 cache.
pub(crate) fn in_core_cache(bytes: u64) -> bool {
    #[cfg(test)]
    if let Some(answer) = ASSUMED.with(|a| a.get()) {
        return answer;
    }
    bytes <= l2_bytes() / 2
}

#[cfg(test)]
thread_local! {
    /// The answer of [`in_core_cache`] on this thread, when a test sets one.
    static ASSUMED: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with [`in_core_cache`] answering `answer` on this thread, so that a unit test
/// covers both the batch loop for small filters and the one for large ones whatever the
/// machine's cache.
#[cfg(test)]
pub(crate) fn assuming_in_core_cache<R>(answer: bool, f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            ASSUMED.with(|a| a.set(None));
        }
    }
    ASSUMED.with(|a| a.set(Some(answer)));
    let _reset = Reset;
    f()
}

/// The level-2 cache's size in bytes, read once.
fn l2_bytes() -> u64 {
    static L2: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *L2.get_or_init(|| detected_l2_bytes().unwrap_or(FALLBACK_L2_BYTES))
}

/// The size of cpu0's level-2 data or unified cache as Linux's sysfs lists it (`2048K`, ...).
#[cfg(target_os = "linux")]
fn detected_l2_bytes() -> Option<u64> {
    let read = |index: u32, file: &str| {
        let path = format!("/sys/devices/system/cpu/cpu0/cache/index{index}/{file}");
        std::fs::read_to_string(path).ok()
    };
    (0..8).find_map(|index| {
        let level2 = read(index, "level")?.trim() == "2";
        let data = read(index, "type")?.trim() != "Instruction";
        (level2 && data).then(|| read(index, "size").and_then(|s| parse_size(s.trim())))?
    })
}

#[cfg(not(target_os = "linux"))]
fn detected_l2_bytes() -> Option<u64> {
    None
}

/// A sysfs cache size: a number of bytes with an optional `K`, `M` or `G` suffix.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_size(s: &str) -> Option<u64> {
    let (digits, unit) = match s.char_indices().last()? {
        (i, 'K') => (&s[..i], 1 << 10),
        (i, 'M') => (&s[..i], 1 << 20),
        (i, 'G') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(unit)
        .filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_may_assume_either_answer() {
        assert!(!assuming_in_core_cache(false, || in_core_cache(64)));
        assert!(assuming_in_core_cache(true, || in_core_cache(u64::MAX)));
        assert!(in_core_cache(64));
    }

    #[test]
    fn the_cache_size_is_plausible_and_small_arrays_fit() {
        let l2 = l2_bytes();
        assert!(
            (FALLBACK_L2_BYTES / 4..=1 << 30).contains(&l2),
            "L2 of {l2} bytes"
        );
        assert!(in_core_cache(4096));
        assert!(!in_core_cache(l2));
    }

    #[test]
    fn sysfs_sizes_parse() {
        assert_eq!(parse_size("2048K"), Some(2 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        for bad in ["", "K", "0K", "12Q", "-1K", "99999999999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }
}
