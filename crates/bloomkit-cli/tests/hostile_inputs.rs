//! Hostile paths and outputs: a standard output that cannot be written (`> /dev/full`),
//! symbolic link loops, files whose size lies (`/proc`), files cut between header and body or
//! growing while they are read, and imports larger than the memory available. Each is a clear
//! one-line error (exit status 2) that never hangs, panics or loses a saved element.

mod support;

use std::process::{Command, Stdio};
use support::*;

/// Runs the binary with standard output on `/dev/full` (every write fails with ENOSPC).
fn to_dev_full(args: &[&str], stdin: &[u8]) -> (i32, String) {
    use std::io::Write;
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut child = bk(args)
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    finished(child)
}

#[test]
fn a_standard_output_that_cannot_be_written_is_a_clear_error() {
    let (_d, f) = created("g.bloom", &["-n", "1000", "-p", "0.01", "--scheme", "go"]);
    ok(&["add", &f, "x"], b"");
    let d = tempfile::tempdir().unwrap();
    let new = path(&d, "new.bloom");
    for (args, stdin) in [
        (vec!["info", f.as_str()], &b""[..]),
        (vec!["check", f.as_str(), "x"], b""),
        (vec!["check", f.as_str()], b"x\n"),
        (vec!["calc", "-n", "1000", "-p", "0.01"], b""),
        (vec!["sort-unique"], b"3\n1\n"),
        (vec!["singles"], b"3\n1\n"),
        (vec!["export", f.as_str(), "--format", "go-json"], b""),
        (vec!["man", "add"], b""),
        (vec!["completions", "bash"], b""),
        (vec!["dedup", f.as_str()], b"fresh\n"),
    ] {
        let (code, err) = to_dev_full(&args, stdin);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("writing standard output: No space left on device"),
            "{args:?}: {err}"
        );
    }
    // A summary that cannot be printed after the work is done says so.
    let (code, err) = to_dev_full(&["--json", "create", &new, "-n", "10", "-p", "0.1"], b"");
    assert_eq!(code, 2);
    assert!(
        err.contains("the command itself completed, but not the printing of its summary"),
        "{err}"
    );
    assert_eq!(run(&["info", &new], b"").code, 0, "created");
    let (code, err) = to_dev_full(&["--json", "add", &f, "summarised"], b"");
    assert!(
        code == 2 && err.contains("the command itself completed"),
        "{err}"
    );
    assert_all_present(&f, &["summarised".into()]);
}

/// dedup saves a chunk before printing its new lines: when printing fails, the message says
/// that they were saved (they were), not that the file is unchanged.
#[test]
fn dedup_to_a_full_output_says_its_lines_were_saved() {
    let (_d, f) = created(
        "s.bloom",
        &["-n", "1000", "-p", "0.01", "--kind", "scalable"],
    );
    let items = lines("l", 0..5);
    let (code, err) = to_dev_full(&["dedup", &f], &input(&items));
    assert_eq!(code, 2);
    assert!(
        err.contains("5 new lines saved, not all of them printed")
            && err.contains("writing standard output")
            && err.contains("the 5 items before it were saved")
            && !err.contains("unchanged"),
        "{err}"
    );
    assert_all_present(&f, &items);
}

