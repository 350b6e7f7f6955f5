//! End-to-end tests: the real `bloomkit` binary, run as a user would.

mod support;

use assert_cmd::Command;
use std::path::Path;
use tempfile::TempDir;

fn bk() -> Command {
    Command::cargo_bin("bloomkit").expect("the bloomkit binary is built")
}

fn dir() -> TempDir {
    tempfile::tempdir().expect("temp dir")
}

use support::{fails, path as p, run3 as run};

fn create(path: &str, extra: &[&str]) {
    let mut args = vec!["create", path, "--capacity", "1000", "--fpp", "0.01"];
    args.extend_from_slice(extra);
    let (code, _, err) = run(&args, "");
    assert_eq!(code, 0, "{err}");
}

/// Runs the binary with `args` and no input, and expects success.
fn succeeds(args: &[&str]) {
    bk().args(args).assert().success();
}

/// Adds the lines of `items` to `filter` (`add -q`).
fn add_quietly(filter: &str, items: String) {
    bk().args(["add", filter, "-q"])
        .write_stdin(items)
        .assert()
        .success();
}

/// What `info --json` says of `filter`.
fn info_json(filter: &str) -> serde_json::Value {
    let (code, out, err) = run(&["info", filter, "--json"], "");
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// A new temporary directory holding the filter `name` made as [`create`] makes it.
fn new_filter(name: &str, extra: &[&str]) -> (TempDir, String) {
    let d = dir();
    let f = p(&d, name);
    create(&f, extra);
    (d, f)
}

#[test]
fn create_refuses_to_overwrite_without_force() {
    let (_d, f) = new_filter("a.bloom", &[]);
    let before = std::fs::read(&f).unwrap();
    succeeds(&["add", &f, "x"]);
    fails(&["create", &f, "-n", "10", "-p", "0.1"], "", &["--force"]);
    assert_ne!(
        std::fs::read(&f).unwrap(),
        before,
        "the add above changed it"
    );
    let (code, _, _) = run(&["create", &f, "-n", "1000", "-p", "1%", "--force"], "");
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&f).unwrap(), before, "an empty filter again");
}

#[test]
fn create_needs_valid_sizing() {
    let d = dir();
    let f = p(&d, "a.bloom");
    for args in [
        vec!["create", &f, "--capacity", "10"],
        vec!["create", &f, "-n", "10", "-p", "1.5"],
        vec!["create", &f, "-n", "ten", "-p", "0.1"],
    ] {
        let (code, _, err) = run(&args, "");
        assert_eq!(code, 2, "{args:?}: {err}");
    }
    assert!(!Path::new(&f).exists());
    fails(
        &[
            "create", &f, "-n", "10", "-p", "0.1", "--kind", "scalable", "--scheme", "guava",
        ],
        "",
        &["scalable"],
    );
}

#[test]
fn add_then_check_with_grep_exit_codes() {
    let (d, f) = new_filter("a.bloom", &[]);
    let (code, _, err) = run(&["add", &f], "alice\nbob\nalice\n");
    assert_eq!(code, 0);
    assert!(err.contains("3 items") && err.contains("2 new"), "{err}");

    let (code, out, _) = run(&["check", &f, "alice", "zed-not-there", "bob"], "");
    assert_eq!((code, out.as_str()), (0, "alice\nbob\n"));
    let (code, out, _) = run(&["check", &f], "nope-1\nnope-2\n");
    assert_eq!((code, out.as_str()), (1, ""));
    let (code, out, _) = run(&["check", "-v", &f], "alice\nnope-1\n");
    assert_eq!((code, out.as_str()), (0, "nope-1\n"));
    let (code, out, _) = run(&["check", "-c", &f], "alice\nbob\nnope\n");
    assert_eq!((code, out.as_str()), (0, "2\n"));
    let (code, out, _) = run(&["check", "-c", &f, "nope"], "");
    assert_eq!((code, out.as_str()), (1, "0\n"));
    fails(
        &["check", &p(&d, "missing.bloom"), "x"],
        "",
        &["missing.bloom", "create"],
    );
}

#[test]
fn a_bad_line_names_its_number_and_changes_nothing() {
    let (d, f) = new_filter("ids.bloom", &[]);
    succeeds(&["add", &f, "--items", "i64", "5"]);
    let before = std::fs::read(&f).unwrap();
    fails(
        &["add", &f, "--items", "i64"],
        "1\n2\nthree\n4\n",
        &["line 3", "three"],
    );
    assert_eq!(std::fs::read(&f).unwrap(), before, "file untouched");
    let (_, out, _) = run(&["check", &f, "--items", "i64", "-c"], "1\n2\n5\n");
    assert_eq!(out, "1\n", "only the earlier 5 is there");
    // No temporary file is left behind either.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn item_formats_are_distinct_encodings() {
    let (_d, f) = new_filter("a.bloom", &[]);
    succeeds(&["add", &f, "--items", "hex", "00ff"]);
    succeeds(&["add", &f, "--items", "i32", "42"]);
    succeeds(&["add", &f, "--items", "utf16le", "hé"]);
    let check = |fmt: &str, item: &str| run(&["check", &f, "--items", fmt, item], "").0;
    assert_eq!(check("hex", "00FF"), 0);
    assert_eq!(check("i32", "42"), 0);
    assert_eq!(check("i64", "42"), 1, "i64 42 is 8 bytes, not 4");
    assert_eq!(check("utf16le", "hé"), 0);
    assert_eq!(check("utf8", "hé"), 1);
    // 42 as i32 is the bytes 2a 00 00 00.
    assert_eq!(check("hex", "2a000000"), 0);
    fails(&["check", &f, "--items", "hex", "abc"], "", &["argument 1"]);
}

