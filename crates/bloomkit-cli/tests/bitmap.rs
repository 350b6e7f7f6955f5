//! End-to-end tests of the bitmap kinds and the integer commands: the real binary on real
//! files, compared with the real `sort -n | uniq` where it applies.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use support::{created, fails, ok, path, run, spawn_piped};

/// Deterministic pseudo-random integers: negatives, repeats, values past `i64::MAX`.
fn integers(n: usize) -> Vec<i128> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match i % 5 {
                0 => i128::from(x % 1000),                      // many repeats
                1 => -i128::from(x % 5000),                     // negatives
                2 => i128::from(x),                             // the whole u64 range
                3 => i128::from(x as i64),                      // the whole i64 range
                _ => i128::from(x % 3_000_000_000) + (1 << 32), // past 2^32
            }
        })
        .collect()
}

fn text(values: &[i128]) -> Vec<u8> {
    values
        .iter()
        .map(|v| format!("{v}\n"))
        .collect::<String>()
        .into_bytes()
}

/// A temporary directory with the input files `a.txt` and `b.txt`, holding `a` and `b`.
fn two_inputs(a: &str, b: &str) -> (tempfile::TempDir, String, String) {
    let d = tempfile::tempdir().unwrap();
    let (a_path, b_path) = (path(&d, "a.txt"), path(&d, "b.txt"));
    std::fs::write(&a_path, a).unwrap();
    std::fs::write(&b_path, b).unwrap();
    (d, a_path, b_path)
}

/// What `info --json` says of `filter`.
fn info_json(filter: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&["info", filter, "--json"], b"").out).unwrap()
}

/// What `sort -n | uniq ARGS` prints for `input` (the real tools).
fn sort_uniq(input: &[u8], uniq_args: &[&str]) -> String {
    let (mut sort, mut sin) = spawn_piped(Command::new("sort").arg("-n").env("LC_ALL", "C"));
    let data = input.to_vec();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut sin, &data));
    let uniq = Command::new("uniq")
        .args(uniq_args)
        .stdin(sort.stdout.take().unwrap())
        .output()
        .expect("uniq runs");
    writer.join().unwrap().unwrap();
    assert!(sort.wait().unwrap().success());
    String::from_utf8(uniq.stdout).unwrap()
}

#[test]
fn sort_unique_and_singles_print_what_sort_and_uniq_print() {
    let values = integers(20_000);
    let input = text(&values);
    let distinct: BTreeSet<i128> = values.iter().copied().collect();
    let mut counts = BTreeMap::new();
    for &v in &values {
        *counts.entry(v).or_insert(0u32) += 1;
    }
    let want_unique: String = distinct.iter().map(|v| format!("{v}\n")).collect();
    let want_singles: String = counts
        .iter()
        .filter(|(_, &c)| c == 1)
        .map(|(v, _)| format!("{v}\n"))
        .collect();
    let r = ok(&["sort-unique"], &input);
    assert_eq!(r.out, want_unique);
    assert!(
        r.err
            .contains(&format!("{} integers written", distinct.len())),
        "{}",
        r.err
    );
    assert_eq!(ok(&["singles"], &input).out, want_singles);
    // The real tools agree (GNU sort -n compares numbers of any length exactly).
    assert_eq!(sort_uniq(&input, &[]), want_unique);
    assert_eq!(sort_uniq(&input, &["-u"]), want_singles);
    assert!(want_singles.lines().count() > 1000 && counts.len() < values.len());
}

