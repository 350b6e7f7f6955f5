//! Checking that a path still names an open file (rule 1 of the sharing protocol, see
//! [`crate::sharing`]) at the cost of one non-blocking read instead of a `stat` of the path.
//!
//! An in-place writer must check, each time it takes a file's lock, that the path still names
//! the file it mapped: a whole-file replacer renames a new file over the path while it holds
//! the old file's lock, and bits set in the old file after that would be lost. [`PathWatch`]
//! makes that check cheap where it can: on Linux it asks the kernel (inotify) to queue an event
//! whenever a name in the file's directory is removed or renamed, or any directory on the path
//! is moved or deleted. The kernel queues the event inside the `rename(2)` or `unlink(2)` call
//! itself, so a replacer that renamed under the lock has queued it before it released the lock,
//! and the writer, which reads the queue after taking the lock, always sees it. With no event
//! since the last check the path names the same file; after any event (for whatever name) the
//! path is checked with `stat`, as without a watch.
//!
//! The watch is used only where it sees every change: an absolute path without symbolic links
//! or `.`/`..` components (the path checked is the path watched) whose directories are all on
//! local file systems of the kinds in [`LOCAL_FILE_SYSTEMS`] (a network file system's server
//! does not tell the client's kernel about another machine's renames). Elsewhere, and wherever setting it up
//! fails (no inotify instances or watches left, a directory that cannot be read), every check
//! is a `stat`. What a watch does not see, and a `stat` would: a file system mounted over a
//! directory of the path while the writer runs.
//!
//! ```
//! use bloomkit::path_watch::PathWatch;
//! let dir = std::env::temp_dir().join(format!("bloomkit-watch-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("seen.bloom");
//! let file = std::fs::File::create(&path).unwrap();
//! let watch = PathWatch::new(&path, bloomkit::sharing::identity_of(&file)?);
//! assert!(watch.still_here()?);
//! std::fs::write(dir.join("new"), b"").unwrap();
//! std::fs::rename(dir.join("new"), &path).unwrap();
//! assert!(!watch.still_here()?);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), bloomkit::Error>(())
//! ```

use crate::error::Result;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// File system types (`statfs` `f_type`) on which a watch is used: local ones, where every
/// rename and removal goes through this machine's kernel. ext2/3/4, XFS, Btrfs, tmpfs, F2FS,
/// overlayfs (containers' file systems; changes made to its layers behind its back are
/// undefined for overlayfs itself).
pub const LOCAL_FILE_SYSTEMS: [u64; 6] = [
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0xF2F5_2010,
    0x794C_7630,
];

/// Checks that a path still names one open file (see the [module docs](self)).
#[derive(Debug)]
pub struct PathWatch {
    path: PathBuf,
    identity: (u64, u64),
    #[cfg(target_os = "linux")]
    queue: Option<inotify::Queue>,
    /// Whether the next check must `stat` the path: at first, after any event, and once the
    /// path named another file (so every later check fails too). Held across the whole check,
    /// so that one thread cannot take the events another one read and still has to check.
    suspect: Mutex<bool>,
}

impl PathWatch {
    /// Watches `path`, which named the file of device and inode `identity` (see
    /// [`crate::sharing::identity_of`]). Never fails: where no watch can be set up, every
    /// [`still_here`](Self::still_here) is a `stat`.
    pub fn new(path: &Path, identity: (u64, u64)) -> PathWatch {
        PathWatch {
            path: path.to_path_buf(),
            identity,
            #[cfg(target_os = "linux")]
            queue: inotify::Queue::watching(path),
            suspect: Mutex::new(true),
        }
    }

    /// Whether a watch is in use (else every check is a `stat`).
    pub fn is_watching(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.queue.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// Whether the path still names the file (false once it was replaced, moved or removed).
    /// Call it holding the file's lock, as the protocol's rule 1 says.
    pub fn still_here(&self) -> Result<bool> {
        let mut suspect = self.suspect.lock().unwrap_or_else(PoisonError::into_inner);
        if self.changed_since_last() {
            *suspect = true;
        }
        if !*suspect {
            return Ok(true);
        }
        let here = crate::sharing::names(&self.path, self.identity)?;
        *suspect = !here;
        Ok(here)
    }

    /// Whether anything happened on the path since the last call (always, without a watch).
    fn changed_since_last(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(queue) = &self.queue {
            return queue.drain();
        }
        true
    }
}

#[cfg(target_os = "linux")]
mod inotify {
    use super::LOCAL_FILE_SYSTEMS;
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Component, Path};

    /// A non-blocking inotify queue watching a file's directory (names removed or renamed,
    /// the directory moved or deleted) and every directory above it (moved or deleted).
    #[derive(Debug)]
    pub(super) struct Queue(OwnedFd);

    impl Queue {
        /// The watch of `path`, or `None` where it would not see every change (see the module
        /// docs).
        pub(super) fn watching(path: &Path) -> Option<Queue> {
            let plain = path.is_absolute()
                && path
                    .components()
                    .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
            if !plain || std::fs::canonicalize(path).ok()? != path {
                return None;
            }
            let dir = path.parent()?;
            if !dir.ancestors().all(local) {
                return None;
            }
            // SAFETY: `inotify_init1` takes flags only; a non-negative result is a new file
            // descriptor that nothing else owns.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if fd < 0 {
                return None;
            }
            // SAFETY: `fd` is open and owned by nothing else (above).
            let queue = Queue(unsafe { OwnedFd::from_raw_fd(fd) });
            let names = libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO;
            let itself = libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_ONLYDIR;
            queue.add(dir, names | itself)?;
            for above in dir.ancestors().skip(1) {
                queue.add(above, itself)?;
            }
            Some(queue)
        }

