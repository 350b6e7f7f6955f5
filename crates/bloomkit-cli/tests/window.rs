//! Expiring filters from the command line: `create --window`, `dedup --window`, `info`, add
//! and check on count- and time-window files.

mod support;

use support::{created, input, lines, ok, path, run};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn json(filter: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&["info", filter, "--json"], b"").out).expect("info --json")
}

#[test]
fn a_time_window_file_is_created_filled_checked_and_described() {
    let (_d, f) = created(
        "month.bloom",
        &[
            "--window",
            "30d",
            "--generations",
            "30",
            "--capacity",
            "100000",
        ],
    );
    let urls = lines("https://example.com/", 0..1000);
    ok(&["add", &f], &input(&urls));
    let r = run(&["check", &f, "-c"], &input(&urls));
    assert_eq!(r.out.trim(), "1000");
    let v = json(&f);
    assert_eq!(v["kind"], "time-window");
    assert_eq!(v["capacity"], 100000);
    assert_eq!(v["fpp"], 0.01, "the default FPR of a window");
    let w = &v["window"];
    assert_eq!(w["type"], "time");
    assert_eq!(w["window"], "30d");
    assert_eq!(w["window_ms"], 30 * 86_400_000u64);
    assert_eq!(w["generations"], 30);
    assert_eq!(w["generation_ms"], 86_400_000u64);
    let live = w["live"].as_array().unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0]["age"], 0);
    assert!(live[0]["fill_ratio"].as_f64().unwrap() > 0.0);
    let est = live[0]["estimated_items"].as_u64().unwrap();
    assert!((950..=1050).contains(&est), "{est}");
    let text = ok(&["info", &f], b"").out;
    assert!(
        text.contains("window:           30d (forgotten between 30d and 31d"),
        "{text}"
    );
    assert!(
        text.contains("generations:      30 of 1d, 1 live"),
        "{text}"
    );
}

#[test]
fn a_count_window_file_remembers_the_last_n_insertions() {
    let (_d, f) = created("recent.bloom", &["--window", "1000", "--fpp", "1%"]);
    let all = lines("event-", 0..5000);
    ok(&["add", &f], &input(&all));
    let r = run(&["check", &f, "-c"], &input(&all[4000..]));
    assert_eq!(r.out.trim(), "1000", "every one of the last 1000");
    let v = json(&f);
    assert_eq!(v["kind"], "count-window");
    let w = &v["window"];
    assert_eq!(w["type"], "count");
    assert_eq!(w["insertions"], 1000);
    assert_eq!(w["inserted"], 5000);
    assert_eq!(
        w["layout"], "blocked",
        "new files: every slice of an element in one block"
    );
    let forgotten = w["forgotten_after"].as_u64().unwrap();
    assert!(w["guaranteed"].as_u64().unwrap() >= 1000);
    // The oldest are gone once forgotten_after more insertions followed them.
    let more = lines("later-", 0..forgotten);
    ok(&["add", &f], &input(&more));
    let r = run(&["check", &f, "-c"], &input(&all[..1000]));
    let found: u64 = r.out.trim().parse().unwrap();
    // At most the 1% FPR, with 5σ of binomial noise over 1000 queries: 1% + 1.6%.
    assert!(found <= 26, "{found} of 1000 old elements still found");
    let text = ok(&["info", &f], b"").out;
    assert!(
        text.contains("window:           the last 1000 insertions"),
        "{text}"
    );
}

#[test]
fn dedup_with_a_window_prints_first_sightings_and_sightings_after_the_window() {
    let d = tmp();
    let f = path(&d, "crawl.bloom");
    // A 7-day window: repeats within it are dropped.
    let r = run(
        &["dedup", &f, "--window", "7d", "--capacity", "10000"],
        b"a\nb\na\nc\nb\n",
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "a\nb\nc\n");
    assert_eq!(ok(&["dedup", &f], b"a\nz\n").out, "z\n");
    // Another window on the same file is refused, naming both.
    let r = run(&["dedup", &f, "--window", "30d"], b"a\n");
    assert_eq!(r.code, 2);
    assert!(
        r.err.contains("a window of 1w, not the last 30d"),
        "{}",
        r.err
    );
    // Other generations on the same file are refused too, with --window or without, naming
    // both; the file's own are accepted.
    let g = json(&f)["window"]["generations"].as_u64().unwrap();
    let other = (g + 1).to_string();
    for args in [
        vec!["dedup", &f, "--window", "7d", "--generations", &other],
        vec!["dedup", &f, "--generations", &other],
    ] {
        let r = run(&args, b"a\n");
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            r.err.contains(&format!(
                "a window of 1w in {g} generations, not {other} generations as --generations asks"
            )),
            "{}",
            r.err
        );
        assert_eq!(r.out, "", "nothing deduplicated");
    }
    let same = g.to_string();
    let args = ["dedup", &f, "--window", "7d", "--generations", &same];
    assert_eq!(ok(&args, b"a\nq\n").out, "q\n");
    // A count window has no generations to choose, and keeps its own window.
    let count = path(&d, "count.bloom");
    ok(&["create", &count, "--window", "1000"], b"");
    for (flag, value, why) in [
        (
            "--generations",
            "7",
            "the last 1000 insertions; --generations is for time windows",
        ),
        (
            "--window",
            "2000",
            "the last 1000 insertions, not the last 2000 insertions",
        ),
    ] {
        let r = run(&["dedup", &count, flag, value], b"a\n");
        assert_eq!(r.code, 2, "{flag}");
        assert!(r.err.contains(why), "{}", r.err);
    }
    // A one-second window in one generation forgets an element within two seconds: after
    // them it is a new sighting again.
    let short = path(&d, "short.bloom");
    let args = [
        "dedup",
        &short,
        "--window",
        "1s",
        "--generations",
        "1",
        "--capacity",
        "100",
    ];
    assert_eq!(ok(&args, b"x\n").out, "x\n");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(ok(&args, b"x\ny\nx\n").out, "x\ny\n");
}

