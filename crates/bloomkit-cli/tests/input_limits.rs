//! Bounded input: endless or huge input is a clear error (exit 2, one line, no abort), in
//! bounded memory.

mod support;

use std::io::Write;
use std::process::Stdio;
use support::*;

/// Memory limit for the runs below: 256 MiB of address space (`ulimit -v`, in KiB).
const LIMIT_KIB: u32 = 256 * 1024;

/// Runs the binary under the memory limit, with `stdin` as its input.
fn limited(args: &[&str], stdin: Stdio) -> std::process::Child {
    spawn_limited(&format!("-v {LIMIT_KIB}"), args, stdin)
}

fn filter(d: &tempfile::TempDir) -> String {
    let f = d.path().join("f.bloom").to_string_lossy().into_owned();
    ok(
        &[
            "create", &f, "-n", "1000", "-p", "0.01", "--kind", "counting",
        ],
        b"",
    );
    f
}

#[test]
fn dev_zero_as_input_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d);
    let before = std::fs::read(&f).unwrap();
    for cmd in ["add", "check", "dedup", "remove"] {
        let zero = std::fs::File::open("/dev/zero").unwrap();
        let (code, err) = finished(limited(&[cmd, &f], Stdio::from(zero)));
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(
            err.contains("line 1 is longer than the maximum line length, 1048576 bytes"),
            "{cmd}: {err}"
        );
    }
    assert_eq!(std::fs::read(&f).unwrap(), before);
}

/// Runs `import - <args…> out` with `head` then endless zero bytes on its standard input, fed
/// by this test until the process stops reading; the exit status, standard error and how many
/// bytes it had read at most (the bytes written before the pipe closed).
fn import_endless(args: &[&str], head: &[u8]) -> (i32, String, u64) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x.bloom").to_string_lossy().into_owned();
    let mut all = vec!["import", "-"];
    all.extend_from_slice(args);
    all.push(&out);
    let mut child = limited(&all, Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let zeros = vec![0u8; 1 << 16];
    let mut written = 0u64;
    if stdin.write_all(head).is_ok() {
        written += head.len() as u64;
        // 8 GB: far more than the 256 MiB the process may hold.
        while written < 8 << 30 && stdin.write_all(&zeros).is_ok() {
            written += zeros.len() as u64;
        }
    }
    drop(stdin);
    let (code, err) = finished(child);
    assert!(!d.path().join("x.bloom").exists(), "{err}");
    (code, err, written)
}

#[test]
fn an_endless_import_stops_after_the_header_it_starts_with() {
    // Zeros are no Guava header: refused after the first bytes.
    let (code, err, written) = import_endless(&["--format", "guava"], b"");
    assert_eq!(code, 2);
    assert!(err.starts_with("bloomkit: standard input: "), "{err}");
    assert!(written < 64 << 20, "read {written} bytes of zeros");
    // A Guava header of 1,000 words, then endless zeros: read to the header's 8,006 bytes
    // and one more, then refused, with or without --format.
    let mut guava = vec![1u8, 7];
    guava.extend_from_slice(&1000i32.to_be_bytes());
    for args in [&["--format", "guava"][..], &[]] {
        let (code, err, written) = import_endless(args, &guava);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            err.contains("standard input: more bytes follow the 8006 that its header describes"),
            "{args:?}: {err}"
        );
        assert!(written < 64 << 20, "{args:?}: read {written} bytes");
    }
}

#[test]
fn an_import_file_is_read_no_further_than_its_header_describes() {
    // A Guava header of 1,000 words, then 64 MiB of zeros: the process reads 8,007 bytes, so
    // it fits in a 4 MiB heap (`ulimit -d`), where reading the file whole could not.
    let d = tempfile::tempdir().unwrap();
    let long = d.path().join("long.guava");
    let mut head = vec![1u8, 7];
    head.extend_from_slice(&1000i32.to_be_bytes());
    let mut f = std::fs::File::create(&long).unwrap();
    f.write_all(&head).unwrap();
    f.set_len(64 << 20).unwrap();
    let long = long.to_string_lossy().into_owned();
    let out = d.path().join("x.bloom").to_string_lossy().into_owned();
    let (code, err) = data_limited(4096, &["import", &long, &out], b"");
    refused_writing_nothing(
        code,
        &err,
        "long.guava: more bytes follow the 8006 that its header describes",
        &out,
    );
    // Zeros are no header at all: refused on their first 24 bytes.
    let zeros = d.path().join("zeros.bin");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let zeros = zeros.to_string_lossy().into_owned();
    let (code, err) = data_limited(4096, &["import", &zeros, &out], b"");
    refused_writing_nothing(
        code,
        &err,
        "zeros.bin: its first 24 bytes look like no format bloomkit reads",
        &out,
    );
}

