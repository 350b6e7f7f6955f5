//! End-to-end tests of Redis targets: the real `bloomkit` binary against real redis-server
//! processes (a standalone server and a three-node cluster) on free loopback ports.

mod common;

use assert_cmd::Command;
use common::{Cluster, Server};

/// Runs and returns (status, stdout, stderr); an error must be one clean line.
fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = Command::cargo_bin("bloomkit")
        .unwrap()
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap();
    let code = out.status.code().expect("exit code");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    if code == 2 {
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "one-line error: {stderr}"
        );
    }
    (
        code,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

fn lines(range: std::ops::Range<u32>, prefix: &str) -> String {
    range.map(|i| format!("{prefix}-{i}\n")).collect()
}

fn info(target: &str) -> serde_json::Value {
    let (code, out, err) = run(&["info", target, "--json"], "");
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// 10,000 members, 20,000 absent probes at p = 1%: false positives ~ Binomial(20000, <= 0.01),
/// mean <= 200, sd <= 14.1; the bound 200 + 6 sd = 285 fails by chance with p < 1e-8.
const FP_BOUND: u64 = 285;

#[test]
fn default_filter_in_redis_add_check_info_and_bulk_path() {
    let (server, _dir) = Server::start();
    let t = server.target("users");
    assert_eq!(run(&["create", &t, "-n", "10000", "-p", "0.01"], "").0, 0);
    let (code, _, err) = run(&["create", &t, "-n", "10000", "-p", "0.01"], "");
    assert_eq!(code, 2);
    assert!(err.contains("--force"), "{err}");

    // 10,000 lines: two full batches go through the bulk path.
    let members = lines(0..10_000, "user");
    let (code, _, err) = run(&["add", &t], &members);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("bulk path"), "{err}");
    let (_, out, _) = run(&["check", "-c", &t], &members);
    assert_eq!(out, "10000\n", "no false negatives");
    let (_, out, _) = run(&["check", "-c", &t], &lines(0..20_000, "absent"));
    let fp: u64 = out.trim().parse().unwrap();
    assert!(fp <= FP_BOUND, "{fp} false positives");
    let (code, out, _) = run(&["check", &t, "user-5", "nobody-at-all-x"], "");
    assert_eq!(code, 0);
    assert!(out.starts_with("user-5\n"), "{out}");

    let v = info(&t);
    assert_eq!(v["kind"], "blocked");
    assert_eq!(v["layout"], "register");
    assert_eq!(v["capacity"], 10000);
    assert_eq!(v["fpp"], 0.01);
    let est = v["estimated_items"].as_u64().unwrap();
    assert!((9500..=10500).contains(&est), "{est}");
    // A small add reports new items one by one.
    let (_, _, err) = run(&["add", &t, "user-1", "brand-new"], "");
    assert!(err.contains("1 new"), "{err}");

    // --force starts over.
    assert_eq!(
        run(&["create", &t, "-n", "100", "-p", "0.01", "--force"], "").0,
        0
    );
    assert_eq!(run(&["check", &t, "user-1"], "").0, 1);
}

#[test]
fn dedup_against_redis_is_shared_between_runs() {
    let (server, _dir) = Server::start();
    let t = server.target("crawl");
    let (code, out, err) = run(&["dedup", &t, "-n", "1000", "-p", "0.001"], "a\nb\na\n");
    assert_eq!((code, out.as_str()), (0, "a\nb\n"), "{err}");
    let (_, out, _) = run(&["dedup", &t], "b\nc\n");
    assert_eq!(out, "c\n");
}

#[test]
fn redisson_and_scalable_filters_in_redis() {
    let (server, _dir) = Server::start();
    let r = server.target("java-users");
    assert_eq!(
        run(
            &[
                "create", &r, "-n", "1000", "-p", "0.01", "--kind", "classic", "--scheme",
                "redisson"
            ],
            ""
        )
        .0,
        0
    );
    run(&["add", &r, "alice", "bob"], "");
    let (_, out, _) = run(&["check", &r, "alice", "bob", "carol-not-added"], "");
    assert!(out.starts_with("alice\nbob\n"), "{out}");
    let v = info(&r);
    assert_eq!(
        (v["kind"].as_str(), v["scheme"].as_str()),
        (Some("classic"), Some("redisson"))
    );
    // Redisson's sizing for (1000, 1%): 9585 bits, 7 hashes.
    assert_eq!(
        (v["bits"].as_u64(), v["hashes"].as_u64()),
        (Some(9585), Some(7))
    );

    let s = server.target("growing");
    assert_eq!(
        run(
            &["create", &s, "-n", "100", "-p", "0.01", "--kind", "scalable"],
            ""
        )
        .0,
        0
    );
    let members = lines(0..2000, "m");
    assert_eq!(run(&["add", &s, "-q"], &members).0, 0);
    let (_, out, _) = run(&["check", "-c", &s], &members);
    assert_eq!(out, "2000\n");
    let v = info(&s);
    assert_eq!(v["kind"], "scalable");
    assert!(v["layers"].as_array().unwrap().len() >= 4, "{v}");
}

#[test]
fn redis_errors_are_clear() {
    let (server, _dir) = Server::start();
    let t = server.target("f");
    run(&["create", &t, "-n", "100", "-p", "0.01"], "");
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("x.bloom").to_string_lossy().into_owned();
    let (c, g, missing) = (
        server.target("c"),
        server.target("g"),
        server.target("missing"),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["remove", &t, "x"], "cannot remove"),
        (
            vec!["create", &c, "-n", "10", "-p", "0.1", "--kind", "counting"],
            "counting",
        ),
        (
            vec!["create", &g, "-n", "10", "-p", "0.1", "--scheme", "guava"],
            "file target",
        ),
        (
            vec!["export", &t, "--format", "guava", "-o", &file],
            "file targets",
        ),
        (vec!["check", &missing, "x"], "no such filter"),
        (vec!["check", "redis://127.0.0.1:1/x", "x"], "127.0.0.1:1"),
    ];
    for (args, needle) in cases {
        let (code, _, err) = run(&args, "");
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn cluster_target() {
    let cluster = Cluster::start();
    let t = cluster.target("shared");
    assert_eq!(run(&["create", &t, "-n", "20000", "-p", "0.01"], "").0, 0);
    let members = lines(0..10_000, "k");
    assert_eq!(run(&["add", &t, "-q"], &members).0, 0);
    let (_, out, _) = run(&["check", "-c", &t], &members);
    assert_eq!(out, "10000\n");
    let (_, out, _) = run(&["check", "-c", &t], &lines(0..20_000, "absent"));
    let fp: u64 = out.trim().parse().unwrap();
    assert!(fp <= FP_BOUND, "{fp}");
    assert_eq!(info(&t)["kind"], "blocked");
}