#[test]
fn dedup_drops_repeats_across_runs_and_creates_when_sized() {
    let d = dir();
    let f = p(&d, "seen.bloom");
    fails(&["dedup", &f], "a\n", &["--capacity"]);
    let (code, out, err) = run(
        &["dedup", &f, "-n", "1000", "-p", "0.001"],
        "a\nb\na\nc\nb\n",
    );
    assert_eq!((code, out.as_str()), (0, "a\nb\nc\n"), "{err}");
    assert!(
        err.contains("5 lines read") && err.contains("3 new"),
        "{err}"
    );
    let (_, out, _) = run(&["dedup", &f], "c\nd\na\ne\n");
    assert_eq!(out, "d\ne\n");
    // -q: nothing printed, the new lines are added all the same.
    let (code, out, err) = run(&["dedup", &f, "-q"], "f\na\n");
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let (_, out, _) = run(&["check", &f, "-c"], "a\nb\nc\nd\ne\nf\n");
    assert_eq!(out, "6\n");
}

/// The CLI sizes filters as asked: 5000 elements at p = 1%, then 20000 other elements tested.
/// The filter's expected FPR is at most 1%, so false positives ~ Binomial(20000, 0.01): mean
/// <= 200, sd <= 14.1. The bound 200 + 6 sd = 285 fails by chance with probability < 1e-8,
/// while a filter built with too few bits (for example sized for 500 elements) far exceeds it.
#[test]
fn dedup_and_check_respect_the_fpr() {
    let d = dir();
    let f = p(&d, "fpr.bloom");
    let inserted: String = (0..5000).map(|i| format!("member-{i}\n")).collect();
    let (_, out, _) = run(&["dedup", &f, "-n", "5000", "-p", "0.01"], &inserted);
    assert!(
        out.lines().count() >= 4990,
        "few inserts look like duplicates"
    );
    let others: String = (0..20000).map(|i| format!("other-{i}\n")).collect();
    let (_, out, _) = run(&["check", "-c", &f], &others);
    let fp: u32 = out.trim().parse().unwrap();
    assert!(fp <= 285, "{fp} false positives out of 20000");
    let (_, out, _) = run(&["check", "-c", &f], &inserted);
    assert_eq!(out, "5000\n", "no false negatives");
}

#[test]
fn remove_works_on_counting_filters_only() {
    let (d, c) = new_filter("c.bloom", &["--kind", "counting"]);
    succeeds(&["add", &c, "s-1", "s-2"]);
    let (code, _, _) = run(&["remove", &c], "s-1\n");
    assert_eq!(code, 0);
    assert_eq!(run(&["check", &c, "s-1"], "").0, 1);
    assert_eq!(run(&["check", &c, "s-2"], "").0, 0);
    // Removing something certainly absent fails and changes nothing (s-2 stays).
    let before = std::fs::read(&c).unwrap();
    fails(
        &["remove", &c, "s-2", "never-added"],
        "",
        &["argument 2", "never-added"],
    );
    assert_eq!(std::fs::read(&c).unwrap(), before);

    let blocked = p(&d, "k.bloom");
    create(&blocked, &[]);
    fails(&["remove", &blocked, "x"], "", &["only counting filters"]);
}

#[test]
fn info_reports_exactly_the_documented_fields() {
    let (d, f) = new_filter("a.bloom", &["--kind", "classic"]);
    let items: String = (0..500).map(|i| format!("{i}\n")).collect();
    add_quietly(&f, items);
    let v = info_json(&f);
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|s| s.as_str()).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "bits",
            "bytes",
            "capacity",
            "estimated_fpp",
            "estimated_items",
            "fill_ratio",
            "fpp",
            "hashes",
            "kind",
            "over_capacity",
            "saturated",
            "scheme"
        ]
    );
    assert_eq!(v["kind"], "classic");
    assert_eq!(v["scheme"], "default");
    assert_eq!(v["capacity"], 1000);
    assert_eq!(v["fpp"], 0.01);
    assert_eq!(v["bytes"], v["bits"].as_u64().unwrap() / 8);
    // The estimate (Swamidass-Baldi) is within a few percent of 500 at this load.
    let est = v["estimated_items"].as_u64().unwrap();
    assert!((480..=520).contains(&est), "{est}");
    let fill = v["fill_ratio"].as_f64().unwrap();
    assert!(fill > 0.2 && fill < 0.4, "{fill}");
    let (_, text, _) = run(&["info", &f], "");
    assert!(
        text.contains("kind:") && text.contains("estimated fpp:"),
        "{text}"
    );

    let s = p(&d, "s.bloom");
    create(&s, &["--kind", "scalable", "-n", "100", "--force"]);
    let many: String = (0..1000).map(|i| format!("{i}\n")).collect();
    add_quietly(&s, many);
    let v = info_json(&s);
    assert_eq!(v["kind"], "scalable");
    assert!(v["layers"].as_array().unwrap().len() >= 3, "{v}");
}

