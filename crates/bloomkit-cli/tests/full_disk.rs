//! A full disk: every command that writes a file fails with a clear error naming the file and
//! the kernel's reason, leaves no temporary or partial file, keeps the file it would have
//! replaced byte for byte, and never reports as added an element it did not save.
//!
//! The disk is real: a small tmpfs mounted for each test (root only; unmounted when the test
//! ends, also when it fails), filled with a filler file until only a few KiB remain. Where
//! mounting is not permitted, the tests fall back to a file-size limit (`ulimit -f`, with
//! SIGXFSZ ignored so that the kernel's error reaches the program): a write past it fails
//! with EFBIG, "File too large", which the program must handle as it handles ENOSPC. Either
//! way the tests run; none is skipped.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::*;

/// A directory on a disk that can be filled: a tmpfs mounted on it, or a plain directory
/// whose writers run under a file-size limit.
struct Disk {
    dir: tempfile::TempDir,
    mounted: bool,
    /// The file-size limit in bytes when not mounted (set by `leave_free`).
    limit: std::cell::Cell<u64>,
}

/// Size of each test's tmpfs.
const DISK_BYTES: u64 = 2 << 20;

impl Disk {
    /// Mounts a tmpfs unless `BLOOMKIT_TEST_NO_MOUNT` is set (to try the fallback).
    fn new() -> Disk {
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::env::var_os("BLOOMKIT_TEST_NO_MOUNT").is_none()
            && Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={DISK_BYTES}"), "tmpfs"])
                .arg(dir.path())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("tmpfs cannot be mounted here: using a file-size limit (EFBIG) instead");
        }
        Disk {
            dir,
            mounted,
            limit: std::cell::Cell::new(u64::MAX),
        }
    }

    fn path(&self, name: &str) -> String {
        path(&self.dir, name)
    }

    /// A new filter file `name` on this disk (capacity 20000, fpp 0.01, and `args`) holding
    /// `item`.
    fn filter(&self, name: &str, args: &[&str], item: &str) -> String {
        let f = self.path(name);
        create(&f, &[&["-n", "20000", "-p", "0.01"], args].concat());
        ok(&["add", &f, item], b"");
        f
    }

    fn filler(&self) -> PathBuf {
        self.dir.path().join("filler")
    }

    /// Fills the disk so that about `bytes` remain free (whole pages); without a mount, limits
    /// the size of any file the next runs write to `bytes`.
    fn leave_free(&self, bytes: u64) {
        if !self.mounted {
            self.limit.set(bytes);
            return;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.filler())
            .unwrap();
        let page = vec![0u8; 4096];
        loop {
            match f.write_all(&page) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc_enospc()) => break,
                Err(e) => panic!("filling the disk: {e}"),
            }
        }
        let len = f.metadata().unwrap().len();
        f.set_len(len.saturating_sub(bytes.next_multiple_of(4096)))
            .unwrap();
    }

    /// Frees the disk (removes the filler), lifts the limit.
    fn free(&self) {
        let _ = std::fs::remove_file(self.filler());
        self.limit.set(u64::MAX);
    }

    /// What the kernel says when a write does not fit.
    fn reason(&self) -> &'static str {
        if self.mounted {
            "No space left on device"
        } else {
            "File too large"
        }
    }

    /// Runs the binary on this disk with `stdin` as input.
    fn run(&self, args: &[&str], stdin: &[u8]) -> Run {
        run_command(&mut self.command(args), stdin)
    }

    /// A command for the binary on this disk (under the file-size limit, if one is set).
    fn command(&self, args: &[&str]) -> Command {
        if self.limit.get() == u64::MAX {
            bk(args)
        } else {
            // `ulimit -f` counts 512-byte blocks (POSIX sh); `trap '' XFSZ` is inherited through exec.
            let mut script = format!(
                "ulimit -f {} && trap '' XFSZ && exec '{}'",
                self.limit.get() / 512,
                bin().display()
            );
            for a in args {
                script.push_str(&format!(" '{a}'"));
            }
            let mut c = Command::new("sh");
            c.args(["-c", &script]);
            c
        }
    }

    /// Runs and expects the failure of a write that did not fit: exit status 2, one line that
    /// names `file` and the kernel's reason; then no temporary file is left.
    fn fails(&self, args: &[&str], stdin: &[u8], file: &str) -> Run {
        let r = self.run(args, stdin);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(
            r.err.contains(file) && r.err.contains(self.reason()),
            "{args:?}: {}",
            r.err
        );
        assert!(!r.err.contains(".tmp:"), "names the user's file: {}", r.err);
        assert_no_temp_files(self.dir.path());
        r
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(self.dir.path()).status();
        }
    }
}

