//! The workspace README shows the library example of the crate README (`crates/bloomkit/README.md`),
//! which is compiled and run as a doctest (`ReadmeDoctests` in `lib.rs`): the two must not drift.
//! The crate README is the one published with the crate, so the doctest also works in the
//! packaged crate, where the workspace README is absent.

use std::path::Path;

fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim_start().starts_with("```rust") => current = Some(String::new()),
            Some(block) if line.trim_start() == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn workspace_readme_shows_the_tested_example_of_the_crate_readme() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace_readme = crate_dir.join("../../README.md");
    if !workspace_readme.exists() {
        // A packaged crate (`cargo package`, crates.io) has only its own README.
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing in CI",
            workspace_readme.display()
        );
        return;
    }
    let root = std::fs::read_to_string(&workspace_readme).unwrap();
    let own = std::fs::read_to_string(crate_dir.join("README.md")).unwrap();
    let own_blocks = rust_blocks(&own);
    let root_blocks = rust_blocks(&root);
    assert!(
        !root_blocks.is_empty(),
        "the workspace README has a Rust example"
    );
    for block in root_blocks {
        assert!(
            own_blocks.contains(&block),
            "this example of README.md is not in crates/bloomkit/README.md (where it is tested):\n{block}"
        );
    }
}
