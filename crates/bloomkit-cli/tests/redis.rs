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

/// Creates filter `name` for `n` elements at p = 1% on `server`; returns its target and id.
fn create_filter(server: &Server, name: &str, n: &str) -> (String, String) {
    let t = server.target(name);
    assert_eq!(run(&["create", &t, "-n", n, "-p", "0.01"], "").0, 0);
    let id = filter_id(&mut redis_at(server.port, 0), name).unwrap();
    (t, id)
}

/// 10,000 members, 20,000 absent probes at p = 1%: false positives ~ Binomial(20000, <= 0.01),
/// mean <= 200, sd <= 14.1; the bound 200 + 6 sd = 285 fails by chance with p < 1e-8.
const FP_BOUND: u64 = 285;

#[test]
fn default_filter_in_redis_add_check_info_and_bulk_path() {
    let server = Server::start();
    let (t, _) = create_filter(&server, "users", "10000");
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
    // A small add reports new items one by one (with an item that tests absent first: the
    // filter's key is random, so any given name is a false positive 1 % of the time).
    let fresh = (0..100)
        .map(|i| format!("brand-new-{i}"))
        .find(|x| run(&["check", &t, x], "").0 == 1)
        .unwrap();
    let (_, _, err) = run(&["add", &t, "user-1", &fresh], "");
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
    let server = Server::start();
    let t = server.target("crawl");
    let (code, out, err) = run(&["dedup", &t, "-n", "1000", "-p", "0.001"], "a\nb\na\n");
    assert_eq!((code, out.as_str()), (0, "a\nb\n"), "{err}");
    let (_, out, _) = run(&["dedup", &t], "b\nc\n");
    assert_eq!(out, "c\n");
}

#[test]
fn redisson_and_scalable_filters_in_redis() {
    let server = Server::start();
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
    let server = Server::start();
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
            vec![
                "create", &c, "-n", "10", "-p", "0.1", "--kind", "counting", "--scheme", "redisson",
            ],
            "no counters",
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

// ---------------------------------------------------------------------------------------
// Filter identity, temporary keys, key names, credentials and faults (issue 15, items 8–13).
// ---------------------------------------------------------------------------------------

use std::io::Write as _;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("bloomkit")
}

fn redis_at(port: u16, db: u32) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}/{db}"))
        .unwrap()
        .get_connection()
        .unwrap()
}

fn keys(c: &mut redis::Connection, pattern: &str) -> Vec<String> {
    let mut out: Vec<String> = redis::cmd("KEYS").arg(pattern).query(c).unwrap();
    out.sort();
    out
}

/// The id of filter `name`, from its metadata.
fn filter_id(c: &mut redis::Connection, name: &str) -> Option<String> {
    redis::cmd("HGET")
        .arg(format!("bloomkit:{{{name}}}:meta"))
        .arg("id")
        .query(c)
        .unwrap()
}

/// Bits set over every segment key of filter `name` with id `id`.
fn bits_of(c: &mut redis::Connection, name: &str, id: &str) -> u64 {
    keys(c, &format!("bloomkit:{{{name}:{id}:*"))
        .iter()
        .map(|k| redis::cmd("BITCOUNT").arg(k).query::<u64>(c).unwrap())
        .sum()
}

