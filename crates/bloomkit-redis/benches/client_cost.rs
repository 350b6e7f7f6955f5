//! The client-side cost of a check batch in the `redis` crate, without a server: writing the
//! commands and parsing the replies, per element, for bloomkit's check (`BITFIELD_RO` with one
//! `GET u<w> <offset>` per element, in commands of 256 elements, replies of span values) and
//! for RedisBloom's `BF.MEXISTS` (one 45-byte item per element, replies of 0 or 1).
//!
//! Run: `cargo bench -p bloomkit-redis --bench client_cost`
//!
//! Each figure is the median of 15 passes over 1,000 elements × 200 repetitions. It explains
//! the check rows of `redis_throughput` (docs/BENCHMARKS.md): the server's time per element
//! comes from `INFO commandstats` there, the client's from here.

use bloomkit::probe::register::RegisterLayout;
use bloomkit::probe::Digest;
use bloomkit::Hashing;
use std::hint::black_box;
use std::time::Instant;

const ELEMENTS: usize = 1000;
const REPS: usize = 200;
const PASSES: usize = 15;
/// Elements per check command, as in `segments::MAX_PER_COMMAND`.
const PER_COMMAND: usize = bloomkit_redis::segments::MAX_PER_COMMAND;

/// Median over passes of the time per element of `f` (which processes `ELEMENTS` once).
fn ns_per_element(mut f: impl FnMut() -> usize) -> f64 {
    let mut v: Vec<f64> = (0..PASSES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..REPS {
                black_box(f());
            }
            t.elapsed().as_nanos() as f64 / (REPS * ELEMENTS) as f64
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let items: Vec<String> = (0..ELEMENTS as u64)
        .map(|i| format!("user-{i:012}@mail.example.com/session-{:04}", i % 9973))
        .collect();
    let layout = RegisterLayout::for_capacity(200_000, 0.01, 1 << 32).unwrap();
    let hashing = Hashing::Xxh3;
    let probe = |item: &String| {
        let [h1, h2] = hashing.hash128(item.as_bytes());
        layout.probe(&Digest {
            h1,
            h2,
            ..Digest::default()
        })
    };
    let probes: Vec<_> = items.iter().map(probe).collect();

    let hash = ns_per_element(|| items.iter().map(|i| probe(i).word as usize).sum());

    // bloomkit's check commands (built by the library's own function): per element "GET",
    // "u<w>", "<offset>".
    let spans: Vec<(u32, u64)> = probes
        .iter()
        .map(|p| {
            let first = p.mask.leading_zeros();
            let last = 63 - p.mask.trailing_zeros();
            (last - first + 1, p.word * 64 + u64::from(first))
        })
        .collect();
    let write_bk = ns_per_element(|| {
        let mut bytes = 0;
        for chunk in spans.chunks(PER_COMMAND) {
            bytes += bloomkit_redis::reads::field_command(
                "bloomkit:{filter:s0}",
                chunk
                    .iter()
                    .map(|&(width, offset)| bloomkit_redis::reads::Field { offset, width }),
                chunk.len(),
            )
            .get_packed_command()
            .len();
        }
        bytes
    });
    let write_rb = ns_per_element(|| {
        let mut cmd = redis::cmd("BF.MEXISTS");
        cmd.arg("rb").arg(&items);
        cmd.get_packed_command().len()
    });

    // Replies: what the server sends back for each.
    let bk_replies: Vec<Vec<u8>> = spans
        .chunks(PER_COMMAND)
        .map(|chunk| {
            let mut r = format!("*{}\r\n", chunk.len()).into_bytes();
            for (i, &(w, _)) in chunk.iter().enumerate() {
                // A value of the span's width with its first and last bits set.
                let v = if w == 1 {
                    1
                } else {
                    (1u64 << (w - 1)) | (i as u64 & 0xff) | 1
                };
                r.extend_from_slice(format!(":{}\r\n", v as i64).as_bytes());
            }
            r
        })
        .collect();
    let mut rb_reply = format!("*{ELEMENTS}\r\n").into_bytes();
    for i in 0..ELEMENTS {
        rb_reply.extend_from_slice(format!(":{}\r\n", i & 1).as_bytes());
    }
    let parse_bk = ns_per_element(|| {
        let mut n = 0;
        for r in &bk_replies {
            let v: Vec<i64> =
                redis::from_redis_value(redis::parse_redis_value(r).unwrap()).unwrap();
            n += v.len();
        }
        n
    });
    let parse_rb = ns_per_element(|| {
        let v: Vec<i64> =
            redis::from_redis_value(redis::parse_redis_value(&rb_reply).unwrap()).unwrap();
        v.len()
    });

    println!("client cost per element, ns (median of {PASSES} passes)");
    println!("| step | bloomkit check | RedisBloom BF.MEXISTS |");
    println!("|---|---:|---:|");
    println!("| hash and probe | {hash:.0} | – (server side) |");
    println!("| write command | {write_bk:.0} | {write_rb:.0} |");
    println!("| parse reply | {parse_bk:.0} | {parse_rb:.0} |");
    println!(
        "| total | {:.0} | {:.0} |",
        hash + write_bk + parse_bk,
        write_rb + parse_rb
    );
}