#[test]
fn merge_and_intersect() {
    let d = dir();
    let (a, b, out) = (p(&d, "a.bloom"), p(&d, "b.bloom"), p(&d, "u.bloom"));
    create(&a, &[]);
    create(&b, &[]);
    succeeds(&["add", &a, "x", "both"]);
    succeeds(&["add", &b, "y", "both"]);
    assert_eq!(run(&["merge", &out, &a, &b], "").0, 0);
    let (_, got, _) = run(&["check", &out, "x", "y", "both"], "");
    assert_eq!(got, "x\ny\nboth\n");
    // OUT exists and is not an input: needs --force.
    assert_eq!(run(&["merge", &out, &a, &b], "").0, 2);
    let i = p(&d, "i.bloom");
    assert_eq!(run(&["intersect", &i, &a, &b], "").0, 0);
    let (_, got, _) = run(&["check", &i, "both"], "");
    assert_eq!(got, "both\n");
    // Merging into one of the inputs is allowed.
    assert_eq!(run(&["merge", &a, &a, &b], "").0, 0);
    assert_eq!(run(&["check", &a, "y"], "").0, 0);

    let other = p(&d, "o.bloom");
    succeeds(&["create", &other, "-n", "5000", "-p", "0.01"]);
    let g = p(&d, "g.bloom");
    create(&g, &["--scheme", "guava"]);
    let c = p(&d, "c.bloom");
    create(&c, &["--kind", "counting"]);
    let z = p(&d, "z.bloom");
    for (op, other, says) in [
        ("merge", &other, &["incompatible", "bits"][..]),
        ("intersect", &g, &["incompatible"]),
        ("merge", &c, &["blocked vs counting"]),
    ] {
        fails(&[op, &z, &a, other], "", says);
    }
    assert!(!Path::new(&z).exists());
}

