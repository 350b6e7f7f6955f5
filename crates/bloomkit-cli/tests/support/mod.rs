//! Helpers for the tests that run the real binary against real files, processes and signals.

#![allow(dead_code)]

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The `bloomkit` binary built for these tests.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("bloomkit")
}

/// A command for the binary.
pub fn bk(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args);
    c
}

/// What a finished run printed.
pub struct Run {
    /// Exit status (a signal death is a failure of the test).
    pub code: i32,
    /// Standard output.
    pub out: String,
    /// Standard error.
    pub err: String,
}

/// Checks a run that must be refused before it writes anything: exit status 2, `needle` in its
/// error, and no file at `out`.
pub fn refused_writing_nothing(code: i32, err: &str, needle: &str, out: &str) {
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(needle), "{needle:?} not in {err}");
    assert!(!Path::new(out).exists(), "{out} was written: {err}");
}

/// Checks what every run must satisfy: no panic or backtrace, and an error is one line (a
/// usage error is clap's whole message, which starts `error: `).
pub fn clean(code: i32, err: &str) {
    assert!(
        !err.contains("panicked")
            && !err.contains("RUST_BACKTRACE")
            && !err.contains("internal error"),
        "no panic: {err}"
    );
    if code == 2 && !err.starts_with("error: ") {
        assert_eq!(err.trim_end().lines().count(), 1, "one-line error: {err}");
        assert!(err.starts_with("bloomkit: "), "{err}");
    }
}

/// The path of `name` in `dir`, as an argument.
pub fn path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

/// A new temporary directory holding the filter file `name`, made by `bloomkit create` with
/// `args`: the directory (removed when dropped) and the file's path.
pub fn created(name: &str, args: &[&str]) -> (tempfile::TempDir, String) {
    let d = tempfile::tempdir().expect("temp dir");
    let f = path(&d, name);
    ok(&[&["create", f.as_str()], args].concat(), b"");
    (d, f)
}

/// Runs the binary with `stdin` as input; returns (status, standard output, standard error).
pub fn run3(args: &[&str], stdin: impl AsRef<[u8]>) -> (i32, String, String) {
    let r = run(args, stdin.as_ref());
    (r.code, r.out, r.err)
}

/// Runs the binary and expects it to fail (exit status 2) with each of `needles` in its
/// error; returns the error.
pub fn fails(args: &[&str], stdin: impl AsRef<[u8]>, needles: &[&str]) -> String {
    let r = run(args, stdin.as_ref());
    assert_eq!(r.code, 2, "{args:?}: {}", r.err);
    for needle in needles {
        assert!(r.err.contains(needle), "{args:?}: '{needle}' in {}", r.err);
    }
    r.err
}

/// Starts `command` with its standard input, output and error piped; returns it and its
/// standard input.
pub fn spawn_piped(command: &mut Command) -> (Child, ChildStdin) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} starts: {e}"));
    let input = child.stdin.take().unwrap();
    (child, input)
}

/// Runs the binary with `stdin` as input.
pub fn run(args: &[&str], stdin: &[u8]) -> Run {
    run_command(&mut bk(args), stdin)
}

/// Runs `command` (the binary, perhaps through a shell) with `stdin` as input.
pub fn run_command(command: &mut Command, stdin: &[u8]) -> Run {
    let (child, mut input) = spawn_piped(command);
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("runs");
    writer.join().unwrap();
    let (code, err) = exit_and_stderr(&out, &format!("{command:?}"));
    Run {
        code,
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err,
    }
}

/// Runs the binary in `sh -c` under `ulimit ULIMIT` (`-v KIB`: address space; `-d KIB`: heap
/// and other private memory, where a shared file mapping does not count and a loaded copy
/// does), with `stdin` as its input.
pub fn spawn_limited(ulimit: &str, args: &[&str], stdin: Stdio) -> Child {
    let mut script = format!("ulimit {ulimit} && exec '{}'", bin().display());
    for a in args {
        script.push_str(&format!(" '{a}'"));
    }
    Command::new("sh")
        .args(["-c", &script])
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs")
}

/// Waits for a run; returns its exit status and standard error (checked by [`clean`]).
pub fn finished(child: Child) -> (i32, String) {
    exit_and_stderr(&child.wait_with_output().unwrap(), "a limited run")
}

/// The exit status and standard error of the finished run `what`, checked by [`clean`]; a run
/// killed by a signal fails the test.
fn exit_and_stderr(out: &std::process::Output, what: &str) -> (i32, String) {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("{what} killed: {:?} {err}", out.status));
    clean(code, &err);
    (code, err)
}

/// Runs the binary with its heap and other private memory limited to `kib` KiB (`ulimit -d`),
/// with `stdin` as its input.
pub fn data_limited(kib: u32, args: &[&str], stdin: &[u8]) -> (i32, String) {
    let mut child = spawn_limited(&format!("-d {kib}"), args, Stdio::piped());
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    finished(child)
}

/// Runs and expects success.
pub fn ok(args: &[&str], stdin: &[u8]) -> Run {
    let r = run(args, stdin);
    assert_eq!(r.code, 0, "{args:?}: {}", r.err);
    r
}

/// Lines `prefix-0` … as input.
pub fn lines(prefix: &str, range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| format!("{prefix}-{i}")).collect()
}

/// Joins lines into input bytes.
pub fn input(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// Asserts that every line is (probably) present in the filter: `check -v` prints the ones
/// certainly absent, and a Bloom filter never says "absent" for an added element.
pub fn assert_all_present(filter: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let r = run(&["check", "-v", filter], &input(lines));
    assert_eq!(
        r.code,
        1,
        "some lines are missing: {}",
        r.out.lines().take(5).collect::<Vec<_>>().join(", ")
    );
    assert_eq!(r.out, "");
}

/// The temporary files of saves left in `dir`.
pub fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
        .collect()
}

/// Asserts that no save left a temporary file in `dir`.
pub fn assert_no_temp_files(dir: &Path) {
    let left = temp_files(dir);
    assert!(left.is_empty(), "{left:?}");
}

/// A running `bloomkit dedup -q` over a new classic file `seen.bloom` in `dir` (capacity
/// 1000, fpp 0.001), fed and read line by line: the file's path, the process, its standard
/// input and its standard output.
pub fn live_dedup(dir: &Path) -> (String, Child, ChildStdin, BufReader<ChildStdout>) {
    let f = dir.join("seen.bloom").to_string_lossy().into_owned();
    ok(&["create", &f, "-n", "1000", "-p", "0.001"], b"");
    let (mut child, input) = spawn_piped(&mut bk(&["dedup", "--no-progress", &f]));
    let out = BufReader::new(child.stdout.take().unwrap());
    (f, child, input, out)
}

/// A small deterministic generator (xorshift64*), so that "random" points repeat.
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Sends a signal to a child (with kill(1), as a user would).
pub fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill(1) runs");
    assert!(status.success());
}

/// Whether the tests run as root (CI does; chown tests need it).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}