/// Starts `bloomkit ARGS` with piped stdin and stderr.
fn spawn(args: &[&str], env: &[(&str, &str)]) -> Child {
    std::process::Command::new(bin())
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Feeds `prefix-0`, `prefix-1`, … to the child's stdin until it stops reading (or `limit`
/// lines); returns the number of lines written.
fn feed(child: &mut Child, prefix: &str, limit: u64) -> std::thread::JoinHandle<u64> {
    let mut stdin = child.stdin.take().unwrap();
    let prefix = prefix.to_string();
    std::thread::spawn(move || {
        let mut n = 0u64;
        while n < limit {
            let chunk: String = (n..n + 1000).map(|i| format!("{prefix}-{i}\n")).collect();
            if stdin.write_all(chunk.as_bytes()).is_err() {
                break;
            }
            n += 1000;
            std::thread::sleep(Duration::from_millis(2));
        }
        n
    })
}

/// Waits for the child (at most 60 s) and returns (exit code, stderr).
fn finish(mut child: Child) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(!err.contains("panicked"), "{err}");
            return (status.code().unwrap_or(-1), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the writer did not stop");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `cond` holds (at most 30 s).
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A running `bloomkit` fed lines by a thread.
struct Writer {
    child: Child,
    fed: std::thread::JoinHandle<u64>,
}

impl Writer {
    /// Starts `bloomkit ARGS` fed `prefix-0`, `prefix-1`, … (at most `limit` lines) and
    /// returns once its first bits are in filter `name` (id `id`) on `server`.
    fn start(
        server: &Server,
        (name, id): (&str, &str),
        args: &[&str],
        prefix: &str,
        limit: u64,
    ) -> Writer {
        let mut child = spawn(args, &[]);
        let fed = feed(&mut child, prefix, limit);
        let mut c = redis_at(server.port, 0);
        wait_for("the writer's first bits", || bits_of(&mut c, name, id) > 0);
        Writer { child, fed }
    }

    /// Waits for it to stop; returns (exit code, stderr, lines fed).
    fn finish(self) -> (i32, String, u64) {
        let (code, err) = finish(self.child);
        (code, err, self.fed.join().unwrap())
    }

    /// Waits for it to stop, which it must do with a typed error saying its filter was
    /// deleted or re-created; returns that error.
    fn finish_gone(self) -> String {
        let (code, err, _) = self.finish();
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("deleted or re-created"), "{err}");
        err
    }
}

/// A filter `name` for 10^6 elements on `server` with `bloomkit CMD TARGET -q` streaming
/// lines into it; returns the target, the filter's id and the writer.
fn streaming_into(server: &Server, name: &str, cmd: &str) -> (String, String, Writer) {
    let (t, id) = create_filter(server, name, "1e6");
    let writer = Writer::start(server, (name, &id), &[cmd, &t, "-q"], "line", u64::MAX);
    (t, id, writer)
}

#[test]
fn writer_fails_typed_when_its_filter_is_recreated_and_writes_nothing_into_the_new_one() {
    let server = Server::start();
    // A real `bloomkit add` streaming lines (full batches: the bulk path).
    let (t, old, writer) = streaming_into(&server, "w", "add");
    let mut c = redis_at(server.port, 0);
    // Another process re-creates the filter with other parameters.
    let (code, _, err) = run(&["create", &t, "-n", "5000", "-p", "0.001", "--force"], "");
    assert_eq!(code, 0, "{err}");
    let new = filter_id(&mut c, "w").unwrap();
    assert_ne!(new, old);
    let err = writer.finish_gone();
    assert!(err.contains("acknowledged the "), "{err}");
    assert!(err.contains("depends on its persistence"), "{err}");
    // Not one bit in the new filter, and no key of the old one left behind.
    assert_eq!(bits_of(&mut c, "w", &new), 0);
    assert_eq!(bits_of(&mut c, "w", &old), 0);
    assert_eq!(keys(&mut c, &format!("*{old}*")), Vec::<String>::new());
    let v = info(&t);
    assert_eq!(v["estimated_items"], 0, "{v}");
    assert_eq!(v["capacity"], 5000);
}

#[test]
fn writer_fails_typed_when_its_filter_is_deleted_and_leaves_no_orphan_key() {
    let server = Server::start();
    // `dedup` adds batch by batch through the online path.
    let (_, _, writer) = streaming_into(&server, "d", "dedup");
    let mut c = redis_at(server.port, 0);
    // Deleted the way the library deletes: the metadata first, then the segments.
    let all = keys(&mut c, "*");
    let _: i64 = redis::cmd("DEL")
        .arg("bloomkit:{d}:meta")
        .query(&mut c)
        .unwrap();
    for k in &all {
        let _: i64 = redis::cmd("DEL").arg(k).query(&mut c).unwrap();
    }
    writer.finish_gone();
    let left: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(left, 0, "no orphan segment: {:?}", keys(&mut c, "*"));
}

/// A small deterministic generator for kill delays.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn killed_bulk_adds_leave_no_temporary_key_without_expiry() {
    let server = Server::start();
    let (t, _) = create_filter(&server, "bulk", "4e6");
    let mut c = redis_at(server.port, 0);
    let input: String = lines(0..40_000, "k");
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    // 40 `bloomkit add` processes (4 at a time) killed with SIGKILL during their bulk adds.
    for _round in 0..10 {
        let mut procs = Vec::new();
        for _ in 0..4 {
            let mut child = spawn(&["add", &t, "-q"], &[]);
            let mut stdin = child.stdin.take().unwrap();
            let text = input.clone();
            let feeder = std::thread::spawn(move || {
                let _ = stdin.write_all(text.as_bytes());
            });
            procs.push((child, feeder, 20 + xorshift(&mut rng) % 250));
        }
        let start = Instant::now();
        for (mut child, feeder, after_ms) in procs {
            let at = Duration::from_millis(after_ms);
            if let Some(rest) = at.checked_sub(start.elapsed()) {
                std::thread::sleep(rest);
            }
            let _ = child.kill();
            let _ = child.wait();
            feeder.join().unwrap();
        }
    }
    let temps = keys(&mut c, "*tmp*");
    let without_ttl: Vec<&String> = temps
        .iter()
        .filter(|k| redis::cmd("PTTL").arg(k).query::<i64>(&mut c).unwrap() == -1)
        .collect();
    assert!(without_ttl.is_empty(), "{without_ttl:?}");
    assert!(
        temps.is_empty(),
        "the temporary key lives only inside the merge script: {temps:?}"
    );
    // `create --force` leaves exactly the new filter's keys.
    assert_eq!(
        run(&["create", &t, "-n", "1000", "-p", "0.01", "--force"], "").0,
        0
    );
    let id = filter_id(&mut c, "bulk").unwrap();
    assert_eq!(
        keys(&mut c, "*"),
        vec![
            format!("bloomkit:{{bulk:{id}:s0}}"),
            "bloomkit:{bulk}:meta".to_string()
        ]
    );
}