#[test]
fn calc_from_each_sufficient_subset() {
    let (code, out, _) = run(&["calc", "--capacity", "1e6", "--fpp", "0.01"], "");
    assert_eq!(code, 0);
    for kind in [
        "classic", "blocked", "counting", "scalable", "guava", "go", "redisson",
    ] {
        assert!(out.contains(kind), "{out}");
    }
    // The blocked row is what `create --kind blocked` makes: the library's default layout.
    let (blocks, layout) = bloomkit::probe::blocked::default_params(1_000_000, 0.01).unwrap();
    let row = out.lines().find(|l| l.starts_with("blocked")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[2], (blocks * 512).to_string(), "{row}");
    assert_eq!(cells[5], layout.hashes().to_string(), "{row}");
    // Guava's sizing for (1e6, 1%) is 9585059 bits rounded up to words, k = 7.
    assert!(
        out.contains(&(9585059u64.div_ceil(64) * 64).to_string()),
        "{out}"
    );

    let (_, out, _) = run(&["calc", "--bits", "9600", "--capacity", "1000"], "");
    assert!(out.contains("hashes (k):     7"), "{out}");
    let (_, out, _) = run(&["calc", "--bits", "9600", "--fpp", "0.01"], "");
    let n: u64 = field(&out, "capacity (n):");
    assert_eq!(n, bloomkit::math::max_capacity(9600, 7, 0.01).unwrap());
    // Too few bits for one element at the rate: an error, not a capacity of 0 that "meets" it.
    fails(
        &["calc", "-m", "64", "-p", "1e-30"],
        "",
        &["64 bits hold no element at FPR 1.000e-30 with 100 hash functions; one element needs"],
    );
    let (_, out, _) = run(&["calc", "-m", "64", "-p", "0.5"], "");
    assert_eq!(field::<u64>(&out, "capacity (n):"), 44);
    let (_, out, _) = run(&["calc", "-n", "1000", "-p", "0.01", "-k", "3"], "");
    let m: u64 = field(&out, "bits (m):");
    assert!(bloomkit::math::expected_fpp(m, 3, 1000) <= 0.01);
    assert!(bloomkit::math::expected_fpp(m - 1, 3, 1000) > 0.01);

    fails(&["calc", "--hashes", "3"], "", &["two of"]);
    fails(
        &["calc", "--bits", "0", "-n", "10"],
        "",
        &["at least 1 bit"],
    );
    // Sizes near the top of 64 bits: the 4-bit counting size is computed, not overflowed.
    let (code, out, err) = run(&["calc", "--bits", "5e18", "-n", "1"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2220.4 PiB with 4-bit counters"), "{out}");
    let (code, _, err) = run(&["calc", "--bits", "18446744073709551615", "-n", "1e6"], "");
    assert_eq!(code, 0, "{err}");
    // A rate some kinds cannot reach: their rows say why, the others are still given.
    let (code, out, err) = run(&["calc", "-n", "1", "-p", "1e-300"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("classic   default"), "{out}");
    assert!(
        out.contains("blocked   (none: ") && out.contains("dleft     (none: "),
        "{out}"
    );
    let (_, json, _) = run(&["calc", "-n", "1", "-p", "1e-300", "--json"], "");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["unattainable"][0]["kind"], "blocked", "{json}");
}

fn field<T: std::str::FromStr>(out: &str, name: &str) -> T {
    out.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {out}"))
}

#[test]
fn calc_plots_an_svg_with_the_filters_point() {
    let (d, f) = new_filter("a.bloom", &["--kind", "classic"]);
    succeeds(&["add", &f, "a", "b", "c"]);
    let svg = d.path().join("fpr.svg");
    let svg_s = svg.to_string_lossy().into_owned();
    let (code, out, err) = run(
        &[
            "calc", "-n", "1000", "-p", "0.01", "--plot", &svg_s, "--filter", &f,
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("about 3 items"), "{out}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(text.contains("<path d=\"M"), "a curve");
    assert_eq!(
        text.matches("<circle").count(),
        2,
        "design point and the filter's point"
    );
    assert!(text.contains("a.bloom: now"));
    // Parameters can come from the filter alone.
    let (code, out, _) = run(&["calc", "--filter", &f], "");
    assert_eq!(code, 0);
    assert!(out.contains("bits (m):       9600"), "{out}");
    // With other -n/-p, the plot is still the filter's own curve, with its point on it.
    let (code, _, err) = run(
        &[
            "calc", "-n", "1e6", "-p", "0.001", "--plot", &svg_s, "--filter", &f,
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("m = 9600 bits") && text.contains("design: n = 1000"),
        "{text}"
    );
    // A blocked filter's FPR is its layout's (higher than the classic formula's at its m, k).
    let b = p(&d, "b.bloom");
    create(&b, &[]);
    let (_, out, _) = run(&["calc", "--filter", &b], "");
    assert!(
        out.contains("(blocked layout)") && out.contains("meets target:   yes"),
        "{out}"
    );
    fails(
        &["calc", "-n", "10", "-p", "0.1", "--plot", &p(&d, "x.png")],
        "",
        &[".svg"],
    );
}

#[test]
fn go_export_import_round_trip() {
    let d = dir();
    let f = p(&d, "go.bloom");
    succeeds(&["create", &f, "-n", "100", "-p", "0.03", "--scheme", "go"]);
    succeeds(&["add", &f, "hello"]);
    for (fmt, name) in [("go", "f.bin"), ("go-json", "f.json")] {
        let out = p(&d, name);
        assert_eq!(run(&["export", &f, "--format", fmt, "-o", &out], "").0, 0);
        let back = p(&d, &format!("{name}.bloom"));
        assert_eq!(run(&["import", &out, "--format", fmt, &back], "").0, 0);
        let (_, info, _) = run(&["info", &back, "--json"], "");
        let v: serde_json::Value = serde_json::from_str(&info).unwrap();
        // Go's EstimateParameters(100, 0.03) = (730, 6).
        assert_eq!(
            (v["bits"].as_u64(), v["hashes"].as_u64()),
            (Some(730), Some(6))
        );
        assert_eq!(v["scheme"], "go");
        assert_eq!(run(&["check", &back, "hello"], "").0, 0);
    }
    let json = std::fs::read_to_string(p(&d, "f.json")).unwrap();
    assert!(json.starts_with("{\"m\":730,\"k\":6,\"b\":\""), "{json}");
    // Not over the filter's own file, even with --force and another spelling of its path.
    let before = std::fs::read(&f).unwrap();
    let again = format!("{}/./go.bloom", d.path().display());
    fails(
        &["export", &f, "--format", "go", "-o", &again, "--force"],
        "",
        &["it is the filter being exported"],
    );
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // A filter with bloomkit's scheme cannot pretend to be Go's.
    let own = p(&d, "own.bloom");
    create(&own, &["--kind", "classic"]);
    fails(
        &["export", &own, "--format", "go", "-o", &p(&d, "x")],
        "",
        &["--scheme go"],
    );
    // Garbage is refused with a typed, one-line error.
    std::fs::write(p(&d, "junk"), b"\x00\x00\x00\x00\x00\x00\x00\x05xx").unwrap();
    let (code, _, err) = run(
        &[
            "import",
            &p(&d, "junk"),
            "--format",
            "go",
            &p(&d, "j.bloom"),
        ],
        "",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("truncated") || err.contains("corrupt"),
        "{err}"
    );
}

#[test]
fn corrupt_filter_file_is_a_clear_error() {
    let (_d, f) = new_filter("a.bloom", &[]);
    let mut bytes = std::fs::read(&f).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&f, &bytes).unwrap();
    fails(&["check", &f, "x"], "", &["a.bloom", "checksum"]);
    std::fs::write(&f, b"hello").unwrap();
    fails(&["info", &f], "", &["a.bloom"]);
}

#[test]
fn keyed_filters_need_their_key() {
    let d = dir();
    let key = d.path().join("key");
    std::fs::write(&key, "000102030405060708090a0b0c0d0e0f\n").unwrap();
    let key_s = key.to_string_lossy().into_owned();
    let f = p(&d, "k.bloom");
    assert_eq!(
        run(
            &[
                "create",
                &f,
                "-n",
                "100",
                "-p",
                "0.01",
                "--key-file",
                &key_s
            ],
            ""
        )
        .0,
        0
    );
    assert_eq!(run(&["add", &f, "x", "--key-file", &key_s], "").0, 0);
    assert_eq!(run(&["check", &f, "x", "--key-file", &key_s], "").0, 0);
    fails(&["check", &f, "x"], "", &["--key-file"]);
    // Another key: the message does not ask for the key as if none had been given.
    let other = d.path().join("other-key");
    std::fs::write(&other, "ff0102030405060708090a0b0c0d0e0f\n").unwrap();
    fails(
        &["info", &f, "--key-file", other.to_str().unwrap()],
        "",
        &["no key given matches the one it was made with"],
    );
    let (_, out, _) = run(&["info", &f, "--key-file", &key_s], "");
    assert!(out.contains("siphash"), "{out}");
}

#[test]
fn help_completions_and_man_page() {
    let (code, out, _) = run(&["--help"], "");
    assert_eq!(code, 0);
    for cmd in [
        "create",
        "add",
        "check",
        "dedup",
        "remove",
        "info",
        "merge",
        "intersect",
        "calc",
        "export",
        "import",
        "completions",
        "man",
    ] {
        assert!(out.contains(cmd), "{cmd} in --help");
        let (code, help, _) = run(&[cmd, "--help"], "");
        assert_eq!(code, 0);
        assert!(help.contains("EXAMPLES:"), "{cmd} --help has examples");
    }
    let (_, bash, _) = run(&["completions", "bash"], "");
    assert!(bash.contains("_bloomkit()") && bash.contains("dedup"));
    let (_, zsh, _) = run(&["completions", "zsh"], "");
    assert!(zsh.starts_with("#compdef bloomkit"));
    let (_, man, _) = run(&["man"], "");
    assert!(man.contains(".TH bloomkit") && man.contains("dedup"));
    // A usage error is exit status 2 too.
    assert_eq!(
        bk().arg("frobnicate").output().unwrap().status.code(),
        Some(2)
    );
}

#[test]
fn check_stops_quietly_when_the_reader_goes_away() {
    // `bloomkit check ... | head -1`: stdout closes early; no error message, no panic.
    let (_d, f) = new_filter("a.bloom", &["-n", "100000", "--force"]);
    let items: String = (0..100_000).map(|i| format!("{i}\n")).collect();
    add_quietly(&f, items.clone());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bloomkit"))
        .args(["check", &f])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(items.as_bytes());
    });
    drop(child.stdout.take()); // the reader goes away at once
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_bad_line_in_a_later_batch_keeps_exactly_what_was_saved_before_it() {
    // Batches hold 4096 lines: the bad line is in the third.
    let mut input: String = (0..10_000).map(|i| format!("{i}\n")).collect();
    input.insert_str(input.find("9000\n").unwrap(), "nine thousand\n");
    let d = dir();
    // A classic file is changed in place batch by batch: the first two batches are in it.
    let f = p(&d, "a.bloom");
    create(&f, &["-n", "20000", "--force"]);
    fails(
        &["add", &f, "--items", "i32"],
        &input,
        &["line 9001", "the 8192 items before it were saved"],
    );
    let first: String = (0..8192).map(|i| format!("{i}\n")).collect();
    let (code, out, _) = run(&["check", "-v", &f, "--items", "i32"], &first);
    assert_eq!(
        (code, out.as_str()),
        (1, ""),
        "all of the first two batches"
    );
    // A scalable file is saved whole every --save-every lines: with fewer, nothing changed.
    let s = p(&d, "s.bloom");
    create(&s, &["-n", "20000", "--kind", "scalable"]);
    let before = std::fs::read(&s).unwrap();
    fails(
        &["add", &s, "--items", "i32"],
        &input,
        &["line 9001", "unchanged"],
    );
    assert_eq!(std::fs::read(&s).unwrap(), before);
}

#[test]
fn piped_runs_print_no_progress_bar_and_quiet_prints_nothing() {
    let (_d, f) = new_filter("a.bloom", &[]);
    let (_, _, err) = run(&["add", &f], "a\nb\n");
    assert_eq!(err.lines().count(), 1, "only the summary: {err:?}");
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
    let (_, _, err) = run(&["add", "-q", &f], "c\n");
    assert_eq!(err, "");
}

#[test]
fn a_killed_add_leaves_a_valid_file_with_what_it_had() {
    use std::io::Write;
    let (_d, f) = new_filter("a.bloom", &[]);
    succeeds(&["add", &f, "kept"]);
    let before = std::fs::read(&f).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bloomkit"))
        .args(["add", &f])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..5000 {
        writeln!(stdin, "item-{i}").unwrap();
    }
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.kill().unwrap(); // SIGKILL while it waits for more input
    child.wait().unwrap();
    // Its bits went into the file in place (the dirty mark says the checksum is stale):
    // the file reads back, with everything added before.
    assert_ne!(std::fs::read(&f).unwrap(), before);
    assert_eq!(run(&["check", &f, "kept"], "").0, 0);
    let (code, _, err) = run(&["info", &f], "");
    assert_eq!(code, 0, "{err}");
    // The next command with the lock free sealed it: the checksum holds again.
    let bytes = std::fs::read(&f).unwrap();
    assert_eq!(bytes[88..96], [0; 8], "sealed");
}

#[test]
fn dedup_can_grow_a_scalable_filter() {
    let d = dir();
    let f = p(&d, "s.bloom");
    let input: String = (0..3000).map(|i| format!("{}\n", i % 2000)).collect();
    let (code, out, err) = run(
        &[
            "dedup", &f, "-n", "100", "-p", "0.001", "--kind", "scalable",
        ],
        &input,
    );
    assert_eq!(code, 0, "{err}");
    // 2000 distinct lines; a scalable filter keeps its 0.1% compound bound while growing 20x,
    // so at most a few of them can be dropped as false positives (expected <= 2).
    let kept = out.lines().count();
    assert!((1985..=2000).contains(&kept), "{kept}");
    let (_, info, _) = run(&["info", &f, "--json"], "");
    let v: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert!(v["layers"].as_array().unwrap().len() >= 5, "{v}");
}

#[test]
fn blocked_filters_in_files() {
    let d = dir();
    let (a, b, u) = (p(&d, "a.bloom"), p(&d, "b.bloom"), p(&d, "u.bloom"));
    create(&a, &["--kind", "blocked"]);
    create(&b, &["--kind", "blocked"]);
    succeeds(&["add", &a, "x"]);
    succeeds(&["add", &b, "y"]);
    assert_eq!(run(&["merge", &u, &a, &b], "").0, 0);
    let (_, out, _) = run(&["check", &u, "x", "y", "zzz-absent"], "");
    assert_eq!(out, "x\ny\n");
    let v = info_json(&u);
    assert_eq!(
        (v["kind"].as_str(), v["scheme"].as_str()),
        (Some("blocked"), Some("default"))
    );
    assert_eq!(v["bits"].as_u64().unwrap() % 512, 0, "whole 512-bit blocks");
    assert_eq!(v["capacity"], 1000);
    // Files get the library's default (fastest) layout: at 1% the half-block split block,
    // whose 8 bits per element and size differ from the compact layout's.
    let (blocks, layout) = bloomkit::probe::blocked::default_params(1000, 0.01).unwrap();
    assert_eq!(layout, bloomkit::probe::blocked::BlockLayout::SplitBlock256);
    let (compact, _) = bloomkit::probe::blocked::params_for(1000, 0.01, false).unwrap();
    assert_ne!(blocks, compact);
    assert_eq!(v["bits"].as_u64(), Some(blocks * 512));
    assert_eq!(v["hashes"], 8);
    assert_eq!(v["layout"], "split-block-256");
    fails(
        &[
            "create",
            &p(&d, "g.bloom"),
            "-n",
            "9",
            "-p",
            "0.1",
            "--kind",
            "blocked",
            "--scheme",
            "go",
        ],
        "",
        &["blocked"],
    );
}

/// `--kind` takes the library's kind names (`bloomkit::Kind::name`), one place for them: each
/// kind a file can be created as is created by its name and reported under it by `info`; the
/// expiring kinds are made with `--window`, not `--kind`.
#[test]
fn kinds_are_the_library_kinds_by_their_names() {
    let d = dir();
    let mut created = 0;
    for kind in bloomkit::Kind::ALL {
        let name = kind.name();
        let f = p(&d, &format!("{name}.bloom"));
        let mut args = vec!["create", &f, "--kind", name];
        match kind {
            bloomkit::Kind::CountWindow | bloomkit::Kind::TimeWindow => {
                args.extend(["-n", "100", "-p", "0.01"]);
                let (code, _, err) = run(&args, "");
                assert_eq!(code, 2, "{name}: {err}");
                assert!(
                    err.contains("invalid value") && err.contains("dleft"),
                    "{err}"
                );
                continue;
            }
            bloomkit::Kind::Bitmap | bloomkit::Kind::TwoBitMap => {
                args.extend(["--range", "0..100"])
            }
            _ => args.extend(["-n", "100", "-p", "0.01"]),
        }
        let (code, _, err) = run(&args, "");
        assert_eq!(code, 0, "{name}: {err}");
        let (code, out, err) = run(&["info", "--json", &f], "");
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["kind"], name, "{out}");
        created += 1;
    }
    assert_eq!(created, 7);
}

