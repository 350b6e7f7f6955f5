//! A crawler's "seen URL" filter: one million generated URLs into a 1% filter, then one million
//! URLs it never saw. Reports memory against a `HashSet`, the measured false-positive rate, and
//! throughput.
//!
//! ```text
//! cargo run --release -p bloomkit --example urls [N] [FPP]
//! ```

use bloomkit::BloomFilter;
use std::time::Instant;

fn url(i: u64, salt: &str) -> String {
    // Deterministic, realistic-looking URLs of about 45 bytes.
    let host = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 5000;
    format!("https://site{host}.example.com/{salt}/page/{i}?ref=feed")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let p: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(0.01);

    let members: Vec<String> = (0..n).map(|i| url(i, "seen")).collect();
    let strangers: Vec<String> = (0..n).map(|i| url(i, "new")).collect();
    let url_bytes: usize = members.iter().map(|u| u.len()).sum();

    let mut filter = BloomFilter::new(n, p)?;
    let start = Instant::now();
    for u in &members {
        filter.insert(u.as_str());
    }
    let insert_time = start.elapsed();

    let start = Instant::now();
    let missing = members
        .iter()
        .filter(|u| !filter.contains(u.as_str()))
        .count();
    let hit_time = start.elapsed();
    let start = Instant::now();
    let false_positives = strangers
        .iter()
        .filter(|u| filter.contains(u.as_str()))
        .count();
    let miss_time = start.elapsed();

    let per_op = |d: std::time::Duration| d.as_nanos() as f64 / n as f64;
    // A HashSet<String> holds each URL (heap) plus a String header and hash slot per entry.
    let hashset_estimate = url_bytes + members.len() * (24 + 8) * 8 / 7;
    println!(
        "bloomkit: {n} URLs (avg {} bytes) into a filter for p = {p}",
        url_bytes / n.max(1) as usize
    );
    println!(
        "  filter:   {} bits, {} hashes, {:.2} MiB ({:.2} bits per URL)",
        filter.bits(),
        filter.hashes(),
        filter.memory_bytes() as f64 / (1 << 20) as f64,
        filter.bits() as f64 / n as f64
    );
    println!(
        "  HashSet<String> would need about {:.1} MiB ({:.0}x more)",
        hashset_estimate as f64 / (1 << 20) as f64,
        hashset_estimate as f64 / filter.memory_bytes() as f64
    );
    println!("  false negatives: {missing} (must be 0)");
    println!(
        "  false positives: {false_positives} of {n} unseen URLs = {:.4}% (target {:.4}%, estimated {:.4}%)",
        100.0 * false_positives as f64 / n as f64,
        100.0 * p,
        100.0 * filter.estimated_fpp()
    );
    println!(
        "  estimated elements: {:.0} (true {n})",
        filter.estimated_len()
    );
    println!(
        "  time per URL: insert {:.0} ns, query hit {:.0} ns, query miss {:.0} ns",
        per_op(insert_time),
        per_op(hit_time),
        per_op(miss_time)
    );
    if missing != 0 {
        return Err("false negatives found".into());
    }
    Ok(())
}