fn libc_enospc() -> i32 {
    28
}

/// Creates the filter file `f` with `args`.
fn create(f: &str, args: &[&str]) {
    ok(&[&["create", f], args].concat(), b"");
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn create_that_cannot_write_leaves_nothing() {
    let disk = Disk::new();
    disk.leave_free(8 << 10);
    let f = disk.path("new.bloom");
    for kind in ["blocked", "classic", "scalable", "counting", "dleft"] {
        disk.fails(
            &["create", &f, "-n", "50000", "-p", "0.01", "--kind", kind],
            b"",
            &f,
        );
        assert!(!Path::new(&f).exists(), "{kind}");
    }
    for window in [
        vec!["--window", "1h", "-n", "20000"],
        vec!["--window", "100000"],
    ] {
        disk.fails(
            &[&["create", f.as_str()], window.as_slice()].concat(),
            b"",
            &f,
        );
        assert!(!Path::new(&f).exists(), "{window:?}");
    }
    // dedup creating its filter on the way fails the same, having printed nothing.
    let r = disk.fails(
        &[
            "dedup", &f, "-n", "50000", "-p", "0.01", "--kind", "scalable",
        ],
        b"a\nb\n",
        &f,
    );
    assert_eq!(r.out, "");
    assert!(!Path::new(&f).exists());
    // With room again, the same commands work.
    disk.free();
    assert_eq!(
        disk.run(&["create", &f, "-n", "50000", "-p", "0.01"], b"")
            .code,
        0
    );
}

#[test]
fn a_replacement_that_cannot_be_written_keeps_the_original() {
    let disk = Disk::new();
    let f = disk.filter("f.bloom", &["--kind", "scalable"], "kept");
    let before = read(&f);
    disk.leave_free(8 << 10);
    disk.fails(
        &["create", &f, "-n", "20000", "-p", "0.01", "--force"],
        b"",
        &f,
    );
    assert_eq!(read(&f), before);
    disk.free();
    assert_all_present(&f, &["kept".into()]);
}

/// Kinds saved by rewriting the whole file: `add` fails, the file is byte-identical, and
/// nothing is reported as added (no summary on standard output, whatever --json says).
#[test]
fn add_whose_save_fails_reports_nothing_added() {
    let disk = Disk::new();
    let mut files = Vec::new();
    for (name, args) in [
        (
            "scalable",
            vec!["-n", "20000", "-p", "0.01", "--kind", "scalable"],
        ),
        (
            "counting",
            vec!["-n", "5000", "-p", "0.01", "--kind", "counting"],
        ),
        ("dleft", vec!["-n", "5000", "-p", "0.01", "--kind", "dleft"]),
        ("time-window", vec!["--window", "1h", "-n", "5000"]),
        ("count-window", vec!["--window", "5000"]),
        ("bitmap", vec!["--kind", "bitmap", "--range", "0..100000"]),
    ] {
        let f = disk.path(&format!("{name}.bloom"));
        create(&f, &args);
        ok(&["add", &f, "7"], b"");
        files.push(f);
    }
    disk.leave_free(0);
    let items = input(&(1..=300).map(|i| i.to_string()).collect::<Vec<_>>());
    for f in &files {
        let before = read(f);
        for args in [vec!["add", f.as_str()], vec!["--json", "add", f.as_str()]] {
            let r = disk.fails(&args, &items, f);
            assert!(r.err.contains("nothing was saved"), "{}", r.err);
            assert_eq!(r.out, "", "{args:?}: nothing reported as added");
            assert_eq!(read(f), before, "{f}");
        }
        if f.contains("counting") || f.contains("dleft") {
            disk.fails(&["remove", f, "7"], b"", f);
            assert_eq!(read(f), before);
        }
    }
    // The same input adds once there is room.
    disk.free();
    for f in &files {
        let r = disk.run(&["--json", "add", f], &items);
        assert_eq!(r.code, 0, "{f}: {}", r.err);
        assert!(r.out.contains("\"items\": 300"), "{f}: {}", r.out);
    }
}

/// dedup saves every chunk before printing it: when a save fails mid-stream (a scalable
/// filter grows a layer and the larger file no longer fits), it stops with an error, and
/// every line it printed is in the file.
#[test]
fn dedup_stops_at_the_first_save_that_fails_with_every_printed_line_saved() {
    let disk = Disk::new();
    let f = disk.path("seen.bloom");
    create(
        f.as_str(),
        &["-n", "10000", "-p", "0.01", "--kind", "scalable"],
    );
    let size = std::fs::metadata(&f).unwrap().len();
    // Room for the temporary copy of a one-layer file (the first chunks, 4096 lines each),
    // not for a second layer.
    disk.leave_free(size + 16384);
    let lines = lines("line", 0..200_000);
    let r = disk.run(&["dedup", "--save-every", "1000", &f], &input(&lines));
    disk.free();
    let printed: Vec<String> = r.out.lines().map(str::to_string).collect();
    assert!(!printed.is_empty(), "some chunks were saved: {}", r.err);
    assert!(printed.len() < lines.len(), "the disk filled up: {}", r.err);
    assert_all_present(&f, &printed);
    let (code, err) = (r.code, r.err);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&f) && err.contains(disk.reason()), "{err}");
    assert!(err.contains("items before it were saved"), "{err}");
    assert_no_temp_files(disk.dir.path());
}

