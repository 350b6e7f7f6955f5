//! Many processes on one filter file at once: nothing acknowledged is lost, creation is
//! exclusive, and dedup prints each line as new exactly once over all processes.

mod support;

use std::process::Stdio;
use support::*;

/// Runs `bloomkit add` processes at once, each fed its own lines from a file.
fn concurrent_adds(filter: &str, dir: &std::path::Path, sets: &[Vec<String>], extra: &[&str]) {
    let children: Vec<_> = sets
        .iter()
        .enumerate()
        .map(|(i, set)| {
            let path = dir.join(format!("input-{i}.txt"));
            std::fs::write(&path, input(set)).unwrap();
            let mut args = vec!["add", "-q", filter];
            args.extend_from_slice(extra);
            bk(&args)
                .stdin(std::fs::File::open(&path).unwrap())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
    }
}

#[test]
fn eight_concurrent_adds_lose_nothing() {
    // 20 trials of 8 processes x 50,000 lines on one file. Half the trials save every 10,000
    // lines (many interleaved saves), half once at the end; half use a scalable filter (saved
    // whole under the lock) and half a classic one.
    for trial in 0..20u64 {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("shared.bloom").to_string_lossy().into_owned();
        let kind = if trial % 2 == 0 {
            "classic"
        } else {
            "scalable"
        };
        ok(
            &["create", &f, "-n", "400000", "-p", "0.01", "--kind", kind],
            b"",
        );
        let sets: Vec<Vec<String>> = (0..8)
            .map(|p| lines(&format!("t{trial}-p{p}"), 0..50_000))
            .collect();
        let extra: &[&str] = if trial % 4 < 2 {
            &["--save-every", "10000"]
        } else {
            &[]
        };
        concurrent_adds(&f, d.path(), &sets, extra);
        let all: Vec<String> = sets.concat();
        assert_all_present(&f, &all);
        assert_no_temp_files(d.path());
    }
}

#[test]
fn concurrent_creates_of_one_path_succeed_exactly_once() {
    // 40 creates of 10 paths, all at once: exactly 10 succeed, the others say it exists.
    let d = tempfile::tempdir().unwrap();
    let paths: Vec<String> = (0..10)
        .map(|i| {
            d.path()
                .join(format!("f{i}.bloom"))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let children: Vec<_> = (0..40)
        .map(|i| {
            bk(&["create", &paths[i % 10], "-n", "1000", "-p", "0.01"])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut succeeded = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => succeeded += 1,
            Some(2) => assert!(err.contains("already exists"), "{err}"),
            other => panic!("{other:?}: {err}"),
        }
    }
    assert_eq!(succeeded, 10);
    for p in &paths {
        ok(&["info", p], b"");
    }
}

#[test]
fn concurrent_dedups_print_each_line_once() {
    // 8 dedup processes over overlapping streams (each line in 3 streams, in different
    // orders). At p = 1e-9 and 32,000 distinct lines, a false positive (a line dropped
    // without ever being printed) has probability below 3.2e-5 per trial; every other line
    // must be printed exactly once over all processes, and be in the filter afterwards.
    for trial in 0..5u64 {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("seen.bloom").to_string_lossy().into_owned();
        ok(&["create", &f, "-n", "32000", "-p", "1e-9"], b"");
        let universe = lines(&format!("t{trial}"), 0..32_000);
        let mut rng = Rng::new(trial);
        let children: Vec<_> = (0..8u64)
            .map(|p| {
                // Stream p: lines [p*4000, p*4000 + 12000) mod 32000, shuffled.
                let mut set: Vec<String> = (0..12_000)
                    .map(|i| universe[((p * 4000 + i) % 32_000) as usize].clone())
                    .collect();
                for i in (1..set.len()).rev() {
                    set.swap(i, rng.below(i as u64 + 1) as usize);
                }
                let path = d.path().join(format!("in-{p}.txt"));
                std::fs::write(&path, input(&set)).unwrap();
                bk(&["dedup", "--no-progress", &f])
                    .stdin(std::fs::File::open(&path).unwrap())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut printed = std::collections::HashMap::<String, u32>::new();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            for line in String::from_utf8(out.stdout).unwrap().lines() {
                *printed.entry(line.to_string()).or_default() += 1;
            }
        }
        let twice: Vec<_> = printed.iter().filter(|(_, &n)| n > 1).collect();
        assert!(twice.is_empty(), "printed more than once: {twice:?}");
        assert_eq!(printed.len(), universe.len(), "every line printed once");
        assert_all_present(&f, &universe);
    }
}

#[test]
fn a_writer_follows_a_file_replaced_under_it() {
    // A running dedup (classic file, used in place) whose file another process replaces with
    // `create --force`: its next lines go into the new file, never into the old one.
    use std::io::{BufRead, Write};
    let d = tempfile::tempdir().unwrap();
    let (f, mut child, mut input, mut out) = live_dedup(d.path());
    let mut line = String::new();
    writeln!(input, "before").unwrap();
    input.flush().unwrap();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "before\n");
    ok(&["create", &f, "-n", "5000", "-p", "0.01", "--force"], b"");
    writeln!(input, "after").unwrap();
    input.flush().unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "after\n");
    // Printed, so already in the new file.
    assert_all_present(&f, &["after".to_string()]);
    drop(input);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(ok(&["info", &f], b"")
        .out
        .contains("capacity:         5000\n"));
    assert_all_present(&f, &["after".to_string()]);
}