/// `merge --help` and `intersect --help` name the kinds each combines, and exactly those
/// combine: two filters of each named kind give the union or intersection; the other kinds are
/// refused, naming the operation and the kind.
#[test]
fn merge_and_intersect_take_the_kinds_their_help_names() {
    let d = dir();
    let all = [
        "classic",
        "blocked",
        "counting",
        "scalable",
        "bitmap",
        "two-bit-map",
        "dleft",
    ];
    for (command, named) in [
        ("merge", &["classic", "blocked", "counting", "bitmap"][..]),
        ("intersect", &["classic", "blocked", "bitmap"][..]),
    ] {
        let (_, help, _) = run(&[command, "--help"], "");
        let sentence = format!(
            "one kind, {}",
            match named.len() {
                3 => format!("{}, {} or {}", named[0], named[1], named[2]),
                _ => format!("{}, {}, {} or {}", named[0], named[1], named[2], named[3]),
            }
        );
        assert!(
            help.replace('\n', " ").contains(&sentence),
            "{sentence}: {help}"
        );
        for kind in all {
            let (a, b) = (p(&d, &format!("{kind}-a")), p(&d, &format!("{kind}-b")));
            for (f, items) in [(&a, ["1", "2"]), (&b, ["2", "3"])] {
                let mut args = vec!["create", f.as_str(), "--kind", kind, "--force"];
                if kind.contains("bit") {
                    args.extend(["--range", "0..100"]);
                } else {
                    args.extend(["-n", "100", "-p", "0.01"]);
                }
                assert_eq!(run(&args, "").0, 0);
                let mut add = vec!["add", f.as_str(), "--items", "i64"];
                add.extend(items);
                assert_eq!(run(&add, "").0, 0);
            }
            let out = p(&d, &format!("{command}-{kind}"));
            let (code, _, err) = run(&[command, &out, &a, &b], "");
            if !named.contains(&kind) {
                assert_eq!(code, 2, "{command} {kind}");
                assert!(err.contains(command) && err.contains(kind), "{err}");
                continue;
            }
            assert_eq!(code, 0, "{command} {kind}: {err}");
            let (_, got, _) = run(&["check", &out, "--items", "i64", "1", "2", "3"], "");
            let want = if command == "merge" {
                "1\n2\n3\n"
            } else {
                "2\n"
            };
            // A Bloom filter's intersection may keep a false positive; a bitmap's is exact.
            if kind == "bitmap" || command == "merge" {
                assert_eq!(got, want, "{command} {kind}");
            } else {
                assert!(got.contains("2\n"), "{command} {kind}: {got}");
            }
        }
    }
}