#[test]
fn integer_commands_read_files_and_name_bad_lines() {
    let (d, a, b) = two_inputs("3\n 1 \n3\n", "-2\r\n+7\n1");
    assert_eq!(
        ok(&["sort-unique", &a, "-", &b], b"9\n").out,
        "-2\n1\n3\n7\n9\n"
    );
    assert_eq!(ok(&["singles", &a, &b], b"").out, "-2\n7\n");
    // -0: NUL-separated in, NUL-separated out (as --help says).
    assert_eq!(
        ok(&["sort-unique", "-0"], b"3\x001\x003\x00").out,
        "1\x003\x00"
    );
    assert_eq!(ok(&["singles", "-0"], b"3\x001\x003").out, "1\x00");
    std::fs::write(&b, "5\n6\n1.5\n7\n").unwrap();
    for cmd in ["sort-unique", "singles"] {
        let r = run(&[cmd, &a, &b], b"");
        assert_eq!(r.code, 2);
        assert!(r.out.is_empty(), "nothing printed: {}", r.out);
        assert!(
            r.err
                .contains(&format!("{b}: line 3: '1.5' is not an integer")),
            "{}",
            r.err
        );
        let r = ok(&[cmd, "--skip-invalid", &b], b"");
        assert_eq!(r.out, "5\n6\n7\n");
        assert!(r.err.contains("1 non-integer lines skipped"), "{}", r.err);
    }
    for (input, why) in [
        ("18446744073709551616\n", "beyond the 64-bit integers"),
        ("-9223372036854775809\n", "below the 64-bit integers"),
        ("1\n\n2\n", "an empty line"),
    ] {
        let r = run(&["sort-unique"], input.as_bytes());
        assert_eq!(r.code, 2);
        assert!(
            r.err.contains(why) && r.err.contains("standard input: line"),
            "{}",
            r.err
        );
    }
    let r = run(&["sort-unique", d.path().to_str().unwrap()], b"");
    assert_eq!(r.code, 2);
    fails(
        &["sort-unique", &path(&d, "missing.txt")],
        b"",
        &["missing.txt"],
    );
}

#[test]
fn a_declared_range_bounds_the_integers_and_may_make_the_bitmaps_dense() {
    let input = b"7\n-5\n99\n7\n0\n-5\n";
    for args in [
        vec!["--range", "-5..100"],
        vec!["--range", "-5..=99", "-n", "50"], // dense: 50 of 105
        vec!["--range", "-5..1e12", "-n", "3"], // roaring
    ] {
        let mut cmd = vec!["sort-unique"];
        cmd.extend_from_slice(&args);
        assert_eq!(ok(&cmd, input).out, "-5\n0\n7\n99\n", "{args:?}");
        cmd[0] = "singles";
        assert_eq!(ok(&cmd, input).out, "0\n99\n", "{args:?}");
    }
    let dense = ok(
        &["sort-unique", "--range", "0..800000", "-n", "100000"],
        b"5\n",
    );
    assert!(
        dense.err.contains("bitmaps of 97.7 KiB"),
        "one bit per integer: {}",
        dense.err
    );
    for (range, input, line, value) in [
        ("0..100", &b"1\n100\n"[..], 2, "100"),
        ("0..100", b"5\n-1\n", 2, "-1"),
        ("-10..-5", b"-7\n-5\n", 2, "-5"),
    ] {
        let r = run(&["sort-unique", "--range", range], input);
        assert_eq!(r.code, 2);
        let want = format!("standard input: line {line}: integer {value} is outside the range");
        assert!(r.err.contains(&want), "{}", r.err);
        assert!(r.out.is_empty());
    }
    assert_eq!(
        run(&["sort-unique", "-n", "5"], b"1\n").code,
        2,
        "-n needs --range"
    );
}

#[test]
fn sort_unique_memory_follows_the_distinct_values() {
    // 200,000 lines of 10 distinct integers spread over the u64 range: the bitmaps stay tiny.
    let input: String = (0..200_000u64)
        .map(|i| format!("{}\n", (i % 10) * 1_000_000_000_000_000))
        .collect();
    let r = ok(&["sort-unique"], input.as_bytes());
    assert_eq!(r.out.lines().count(), 10);
    let bytes: f64 = r
        .err
        .split("bitmaps of ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a size in: {}", r.err));
    assert!(
        r.err.contains("bitmaps of") && r.err.trim_end().ends_with(" B") && bytes < 1000.0,
        "{}",
        r.err
    );
}

