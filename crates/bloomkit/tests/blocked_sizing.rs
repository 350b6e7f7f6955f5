//! The sizes a blocked filter is built with, pinned: `BlockedBloomFilter::new` (which uses
//! `default_params`), `new_compact` and `new_split_block` must choose the same (blocks,
//! layout) for every (n, p) of the grid as they did when the table was written, so that a
//! faster size search (or any other change to the sizing model's evaluation) can never change
//! the size of a filter a user creates. The table, `tests/data/blocked_sizes.txt`, was produced
//! by `cargo run --release -p bloomkit --example blocked_sizing -- --table` before the search was
//! made faster.

use bloomkit::probe::blocked::{default_params, params_for, BlockLayout};

/// A layout as `{:?}` prints it: `Bits(6)`, `SplitBlock`, `SplitBlock256`.
fn layout(s: &str) -> BlockLayout {
    match s {
        "SplitBlock" => BlockLayout::SplitBlock,
        "SplitBlock256" => BlockLayout::SplitBlock256,
        _ => BlockLayout::Bits(
            s.strip_prefix("Bits(")
                .and_then(|k| k.strip_suffix(')'))
                .and_then(|k| k.parse().ok())
                .unwrap_or_else(|| panic!("a layout: {s}")),
        ),
    }
}

#[test]
fn blocked_sizes_are_pinned_for_a_grid_of_n_and_p() {
    let table = include_str!("data/blocked_sizes.txt");
    let mut wrong = Vec::new();
    let mut rows = 0;
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (n, p): (u64, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        let want = (
            (f[2].parse().unwrap(), layout(f[3])),
            (f[4].parse().unwrap(), layout(f[5])),
            (f[6].parse().unwrap(), BlockLayout::SplitBlock),
        );
        let got = (
            default_params(n, p).unwrap(),
            params_for(n, p, false).unwrap(),
            params_for(n, p, true).unwrap(),
        );
        if got != want {
            wrong.push(format!("n = {n}, p = {p:e}: got {got:?}, pinned {want:?}"));
        }
        rows += 1;
    }
    assert_eq!(rows, 100);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