/// The filter state that `add --json` and `dedup --json` report for a file used in place is
/// read in the pass that seals the file, and is the file's: `info --json` afterwards reports
/// the same estimates (for classic and blocked files, below and past capacity, where the
/// warning is printed).
#[test]
fn the_state_reported_after_a_change_is_the_files() {
    let d = dir();
    for kind in ["classic", "blocked"] {
        let f = p(&d, &format!("{kind}.bloom"));
        create(&f, &["--kind", kind]);
        for (round, n) in [(0, 600), (1, 2000)] {
            let lines: String = (0..n).map(|i| format!("{kind}-{round}-{i}\n")).collect();
            let (command, json_on) = if round == 0 { ("add", 1) } else { ("dedup", 2) };
            let out = bk()
                .args([command, "--json", &f])
                .write_stdin(lines)
                .output()
                .unwrap();
            assert!(out.status.success());
            let text = if json_on == 1 {
                &out.stdout
            } else {
                &out.stderr
            };
            let text = String::from_utf8_lossy(text);
            let start = text.find('{').expect("a JSON summary");
            let summary: serde_json::Value = serde_json::from_str(text[start..].trim_end())
                .unwrap_or_else(|e| panic!("{e}: {text}"));
            let (_, info, _) = run(&["info", "--json", &f], "");
            let info: serde_json::Value = serde_json::from_str(&info).unwrap();
            for field in [
                "estimated_items",
                "fill_ratio",
                "estimated_fpp",
                "over_capacity",
            ] {
                assert_eq!(
                    summary["filter"][field], info[field],
                    "{kind} {command} {field}"
                );
            }
            let warned = String::from_utf8_lossy(&out.stderr).contains("more than its capacity");
            assert_eq!(warned, round == 1, "{kind} {command}");
            assert_eq!(info["over_capacity"], round == 1, "{kind}");
        }
    }
}