/// A classic or blocked file is changed in place (its pages exist already): adding to it
/// needs no room at all.
#[test]
fn in_place_files_keep_working_on_a_full_disk() {
    let disk = Disk::new();
    for kind in ["classic", "blocked"] {
        let f = disk.path(&format!("{kind}.bloom"));
        create(f.as_str(), &["-n", "20000", "-p", "0.01", "--kind", kind]);
        disk.leave_free(0);
        let items = lines(kind, 0..500);
        let r = disk.run(&["add", &f], &input(&items));
        assert_eq!(r.code, 0, "{kind}: {}", r.err);
        let r = disk.run(&["dedup", &f], b"new-one\n");
        assert_eq!((r.code, r.out.as_str()), (0, "new-one\n"), "{}", r.err);
        disk.free();
        assert_all_present(&f, &items);
    }
}

#[test]
fn exports_imports_and_merges_that_cannot_write_leave_nothing() {
    let disk = Disk::new();
    let g = disk.filter("g.bloom", &["--scheme", "guava"], "x");
    let go = disk.path("go.bloom");
    create(
        go.as_str(),
        &["-n", "20000", "-p", "0.01", "--scheme", "go"],
    );
    // An import source kept outside the small disk.
    let outside = tempfile::tempdir().unwrap();
    let guava_file = path(&outside, "g.guava");
    ok(&["export", &g, "--format", "guava", "-o", &guava_file], b"");
    let h = disk.path("h.bloom");
    create(
        h.as_str(),
        &["-n", "20000", "-p", "0.01", "--scheme", "guava"],
    );
    let h_before = read(&h);
    disk.leave_free(4 << 10);
    let out = disk.path("out");
    let export = |from, format, to| vec!["export", from, "--format", format, "-o", to];
    for args in [
        export(g.as_str(), "guava", out.as_str()),
        export(go.as_str(), "go", out.as_str()),
        export(go.as_str(), "go-json", out.as_str()),
        vec!["import", guava_file.as_str(), out.as_str()],
        vec!["merge", out.as_str(), g.as_str(), h.as_str()],
        vec!["intersect", out.as_str(), g.as_str(), h.as_str()],
    ] {
        disk.fails(&args, b"", &out);
        assert!(!Path::new(&out).exists(), "{args:?}");
    }
    // Onto an existing file (--force, in place of an input): it stays as it was.
    for args in [
        vec!["merge", h.as_str(), h.as_str(), g.as_str()],
        vec!["import", guava_file.as_str(), h.as_str(), "--force"],
        [export(g.as_str(), "guava", h.as_str()), vec!["--force"]].concat(),
    ] {
        disk.fails(&args, b"", &h);
        assert_eq!(read(&h), h_before, "{args:?}");
    }
    let svg = disk.path("fpr.svg");
    disk.fails(&["calc", "--plot", &svg, "--filter", &g], b"", &svg);
    assert!(!Path::new(&svg).exists());
}

