//! Allocation of filter storage: fallible, and backed by huge pages where the OS allows.
//!
//! A filter larger than the CPU caches is read at random, one cache line per query. With 4 KiB
//! pages a 12 MB filter spans 3,000 pages, more than the TLB holds, so most queries also pay
//! a page-table walk; with 2 MiB pages it spans six. On Linux, where transparent huge pages
//! are commonly enabled only on request (`madvise` mode, the default of Debian and Ubuntu),
//! large storage is therefore advised `MADV_HUGEPAGE` before it is first touched. The advice
//! changes nothing else: without huge pages the filter works the same, just slower.

use crate::error::{Error, Result};

/// Storage at least this large is advised to use huge pages.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// `count` copies of `zero`, reporting allocation failure (or a count beyond the address
/// space) as an error instead of aborting.
pub(crate) fn zeroed_vec<T: Clone>(count: u64, zero: T) -> Result<Vec<T>> {
    let elem = std::mem::size_of::<T>() as u64;
    let bytes = count.saturating_mul(elem);
    let n = usize::try_from(count).map_err(|_| Error::TooLarge {
        bits: bytes.saturating_mul(8),
        limit: "more memory than this platform can address",
    })?;
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Alloc { bytes })?;
    advise_huge_pages(v.as_ptr().cast(), v.capacity() * std::mem::size_of::<T>());
    v.resize(n, zero);
    Ok(v)
}

/// Asks the kernel to back the 2 MiB-aligned part of `[ptr, ptr + bytes)` with huge pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *const u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < HUGE_PAGE_THRESHOLD {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + bytes) / HUGE * HUGE;
    if start < end {
        // SAFETY: `[start, end)` lies inside one live allocation owned by the caller, and
        // MADV_HUGEPAGE only changes how the kernel backs those pages, never their contents or
        // validity. Failure (for example THP disabled) is harmless and ignored. Exercised by
        // every filter larger than the threshold, e.g. `tests/blocked.rs`.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *const u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_and_small_vectors_are_zeroed() {
        for count in [0u64, 1, 1000, (HUGE_PAGE_THRESHOLD as u64 / 8) * 3 + 5] {
            let v = zeroed_vec(count, 0u64).unwrap();
            assert_eq!(v.len() as u64, count);
            assert!(v.iter().all(|&w| w == 0));
        }
        assert!(matches!(
            zeroed_vec(u64::MAX / 8, 0u64),
            Err(Error::Alloc { .. } | Error::TooLarge { .. })
        ));
    }
}
