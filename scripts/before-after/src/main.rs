// Before/after comparison of the blocked and classic filters (scripts/before-after/run): the same keys
// through the library at an earlier commit (`old`) and the current one (`new`), alternated.
use std::hint::black_box;
use std::time::Instant;

fn url(i: u64) -> String {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 29;
    let len = 20 + (x % 81) as usize;
    let mut s = format!("https://example{}.com/p/{:x}/", x % 997, x);
    while s.len() < len { s.push_str("ab"); }
    s.truncate(len.max(s.find(".com/").unwrap() + 5));
    s
}

fn median(mut v: Vec<f64>) -> f64 { v.sort_by(|a, b| a.partial_cmp(b).unwrap()); v[v.len() / 2] }

// Each timed loop is a function of its own, generic over the contender's closure and never
// inlined: no contender's code generation depends on the others' (in one big `main`, the
// classic filter's single queries measured 66 ns in one build and 107 ns in the next).

/// ns per key of `contains` over `keys`, one key at a time.
#[inline(never)]
fn time_contains(keys: &[String], contains: impl Fn(&str) -> bool) -> f64 {
    let t = Instant::now();
    black_box(keys.iter().filter(|k| contains(k.as_str())).count());
    t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64
}

/// ns per key of `insert` over `keys`, one key at a time.
#[inline(never)]
fn time_insert(keys: &[String], mut insert: impl FnMut(&str) -> bool) -> f64 {
    let t = Instant::now();
    black_box(keys.iter().filter(|k| insert(k.as_str())).count());
    t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64
}

/// ns per key of one call of `batch` over all of `keys`.
#[inline(never)]
fn time_batch(keys: &[String], mut batch: impl FnMut(&[String])) -> f64 {
    let t = Instant::now();
    batch(keys);
    t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64
}

macro_rules! bench {
    ($f:expr, $keys:expr, $out:expr, $what:expr) => {{
        match $what {
            0 => time_contains($keys, |k| $f.contains(k)),
            1 => time_batch($keys, |c| { $f.contains_batch_into(c, &mut $out[..]); black_box(&$out); }),
            2 => time_insert($keys, |k| $f.insert(k)),
            _ => time_batch($keys, |c| $f.insert_batch(c)),
        }
    }};
}

fn main() {
    let n: u64 = std::env::var("N").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    let rounds: usize = std::env::var("ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(11);
    let members: Vec<String> = (0..n).map(url).collect();
    let mut fo = old::BlockedBloomFilter::new(n, 0.01).unwrap();
    let mut fnw = new::BlockedBloomFilter::new(n, 0.01).unwrap();
    fo.insert_batch(&members[..]); fnw.insert_batch(&members[..]);
    // The classic filter too.
    let mut co = old::BloomFilter::new(n, 0.01).unwrap();
    let mut cn = new::BloomFilter::new(n, 0.01).unwrap();
    for k in &members { co.insert(k.as_str()); cn.insert(k.as_str()); }
    let q = 2_000_000u64;
    let hits: Vec<String> = (0..q).map(|i| members[((i * 2654435761) % n) as usize].clone()).collect();
    let misses: Vec<String> = (0..q).map(|i| url(n + 1 + i)).collect();
    drop(members);
    let mut out = vec![false; q as usize];
    {
        let fresh: Vec<String> = (0..q).map(|i| url(3 * n + i)).collect();
        let (mut rc, mut ri) = (vec![], vec![]);
        for _ in 0..rounds {
            let a = new::AtomicBlockedBloomFilter::from(fnw.clone());
            let mut p = fnw.clone();
            let t = Instant::now(); p.contains_batch_into(&fresh[..], &mut out[..]); let tp = t.elapsed().as_secs_f64();
            let t = Instant::now(); a.contains_batch_into(&fresh[..], &mut out[..]); let ta = t.elapsed().as_secs_f64();
            rc.push(ta / tp);
            let t = Instant::now(); p.insert_batch(&fresh[..]); let tp = t.elapsed().as_secs_f64();
            let t = Instant::now(); a.insert_batch(&fresh[..]); let ta = t.elapsed().as_secs_f64();
            ri.push(ta / tp);
        }
        println!("atomic/plain (new build): batch contains {:.3}, batch insert of new keys {:.3}", median(rc), median(ri));
    }
    for (name, keys) in [("hit", &hits), ("miss", &misses)] {
        for what in 0..4 {
            let (mut r, mut to, mut tn) = (vec![], vec![], vec![]);
            for round in 0..rounds {
                let (a, b) = if round % 2 == 0 {
                    let a = bench!(co, keys, out, what); let b = bench!(cn, keys, out, what); (a, b)
                } else {
                    let b = bench!(cn, keys, out, what); let a = bench!(co, keys, out, what); (a, b)
                };
                to.push(a); tn.push(b); r.push(b / a);
            }
            println!("{name:4} classic {:6}: old {:6.1} ns, new {:6.1} ns, median new/old {:.3} (min {:.3}, max {:.3})",
                ["single", "batch", "ins1", "insB"][what], median(to), median(tn), median(r.clone()),
                r.iter().cloned().fold(f64::MAX, f64::min), r.iter().cloned().fold(0.0, f64::max));
        }
        for what in 0..4 {
            let (mut r, mut to, mut tn) = (vec![], vec![], vec![]);
            for round in 0..rounds {
                let (a, b) = if round % 2 == 0 {
                    let a = bench!(fo, keys, out, what); let b = bench!(fnw, keys, out, what); (a, b)
                } else {
                    let b = bench!(fnw, keys, out, what); let a = bench!(fo, keys, out, what); (a, b)
                };
                to.push(a); tn.push(b); r.push(b / a);
            }
            println!("{name:4} {:6}: old {:6.1} ns, new {:6.1} ns, median new/old {:.3} (min {:.3}, max {:.3})",
                ["single", "batch", "ins1", "insB"][what], median(to), median(tn), median(r.clone()),
                r.iter().cloned().fold(f64::MAX, f64::min), r.iter().cloned().fold(0.0, f64::max));
        }
    }
}
