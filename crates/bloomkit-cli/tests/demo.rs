//! README's first command, `bash crates/bloomkit-cli/demo.sh`, runs and does what it says.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn demo_dedups_a_url_stream() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("demo.sh");
    let out = Command::new("bash")
        .arg(&script)
        .env("BLOOMKIT", assert_cmd::cargo::cargo_bin("bloomkit"))
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "kept K first-seen URLs out of 200000; sort -u finds D distinct"
    let line = stdout
        .lines()
        .find(|l| l.starts_with("kept "))
        .expect("summary line");
    let words: Vec<&str> = line.split_whitespace().collect();
    let kept: u64 = words[1].parse().unwrap();
    let distinct: u64 = words[words.len() - 2].parse().unwrap();
    // A repeat is never kept, so kept <= distinct. A new URL is dropped only on a false
    // positive: at most 0.0001 per URL by the filter's design, so drops ~ Poisson(<= 4.9) for
    // ~49,000 URLs; more than 20 has probability below 1e-7.
    assert!(kept <= distinct && distinct - kept <= 20, "{line}");
    assert!(distinct > 40_000, "{line}");
    // The last command's answer: the crawled page only.
    assert_eq!(
        stdout.lines().last(),
        Some("https://example.com/page/7"),
        "{stdout}"
    );
}