#[test]
fn an_import_whose_header_describes_more_than_the_memory_is_refused_before_reading_it() {
    // A Go header that claims 2^40 bits (128 GiB of words), with 1 MiB of memory available.
    let mut go = Vec::new();
    for v in [1u64 << 40, 7, 1 << 40] {
        go.extend_from_slice(&v.to_be_bytes());
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x.bloom").to_string_lossy().into_owned();
    let r = run_command(
        bk(&["import", "-", "--format", "go", &out]).env("BLOOMKIT_MEM_AVAILABLE", "1048576"),
        &go,
    );
    assert_eq!(r.code, 2);
    assert!(
        r.err.contains("its header describes a filter of 137438953496 bytes, more than this machine has available"),
        "{}",
        r.err
    );
}

#[test]
fn an_endless_json_import_is_a_clear_error() {
    // JSON has no header that gives its length: read up to what the memory allows.
    let (code, err, _) = import_endless(&["--format", "go-json"], b"{\"m\": ");
    assert_eq!(code, 2);
    assert!(err.contains("too large to hold in memory"), "{err}");
}

#[test]
fn dev_zero_as_a_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    for args in [
        vec!["add", "/dev/zero", "x"],
        vec!["info", "/dev/zero"],
        vec!["import", "/dev/zero", "--format", "guava", "x.bloom"],
        vec!["--key-file", "/dev/zero", "info", "x.bloom"],
    ] {
        let (code, err) = finished(limited(&args, Stdio::null()));
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("character device"), "{args:?}: {err}");
    }
    drop(d);
}

#[test]
fn a_10_gb_line_from_a_generator_is_a_clear_error() {
    // The test itself is the generator: it writes one 10 GB line (no newline) until the
    // process stops reading, which must be after about --max-line-length bytes.
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d);
    let mut child = limited(&["add", &f, "--max-line-length", "65536"], Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut written: u64 = 0;
    while written < 10_000_000_000 {
        if stdin.write_all(&chunk).is_err() {
            break; // it stopped reading
        }
        written += chunk.len() as u64;
    }
    drop(stdin);
    assert!(written < 10_000_000_000, "the line was read whole");
    let (code, err) = finished(child);
    assert_eq!(code, 2);
    assert!(
        err.contains("line 1 is longer than the maximum line length, 65536 bytes (raise it with --max-line-length)"),
        "{err}"
    );
}

#[test]
fn max_line_length_is_configurable_and_names_the_line() {
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d);
    let long = format!("short\n{}\n", "y".repeat(101));
    fails(
        &["add", &f, "--max-line-length", "100"],
        long.as_bytes(),
        &[
            "line 2 is longer than the maximum line length, 100 bytes",
            "nothing was saved",
        ],
    );
    ok(&["add", &f, "--max-line-length", "101"], long.as_bytes());
    let r = run(&["add", &f, "--max-line-length", "0"], b"");
    assert_eq!(r.code, 2);
    fails(
        &["add", &f, &"z".repeat(300), "--max-line-length", "200"],
        b"",
        &["argument 1 is longer"],
    );
}