#[test]
fn a_bitmap_file_adds_checks_removes_and_describes_itself() {
    let d = tempfile::tempdir().unwrap();
    let f = path(&d, "ids.bloom");
    let r = ok(
        &["create", &f, "--kind", "bitmap", "--range", "0..1000000000"],
        b"",
    );
    assert!(r.err.contains("range 0..1000000000 (roaring"), "{}", r.err);
    ok(&["add", &f], b"5\n999999999\n0\n5\n");
    let r = run(&["check", &f, "5", "6", "999999999"], b"");
    assert_eq!((r.code, r.out.as_str()), (0, "5\n999999999\n"));
    assert_eq!(run(&["check", &f, "7"], b"").code, 1);
    ok(&["remove", &f, "5"], b"");
    fails(
        &["remove", &f, "5"],
        b"",
        &["integer 5 is not in the bitmap"],
    );
    let info = info_json(&f);
    assert_eq!(info["kind"], "bitmap");
    assert_eq!(info["layout"], "roaring");
    assert_eq!(info["range"], "0..1000000000");
    assert_eq!(info["estimated_items"], 2);
    assert_eq!(info["estimated_fpp"], 0.0);

    // Dense when the expected count is at least 1 in 16 of the range.
    let g = path(&d, "dense.bloom");
    ok(&["create", &g, "--range", "-1000..=1000", "-n", "500"], b"");
    ok(&["add", &g, "-1000", "1000", "-3"], b"");
    let info = info_json(&g);
    assert_eq!(
        (info["kind"].as_str(), info["layout"].as_str()),
        (Some("bitmap"), Some("dense"))
    );
    assert_eq!(info["capacity"], 500);
    let r = ok(&["check", "-c", &g], b"-1000\n-3\n0\n1000\n");
    assert_eq!(r.out, "3\n");
    // A mapped dense bitmap reads the same file.
    let m = bloomkit::bitmap::MappedBitmap::open(std::path::Path::new(&g)).unwrap();
    assert!(m.contains(-3) && m.contains(1000) && !m.contains(0) && m.len() == 3);
}

#[test]
fn bad_input_for_a_bitmap_changes_nothing() {
    let (_d, f) = created("ids.bloom", &["--kind", "bitmap", "--range", "100..200"]);
    ok(&["add", &f, "150"], b"");
    let before = std::fs::read(&f).unwrap();
    for (input, wanted) in [
        (
            &b"120\n130\n200\n"[..],
            "integer 200 is outside the bitmap's range 100..200",
        ),
        (
            b"120\n-1\n",
            "integer -1 is outside the bitmap's range 100..200",
        ),
        (b"120\nabc\n", "line 2: 'abc' is not a 64-bit integer"),
    ] {
        let r = run(&["add", &f], input);
        assert_eq!(r.code, 2);
        assert!(r.err.contains(wanted), "{}", r.err);
        assert_eq!(std::fs::read(&f).unwrap(), before, "nothing applied");
    }
    let r = run(&["add", &f, "--items", "utf8", "abc"], b"");
    assert!(
        r.err
            .contains("holds integer keys only (8-byte i64 or u64), got a 3-byte key"),
        "{}",
        r.err
    );
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // A damaged file is a clean error.
    let mut bad = before.clone();
    let last = bad.len() - 20;
    bad[last] ^= 1;
    std::fs::write(&f, &bad).unwrap();
    fails(&["check", &f, "150"], b"", &["checksum mismatch"]);
    for args in [
        vec!["create", &f, "--force", "--range", "0..10", "-p", "0.01"],
        vec![
            "create", &f, "--force", "--kind", "classic", "-n", "9", "-p", "0.1", "--range",
            "0..10",
        ],
        vec!["create", &f, "--force", "--kind", "bitmap"],
        vec!["create", &f, "--force", "--range", "10..10"],
        vec!["create", &f, "--force", "--range", "a..b"],
        vec!["create", &f, "--force", "--range", "0..1e30"],
        vec![
            "create", &f, "--force", "--range", "0..10", "--scheme", "guava",
        ],
    ] {
        let r = run(&args, b"");
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
    }
}

#[test]
fn bitmaps_merge_and_intersect_exactly() {
    let d = tempfile::tempdir().unwrap();
    let (a, b, u, i) = (path(&d, "a"), path(&d, "b"), path(&d, "u"), path(&d, "i"));
    for (f, items) in [(&a, &b"1\n2\n3\n"[..]), (&b, b"3\n4\n")] {
        ok(&["create", f, "--range", "0..100"], b"");
        ok(&["add", f], items);
    }
    ok(&["merge", &u, &a, &b], b"");
    ok(&["intersect", &i, &a, &b], b"");
    assert_eq!(ok(&["check", &u], b"1\n2\n3\n4\n5\n").out, "1\n2\n3\n4\n");
    assert_eq!(ok(&["check", &i], b"1\n2\n3\n4\n5\n").out, "3\n");
    let c = path(&d, "c");
    ok(&["create", &c, "--range", "0..50"], b"");
    fails(
        &["merge", &u, &a, &c, "--force"],
        b"",
        &["integer range 0..100 vs 0..50"],
    );
}

