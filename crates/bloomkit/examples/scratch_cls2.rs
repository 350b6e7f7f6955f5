use bloomkit::BloomFilter;
use std::time::Instant;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse::<f64>().unwrap() as usize)
        .unwrap_or(1_000_000);
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(100);
    let keys: Vec<String> = (0..n)
        .map(|i| format!("https://www.example.a/articles/{i:08}.html"))
        .collect();
    let mut f = BloomFilter::new(n as u64, 0.01).unwrap();
    let spec = f.spec().clone();
    let ds: Vec<_> = keys
        .iter()
        .map(|k| spec.digest_bytes(k.as_bytes()))
        .collect();
    let t = Instant::now();
    for _ in 0..reps {
        f.insert_digest_batch(&ds);
    }
    let ti = t.elapsed().as_nanos() as f64 / (n * reps) as f64;
    let absent: Vec<_> = keys
        .iter()
        .map(|k| spec.digest_bytes(format!("{k}x").as_bytes()))
        .collect();
    let mut out = vec![false; n];
    let t = Instant::now();
    for _ in 0..reps {
        f.contains_digest_batch_into(&ds, &mut out);
    }
    let tp = t.elapsed().as_nanos() as f64 / (n * reps) as f64;
    let t = Instant::now();
    for _ in 0..reps {
        f.contains_digest_batch_into(&absent, &mut out);
    }
    let ta = t.elapsed().as_nanos() as f64 / (n * reps) as f64;
    println!(
        "insert {ti:.2} present {tp:.2} absent {ta:.2} ({})",
        out.iter().filter(|&&x| x).count()
    );
}
