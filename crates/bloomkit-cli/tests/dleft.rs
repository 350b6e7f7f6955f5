//! The d-left counting filter and minimal-increase counting filters through the real binary:
//! create, add, check, remove, info, and their refusals.

mod support;

use support::{created, fails, input, lines, ok, path, run};

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

#[test]
fn dleft_files_add_check_remove_and_describe_themselves() {
    let (_d, f) = created("d.bloom", &["-n", "2000", "-p", "1%", "--kind", "dleft"]);
    let members = lines("member", 0..1000);
    ok(&["add", &f], &input(&members));
    // No false negatives; at most a few of 2000 strangers pass (design FPR 0.3 % at this
    // load: mean 6, and 30 is over 9σ away).
    let r = ok(&["check", "-c", &f], &input(&members));
    assert_eq!(r.out, "1000\n");
    let strangers = lines("stranger", 0..2000);
    let fp: u64 = run(&["check", "-c", &f], &input(&strangers))
        .out
        .trim()
        .parse()
        .unwrap();
    assert!(fp <= 30, "{fp} false positives");

    // Remove half; they test absent (unless a false positive), the rest stay.
    ok(&["remove", &f], &input(&members[..500]));
    let r = run(&["check", "-c", &f], &input(&members[..500]));
    assert!(r.out.trim().parse::<u64>().unwrap() <= 10, "{}", r.out);
    assert_eq!(
        ok(&["check", "-c", &f], &input(&members[500..])).out,
        "500\n"
    );

    // Removing what is not there fails, names it, and changes nothing.
    let before = std::fs::read(&f).unwrap();
    let r = run(&["remove", &f, "member-999", "never-added"], b"");
    assert_eq!(r.code, 2);
    assert!(
        r.err.contains("argument 2") && r.err.contains("never-added"),
        "{}",
        r.err
    );
    assert_eq!(std::fs::read(&f).unwrap(), before);

    // info --json: its kind, layout and bytes (4 tables x 84 buckets x 8 cells x 14 bits).
    let r = ok(&["info", "--json", &f], b"");
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v["kind"], "dleft");
    assert_eq!(v["capacity"], 2000);
    assert_eq!(v["bytes"], (4 * 84 * 8 * 14u64).div_ceil(64) * 8);
    assert_eq!(v["estimated_items"], 500);
    assert_eq!(v["layout"], "4 tables x 84 buckets x 8 cells of 12+2 bits");
}

#[test]
fn repeated_adds_are_counted_and_saved() {
    let (_d, f) = created("d.bloom", &["-n", "100", "-p", "1%", "--kind", "dleft"]);
    ok(&["add", &f, "x"], b"");
    ok(&["add", &f, "x"], b"");
    // Two occurrences: two removals succeed, the third is refused.
    ok(&["remove", &f, "x"], b"");
    ok(&["remove", &f, "x"], b"");
    assert_eq!(run(&["remove", &f, "x"], b"").code, 2);
    // 2-bit counters saturate at 3; info reports it, and the element then stays.
    ok(&["add", &f, "y", "y", "y", "y"], b"");
    let r = ok(&["info", &f], b"");
    assert!(r.out.contains("1 saturated (never removed)"), "{}", r.out);
    for _ in 0..5 {
        ok(&["remove", &f, "y"], b"");
    }
    assert_eq!(ok(&["check", &f, "y"], b"").out, "y\n");
}

#[test]
fn an_overfull_dleft_filter_says_so_and_keeps_what_it_saved() {
    let (_d, f) = created("d.bloom", &["-n", "24", "-p", "10%", "--kind", "dleft"]);
    let many = lines("x", 0..100);
    fails(&["add", &f], input(&many), &["larger capacity"]);
    let r = ok(&["info", "--json", &f], b"");
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert!(v["estimated_items"].as_u64().unwrap() <= 32);
}

#[test]
fn dleft_and_minimal_increase_options_are_checked() {
    let d = temp();
    let f = path(&d, "f.bloom");
    for (extra, says) in [
        (
            &["-p", "1%", "--kind", "dleft", "--scheme", "guava"][..],
            "default scheme",
        ),
        (&["-p", "1%", "--minimal-increase"][..], "--kind counting"),
        (&["-p", "1e-30", "--kind", "dleft"][..], "remainders"),
    ] {
        let mut args = vec!["create", &f, "-n", "10"];
        args.extend_from_slice(extra);
        let r = run(&args, b"");
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.err.contains(says), "{args:?}: {}", r.err);
        assert!(!d.path().join("f.bloom").exists());
    }
}

#[test]
fn minimal_increase_counting_files_refuse_removal() {
    let (_d, f) = created(
        "m.bloom",
        &[
            "-n",
            "1000",
            "-p",
            "1%",
            "--kind",
            "counting",
            "--minimal-increase",
        ],
    );
    ok(&["add", &f, "x", "x", "y"], b"");
    assert_eq!(ok(&["check", "-c", &f, "x", "y", "z"], b"").out, "2\n");
    let before = std::fs::read(&f).unwrap();
    fails(&["remove", &f, "x"], b"", &["minimal-increase"]);
    assert_eq!(std::fs::read(&f).unwrap(), before);
    let r = ok(&["info", "--json", &f], b"");
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v["kind"], "counting");
    assert_eq!(v["layout"], "minimal-increase");
}

/// Every `bloomkit` line of docs/COUNTING.md's shell blocks runs (comments dropped, `.bloom`
/// files in a temporary directory).
#[test]
fn the_command_line_examples_in_docs_counting_run() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/COUNTING.md"),
    )
    .unwrap();
    let d = temp();
    let mut ran = 0;
    for block in doc.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        for line in block.lines().filter(|l| l.starts_with("bloomkit ")) {
            let command = line.split(" #").next().unwrap();
            let args: Vec<String> = command
                .split_whitespace()
                .skip(1)
                .map(|a| match a.ends_with(".bloom") {
                    true => path(&d, a),
                    false => a.to_string(),
                })
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ok(&args, b"");
            ran += 1;
        }
    }
    assert_eq!(ran, 5, "the examples of docs/COUNTING.md");
}
