//! End-to-end interoperability with the real Guava (/usr/share/java/guava.jar, run by Java 17
//! through tests/java/GuavaTool.java): filters written by Guava are read by `bloomkit import`,
//! and filters exported by `bloomkit export` are byte-identical to Guava's and read by it.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::sync::OnceLock;

const GUAVA_JAR: &str = "/usr/share/java/guava.jar";

/// Compiles GuavaTool once per test run; returns the class path to run it with.
fn classpath() -> &'static str {
    static CP: OnceLock<String> = OnceLock::new();
    CP.get_or_init(|| {
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/java/GuavaTool.java");
        let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guava-tool");
        std::fs::create_dir_all(&out_dir).unwrap();
        let status = Process::new("javac")
            .args(["-cp", GUAVA_JAR, "-d"])
            .arg(&out_dir)
            .arg(&src)
            .status()
            .expect("javac runs (Java 17 is a test prerequisite)");
        assert!(status.success(), "javac GuavaTool.java failed");
        format!("{GUAVA_JAR}:{}", out_dir.display())
    })
}

fn java(args: &[&str]) -> String {
    let out = Process::new("java")
        .args(["-cp", classpath(), "GuavaTool"])
        .args(args)
        .output()
        .expect("java runs (Java 17 and Guava are test prerequisites)");
    assert!(
        out.status.success(),
        "java failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn bk(args: &[&str]) -> String {
    let out = Command::cargo_bin("bloomkit")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "bloomkit {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Probes: the inserted items plus many others, so that false positives (if any) must agree
/// too.
fn probes(funnel: &str, inserted: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = inserted.iter().map(|s| s.to_string()).collect();
    for i in 0..300 {
        v.push(match funnel {
            "i32" | "i64" => (i * 7919 - 1000).to_string(),
            _ => format!("probe-{i}-é"),
        });
    }
    v
}

#[test]
fn guava_written_filters_answer_the_same_in_bloomkit_and_export_byte_identical() {
    assert!(Path::new(GUAVA_JAR).exists(), "Guava jar missing");
    let d = tempfile::tempdir().unwrap();
    // A filter sized for 10 elements gets 40 more: it is crowded, so false positives occur
    // and must match Guava's too.
    for (funnel, mut inserted) in [
        ("utf8", vec!["alice", "bob", "carol", "dave", "é中😀"]),
        ("utf16le", vec!["alice", "bob", "é中😀"]),
        ("i32", vec!["0", "-1", "42", "2147483647"]),
        ("i64", vec!["0", "-9223372036854775808", "1234567890123"]),
    ] {
        let extra: Vec<String> = (0..40).map(|i| (i * 31 + 7).to_string()).collect();
        let extra: Vec<&str> = extra.iter().map(|s| s.as_str()).collect();
        inserted.extend(extra.iter().copied());
        let stream = d.path().join(format!("{funnel}.guava"));
        let mut args = vec!["write", stream.to_str().unwrap(), funnel, "10", "0.3"];
        args.extend(inserted.iter().copied());
        java(&args);

        // Guava -> bloomkit: import, then the same answers for every probe.
        let filter = s(&d.path().join(format!("{funnel}.bloom")));
        bk(&["import", &s(&stream), "--format", "guava", &filter]);
        let probes = probes(funnel, &inserted);
        let probe_refs: Vec<&str> = probes.iter().map(|s| s.as_str()).collect();
        let mut read_args = vec!["read", stream.to_str().unwrap(), funnel];
        read_args.extend(probe_refs.iter().copied());
        let guava_says = java(&read_args);
        let mut check = vec!["check", &*filter, "--items", funnel];
        check.extend(probe_refs.iter().copied());
        let bloomkit_says = bk(&check);
        assert_eq!(bloomkit_says, guava_says, "funnel {funnel}");
        for item in &inserted {
            assert!(guava_says.lines().any(|l| l == *item));
        }
        let positives = guava_says.lines().count();
        assert!(
            positives > inserted.len() && positives < probes.len(),
            "the crowded filter has false positives to compare ({funnel})"
        );

        // bloomkit -> Guava: create with --scheme guava, add the same items, export: the
        // stream is byte-identical to Guava's own.
        let own = s(&d.path().join(format!("{funnel}-own.bloom")));
        bk(&[
            "create", &own, "-n", "10", "-p", "0.3", "--scheme", "guava", "-q",
        ]);
        let mut add = vec!["add", &*own, "--items", funnel, "-q"];
        add.extend(inserted.iter().copied());
        bk(&add);
        let exported = d.path().join(format!("{funnel}-own.guava"));
        bk(&[
            "export",
            &own,
            "--format",
            "guava",
            "-o",
            &s(&exported),
            "-q",
        ]);
        assert_eq!(
            std::fs::read(&exported).unwrap(),
            std::fs::read(&stream).unwrap(),
            "export is byte-identical to Guava's writeTo ({funnel})"
        );
    }
}

/// No recorded golden stream is needed here: the real jar is run. This
/// test checks the 32-bit strategy, which Guava no longer lets callers choose, through
/// bloomkit alone: a guava32 export reads back with the same answers.
#[test]
fn guava32_export_round_trips() {
    let d = tempfile::tempdir().unwrap();
    let f = s(&d.path().join("g32.bloom"));
    bk(&[
        "create", &f, "-n", "50", "-p", "0.05", "--scheme", "guava32", "-q",
    ]);
    bk(&["add", &f, "a", "b", "c", "-q"]);
    let out = s(&d.path().join("g32.guava"));
    bk(&["export", &f, "--format", "guava32", "-o", &out, "-q"]);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes[0], 0, "strategy ordinal 0 = MURMUR128_MITZ_32");
    let back = s(&d.path().join("back.bloom"));
    bk(&["import", &out, "--format", "guava32", &back, "-q"]);
    let probes: Vec<String> = (0..200).map(|i| format!("x{i}")).collect();
    let mut a = vec!["check", &*f];
    a.extend(probes.iter().map(|s| s.as_str()));
    let mut b = vec!["check", &*back];
    b.extend(probes.iter().map(|s| s.as_str()));
    assert_eq!(bk(&a), bk(&b));
    // The wrong Guava strategy is refused with a pointer to the right one.
    let out = Command::cargo_bin("bloomkit")
        .unwrap()
        .args(["export", &f, "--format", "guava", "-o", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scheme guava"));
    // So is importing a stream with the other strategy's format, which named it wrongly.
    let wrong = s(&d.path().join("wrong.bloom"));
    let out_path = s(&d.path().join("g32.guava"));
    let out = Command::cargo_bin("bloomkit")
        .unwrap()
        .args(["import", &out_path, "--format", "guava", &wrong])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a guava filter: its strategy is guava32's (give --format guava32)"),
        "{err}"
    );
    assert!(!d.path().join("wrong.bloom").exists());
}