#[test]
fn bad_windows_are_clear_errors() {
    let d = tmp();
    let f = path(&d, "bad.bloom");
    for (args, why) in [
        (vec!["--window", "0"], "'0' is an empty window"),
        (
            vec!["--window", "0d", "-n", "10"],
            "'0d' is an empty window",
        ),
        (vec!["--window=-3d", "-n", "10"], "'-3d' is negative"),
        (vec!["--window", "30y", "-n", "10"], "unknown unit 'y'"),
        (
            vec!["--window", "1000000w", "-n", "10"],
            "too long a duration",
        ),
        (vec!["--window", "30d"], "a time window needs --capacity N"),
        (
            vec!["--window", "5s", "--generations", "10", "-n", "5"],
            "more generations than elements",
        ),
        (
            vec!["--window", "30d", "--generations", "0", "-n", "100"],
            "between 1 and 1000",
        ),
        (
            vec!["--generations", "3", "-n", "100", "-p", "0.01"],
            "--window",
        ),
        (
            vec!["--window", "1000", "-n", "5"],
            "a count window's capacity is its window",
        ),
        (
            vec!["--window", "1000", "--generations", "5"],
            "--generations is for time windows",
        ),
        (
            vec!["--window", "30d", "-n", "100", "--scheme", "guava"],
            "bloomkit's default scheme only",
        ),
        (
            vec!["--window", "30d", "-n", "100", "--kind", "blocked"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["create", f.as_str()];
        all.extend(args.iter().copied());
        let r = run(&all, b"");
        assert_eq!(r.code, 2, "{args:?}: {}", r.out);
        assert!(r.err.contains(why), "{args:?}: {}", r.err);
        assert!(
            !std::path::Path::new(&f).exists(),
            "{args:?} created a file"
        );
    }
}

#[test]
fn the_command_line_examples_in_docs_expiring_run() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/EXPIRING.md"),
    )
    .unwrap();
    let block = doc
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block");
    let d = tmp();
    let mut ran = 0;
    for line in block.lines().filter(|l| l.starts_with("bloomkit ")) {
        let (command, stdin) = match line.split_once(" < ") {
            Some((c, _file)) => (
                c,
                b"https://example.com/a\nhttps://example.com/a\n".as_slice(),
            ),
            None => (line, b"".as_slice()),
        };
        let args: Vec<String> = command
            .split_whitespace()
            .skip(1)
            .map(|a| {
                if a.ends_with(".bloom") {
                    path(&d, a)
                } else {
                    a.to_string()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = ok(&args, stdin);
        if args[0] == "dedup" {
            assert_eq!(r.out, "https://example.com/a\n");
        }
        if args[0] == "check" {
            assert_eq!(r.out, "https://example.com/a\n");
        }
        ran += 1;
    }
    assert_eq!(ran, 7);
}

#[test]
fn concurrent_writers_of_a_window_file_lose_nothing() {
    // Four processes add different lines to one time-window file at once (each file change is
    // load, change, replace under the file's lock); then every line is found.
    let (_d, f) = created("shared.bloom", &["--window", "7d", "--capacity", "100000"]);
    let parts: Vec<Vec<String>> = (0..4)
        .map(|p| lines(&format!("writer-{p}-"), 0..1500))
        .collect();
    let children: Vec<_> = parts
        .iter()
        .map(|part| {
            let data = input(part);
            let f = f.clone();
            std::thread::spawn(move || run(&["add", &f, "--save-every", "100"], &data))
        })
        .collect();
    for c in children {
        let r = c.join().unwrap();
        assert_eq!(r.code, 0, "{}", r.err);
    }
    for part in &parts {
        support::assert_all_present(&f, part);
    }
    let v = json(&f);
    let est = v["estimated_items"].as_u64().unwrap();
    assert!((5_700..=6_300).contains(&est), "{est}");
}