/// `--scheme bloomkit64`: a classic filter of the default's size whose bits come from one
/// 64-bit hash per item; `info` names the scheme, and the kinds with layouts of their own
/// refuse it.
#[test]
fn scheme_bloomkit64_makes_a_classic_filter_of_its_own_bits() {
    let (d, f) = new_filter("b64.bloom", &["--scheme", "bloomkit64"]);
    let (_d2, own) = new_filter("own.bloom", &["--kind", "classic"]);
    let items: String = (0..200)
        .map(|i| format!("https://example.com/{i}\n"))
        .collect();
    add_quietly(&f, items.clone());
    add_quietly(&own, items.clone());
    let (v, w) = (info_json(&f), info_json(&own));
    assert_eq!(
        (v["kind"].as_str(), v["scheme"].as_str()),
        (Some("classic"), Some("bloomkit64"))
    );
    assert_eq!(w["scheme"], "default");
    // Same sizing as the default classic filter, other bit positions.
    assert_eq!((&v["bits"], &v["hashes"]), (&w["bits"], &w["hashes"]));
    assert_ne!(std::fs::read(&f).unwrap(), std::fs::read(&own).unwrap());
    let (code, out, err) = run(&["check", &f, "-f", "-"], &items);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 200);
    for kind in ["blocked", "scalable", "dleft"] {
        let g = p(&d, &format!("{kind}.bloom"));
        let args = [
            "create",
            &g,
            "-n",
            "100",
            "-p",
            "0.01",
            "--kind",
            kind,
            "--scheme",
            "bloomkit64",
        ];
        fails(&args, "", &["default scheme only", "--scheme bloomkit64"]);
    }
}

