//! End-to-end tests of the habits grep, xargs and find taught shell users, run on the real
//! `bloomkit` binary: `-q`, `-f FILE`, `-` for standard input, `-0`, `--json` summaries,
//! over-capacity warnings, clap's whole usage messages, closed pipes, numbers and paths in the
//! user's terms, format detection, the progress bar and one man page per command.

mod support;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use tempfile::TempDir;

fn bk() -> Command {
    Command::cargo_bin("bloomkit").expect("the bloomkit binary is built")
}

use support::{bin, fails, path as p, run3 as run, spawn_piped};

fn ok(args: &[&str], stdin: impl AsRef<[u8]>) -> (String, String) {
    let (code, out, err) = run(args, stdin);
    assert_eq!(code, 0, "{args:?}: {err}");
    (out, err)
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The counts a JSON summary gives for `fields`.
fn counts<const N: usize>(v: &Value, fields: [&str; N]) -> [Option<u64>; N] {
    fields.map(|f| v[f].as_u64())
}

/// A filter for 1000 elements at 1%.
fn filter(d: &TempDir, name: &str) -> String {
    let f = p(d, name);
    ok(&["create", &f, "-n", "1000", "-p", "0.01", "-q"], "");
    f
}

#[test]
fn quiet_is_grep_q_exit_status_only() {
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d, "f.bloom");
    // -q prints nothing at all, not even the summary.
    assert_eq!(
        run(&["add", "-q", &f, "alice"], ""),
        (0, "".into(), "".into())
    );
    assert_eq!(
        run(&["check", "-q", &f, "alice"], ""),
        (0, "".into(), "".into())
    );
    assert_eq!(
        run(&["check", "-q", &f, "nobody"], ""),
        (1, "".into(), "".into())
    );
    // Stops at the first match, as grep -q does: an endless input after a match ends it.
    let (mut child, mut stdin) =
        spawn_piped(std::process::Command::new(bin()).args(["check", "-q", &f]));
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(b"nobody\nalice\n");
        // Keep the pipe open: only the match can end the command.
        loop {
            if stdin.write_all(b"more\n").is_err() {
                break;
            }
        }
    });
    let status = child.wait().unwrap();
    writer.join().unwrap();
    assert_eq!(status.code(), Some(0));
    // --no-progress is its own flag and keeps the output.
    let (out, err) = ok(&["check", "--no-progress", &f, "alice", "nobody"], "");
    assert_eq!((out.as_str(), err.as_str()), ("alice\n", ""));
}

#[test]
fn items_come_from_files_stdin_dash_and_nul_separated_input() {
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d, "f.bloom");
    let (a, b) = (p(&d, "a.txt"), p(&d, "b.txt"));
    std::fs::write(&a, "from-a-1\nfrom-a-2\n").unwrap();
    std::fs::write(&b, "from-b\n\n").unwrap();
    // -f twice, and '-' as an argument is standard input.
    let (_, err) = ok(&["add", &f, "-f", &a, "-f", &b], "");
    assert!(err.contains("added 4 items"), "{err}");
    let (_, err) = ok(&["add", &f, "arg-1", "-", "arg-2"], "from-stdin\n");
    assert!(err.contains("added 3 items"), "{err}");
    let (out, _) = ok(
        &["check", &f, "-f", "-"],
        "from-a-1\nfrom-b\nfrom-stdin\narg-2\nnever\n",
    );
    assert_eq!(out, "from-a-1\nfrom-b\nfrom-stdin\narg-2\n");
    // The empty line of b.txt was an element; --skip-empty skips it.
    assert_eq!(run(&["check", "-c", &f, "-f", &b], "").1, "2\n");
    assert_eq!(
        run(&["check", "-c", &f, "--skip-empty", "-f", &b], "").1,
        "1\n"
    );
    // -0: NUL-separated items (a newline is part of an item), printed NUL-terminated.
    ok(&["add", &f, "-0"], b"with\nnewline\0plain\0");
    let (out, _) = ok(&["check", &f, "-0"], b"plain\0with\nnewline\0absent\0");
    assert_eq!(out, "plain\0with\nnewline\0");
    // find -print0 | bloomkit add -0.
    let pics = d.path().join("pics");
    std::fs::create_dir(&pics).unwrap();
    std::fs::write(pics.join("x.jpg"), "").unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; find pics -name '*.jpg' -print0 | '{}' add -0 '{f}' && '{}' check '{f}' pics/x.jpg",
            bin().display(),
            bin().display()
        ))
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, b"pics/x.jpg\n");
    // A bad line is named with its file; a missing -f file fails before anything is added.
    let bad = p(&d, "bad.txt");
    std::fs::write(&bad, "1\nx\n").unwrap();
    fails(
        &["add", &f, "--items", "i64", "-f", &bad],
        "",
        &[&format!("line 2 of {bad}: 'x'")],
    );
    fails(
        &["add", &f, "new-item", "-f", &p(&d, "missing.txt")],
        "",
        &["missing.txt: no such file"],
    );
    assert_eq!(
        run(&["check", &f, "new-item"], "").0,
        1,
        "nothing was added"
    );
    // An argument that names a file is an item, with a note pointing at -f.
    let (_, err) = ok(&["add", &f, &a], "");
    assert!(err.contains(&format!("use -f {a}")), "{err}");
}