#[test]
fn a_two_bit_map_file_counts_once_and_more() {
    let (_d, f) = created(
        "calls.bloom",
        &["--kind", "two-bit-map", "--range", "0..1000"],
    );
    let r = ok(&["add", &f], b"1\n2\n1\n3\n1\n");
    assert!(r.err.contains("3 new"), "{}", r.err);
    assert_eq!(ok(&["check", &f, "1", "4", "3"], b"").out, "1\n3\n");
    fails(&["remove", &f, "1"], b"", &["cannot remove"]);
    let info = info_json(&f);
    assert_eq!(
        (info["kind"].as_str(), info["estimated_items"].as_u64()),
        (Some("two-bit-map"), Some(3))
    );
}

#[test]
fn dedup_with_a_bitmap_is_exact() {
    let d = tempfile::tempdir().unwrap();
    let f = path(&d, "seen.bloom");
    let r = ok(
        &["dedup", &f, "--range", "0..1000000"],
        b"7\n8\n7\n999999\n8\n",
    );
    assert_eq!(r.out, "7\n8\n999999\n");
    assert_eq!(ok(&["dedup", &f], b"8\n9\n").out, "9\n");
}

#[test]
fn calc_recommends_a_bitmap_when_the_range_is_small_enough() {
    let r = ok(
        &["calc", "-n", "1e8", "-p", "0.001", "--range", "0..1e9"],
        b"",
    );
    assert!(r.out.contains("dense:          119.2 MiB"), "{}", r.out);
    assert!(r.out.contains("recommended:    a bitmap"), "{}", r.out);
    assert!(r.out.contains("instead of 171.4 MiB"), "{}", r.out);
    let r = ok(
        &["calc", "-n", "1e6", "-p", "0.01", "--range", "0..1e12"],
        b"",
    );
    assert!(
        r.out.contains("recommended:    a Bloom filter"),
        "{}",
        r.out
    );
    let r = ok(&["calc", "-n", "1000", "--range", "0..1e6"], b"");
    assert!(r.out.contains("chosen form:    roaring"), "{}", r.out);
    assert_eq!(run(&["calc", "--range", "0..10"], b"").code, 2);
}

/// Every `console` example of docs/BITMAPS.md, run in order in one directory with the real
/// binary first on PATH: each `$ ` line through `sh -c` (standard error merged into standard
/// output, as a terminal shows it), its output compared with the lines below it.
#[test]
fn the_examples_of_docs_bitmaps_md_run_as_shown() {
    let doc = include_str!("../../../docs/BITMAPS.md");
    let d = tempfile::tempdir().unwrap();
    let bin_dir = support::bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut examples = Vec::new();
    let mut in_console = false;
    for line in doc.lines() {
        match line {
            "```console" => in_console = true,
            "```" => in_console = false,
            l if in_console => match l.strip_prefix("$ ") {
                Some(cmd) => examples.push((cmd.to_string(), String::new())),
                None => {
                    let out = &mut examples.last_mut().expect("output after a command").1;
                    out.push_str(l);
                    out.push('\n');
                }
            },
            _ => {}
        }
    }
    assert!(examples.len() >= 8, "{}", examples.len());
    for (cmd, want) in examples {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{cmd} 2>&1"))
            .current_dir(d.path())
            .env("PATH", &path)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "$ {cmd}");
    }
}