/// `info --json` without what changes as items are added (and, for a scalable filter, without
/// its grown layers beyond the first).
fn how_made(mut info: serde_json::Value) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        if let Some(o) = v.as_object_mut() {
            for volatile in [
                "estimated_fpp",
                "estimated_items",
                "fill_ratio",
                "over_capacity",
                "saturated",
                "live",
                "inserted",
                "slice_fills",
            ] {
                o.remove(volatile);
            }
            o.values_mut().for_each(strip);
        } else if let Some(a) = v.as_array_mut() {
            a.iter_mut().for_each(strip);
        }
    }
    if info["kind"] == "scalable" {
        let o = info.as_object_mut().unwrap();
        let first = o["layers"][0].clone();
        o.insert("layers".into(), serde_json::json!([first]));
        for grown in ["bits", "bytes", "hashes"] {
            o.remove(grown);
        }
    }
    strip(&mut info);
    info
}

/// `create --like` makes an empty filter file as another one was made, for every kind and
/// scheme of the format fixtures (files of the older default scheme, `enhanced-double`,
/// included: `--scheme` no longer creates it), and the new filter merges into the old one.
#[test]
fn create_like_makes_an_empty_filter_as_another_was_made() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bloomkit/tests/fixtures");
    let d = dir();
    let mut made = 0;
    for version in ["v1", "v2"] {
        for entry in std::fs::read_dir(fixtures.join(version)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "bloom") {
                continue;
            }
            let name = format!("{version}-{}", path.file_name().unwrap().to_string_lossy());
            let old = p(&d, &name);
            std::fs::copy(&path, &old).unwrap();
            let new = p(&d, &format!("like-{name}"));
            succeeds(&["create", &new, "--like", &old]);
            let (was, is) = (info_json(&old), info_json(&new));
            assert_ne!(was["estimated_items"], 0, "{name}: the fixture holds items");
            assert_eq!(is["estimated_items"], 0, "{name}: {is}");
            assert_eq!(how_made(was), how_made(is), "{name}");
            made += 1;
        }
    }
    assert!(made >= 20, "only {made} fixtures");

    // The old default scheme: a filter created with today's default cannot be merged into
    // the old file, one created --like it can.
    let old = p(&d, "v1-classic.bloom");
    let fresh = p(&d, "fresh.bloom");
    create(&fresh, &["--kind", "classic"]);
    fails(&["merge", &old, &old, &fresh], "", &["scheme"]);
    let like = p(&d, "like-v1-classic.bloom");
    succeeds(&["add", &like, "added-later"]);
    succeeds(&["merge", &old, &old, &like]);
    succeeds(&["check", &old, "added-later"]);
    // It refuses what would lose data or cannot hold: an existing file, sizing options, Redis.
    fails(&["create", &like, "--like", &old], "", &["--force"]);
    fails(
        &["create", &p(&d, "x.bloom"), "--like", &old, "-n", "5"],
        "",
        &["cannot be used with"],
    );
    fails(
        &["create", "redis://127.0.0.1:1/x", "--like", &old],
        "",
        &["filter files"],
    );
}