#[test]
fn json_summaries_for_every_command() {
    let d = tempfile::tempdir().unwrap();
    let f = p(&d, "f.bloom");
    let (out, _) = ok(&["create", &f, "-n", "1000", "-p", "0.01", "--json"], "");
    let v = json(&out);
    assert_eq!(
        (v["command"].as_str(), v["filter"]["capacity"].as_u64()),
        (Some("create"), Some(1000))
    );
    let (out, err) = ok(&["add", &f, "--json", "a", "b", "a"], "");
    assert_eq!(err, "", "the sentence is replaced by the JSON");
    let v = json(&out);
    assert_eq!(
        counts(&v, ["items", "new", "present"]),
        [Some(3), Some(2), Some(1)]
    );
    assert_eq!(v["filter"]["estimated_items"], 2);
    assert_eq!(v["filter"]["over_capacity"], false);
    assert_eq!(v["filter"]["saturated"], false);
    let (out, _) = ok(&["check", &f, "--json", "a", "zz"], "");
    let v = json(&out);
    assert_eq!(
        counts(&v, ["items", "present", "absent"]),
        [Some(2), Some(1), Some(1)]
    );
    // dedup: the lines on standard output, the JSON on standard error.
    let (out, err) = ok(&["dedup", &f, "--json"], "a\nc\nc\n");
    assert_eq!(out, "c\n");
    let v = json(&err);
    assert_eq!(
        counts(&v, ["items", "new", "dropped"]),
        [Some(3), Some(1), Some(2)]
    );
    let g = filter(&d, "g.bloom");
    let m = p(&d, "m.bloom");
    let (out, _) = ok(&["merge", &m, &f, &g, "--json"], "");
    let v = json(&out);
    assert_eq!(v["command"], "merge");
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2);
    assert_eq!(v["filter"]["estimated_items"], 3);
    let c = p(&d, "c.bloom");
    ok(
        &[
            "create", &c, "-n", "100", "-p", "0.01", "--kind", "counting", "-q",
        ],
        "",
    );
    ok(&["add", &c, "x", "y", "-q"], "");
    let (out, _) = ok(&["remove", &c, "x", "--json"], "");
    let v = json(&out);
    assert_eq!(
        (v["removed"].as_u64(), v["filter"]["kind"].as_str()),
        (Some(1), Some("counting"))
    );
    let (out, _) = ok(&["calc", "-n", "1e6", "-p", "0.01", "--json"], "");
    let v = json(&out);
    assert!(v["rows"].as_array().unwrap().len() >= 5, "{v}");
    assert_eq!(v["rows"][0]["kind"], "classic");
    let (out, _) = ok(&["calc", "-m", "8Mi", "-n", "1e6", "--json"], "");
    assert_eq!(json(&out)["bits"], 8 << 20);
}