/// `sort-unique` and `singles` read the shared item sources as add, check and dedup do (`-f
/// FILE` and `-` in order after the FILE arguments, `-0`, `--skip-empty`) and print a `--json`
/// summary on standard error, standard output carrying the integers.
#[test]
fn integer_commands_take_the_shared_sources_and_json() {
    let (d, a, b) = two_inputs("3\n1\n", "8\n3\n");
    // FILE arguments, then each -f (here standard input, then b).
    assert_eq!(
        ok(&["sort-unique", &a, "-f", "-", "-f", &b], b"-4\n").out,
        "-4\n1\n3\n8\n"
    );
    assert_eq!(ok(&["singles", "-f", &a, "-f", &b], b"").out, "1\n8\n");
    fails(
        &["singles", "-f", &path(&d, "missing.txt")],
        b"",
        &["missing.txt: no such file (given with -f)"],
    );
    // NUL-separated, newlines inside an item being spaces; an empty item is an error naming
    // it, or skipped and counted with --skip-empty.
    let nul = b"5\0 2\n\0\x005\0";
    fails(
        &["sort-unique", "-0"],
        nul,
        &["standard input: item 3: '' is not an integer: an empty line"],
    );
    let r = ok(&["sort-unique", "-0", "--skip-empty"], nul);
    assert_eq!(r.out, "2\x005\x00");
    assert!(
        r.err.contains("4 lines read") && r.err.contains("1 empty lines skipped"),
        "{}",
        r.err
    );
    let r = ok(&["singles", "--skip-empty"], b"7\n\n\n9\n7\n");
    assert_eq!(r.out, "9\n");
    // --json: one object on standard error, the integers alone on standard output.
    let r = ok(
        &["singles", "--json", "--skip-empty", "--skip-invalid"],
        b"7\n\nx\n9\n7\n",
    );
    assert_eq!(r.out, "9\n");
    let v: serde_json::Value = serde_json::from_str(&r.err).expect("JSON on standard error");
    assert_eq!(v["command"], "singles");
    assert_eq!(
        (&v["lines"], &v["written"], &v["skipped"], &v["empty"]),
        (&5.into(), &1.into(), &1.into(), &1.into()),
        "{v}"
    );
    assert!(v["bytes"].as_u64().is_some_and(|b| b > 0), "{v}");
    // `-q` prints nothing (as grep -q); the exit status still refuses a non-integer line.
    let r = ok(&["sort-unique", "--json", "-q"], b"1\n");
    assert_eq!((r.out.as_str(), r.err.as_str()), ("", ""));
    let r = ok(&["singles", "-q"], b"1\n2\n1\n");
    assert_eq!((r.out.as_str(), r.err.as_str()), ("", ""));
    fails(
        &["sort-unique", "-q"],
        b"1\nx\n",
        &["line 2: 'x' is not an integer"],
    );
}

/// A dense bitmap file is read in place by `check` and `info` (the library's `MappedBitmap`),
/// not loaded: with 48 MiB of private memory (`ulimit -d`; a shared file mapping does not count
/// against it, a loaded copy does) both work on a 125 MB bitmap, while `add`, which loads a
/// bitmap to change it, is refused by the same limit (so the limit bites).
#[test]
fn dense_bitmap_files_are_checked_in_place() {
    let (_d, f) = created("ids.bloom", &["--range", "0..1e9", "-n", "5e8", "-q"]);
    ok(&["add", &f, "-q", "7", "999999999", "123456789"], b"");
    assert!(std::fs::metadata(&f).unwrap().len() > 120_000_000);
    const LIMIT: u32 = 48 * 1024;
    let (code, err) = support::data_limited(LIMIT, &["check", &f, "7", "8", "999999999"], b"");
    assert_eq!(code, 0, "{err}");
    let (code, err) = support::data_limited(LIMIT, &["check", "-c", &f], b"1\n7\n123456789\n");
    assert_eq!(code, 0, "{err}");
    let r = support::spawn_limited(
        &format!("-d {LIMIT}"),
        &["info", "--json", &f],
        Stdio::null(),
    )
    .wait_with_output()
    .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(
        (&v["kind"], &v["layout"], &v["estimated_items"], &v["bytes"]),
        (
            &"bitmap".into(),
            &"dense".into(),
            &3.into(),
            &125_000_000.into()
        ),
        "{v}"
    );
    assert_eq!(v["capacity"], 500_000_000, "{v}");
    let (code, err) = support::data_limited(LIMIT, &["add", "-q", &f, "8"], b"");
    assert_eq!(code, 2, "add loads a bitmap: {err}");
    // A damaged plane is found when the file is mapped, as when it is loaded.
    let mut bytes = std::fs::read(&f).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    std::fs::write(&f, &bytes).unwrap();
    fails(&["check", &f, "7"], b"", &["checksum"]);
}