/// Copies `from` to `to` leaving a hole wherever a 4 KiB page is all zeros (as
/// `cp --sparse=always` does).
fn sparse_copy(from: &str, to: &str) {
    use std::io::{Seek, SeekFrom};
    let bytes = read(from);
    let mut out = std::fs::File::create(to).unwrap();
    for (i, page) in bytes.chunks(4096).enumerate() {
        if page.iter().any(|&b| b != 0) {
            out.seek(SeekFrom::Start(i as u64 * 4096)).unwrap();
            out.write_all(page).unwrap();
        }
    }
    out.set_len(bytes.len() as u64).unwrap();
}

/// A classic, blocked or dense bitmap file with holes (a sparse copy) is read through a
/// read-only mapping:
/// on a full tmpfs even reading a hole needs a page, and the first read of one would kill the
/// process (SIGBUS). The holes are read in when the file is mapped instead, so that this is a
/// clear error naming the file; with room, the same check works. (On other file systems, and
/// under the file-size limit, reading holes needs no room: the check works either way.)
#[test]
fn a_sparse_copy_read_on_a_full_tmpfs_is_an_error_not_a_crash() {
    let disk = Disk::new();
    let outside = tempfile::tempdir().unwrap();
    for (kind, args, item) in [
        ("classic", &["-n", "200000", "-p", "0.01"][..], "present"),
        ("blocked", &["-n", "200000", "-p", "0.01"][..], "present"),
        (
            "bitmap",
            &["--range", "0..4000000", "-n", "1000000"][..],
            "12345",
        ),
    ] {
        let original = path(&outside, &format!("{kind}.bloom"));
        create(original.as_str(), &[args, &["--kind", kind]].concat());
        ok(&["add", &original, item], b"");
        if kind == "bitmap" {
            let info = ok(&["info", &original], b"").out;
            assert!(info.contains("dense"), "{info}");
        }
        let f = disk.path(&format!("{kind}.bloom"));
        sparse_copy(&original, &f);
        disk.leave_free(0);
        let r = disk.run(&["check", &f, item], b"");
        if disk.mounted {
            assert_eq!(r.code, 2, "{kind}: {}", r.err);
            assert!(
                r.err.contains(&f)
                    && r.err.contains("No space left on device")
                    && !r.err.contains("SIGBUS"),
                "{kind}: {}",
                r.err
            );
        } else {
            assert_eq!(
                (r.code, r.out),
                (0, format!("{item}\n")),
                "{kind}: {}",
                r.err
            );
        }
        disk.free();
        let r = disk.run(&["check", &f, item], b"");
        assert_eq!(
            (r.code, r.out),
            (0, format!("{item}\n")),
            "{kind}: {}",
            r.err
        );
        assert_eq!(read(&f), read(&original), "{kind}");
        std::fs::remove_file(&f).unwrap();
    }
}

/// A classic or blocked file with holes (a sparse copy) is changed in place through a shared
/// mapping: on a full disk a write into a hole would kill the process (SIGBUS). The space is
/// reserved when the file is opened instead, so that this is a clear error and the file stays
/// as it was; with room, the same add works.
#[test]
fn a_sparse_copy_on_a_full_disk_is_an_error_not_a_crash() {
    let disk = Disk::new();
    let outside = tempfile::tempdir().unwrap();
    for kind in ["classic", "blocked"] {
        let original = path(&outside, &format!("{kind}.bloom"));
        create(
            original.as_str(),
            &["-n", "200000", "-p", "0.01", "--kind", kind],
        );
        let f = disk.path(&format!("{kind}.bloom"));
        sparse_copy(&original, &f);
        disk.leave_free(0);
        let items = lines(kind, 0..1000);
        let r = disk.run(&["add", &f], &input(&items));
        if disk.mounted {
            assert_eq!(r.code, 2, "{kind}: {}", r.err);
            assert!(
                r.err.contains(&f) && r.err.contains("No space left on device"),
                "{kind}: {}",
                r.err
            );
            assert_eq!(read(&f), read(&original), "{kind}");
        } else {
            // A file-size limit does not apply to filling holes: nothing fails.
            assert_eq!(r.code, 0, "{kind}: {}", r.err);
        }
        disk.free();
        assert_eq!(disk.run(&["add", &f], &input(&items)).code, 0);
        assert_all_present(&f, &items);
        std::fs::remove_file(&f).unwrap();
    }
}