#[test]
fn over_capacity_and_saturation_are_warned_and_null_in_json() {
    let d = tempfile::tempdir().unwrap();
    let f = p(&d, "small.bloom");
    ok(&["create", &f, "-n", "100", "-p", "0.01", "-q"], "");
    let within: String = (0..50).map(|i| format!("w{i}\n")).collect();
    let (_, err) = ok(&["add", &f], within);
    assert!(!err.contains("warning"), "{err}");
    let over: String = (0..300).map(|i| format!("o{i}\n")).collect();
    let (_, err) = ok(&["add", &f], over);
    assert!(
        err.contains("warning") && err.contains("more than its capacity of 100"),
        "{err}"
    );
    assert!(err.contains("more than twice its target 0.01"), "{err}");
    let (out, _) = ok(&["info", &f, "--json"], "");
    let v = json(&out);
    assert_eq!(
        (v["over_capacity"].as_bool(), v["saturated"].as_bool()),
        (Some(true), Some(false))
    );
    // 5000 elements in a filter for 100: every bit set, the count cannot be estimated.
    let many: String = (0..5000).map(|i| format!("m{i}\n")).collect();
    let (out, err) = ok(&["add", &f, "--json"], many);
    assert!(err.contains("saturated"), "{err}");
    let v = json(&out);
    assert_eq!(v["filter"]["estimated_items"], Value::Null);
    assert_eq!(v["filter"]["saturated"], true);
    let (out, _) = ok(&["info", &f], "");
    assert!(out.contains("saturated"), "{out}");
    // -q: no warning either.
    assert_eq!(run(&["add", "-q", &f, "z"], "").2, "");
    // A scalable filter grows past its initial capacity: no warning.
    let s = p(&d, "s.bloom");
    ok(
        &[
            "create", &s, "-n", "100", "-p", "0.01", "--kind", "scalable", "-q",
        ],
        "",
    );
    let (_, err) = ok(
        &["add", &s],
        (0..1000).map(|i| format!("{i}\n")).collect::<String>(),
    );
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn usage_errors_keep_clap_s_whole_message() {
    fails(&["chek"], "", &["'check'", "Usage:"]);
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d, "f.bloom");
    fails(
        &["merge", &f, "b.bloom"],
        "",
        &["merge needs the output filter and at least two input filters"],
    );
    fails(&["calc", "--hashes"], "", &["--hashes <K>", "--help"]);
}

#[test]
fn export_writes_to_stdout_without_o_and_replaces_only_with_force() {
    let d = tempfile::tempdir().unwrap();
    let f = p(&d, "g.bloom");
    ok(
        &[
            "create", &f, "-n", "100", "-p", "0.01", "--scheme", "guava", "-q",
        ],
        "",
    );
    ok(&["add", &f, "a", "-q"], "");
    let out = bk()
        .args(["export", &f, "--format", "guava"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        out.stdout.len(),
        6 + 8 * 15,
        "Guava's stream on standard output"
    );
    let o = p(&d, "out.guava");
    std::fs::write(&o, "precious").unwrap();
    fails(
        &["export", &f, "--format", "guava", "-o", &o],
        "",
        &["--force"],
    );
    assert_eq!(std::fs::read(&o).unwrap(), b"precious");
    ok(
        &["export", &f, "--format", "guava", "-o", &o, "--force"],
        "",
    );
    assert_eq!(std::fs::read(&o).unwrap(), out.stdout);
}

/// Runs a bash pipeline with `bloomkit` on the PATH; returns (bloomkit's status, stdout,
/// stderr).
fn pipeline(script: &str, dir: &Path) -> (i32, String, String) {
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("{script}; exit ${{PIPESTATUS[0]}}"))
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let d = tempfile::tempdir().unwrap();
    let big: String = (0..300_000).map(|i| format!("line-{i}\n")).collect();
    std::fs::write(d.path().join("big.txt"), &big).unwrap();
    for script in [
        "bloomkit man | head -1",
        "bloomkit man --help | head -1",
        "bloomkit completions bash | head -1",
        "bloomkit calc -n 1e6 -p 0.01 | head -c 10",
        "bloomkit --help | head -1",
    ] {
        let (code, _, err) = pipeline(script, d.path());
        assert_eq!((code, err.as_str()), (0, ""), "{script}");
    }
    let (code, _, err) = pipeline("bloomkit calc -n 1e6 -p 0.01 | grep -q bits", d.path());
    assert_eq!((code, err.as_str()), (0, ""));
    // dedup into a closed pipe: quiet, and what it printed (and processed) is saved.
    for kind in ["classic", "scalable"] {
        let f = format!("{kind}.bloom");
        let (code, out, err) = pipeline(
            &format!("bloomkit dedup {f} -n 1e6 -p 0.01 --kind {kind} < big.txt | head -1"),
            d.path(),
        );
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (0, "line-0\n", ""),
            "{kind}"
        );
        let (code, out, _) = pipeline(&format!("bloomkit check {f} line-0"), d.path());
        assert_eq!((code, out.as_str()), (0, "line-0\n"), "{kind}");
    }
}