#[test]
fn filters_whose_names_look_like_each_others_keys_stay_apart() {
    let server = Server::start();
    let (x, xl0) = (server.target("X"), server.target("X:l0"));
    assert_eq!(
        run(
            &["create", &x, "-n", "1000", "-p", "0.01", "--kind", "scalable"],
            ""
        )
        .0,
        0
    );
    assert_eq!(run(&["create", &xl0, "-n", "1000", "-p", "0.01"], "").0, 0);
    // Same id in both, so that only the name escaping keeps the keys apart.
    let mut c = redis_at(server.port, 0);
    let id = filter_id(&mut c, "X").unwrap();
    for name in ["X", "X:l0"] {
        let _: i64 = redis::cmd("HSET")
            .arg(format!("bloomkit:{{{name}}}:meta"))
            .arg("id")
            .arg(&id)
            .query(&mut c)
            .unwrap();
    }
    let mut seen = std::collections::HashSet::new();
    for k in keys(&mut c, "*") {
        assert!(seen.insert(k.clone()));
    }
    // Re-create X:l0 under that id's key names (its segments are named after the id).
    assert_eq!(
        run(&["create", &xl0, "-n", "1000", "-p", "0.01", "--force"], "").0,
        0
    );
    assert_eq!(run(&["add", &xl0, "-q"], &lines(0..1000, "z")).0, 0);
    let v = info(&x);
    assert_eq!(v["estimated_items"], 0, "{v}");
    assert_eq!(info(&xl0)["kind"], "blocked");
    let (_, out, _) = run(&["check", "-c", &x], &lines(0..1000, "z"));
    assert!(out.trim().parse::<u64>().unwrap() < 50, "{out}");
}

