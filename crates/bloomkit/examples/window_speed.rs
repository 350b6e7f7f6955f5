//! The count window against a plain blocked filter of the same memory at N = 10⁶, p = 1%,
//! interleaved in one process: every round times each operation on each filter over the same
//! keys, and the fastest round of each is kept (on a shared machine the fastest round is the
//! one least disturbed by other processes). The criterion bench `window` times the same
//! operations one after the other.
//!
//! ```text
//! cargo run --profile bench -p bloomkit --example window_speed
//! ```

use std::hint::black_box;
use std::time::Instant;

#[path = "../benches/shared/window_filters.rs"]
mod window_setup;

use window_setup::N;

const OPS: u64 = 200_000;
const ROUNDS: usize = 15;

fn main() {
    let (mut window, mut blocked) = window_setup::filled();
    let bits = window.shape().bits();
    let present: Vec<u64> = (2 * N..2 * N + OPS).collect();
    let absent: Vec<u64> = (1u64 << 63..(1u64 << 63) + OPS).collect();
    let names = [
        "query, present",
        "query, absent",
        "query batch, present",
        "query batch, absent",
        "insert (no answer)",
        "insert (reports novelty)",
    ];
    let mut best = [[f64::INFINITY; 2]; 6];
    let mut next_key = 10 * N;
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_nanos() as f64 / OPS as f64
    };
    // Times `$body` with `$f` bound to each filter in turn: row `$i`, columns 0 and 1.
    macro_rules! both {
        ($i:expr, $f:ident => $body:expr) => {{
            let ns = time(&mut || {
                let $f = &mut window;
                black_box($body);
            });
            best[$i][0] = best[$i][0].min(ns);
            let ns = time(&mut || {
                let $f = &mut blocked;
                black_box($body);
            });
            best[$i][1] = best[$i][1].min(ns);
        }};
    }
    for _ in 0..ROUNDS {
        both!(0, f => present.iter().filter(|k| f.contains(*k)).count());
        both!(1, f => absent.iter().filter(|k| f.contains(*k)).count());
        both!(2, f => f.contains_batch(&present));
        both!(3, f => f.contains_batch(&absent));
        // Setting bits only: the count window's insert_batch, the blocked filter's insert.
        let fresh: Vec<u64> = (next_key..next_key + OPS).collect();
        next_key += OPS;
        let ns = time(&mut || {
            for k in &fresh {
                window.insert_batch(std::slice::from_ref(k));
            }
        });
        best[4][0] = best[4][0].min(ns);
        let ns = time(&mut || {
            for k in &fresh {
                black_box(blocked.insert(k));
            }
        });
        best[4][1] = best[4][1].min(ns);
        let fresh: Vec<u64> = (next_key..next_key + OPS).collect();
        next_key += OPS;
        both!(5, f => fresh.iter().filter(|k| f.insert(*k)).count());
    }
    println!(
        "count window N = {N}, p = 0.01 ({} bits) vs blocked filter of the same bits; ns per key, fastest of {ROUNDS} rounds",
        bits
    );
    println!("| operation | count window | blocked, same memory | ratio |");
    println!("|---|---:|---:|---:|");
    for (name, [w, b]) in names.iter().zip(best) {
        println!("| {name} | {w:.1} | {b:.1} | {:.2}× |", w / b);
    }
}
