//! Saves respect what is at the path: symbolic links, permissions and owner, devices, FIFOs,
//! directories and read-only files.

mod support;

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use support::*;

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo(1) runs");
    assert!(status.success());
}

#[test]
fn a_symlinked_filter_is_updated_through_the_link() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.bloom");
    let link = d.path().join("link.bloom");
    let (real_s, link_s) = (real.to_str().unwrap(), link.to_str().unwrap());
    ok(&["create", real_s, "-n", "1000", "-p", "0.01"], b"");
    std::os::unix::fs::symlink("real.bloom", &link).unwrap();
    ok(&["add", link_s, "via-link"], b"");
    ok(&["dedup", "-q", link_s], b"deduped\n");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_all_present(real_s, &["via-link".into(), "deduped".into()]);
    // Replacing it whole (create --force) also goes through the link.
    ok(&["create", link_s, "-n", "10", "-p", "0.1", "--force"], b"");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(ok(&["info", real_s], b"")
        .out
        .contains("capacity:         10\n"));
    // A link to nothing is refused, not turned into a file.
    let dangling = d.path().join("dangling.bloom");
    std::os::unix::fs::symlink("missing.bloom", &dangling).unwrap();
    let r = run(&["add", dangling.to_str().unwrap(), "x"], b"");
    assert_eq!(r.code, 2);
    assert!(!d.path().join("missing.bloom").exists());
}

#[test]
fn mode_and_owner_survive_saves() {
    let (_d, f) = created(
        "private.bloom",
        &["-n", "1000", "-p", "0.01", "--kind", "scalable"],
    );
    let fs = f.as_str();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let owner = if is_root() {
        // Another user's file, as root (CI): the owner must stay.
        std::os::unix::fs::chown(&f, Some(12345), Some(23456)).unwrap();
        (12345, 23456)
    } else {
        let m = std::fs::metadata(&f).unwrap();
        (m.uid(), m.gid())
    };
    ok(&["add", fs, "a", "b"], b"");
    ok(&["dedup", "-q", fs], b"c\n");
    ok(&["create", fs, "-n", "100", "-p", "0.01", "--force"], b"");
    ok(&["add", fs, "d"], b"");
    let m = std::fs::metadata(&f).unwrap();
    assert_eq!(m.permissions().mode() & 0o7777, 0o600);
    assert_eq!((m.uid(), m.gid()), owner);
}

#[test]
fn devices_fifos_and_directories_are_refused_never_replaced() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe.bloom");
    mkfifo(&fifo);
    let fifo_s = fifo.to_str().unwrap();
    let dir_s = d.path().to_str().unwrap();
    for (args, what) in [
        (vec!["add", "/dev/null", "x"], "character device"),
        (vec!["info", "/dev/zero"], "character device"),
        (
            vec!["create", "/dev/null", "-n", "10", "-p", "0.1"],
            "character device",
        ),
        (
            vec!["create", "/dev/null", "-n", "10", "-p", "0.1", "--force"],
            "character device",
        ),
        (vec!["add", fifo_s, "x"], "FIFO"),
        (vec!["check", fifo_s, "x"], "FIFO"),
        (vec!["dedup", fifo_s], "FIFO"),
        (
            vec!["create", fifo_s, "-n", "10", "-p", "0.1", "--force"],
            "FIFO",
        ),
        (vec!["import", fifo_s, "--format", "go", "x.bloom"], "FIFO"),
        (vec!["add", dir_s, "x"], "directory"),
    ] {
        // Nothing may block on the FIFO: these return without anyone writing to it.
        let r = run(&args, b"");
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.err.contains(what), "{args:?}: {}", r.err);
    }
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // --key-file must be a regular file too.
    fails(&["--key-file", fifo_s, "info", "/dev/null"], b"", &["FIFO"]);
}

#[test]
fn export_writes_into_devices_and_pipes_instead_of_replacing_them() {
    let (d, f) = created("g.bloom", &["-n", "100", "-p", "0.01", "--scheme", "go"]);
    let fs = f.as_str();
    ok(&["add", fs, "x"], b"");
    let to_stdout = ok(
        &["export", fs, "--format", "go-json", "-o", "/dev/stdout"],
        b"",
    );
    assert!(to_stdout.out.starts_with('{'), "{}", to_stdout.out);
    ok(&["export", fs, "--format", "go", "-o", "/dev/null"], b"");
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // Through a symbolic link to a regular file: the file is replaced, the link stays.
    let out = d.path().join("out.go");
    std::fs::write(&out, b"old").unwrap();
    let link = d.path().join("out-link.go");
    std::os::unix::fs::symlink(&out, &link).unwrap();
    // An existing file is replaced only with --force (as create, merge and import).
    fails(
        &["export", fs, "--format", "go", "-o", link.to_str().unwrap()],
        b"",
        &["--force"],
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    ok(
        &[
            "export",
            fs,
            "--format",
            "go",
            "-o",
            link.to_str().unwrap(),
            "--force",
        ],
        b"",
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_ne!(std::fs::read(&out).unwrap(), b"old");
    // A directory is refused.
    fails(
        &[
            "export",
            fs,
            "--format",
            "go",
            "-o",
            d.path().to_str().unwrap(),
        ],
        b"",
        &["directory"],
    );
}

#[test]
fn read_only_filters_stay_as_they_are() {
    let (d, f) = created("ro.bloom", &["-n", "1000", "-p", "0.01"]);
    let fs = f.as_str();
    ok(&["add", fs, "before"], b"");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&f).unwrap();
    let other = d.path().join("other.bloom");
    let os = other.to_str().unwrap();
    ok(&["create", os, "-n", "1000", "-p", "0.01"], b"");
    for args in [
        vec!["add", fs, "x"],
        vec!["dedup", fs],
        vec!["create", fs, "-n", "10", "-p", "0.1", "--force"],
        vec!["merge", fs, fs, os],
        vec!["merge", fs, os, os, "--force"],
    ] {
        let r = run(&args, b"y\n");
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.err.contains("read-only"), "{args:?}: {}", r.err);
    }
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // Reading it is fine.
    assert_eq!(run(&["check", fs, "before"], b"").code, 0);
}

#[test]
fn the_next_command_removes_temporary_files_of_dead_processes_only() {
    let d = tempfile::tempdir().unwrap();
    for kind in ["classic", "scalable"] {
        let f = d.path().join(format!("{kind}.bloom"));
        let fs = f.to_str().unwrap();
        ok(
            &["create", fs, "-n", "100", "-p", "0.01", "--kind", kind],
            b"",
        );
        // PIDs never exceed 2^22 on Linux: this one's process is gone. Ours is alive.
        let dead = d.path().join(format!(".{kind}.bloom.999999999-0-0.tmp"));
        let alive = d
            .path()
            .join(format!(".{kind}.bloom.{}-0-0.tmp", std::process::id()));
        std::fs::write(&dead, b"left by a killed save").unwrap();
        std::fs::write(&alive, b"a save in progress").unwrap();
        assert_eq!(run(&["check", fs, "x"], b"").code, 1);
        assert!(!dead.exists(), "{kind}");
        assert!(alive.exists(), "{kind}");
        std::fs::remove_file(&alive).unwrap();
    }
}