#[test]
fn redis_password_is_never_printed_and_comes_from_env_or_file() {
    let secret = "pw-Zx81-never-shown";
    let server = Server::start_with(&["--requirepass", secret]);
    let dir = tempfile::tempdir().unwrap();
    let port = server.port;
    let with_pw = format!("redis://:{secret}@127.0.0.1:{port}/f");
    let wrong = "redis://:wrong-Qq7-secret@127.0.0.1:".to_string() + &format!("{port}/f");
    let plain = server.target("f");
    let pwfile = dir.path().join("pw");
    std::fs::write(&pwfile, format!("{secret}\n")).unwrap();
    let badfile = dir.path().join("bad");
    std::fs::write(&badfile, "wrong-Qq7-secret\n").unwrap();
    let pwfile = pwfile.to_str().unwrap();
    let badfile = badfile.to_str().unwrap();

    assert_eq!(
        run(&["create", &with_pw, "-n", "1000", "-p", "0.01"], "").0,
        0
    );
    // Nor in what successful commands print or write (text, JSON, the plot's labels).
    let svg = dir.path().join("p.svg");
    let svg_arg = svg.to_str().unwrap();
    for args in [
        vec!["info", &with_pw],
        vec!["info", &with_pw, "--json"],
        vec!["calc", "--filter", &with_pw],
        vec!["calc", "--filter", &with_pw, "--json"],
        vec!["calc", "--filter", &with_pw, "--plot", svg_arg],
    ] {
        let (code, out, err) = run(&args, "");
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            !out.contains(secret) && !err.contains(secret),
            "{args:?}: {out}{err}"
        );
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains(&format!("redis://127.0.0.1:{port}/f")) && !plot.contains(secret));
    let tls = format!("rediss://:{secret}@127.0.0.1:{port}/f");
    let param = format!("redis://:{secret}@127.0.0.1:{port}/f?tls=true");
    let down = format!("redis://:{secret}@127.0.0.1:1/f");
    let missing = format!("redis://:{secret}@127.0.0.1:{port}/missing");
    let failing: Vec<Vec<&str>> = vec![
        vec!["create", &with_pw, "-n", "1000", "-p", "0.01"], // exists
        vec!["check", &wrong, "x"],
        vec!["check", &plain, "x"], // no password
        vec!["--password-file", badfile, "check", &plain, "x"],
        vec!["check", &tls, "x"],
        vec!["check", &param, "x"],
        vec!["check", &down, "x"],
        vec!["info", &missing],
    ];
    for args in &failing {
        let (code, out, err) = run(args, "");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(!out.contains(secret) && !err.contains(secret), "{err}");
        assert!(!err.contains("wrong-Qq7-secret"), "{err}");
    }
    let (_, _, err) = run(&["check", &format!("rediss://127.0.0.1:{port}/f"), "x"], "");
    assert!(err.contains("TLS"), "{err}");
    let (_, _, err) = run(&["check", &plain, "x"], "");
    assert!(err.to_lowercase().contains("auth"), "{err}");
    // A wrong password is named as the cause, not the server's address.
    let (_, _, err) = run(&["check", &wrong, "x"], "");
    assert!(
        err.contains("refused the login: check the password"),
        "{err}"
    );
    assert!(!err.contains("is Redis running"), "{err}");

    // From the environment and from a file: works, and `ps` never shows it.
    for (args, env) in [
        (
            vec!["add", plain.as_str(), "-q"],
            vec![("REDIS_PASSWORD", secret)],
        ),
        (
            vec!["--password-file", pwfile, "add", plain.as_str(), "-q"],
            vec![],
        ),
    ] {
        let mut child = spawn(&args, &env);
        // What `ps` shows: the process's command line.
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
        assert!(!String::from_utf8_lossy(&cmdline).contains(secret));
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"from-env-or-file\n")
            .unwrap();
        let (code, err) = finish(child);
        assert_eq!(code, 0, "{err}");
    }
    let (code, out, _) = run(
        &[
            "--password-file",
            pwfile,
            "check",
            &plain,
            "from-env-or-file",
        ],
        "",
    );
    assert_eq!((code, out.as_str()), (0, "from-env-or-file\n"));
}

#[test]
fn database_number_in_the_url_selects_the_database() {
    let server = Server::start();
    let t3 = format!("redis://127.0.0.1:{}/3/name", server.port);
    assert_eq!(run(&["create", &t3, "-n", "1000", "-p", "0.01"], "").0, 0);
    let mut db3 = redis_at(server.port, 3);
    assert!(filter_id(&mut db3, "name").is_some());
    let mut db0 = redis_at(server.port, 0);
    let n: i64 = redis::cmd("DBSIZE").query(&mut db0).unwrap();
    assert_eq!(n, 0, "nothing in database 0, no filter named 3/name");
    let (_, _, err) = run(&["info", &t3, "--json"], "");
    assert!(!err.contains("3/name\""), "{err}");
}