        fn add(&self, dir: &Path, mask: u32) -> Option<()> {
            let dir = CString::new(dir.as_os_str().as_bytes()).ok()?;
            // SAFETY: the descriptor is open (owned by `self`) and `dir` is a NUL-terminated
            // string that outlives the call.
            let wd = unsafe { libc::inotify_add_watch(self.0.as_raw_fd(), dir.as_ptr(), mask) };
            (wd >= 0).then_some(())
        }

        /// Reads every queued event; whether there was any (or the queue could not be read).
        pub(super) fn drain(&self) -> bool {
            let mut buf = [0u8; 4096];
            let mut any = false;
            loop {
                // SAFETY: `buf` is writable for its whole length, and the descriptor is open.
                let n = unsafe {
                    libc::read(
                        self.0.as_raw_fd(),
                        buf.as_mut_ptr().cast::<libc::c_void>(),
                        buf.len(),
                    )
                };
                if n > 0 {
                    any = true;
                    continue;
                }
                let would_block = n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock;
                return any || !would_block;
            }
        }
    }

    /// Whether `dir` is on a file system of a kind in [`LOCAL_FILE_SYSTEMS`].
    fn local(dir: &Path) -> bool {
        let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `statfs` is plain old data, for which all zeroes is a valid value.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is NUL-terminated and `fs` is writable; both outlive the call.
        if unsafe { libc::statfs(c.as_ptr(), &mut fs) } != 0 {
            return false;
        }
        #[allow(clippy::unnecessary_cast)] // `f_type`'s type differs between targets
        let kind = fs.f_type as u64;
        LOCAL_FILE_SYSTEMS.contains(&kind)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::fs;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A fresh directory `a/b` under the temp dir holding `seen.bloom`, and a watch of it.
    fn setup(name: &str) -> (Dir, PathBuf, PathBuf, PathWatch) {
        let top = fs::canonicalize(std::env::temp_dir())
            .unwrap()
            .join(format!("bloomkit-watch-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&top);
        let dir = top.join("a").join("b");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("seen.bloom");
        let file = fs::File::create(&path).unwrap();
        let watch = PathWatch::new(&path, crate::sharing::identity_of(&file).unwrap());
        (Dir(top.clone()), top, path, watch)
    }

    fn watched_here(watch: &PathWatch, top: &Path) {
        if inotify::Queue::watching(&top.join("a")).is_some() {
            assert!(watch.is_watching(), "a local temp dir is watched");
        }
    }

    #[test]
    fn a_quiet_path_stays_here_and_unrelated_names_do_not_matter() {
        let (_d, top, path, watch) = setup("quiet");
        watched_here(&watch, &top);
        for _ in 0..3 {
            assert!(watch.still_here().unwrap());
        }
        let other = path.with_file_name("other");
        fs::write(&other, b"x").unwrap();
        fs::rename(&other, path.with_file_name("other2")).unwrap();
        fs::remove_file(path.with_file_name("other2")).unwrap();
        assert!(watch.still_here().unwrap());
        assert!(watch.still_here().unwrap());
    }

    #[test]
    fn a_file_renamed_over_the_path_is_noticed_and_stays_noticed() {
        let (_d, _top, path, watch) = setup("over");
        assert!(watch.still_here().unwrap());
        let tmp = path.with_file_name(".seen.bloom.tmp");
        fs::write(&tmp, b"new").unwrap();
        fs::rename(&tmp, &path).unwrap();
        assert!(!watch.still_here().unwrap());
        assert!(
            !watch.still_here().unwrap(),
            "no event now, but still another file"
        );
    }

    #[test]
    fn a_removed_or_moved_file_is_noticed() {
        let (_d, _top, path, watch) = setup("rm");
        assert!(watch.still_here().unwrap());
        fs::remove_file(&path).unwrap();
        assert!(!watch.still_here().unwrap());
        let (_d, _top, path, watch) = setup("mv");
        assert!(watch.still_here().unwrap());
        fs::rename(&path, path.with_file_name("elsewhere")).unwrap();
        assert!(!watch.still_here().unwrap());
        // Moved back: the path names the file again.
        fs::rename(path.with_file_name("elsewhere"), &path).unwrap();
        assert!(watch.still_here().unwrap());
    }

    #[test]
    fn moving_a_directory_of_the_path_is_noticed() {
        for moved in ["a/b", "a"] {
            let (_d, top, path, watch) = setup(&format!("dir{}", moved.len()));
            assert!(watch.still_here().unwrap());
            fs::rename(top.join(moved), top.join("moved")).unwrap();
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, b"new").unwrap();
            assert!(!watch.still_here().unwrap(), "{moved} moved");
        }
    }

    #[test]
    fn paths_a_watch_cannot_follow_are_checked_every_time() {
        let (_d, top, path, _watch) = setup("plain");
        let link = top.join("link");
        std::os::unix::fs::symlink(path.parent().unwrap(), &link).unwrap();
        let file = fs::File::open(&path).unwrap();
        let id = crate::sharing::identity_of(&file).unwrap();
        let through = PathWatch::new(&link.join("seen.bloom"), id);
        assert!(!through.is_watching());
        assert!(through.still_here().unwrap());
        let relative = PathWatch::new(Path::new("seen.bloom"), id);
        assert!(!relative.is_watching());
        // Re-pointing the link is seen by the `stat` of every check.
        let other = top.join("other");
        fs::create_dir_all(&other).unwrap();
        fs::write(other.join("seen.bloom"), b"x").unwrap();
        fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&other, &link).unwrap();
        assert!(!through.still_here().unwrap());
    }
}