#[test]
fn numbers_are_explained_in_the_user_s_terms() {
    let d = tempfile::tempdir().unwrap();
    let f = p(&d, "f.bloom");
    let cases: [(&str, &str); 5] = [
        ("-5", "negative"),
        ("1e99", "too large"),
        ("0", "at least 1"),
        ("1.5", "not a whole number"),
        ("ten", "not a number"),
    ];
    for (n, says) in cases {
        let (code, _, err) = run(&["create", &f, "--capacity", n, "-p", "0.01"], "");
        assert_eq!(code, 2, "{n}");
        assert!(err.contains(says), "{n}: {err}");
    }
    // Larger than this machine's memory: refused before allocating, in human units, with
    // what to do instead.
    fails(
        &["create", &f, "-n", "1e12", "-p", "0.01"],
        "",
        &["TiB of memory", "--kind scalable", "Redis"],
    );
    let (code, _, err) = run(
        &[
            "create", &f, "-n", "1e11", "-p", "0.001", "--kind", "blocked",
        ],
        "",
    );
    assert_eq!(code, 2, "a 190 GiB filter: {err}");
    assert!(
        err.contains("GiB of memory") && err.contains("a blocked filter"),
        "{err}"
    );
    assert!(!Path::new(&f).exists());
}

#[test]
fn paths_and_formats_are_named_as_the_user_gave_them() {
    let d = tempfile::tempdir().unwrap();
    let sub = p(&d, "sub");
    std::fs::create_dir(&sub).unwrap();
    fails(
        &["create", &sub, "-n", "10", "-p", "0.1"],
        "",
        &["it is a directory"],
    );
    fails(&["info", &sub], "", &["is a directory"]);
    let missing = p(&d, "no/such/dir/f.bloom");
    let (code, _, err) = run(&["create", &missing, "-n", "10", "-p", "0.1"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("the directory")
            && err.contains("no/such/dir does not exist")
            && !err.contains(".f.bloom"),
        "{err}"
    );
    let six = p(&d, "six");
    std::fs::write(&six, "abcdef").unwrap();
    let (code, _, err) = run(&["check", &six, "x"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("six: not a bloomkit filter file (6 bytes"),
        "{err}"
    );

    // Guava, Go and Go JSON files, recognised by their shape.
    let g = p(&d, "g.bloom");
    ok(
        &[
            "create", &g, "-n", "100", "-p", "0.01", "--scheme", "guava", "-q",
        ],
        "",
    );
    ok(&["add", &g, "alice", "-q"], "");
    let go = p(&d, "go.bloom");
    ok(
        &[
            "create", &go, "-n", "100", "-p", "0.01", "--scheme", "go", "-q",
        ],
        "",
    );
    ok(&["add", &go, "bob", "-q"], "");
    let exports = [
        (&g, "guava", "alice"),
        (&go, "go", "bob"),
        (&go, "go-json", "bob"),
    ];
    for (src, format, member) in exports {
        let file = p(&d, &format!("x.{format}"));
        ok(&["export", src, "--format", format, "-o", &file, "-q"], "");
        let back = p(&d, &format!("back-{format}.bloom"));
        let (_, err) = ok(&["import", &file, &back], "");
        assert!(err.contains(&format!("({format})")), "{err}");
        assert_eq!(ok(&["check", &back, member], "").0, format!("{member}\n"));
        // Opened as a filter, it says what it looks like.
        fails(&["info", &file], "", &["it looks like", "bloomkit import"]);
    }
    // The wrong --format says what the file looks like.
    let j = p(&d, "x.go-json");
    fails(
        &["import", &j, "--format", "guava", &p(&d, "y.bloom")],
        "",
        &["not a guava filter", "--format go-json"],
    );
    fails(
        &["import", &six, &p(&d, "y.bloom")],
        "",
        &["look like no format"],
    );
    fails(
        &["import", &g, &p(&d, "y.bloom")],
        "",
        &["a bloomkit filter file already"],
    );
}

#[test]
fn the_default_kind_is_blocked_and_classic_for_other_libraries_schemes() {
    let d = tempfile::tempdir().unwrap();
    let kind = |extra: &[&str]| {
        let f = p(&d, "k.bloom");
        let mut args = vec![
            "create",
            f.as_str(),
            "-n",
            "1000",
            "-p",
            "0.01",
            "--force",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&ok(&args, "").0)["filter"]["kind"].clone()
    };
    assert_eq!(kind(&[]), "blocked");
    assert_eq!(kind(&["--scheme", "guava"]), "classic");
    assert_eq!(kind(&["--kind", "classic"]), "classic");
    // dedup creates the same default.
    let f = p(&d, "dedup.bloom");
    ok(&["dedup", &f, "-n", "1000", "-p", "0.01", "-q"], "a\n");
    assert_eq!(json(&ok(&["info", &f, "--json"], "").0)["kind"], "blocked");
}

#[test]
fn messages_count_in_singular_and_plural() {
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d, "f.bloom");
    let (_, err) = ok(&["add", &f, "one"], "");
    assert!(err.starts_with("added 1 item to"), "{err}");
    let g = filter(&d, "g.bloom");
    let (_, err) = ok(&["merge", &p(&d, "m.bloom"), &f, &g], "");
    assert!(err.ends_with("about 1 item\n"), "{err}");
}

#[test]
fn one_man_page_per_command() {
    let d = tempfile::tempdir().unwrap();
    let dir = p(&d, "man1");
    std::fs::create_dir(&dir).unwrap();
    ok(&["man", "--dir", &dir], "");
    let main = std::fs::read_to_string(Path::new(&dir).join("bloomkit.1")).unwrap();
    // Every page the main one refers to exists.
    let mut referred = 0;
    for word in main.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\\')) {
        let word = word.replace('\\', "");
        if let Some(cmd) = word.strip_prefix("bloomkit-") {
            if !cmd.is_empty() {
                referred += 1;
                let page = Path::new(&dir).join(format!("bloomkit-{cmd}.1"));
                assert!(
                    page.exists(),
                    "{} is referred to but missing",
                    page.display()
                );
            }
        }
    }
    assert!(referred >= 10, "{main}");
    let check = std::fs::read_to_string(Path::new(&dir).join("bloomkit-check.1")).unwrap();
    assert!(
        check.contains("count") && check.contains("EXAMPLES"),
        "{check}"
    );
    let (out, _) = ok(&["man", "check"], "");
    assert_eq!(out, check);
    fails(&["man", "nope"], "", &["no command 'nope'"]);
}

#[test]
fn the_progress_bar_shows_lines_per_second_on_a_terminal_only() {
    let d = tempfile::tempdir().unwrap();
    let f = filter(&d, "f.bloom");
    // `script` gives the command a terminal; the input pauses so that the bar (shown after
    // a second) appears.
    let under_tty = |extra: &str| {
        let cmd = format!(
            "(seq 1 20000; sleep 1.5; seq 20001 40000) | '{}' add '{f}' {extra}",
            bin().display()
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .expect("script (util-linux) runs");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = under_tty("");
    assert!(shown.contains("lines/s"), "{shown}");
    assert!(!shown.contains("B/s"), "no byte rates: {shown}");
    assert!(!under_tty("--no-progress").contains("lines/s"));
    assert!(!under_tty("-q").contains("lines/s"));
}