#[test]
fn stream_resumes_after_a_server_restart_and_reports_applied_lines_when_giving_up() {
    let mut server = Server::start_durable();
    let (t, id) = create_filter(&server, "r", "200000");
    // 60,000 lines, streamed; the server is killed and restarted on the same port mid-stream.
    let writer = Writer::start(&server, ("r", &id), &["add", &t, "-q"], "s", 60_000);
    server.kill();
    std::thread::sleep(Duration::from_millis(700));
    server.restart();
    let (code, err, fed) = writer.finish();
    assert_eq!(fed, 60_000);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = run(&["check", "-c", &t], &lines(0..60_000, "s"));
    assert_eq!(out, "60000\n", "every line of the stream is in the filter");

    // Killed for good: the writer gives up after its retries and says how many lines it
    // applied (batches are as long as the input at hand: up to 4,096 lines); they are all
    // there once the server is back.
    let writer = Writer::start(&server, ("r", &id), &["add", &t, "-q"], "g", u64::MAX);
    wait_for("the first line's bits", || {
        run(&["check", &t, "g-0"], "").0 == 0
    });
    server.kill();
    let (code, err, _) = writer.finish();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("gave up after"), "{err}");
    let applied: u64 = err
        .split(
            " items before it (whether they survive a server restart depends on its persistence)",
        )
        .next()
        .and_then(|r| r.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of applied lines: {err}"));
    server.restart();
    let (_, out, _) = run(&["check", "-c", &t], &lines(0..applied as u32, "g"));
    assert_eq!(out, format!("{applied}\n"));
}

#[test]
fn concurrent_bulk_writers_each_report_their_own_new_items() {
    let server = Server::start();
    let (t, _) = create_filter(&server, "many", "200000");
    let procs: Vec<(Child, std::thread::JoinHandle<()>)> = (0..8)
        .map(|w| {
            let mut child = spawn(&["add", &t], &[]);
            let mut stdin = child.stdin.take().unwrap();
            let text = lines(0..20_480, &format!("w{w}"));
            let feeder = std::thread::spawn(move || stdin.write_all(text.as_bytes()).unwrap());
            (child, feeder)
        })
        .collect();
    let mut total = 0;
    for (child, feeder) in procs {
        feeder.join().unwrap();
        let (code, err) = finish(child);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("bulk path"), "{err}");
        let new: u64 = err
            .split(": ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{err}"));
        // Its own 20,480 distinct items, less the few that look present already (FPR ≤ 1 %
        // at the end, so fewer than 3 % by far).
        assert!((19_800..=20_480).contains(&new), "{err}");
        total += new;
    }
    assert!(total <= 8 * 20_480);
}

