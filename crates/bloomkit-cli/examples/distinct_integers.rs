//! Prints N distinct integers of `0..RANGE` in a scrambled order, one per line: the input of
//! the `sort-unique` measurements in docs/BITMAPS.md.
//!
//! `cargo run --release -p bloomkit-cli --example distinct_integers -- N RANGE | bloomkit sort-unique`
//!
//! Integer `i` (for `i` in `0..N`) is `(A·i + B) mod RANGE` with `A` odd and coprime to
//! `RANGE`: a bijection of `0..RANGE`, so the N values are distinct, and consecutive ones lie
//! far apart.

use std::io::Write;

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse::<f64>()
                .ok()
                .filter(|x| x.fract() == 0.0 && *x >= 1.0)
                .unwrap_or_else(|| {
                    panic!("usage: distinct_integers N RANGE (whole numbers, N <= RANGE); got {a}")
                }) as u64
        })
        .collect();
    let [n, range] = args[..] else {
        panic!("usage: distinct_integers N RANGE");
    };
    assert!(n <= range, "N must be at most RANGE");
    let range = u128::from(range);
    // About the golden ratio times the range, made coprime to it.
    let mut a = (range * 0x9e37_79b9 / 0x1_0000_0000) | 1;
    while gcd(a, range) != 1 {
        a += 2;
    }
    let b = range / 3;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut v = b % range;
    for _ in 0..n {
        if writeln!(out, "{v}").is_err() {
            return; // a closed pipe: the reader has enough
        }
        v = (v + a) % range;
    }
    let _ = out.flush();
}