#[test]
fn symbolic_link_loops_are_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("b.bloom", d.path().join("a.bloom")).unwrap();
    std::os::unix::fs::symlink("a.bloom", d.path().join("b.bloom")).unwrap();
    let a = path(&d, "a.bloom");
    let (_e, good) = created("good.bloom", &["-n", "100", "-p", "0.01", "--scheme", "go"]);
    for args in [
        vec!["info", a.as_str()],
        vec!["check", a.as_str(), "x"],
        vec!["add", a.as_str(), "x"],
        vec!["dedup", a.as_str()],
        vec!["create", a.as_str(), "-n", "10", "-p", "0.1"],
        vec!["create", a.as_str(), "-n", "10", "-p", "0.1", "--force"],
        vec!["import", a.as_str(), "--format", "go", "x.bloom"],
        vec!["export", good.as_str(), "--format", "go", "-o", a.as_str()],
        vec!["check", "-f", a.as_str(), good.as_str()],
        vec!["sort-unique", a.as_str()],
    ] {
        let r = run(&args, b"");
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(
            r.err.contains("Too many levels of symbolic links") && r.err.contains("a.bloom"),
            "{args:?}: {}",
            r.err
        );
    }
    assert!(std::fs::symlink_metadata(d.path().join("a.bloom"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// `/proc` files say they are empty and are not: as a filter, such a file is refused; as a
/// source of items, it is read to its real end.
#[test]
fn files_whose_size_lies_are_refused_as_filters_and_read_whole_as_items() {
    for args in [
        vec!["info", "/proc/self/status"],
        vec!["check", "/proc/self/status", "x"],
        vec![
            "import",
            "/proc/self/status",
            "--format",
            "guava",
            "x.bloom",
        ],
    ] {
        let r = run(&args, b"");
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.err.contains("/proc/self/status"), "{}", r.err);
    }
    let r = run(&["add", "/proc/self/status", "x"], b"");
    assert_eq!(r.code, 2, "never written");
    let (_d, f) = created("items.bloom", &["-n", "1000", "-p", "0.01"]);
    ok(&["add", "-q", &f, "-f", "/proc/self/status"], b"");
    // The last lines of the file (well past its declared size of 0) are in the filter.
    let r = run(&["check", &f], b"Name:\tbloomkit\n");
    assert_eq!(r.code, 0, "{}", r.err);
}

/// A file cut after its header (a copy interrupted, a disk that filled) is refused as
/// truncated, by every command, and left as it is.
#[test]
fn a_file_cut_between_header_and_body_is_refused_and_kept() {
    for kind in ["blocked", "classic", "scalable", "counting"] {
        let (_d, f) = created("cut.bloom", &["-n", "1000", "-p", "0.01", "--kind", kind]);
        let bytes = std::fs::read(&f).unwrap();
        std::fs::write(&f, &bytes[..200]).unwrap();
        for args in [
            vec!["info", f.as_str()],
            vec!["check", f.as_str(), "x"],
            vec!["add", f.as_str(), "x"],
            vec!["dedup", f.as_str()],
        ] {
            let r = run(&args, b"y\n");
            assert_eq!(r.code, 2, "{kind} {args:?}");
            assert!(r.err.contains("truncated"), "{kind} {args:?}: {}", r.err);
        }
        assert_eq!(std::fs::read(&f).unwrap(), &bytes[..200], "{kind}");
    }
}

/// Another process appends to a filter file without end: reads stop at the size the file had
/// when they began, so they end (with a clear error: the file is not a filter any more).
#[test]
fn a_file_that_grows_while_it_is_read_does_not_hang_anything() {
    for kind in ["classic", "scalable"] {
        let (_d, f) = created(
            "growing.bloom",
            &["-n", "1000", "-p", "0.01", "--kind", kind],
        );
        let size = std::fs::metadata(&f).unwrap().len();
        let _writer = Killed(
            Command::new("sh")
                .args([
                    "-c",
                    &format!("while :; do head -c 65536 /dev/zero || exit; done >> '{f}'"),
                ])
                .spawn()
                .unwrap(),
        );
        while std::fs::metadata(&f).unwrap().len() == size {
            std::thread::yield_now();
        }
        for args in [
            vec!["info", f.as_str()],
            vec!["check", f.as_str(), "x"],
            vec!["add", f.as_str(), "x"],
        ] {
            let r = run(&args, b"");
            assert_eq!(r.code, 2, "{kind} {args:?}");
        }
    }
}

/// A child process killed when dropped (also when the test fails).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An import is read into memory whole: a file or an input larger than the memory available
/// is refused (before reading, for a file; after its header, for standard input) instead of
/// filling the machine's memory.
#[test]
fn imports_larger_than_the_memory_available_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("big.guava");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    let out = path(&d, "x.bloom");
    let limited = |args: &[&str], stdin: Stdio| {
        let o = bk(args)
            .env("BLOOMKIT_MEM_AVAILABLE", "1000000")
            .stdin(stdin)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        clean(o.status.code().unwrap(), &err);
        (o.status.code().unwrap(), err)
    };
    let (code, err) = limited(
        &["import", big.to_str().unwrap(), "--format", "guava", &out],
        Stdio::null(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("big.guava: loading this filter needs 2.0 MiB of memory, more than this machine has available"),
        "{err}"
    );
    // A Guava header of 262,143 words (2 MiB), then endless zeros.
    let mut head = vec![1u8, 7];
    head.extend_from_slice(&((2 << 20) / 8 - 1i32).to_be_bytes());
    let mut stream = std::process::Command::new("sh")
        .args(["-c", "printf \"$1\"; exec cat /dev/zero", "sh"])
        .arg(
            head.iter()
                .map(|b| format!("\\{b:03o}"))
                .collect::<String>(),
        )
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, err) = limited(
        &["import", "-", "--format", "guava", &out],
        Stdio::from(stream.stdout.take().unwrap()),
    );
    let _ = stream.kill();
    let _ = stream.wait();
    refused_writing_nothing(
        code,
        &err,
        "standard input: its header describes a filter of 2097150 bytes, more than this machine has available",
        &out,
    );
}

/// A file name holding a newline and terminal escape sequences (anyone may name a file the
/// user is then given): every message that names it shows it quoted and escaped, so it can
/// neither forge a line of output nor drive the terminal, and the file still works.
#[test]
fn a_file_name_with_control_characters_never_reaches_the_terminal_raw() {
    let d = tempfile::tempdir().unwrap();
    let evil = path(&d, "x\nbloomkit: ok\u{1b}[2J\u{1b}]0;title\u{7}.bloom");
    let is_raw =
        |s: &str| s.contains('\u{1b}') || s.contains('\u{7}') || s.contains("\nbloomkit: ok");
    let mut outputs = Vec::new();
    let r = ok(&["create", &evil, "-n", "1000", "-p", "0.01"], b"");
    outputs.push(r.err.clone());
    assert!(r.err.contains(r#"x\nbloomkit: ok\u{1b}[2J"#), "{}", r.err);
    for args in [
        vec!["add", evil.as_str(), "a"],
        vec!["info", evil.as_str()],
        vec!["check", evil.as_str(), "a"],
    ] {
        let r = ok(&args, b"");
        outputs.extend([r.out, r.err]);
    }
    assert_eq!(
        ok(&["check", &evil, "a", "b"], b"").out,
        "a\n",
        "it still answers"
    );
    // Errors that name it: a missing sibling, and a directory in its place.
    let missing = format!("{evil}.missing");
    let r = run(&["info", &missing], b"");
    assert_eq!(r.code, 2);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    outputs.push(r.err);
    std::fs::create_dir(format!("{evil}.dir")).unwrap();
    let r = run(&["add", &format!("{evil}.dir"), "a"], b"");
    assert_eq!(r.code, 2);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    outputs.push(r.err);
    for o in &outputs {
        assert!(!is_raw(o), "raw control characters in {o:?}");
    }
}

/// An argument clap refuses is echoed in its message ("unexpected argument '...'"): a carriage
/// return, a bell or an escape sequence in it is shown escaped, never written raw, and the exit
/// status is clap's 2. An ordinary usage error keeps clap's own message.
#[test]
fn a_refused_argument_with_control_characters_is_echoed_escaped() {
    let r = run(&["add", "--a\rb\u{7}c\u{1b}]0;title\u{7}d", "f.bloom"], b"");
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        !r.err.chars().any(|c| c.is_control() && c != '\n'),
        "raw control characters in {:?}",
        r.err
    );
    assert!(
        r.err
            .contains(r"unexpected argument '--a\rb\u{7}c\u{1b}]0;title\u{7}d'"),
        "{}",
        r.err
    );
    let r = run(&["add", "--bogus", "f.bloom"], b"");
    assert_eq!(r.code, 2);
    assert!(
        r.err
            .starts_with("error: unexpected argument '--bogus' found"),
        "{}",
        r.err
    );
    assert!(r.err.contains("Usage: bloomkit add"), "{}", r.err);
}

/// The hint of a missing filter is a command that can be pasted into a shell as it is: the
/// path is quoted for the shell where it needs it, so running the hint creates exactly the
/// file that was asked for.
#[test]
fn the_create_hint_for_a_missing_file_runs_as_pasted() {
    let d = tempfile::tempdir().unwrap();
    for name in [
        "plain.bloom",
        "my seen.bloom",
        "it's.bloom",
        "x\nok\u{1b}[2J\u{7}.bloom",
    ] {
        let file = path(&d, name);
        let r = run(&["info", &file], b"");
        assert_eq!(r.code, 2, "{}", r.err);
        assert!(!r.err.contains('\u{1b}'), "{:?}", r.err);
        let hint = r
            .err
            .split("create it with: ")
            .nth(1)
            .and_then(|h| h.trim_end().strip_suffix(')'))
            .unwrap_or_else(|| panic!("no hint in {:?}", r.err));
        let command = hint
            .replacen("bloomkit ", &format!("'{}' ", bin().display()), 1)
            .replace("--capacity N --fpp P", "--capacity 100 --fpp 0.01");
        let status = Command::new("bash")
            .args(["-c", &command])
            .status()
            .expect("bash");
        assert!(status.success(), "{command}");
        assert!(
            std::path::Path::new(&file).is_file(),
            "{name:?} from {hint}"
        );
        ok(&["add", &file, "a"], b"");
    }
}

/// Another process truncates a filter file while a command has it mapped: the next probe of a
/// page past the new end faults (SIGBUS). The command ends with a one-line error naming the
/// file and exit status 2, not a "Bus error" crash: reading (`check`) and writing in place
/// (`dedup`, `add`).
#[test]
fn a_mapped_file_cut_short_by_another_process_ends_with_a_clear_error() {
    use std::io::{BufRead, Write};
    for command in ["dedup", "add", "check"] {
        let d = tempfile::tempdir().unwrap();
        let f = path(&d, "cut.bloom");
        ok(&["create", &f, "-n", "1000000", "-p", "0.01"], b"");
        let mut args = vec![command, "--no-progress", f.as_str()];
        if command != "dedup" {
            args.push("-");
        }
        let (mut child, mut input) = spawn_piped(&mut bk(&args));
        if command == "dedup" {
            // Wait until it has the file open and answered once.
            input.write_all(b"first\n").unwrap();
            input.flush().unwrap();
            let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            assert_eq!(line, "first\n");
        } else {
            // It maps the file before it reads its first line.
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .unwrap()
            .set_len(0)
            .unwrap();
        let lines: String = (0..10_000).map(|i| format!("item-{i}\n")).collect();
        let _ = input.write_all(lines.as_bytes());
        drop(input);
        let (code, err) = finished(child);
        assert_eq!(code, 2, "{command}: {err}");
        assert!(
            err.contains("cut.bloom: the mapped filter file was cut short while in use"),
            "{command}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{command}: {err}");
    }
}
