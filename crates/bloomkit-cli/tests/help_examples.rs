//! Every example in `bloomkit --help` and in each command's `--help` runs: the lines under
//! EXAMPLES are taken from the real binary's help and run by bash in a fresh directory per
//! command (with a few input files an example reads), against a real redis-server for the
//! `redis://` ones. Each must exit with status 0 and print no error.

mod common;

use common::Server;
use std::path::Path;
use std::process::Command;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("bloomkit")
}

fn help(args: &[&str]) -> String {
    let out = Command::new(bin())
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The lines of the EXAMPLES section of a help text.
fn examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "EXAMPLES:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// The commands listed by `bloomkit --help`.
fn commands() -> Vec<String> {
    help(&[])
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

/// The input files the examples read.
fn fixtures(dir: &Path) {
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write(
        "urls.txt",
        "https://example.com/\nhttps://a.example/\nhttps://example.com/\n",
    );
    write("more-urls.txt", "https://b.example/\n");
    write("emails.txt", "alice\nzed@example.com\n");
    write(
        "access.log",
        "1.2.3.4 - GET /a 200\n1.2.3.4 - GET /b 200\n5.6.7.8 - GET /a 200\n",
    );
    write("access-paths.txt", "/a\n/c\n");
    write("frontier.txt", "https://x.example/\nhttps://y.example/\n");
    write("ids.txt", "42\n7\n42\n");
    write("more-ids.txt", "8\n42\n");
    write("today.ids", "3\n\n4\n3\n");
    write("calls-today.txt", "5551234\n5559876\n5551234\n");
    write("cat.jpg", "");
    write("dog.jpg", "");
}

#[test]
fn every_help_example_runs() {
    let server = Server::start();
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut sections = vec![(String::from("bloomkit"), examples(&help(&[])))];
    for c in commands() {
        let ex = examples(&help(&[&c]));
        assert!(!ex.is_empty(), "`bloomkit {c} --help` has no examples");
        sections.push((c, ex));
    }
    assert!(sections.len() >= 12, "{sections:?}");
    let mut ran = 0;
    for (command, lines) in sections {
        // Each command's examples run in order, in a directory (and a Redis) of their own.
        let dir = tempfile::tempdir().unwrap();
        fixtures(dir.path());
        assert!(common::command(server.port, "FLUSHALL").is_some_and(|r| r.starts_with("+OK")));
        for line in lines {
            let script = line.replace("127.0.0.1:6379", &format!("127.0.0.1:{}", server.port));
            let out = Command::new("bash")
                .args(["-c", &format!("set -o pipefail; {script}")])
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("HOME", dir.path())
                .output()
                .expect("bash runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && !stderr.contains("bloomkit: ") && !stderr.contains("error"),
                "`bloomkit {command} --help` example failed: {line}\nstatus {:?}\n{stderr}",
                out.status.code()
            );
            ran += 1;
        }
    }
    assert!(ran >= 40, "only {ran} examples");
}

/// The lines of the first fenced block of `kind` (`sh`, `console`) after `heading` in a
/// document of the repository.
fn block(doc: &str, heading: &str, kind: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip_while(|l| *l != format!("```{kind}"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .map(str::to_string)
        .collect()
}

/// Runs `script` with bash in `dir`, with `bloomkit` on the PATH; returns (status, stdout and
/// stderr merged).
fn shell(script: &str, dir: &Path) -> (i32, String) {
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-c", &format!("set -o pipefail; {script} 2>&1")])
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir)
        .output()
        .expect("bash runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_readme_cli_example_runs() {
    let server = Server::start();
    let lines = block("README.md", "## Quick tour", "sh");
    assert!(lines.len() >= 5, "{lines:?}");
    let dir = tempfile::tempdir().unwrap();
    fixtures(dir.path());
    let (code, out) = shell(
        "printf 'https://example.com/\\nhttps://b.example/\\nhttps://example.com/\\n' | gzip > crawl.log.gz",
        dir.path(),
    );
    assert_eq!(code, 0, "{out}");
    for line in lines {
        let script = line.replace("127.0.0.1:6379", &format!("127.0.0.1:{}", server.port));
        let (code, out) = shell(&script, dir.path());
        assert!(
            code == 0 && !out.contains("bloomkit: "),
            "README example failed: {line}\n{out}"
        );
    }
}

/// docs/CLI.md opens with a session: each `$ command` prints exactly what follows it.
#[test]
fn the_cli_md_session_prints_what_it_shows() {
    let lines = block(
        "docs/CLI.md",
        "# The `bloomkit` command-line tool",
        "console",
    );
    let dir = tempfile::tempdir().unwrap();
    let mut steps: Vec<(String, String)> = Vec::new();
    for line in lines {
        match line.strip_prefix("$ ") {
            Some(cmd) => steps.push((cmd.to_string(), String::new())),
            None => {
                let (_, expected) = steps.last_mut().expect("a command first");
                expected.push_str(&line);
                expected.push('\n');
            }
        }
    }
    assert!(steps.len() >= 3);
    for (cmd, expected) in steps {
        let (_, out) = shell(&cmd, dir.path());
        assert_eq!(out, expected, "docs/CLI.md: $ {cmd}");
    }
}