#[test]
fn corrupt_metadata_and_keys_give_clear_errors() {
    let server = Server::start();
    let (t, _) = create_filter(&server, "c", "1000");
    let mut c = redis_at(server.port, 0);
    // Keyed by default, with the key stored in the filter; Redisson filters stay unkeyed.
    let (_, out, _) = run(&["info", &t], "");
    assert!(out.contains("hashing siphash13:"), "{out}");
    let meta: std::collections::HashMap<String, String> = redis::cmd("HGETALL")
        .arg("bloomkit:{c}:meta")
        .query(&mut c)
        .unwrap();
    assert_eq!(meta["hash_key"].len(), 32);
    let r = server.target("java");
    let redisson = ["create", &r, "-n", "100", "-p", "0.01", "--kind", "classic"];
    assert_eq!(
        run(&[&redisson[..], &["--scheme", "redisson"]].concat(), "").0,
        0
    );
    let (_, out, _) = run(&["info", &r], "");
    assert!(!out.contains("siphash"), "{out}");
    let corrupt_id = filter_id(&mut c, "c").unwrap();
    assert!(!keys(&mut c, &format!("*{corrupt_id}*")).is_empty());
    let _: i64 = redis::cmd("HSET")
        .arg("bloomkit:{c}:meta")
        .arg("segments")
        .arg("100000000")
        .query(&mut c)
        .unwrap();
    let (code, _, err) = run(&["info", &t], "");
    assert_eq!(code, 2);
    assert!(err.contains("corrupt metadata"), "{err}");

    // A filter keyed with --key-file: without the key, the error names the CLI option.
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "00112233445566778899aabbccddeeff").unwrap();
    let key = key.to_str().unwrap();
    let k = server.target("keyed");
    assert_eq!(
        run(
            &["--key-file", key, "create", &k, "-n", "100", "-p", "0.01"],
            ""
        )
        .0,
        0
    );
    let (code, _, err) = run(&["check", &k, "x"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("--key-file") && !err.contains("open_with"),
        "{err}"
    );
    assert_eq!(run(&["--key-file", key, "check", &k, "x"], "").0, 1);
    // `create --force` replaces it without the key, leaving none of its keys behind; and it
    // replaces a filter whose metadata is corrupt.
    let old = filter_id(&mut c, "keyed").unwrap();
    assert_eq!(
        run(&["create", &k, "-n", "100", "-p", "0.01", "--force"], "").0,
        0
    );
    assert!(keys(&mut c, &format!("*{old}*")).is_empty());
    assert_eq!(run(&["check", &k, "x"], "").0, 1);
    assert_eq!(
        run(&["create", &t, "-n", "100", "-p", "0.01", "--force"], "").0,
        0
    );
    assert_eq!(run(&["info", &t], "").0, 0);
    // ... and the corrupt filter's segments went with its metadata.
    assert!(keys(&mut c, &format!("*{corrupt_id}*")).is_empty());
    // Without a valid id its segments cannot be identified: the metadata goes, with a warning.
    let _: i64 = redis::cmd("HSET")
        .arg("bloomkit:{c}:meta")
        .arg("id")
        .arg("not hex")
        .query(&mut c)
        .unwrap();
    let (code, _, err) = run(&["create", &t, "-n", "100", "-p", "0.01", "--force"], "");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("corrupt metadata only") && err.contains("no valid filter id"),
        "{err}"
    );
    assert_eq!(run(&["info", &t], "").0, 0);
}