#[test]
fn classic_files_are_mapped_not_loaded() {
    // A 96 MB classic file, used by check, info, add and dedup with 48 MiB of private memory:
    // possible only because the file is mapped, never copied. The same limit refuses to load a
    // smaller scalable file (loaded whole), which shows that the limit bites.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("big.bloom").to_string_lossy().into_owned();
    ok(&["create", &f, "-n", "8e7", "-p", "0.01", "-q"], b"");
    assert!(std::fs::metadata(&f).unwrap().len() > 90_000_000);
    const LIMIT: u32 = 48 * 1024;
    assert_eq!(data_limited(LIMIT, &["add", "-q", &f, "a", "b"], b"").0, 0);
    assert_eq!(data_limited(LIMIT, &["dedup", "-q", &f], b"a\nc\n").0, 0);
    assert_eq!(
        data_limited(LIMIT, &["check", "-q", &f, "a", "c"], b"").0,
        0
    );
    assert_eq!(data_limited(LIMIT, &["info", &f], b"").0, 0);
    let s = d.path().join("s.bloom").to_string_lossy().into_owned();
    ok(
        &[
            "create", &s, "-n", "6e7", "-p", "0.01", "-q", "--kind", "scalable",
        ],
        b"",
    );
    assert!(std::fs::metadata(&s).unwrap().len() > 60_000_000);
    let (code, err) = data_limited(LIMIT, &["info", &s], b"");
    assert_eq!(code, 2, "{err}");
}

/// Runs the binary as if the machine had `bytes` of memory available
/// (`BLOOMKIT_MEM_AVAILABLE`, which stands for `MemAvailable`).
fn with_memory(bytes: u64, args: &[&str]) -> Run {
    let out = bk(args)
        .env("BLOOMKIT_MEM_AVAILABLE", bytes.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (code, err) = (
        out.status.code().expect("exit status"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    clean(code, &err);
    Run {
        code,
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err,
    }
}

/// A file of a kind that is loaded whole (counting) and larger than the memory the machine has
/// available is refused before it is read, naming the file and both sizes, by the commands that
/// read it (`info`, `check`) and by those that change it (`add`), and nothing is changed; with
/// a little more memory it is loaded. A file used in place (classic) is not refused; `create`
/// refuses a filter larger than the memory available before allocating it.
#[test]
fn a_file_larger_than_available_memory_is_refused_before_loading() {
    let d = tempfile::tempdir().unwrap();
    let path = |name: &str| d.path().join(name).to_string_lossy().into_owned();
    let (counting, classic) = (path("counting.bloom"), path("classic.bloom"));
    ok(
        &[
            "create", &counting, "-n", "1e5", "-p", "0.01", "--kind", "counting", "-q",
        ],
        b"",
    );
    ok(
        &[
            "create", &classic, "-n", "1e5", "-p", "0.01", "--kind", "classic", "-q",
        ],
        b"",
    );
    let size = std::fs::metadata(&counting).unwrap().len();
    let before = std::fs::read(&counting).unwrap();
    // With memory enough: info succeeds, check finds nothing (exit 1), add adds.
    for (args, code) in [
        (vec!["info", &counting], 0),
        (vec!["check", &counting, "x"], 1),
        (vec!["add", &counting, "x"], 0),
    ] {
        let r = with_memory(size - 1, &args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            r.err
                .contains(&format!("{counting}: loading this filter needs"))
                && r.err.contains("more than this machine has available")
                && r.err.contains("use it on a machine with more memory"),
            "{args:?}: {}",
            r.err
        );
        assert_eq!(with_memory(size + 4096, &args).code, code, "{args:?}");
    }
    assert_ne!(
        std::fs::read(&counting).unwrap(),
        before,
        "the add with memory enough"
    );
    for args in [vec!["info", &classic], vec!["add", &classic, "x"]] {
        let r = with_memory(1000, &args);
        assert_eq!(r.code, 0, "mapped, not loaded: {}", r.err);
    }
    let r = with_memory(
        1 << 20,
        &["create", &path("big.bloom"), "-n", "1e6", "-p", "0.01"],
    );
    assert!(
        r.code == 2
            && r.err
                .contains("more than this machine has available (1.0 MiB)"),
        "{}",
        r.err
    );
    assert!(!std::path::Path::new(&path("big.bloom")).exists());
    let r = with_memory(0, &["info", &counting]);
    assert_eq!(r.code, 2);
    let r = run(&["info", &counting], b"");
    assert_eq!(r.code, 0, "the machine's own MemAvailable: {}", r.err);
    let bad = bk(&["info", &counting])
        .env("BLOOMKIT_MEM_AVAILABLE", "lots")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("BLOOMKIT_MEM_AVAILABLE: 'lots' is not a number"));
}