#[test]
fn counting_filter_in_redis_add_check_remove_across_processes() {
    let server = Server::start();
    let t = server.target("sessions");
    let (code, _, err) = run(
        &[
            "create", &t, "--kind", "counting", "-n", "10000", "-p", "0.01",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let v = info(&t);
    assert_eq!(v["kind"], "counting");
    assert_eq!(v["capacity"], 10000);
    // New counting filters are probed with the mixed scheme (the layout's stored name).
    assert_eq!(v["layout"], "counters4-mixed");
    let members = lines(0..5_000, "s");
    assert_eq!(run(&["add", &t], &members).0, 0);
    let (_, out, _) = run(&["check", "-c", &t], &members);
    assert_eq!(out, "5000\n", "no false negatives");
    // Another process removes half; they are gone, the rest stay.
    let (code, _, err) = run(&["remove", &t], &lines(0..2_500, "s"));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("removed 2500"), "{err}");
    let (_, out, _) = run(&["check", "-c", &t], &lines(2_500..5_000, "s"));
    assert_eq!(out, "2500\n");
    let (_, out, _) = run(&["check", "-c", &t], &lines(0..2_500, "s"));
    let left: u64 = out.trim().parse().unwrap();
    assert!(left <= 60, "{left} removed items still test present");
    // Removing what is not there: a one-line error naming it, and nothing of its batch
    // changes (the present item before it stays).
    let (code, _, err) = run(&["remove", &t, "s-4000", "never-added-x"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("never-added-x") && err.contains("nothing of its batch was removed"),
        "{err}"
    );
    assert!(
        !err.contains("may be in part"),
        "the batch's fate is said once: {err}"
    );
    assert_eq!(run(&["check", &t, "s-4000"], "").0, 0);
    // A bad line ends the input before its batch is sent: the note says so.
    let (code, _, err) = run(&["add", "--items", "hex", &t], "00ff\nzz\n");
    assert_eq!(code, 2);
    assert!(
        err.contains("line 2: 'zz' is not hexadecimal ('z' is not a hex digit)")
            && err.contains("nothing after them was sent")
            && !err.contains("may be in part"),
        "{err}"
    );
    let v = info(&t);
    let est = v["estimated_items"].as_u64().unwrap();
    assert!((2_300..=2_700).contains(&est), "{est}");
}

#[test]
fn time_window_filter_in_redis_and_expire() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let t = server.target("crawl");
    let (code, _, err) = run(
        &[
            "create",
            &t,
            "--window",
            "30d",
            "--generations",
            "30",
            "--capacity",
            "30000",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let v = info(&t);
    assert_eq!(v["kind"], "time-window");
    assert_eq!(v["capacity"], 30000);
    assert_eq!(v["window"]["window"], "30d");
    assert_eq!(v["window"]["generations"], 30);
    assert_eq!(v["window"]["generation_ms"], 86_400_000);
    let (_, text, _) = run(&["info", &t], "");
    assert!(text.contains("forgotten between 30d and 32d"), "{text}");
    // add, check, and dedup against the window (the crawler's re-crawl case).
    let seen = lines(0..2_000, "url");
    assert_eq!(run(&["add", &t], &seen).0, 0);
    let (_, out, _) = run(&["check", "-c", &t], &seen);
    assert_eq!(out, "2000\n");
    let (code, out, err) = run(
        &["dedup", &t, "--window", "30d"],
        "url-5\nfresh-1\nurl-7\nfresh-2\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "fresh-1\nfresh-2\n");
    let v = info(&t);
    assert_eq!(v["window"]["live"].as_array().unwrap().len(), 1);
    // Another window under the name: refused, naming both.
    let (code, _, err) = run(&["dedup", &t, "--window", "2w"], "x\n");
    assert_eq!(code, 2);
    assert!(err.contains("30d") && err.contains("2w"), "{err}");
    // Count windows live in files.
    let (code, _, err) = run(&["create", &server.target("cw"), "--window", "1000"], "");
    assert_eq!(code, 2);
    assert!(err.contains("live in files"), "{err}");

    // expire: every key of the filter gets the time to live; it then vanishes by itself.
    let (code, _, err) = run(&["expire", &t, "90d"], "");
    assert_eq!(code, 0, "{err}");
    let mut c = redis_at(server.port, 0);
    let all = keys(&mut c, "*");
    assert!(all.len() >= 3, "{all:?}"); // metadata, anchor, generation
    for k in &all {
        let ttl: i64 = redis::cmd("PTTL").arg(k).query(&mut c).unwrap();
        // A generation that expires sooner (about 32 days) keeps its own time.
        let least = if k.contains("}:g") {
            0
        } else {
            89 * 86_400_000
        };
        assert!(ttl > least && ttl <= 90 * 86_400_000, "{k}: {ttl}");
    }
    let (code, _, err) = run(&["expire", &t, "1s"], "");
    assert_eq!(code, 0, "{err}");
    let start = Instant::now();
    while !keys(&mut c, "*").is_empty() {
        assert!(start.elapsed() < Duration::from_secs(10), "keys left");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Bad input: a missing filter, a file, a zero or unitless duration.
    let (code, _, err) = run(&["expire", &t, "1d"], "");
    assert_eq!(code, 2);
    assert!(err.contains("no such filter"), "{err}");
    let file = dir.path().join("f.bloom");
    let file = file.to_str().unwrap();
    let (code, _, err) = run(&["expire", file, "1d"], "");
    assert_eq!(code, 2);
    assert!(err.contains("Redis filters"), "{err}");
    for bad in ["0s", "30", "-1d"] {
        // A usage error (clap's, with its hint line).
        let out = Command::cargo_bin("bloomkit")
            .unwrap()
            .args(["expire", &t, bad])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains(&bad[..2]) && !err.contains("panicked"),
            "{err}"
        );
    }
}

#[test]
fn keys_of_another_type_are_named_and_create_force_replaces_a_bad_meta_key() {
    let server = Server::start();
    let (t, id) = create_filter(&server, "f", "1000");
    let mut c = redis_at(server.port, 0);
    let seg = format!("bloomkit:{{f:{id}:s0}}");
    let _: () = redis::cmd("DEL").arg(&seg).query(&mut c).unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg(&seg)
        .arg("x")
        .query(&mut c)
        .unwrap();
    let many = lines(0..20_000, "b"); // the bulk path
    for (args, stdin) in [
        (vec!["add", t.as_str()], "a\n"),
        (vec!["add", t.as_str()], many.as_str()),
        (vec!["check", t.as_str(), "a"], ""),
        (vec!["info", t.as_str()], ""),
    ] {
        let (code, _, err) = run(&args, stdin);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            err.contains(&format!("{seg:?} (a list)")),
            "{args:?}: {err}"
        );
    }
    let meta = "bloomkit:{f}:meta";
    let _: () = redis::cmd("DEL").arg(meta).query(&mut c).unwrap();
    let _: () = redis::cmd("SET").arg(meta).arg("x").query(&mut c).unwrap();
    let (code, _, err) = run(&["check", &t, "a"], "");
    assert!(code == 2 && err.contains("(a string)"), "{err}");
    let (code, _, err) = run(&["create", "--force", &t, "-n", "100", "-p", "0.01"], "");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("another type"), "{err}");
    assert_eq!(run(&["add", &t, "a"], "").0, 0);
}

/// A filter name holding a newline and an escape sequence is shown quoted and escaped in every
/// message (`"ev\nbloomkit: forged\u{1b}[31m"`): it can neither forge an output line nor drive
/// the terminal. The filter itself keeps its exact name.
#[test]
fn hostile_filter_names_are_escaped_in_messages() {
    let server = Server::start();
    let name = "ev\nbloomkit: forged\u{1b}[31m";
    let t = server.target(name);
    let shown = format!("{name:?}");
    let runs: [(&[&str], i32); 7] = [
        (&["check", &t, "x"], 2),
        (&["create", &t, "-n", "1000", "-p", "0.01"], 0),
        (&["create", &t, "-n", "1000", "-p", "0.001"], 2),
        (&["add", &t, "a", "b"], 0),
        (&["info", &t], 0),
        (&["expire", &t, "1h"], 0),
        (&["create", &t, "--force", "--window", "1h", "-n", "100"], 0),
    ];
    for (args, want) in runs {
        let (code, out, err) = run(args, "");
        assert_eq!(code, want, "{args:?}: {err}");
        let all = format!("{out}{err}");
        assert!(!all.contains('\u{1b}'), "{args:?}: {all:?}");
        assert!(
            !all.lines().any(|l| l.starts_with("bloomkit: forged")),
            "{args:?}: {all:?}"
        );
        if args[0] != "add" {
            assert!(all.contains(&shown), "{args:?} names it escaped: {all:?}");
        }
    }
    // The name itself is intact in Redis.
    let mut c = redis_at(server.port, 0);
    assert!(filter_id(&mut c, name).is_some());
}

/// A server that is not Redis, a port out of range and a fragment in the URL are each named
/// as what they are (not as the client's parser internals or a generic parse failure).
#[test]
fn servers_and_urls_that_are_not_redis_are_named() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(b"HTTP/1.0 400 Bad Request\r\n\r\n<html></html>");
        }
    });
    let (code, _, err) = run(&["info", &format!("redis://127.0.0.1:{port}/x")], "");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "the server at 127.0.0.1:{port} does not answer in the Redis protocol"
        )) && !err.contains("\\n"),
        "{err}"
    );
    for (url, want) in [
        (
            "redis://127.0.0.1:99999/x",
            "port 99999 is not a TCP port (1 to 65535)",
        ),
        ("redis://127.0.0.1:0/x", "port 0 is not a TCP port"),
        (
            "redis://127.0.0.1:6379/x#frag",
            "fragments (#…) are not supported",
        ),
    ] {
        let (code, _, err) = run(&["info", url], "");
        assert_eq!(code, 2, "{url}: {err}");
        assert!(err.contains(want), "{url}: {err}");
    }
}
