//! Go bits-and-blooms 3.3.1 and Redisson results, reproduced bit for bit (values from
//! `tests/data/vectors.txt`, recorded by running the real libraries; Redisson's sizes and
//! positions are read from that file).

mod data;

use bloomkit::{math, BloomFilter, Hashing, Preset, Scheme, Spec};

fn go_filter(m: u64, k: u32) -> BloomFilter {
    let spec = Spec::with_bits(m, k)
        .unwrap()
        .with_scheme(Scheme::Go)
        .with_hashing(Hashing::Murmur3);
    BloomFilter::from_spec(spec).unwrap()
}

fn set_bits(f: &BloomFilter) -> Vec<u64> {
    (0..f.bits())
        .filter(|&i| f.as_words()[(i / 64) as usize] >> (i % 64) & 1 == 1)
        .collect()
}

#[test]
fn go_estimate_parameters() {
    let p = math::go_params(1000, 0.01).unwrap();
    assert_eq!((p.bits, p.hashes), (9586, 7));
    let p = math::go_params(100, 0.03).unwrap();
    assert_eq!((p.bits, p.hashes), (730, 6));
}

#[test]
fn go_filters_set_gos_bits() {
    let mut f = go_filter(100, 3);
    f.insert("hello");
    assert_eq!(set_bits(&f), [6, 45, 98]);
    // WriteTo words (big-endian): 0000200000000040 0000000400000000
    assert_eq!(f.as_words(), [0x0000_2000_0000_0040, 0x0000_0004_0000_0000]);
    f.insert("world");
    assert_eq!(f.as_words(), [0x0440_2000_0000_0050, 0x0000_0004_0000_0000]);

    // New(64, 2) + Add(big-endian uint32 100)
    let mut f = go_filter(64, 2);
    f.insert(&100u32.to_be_bytes());
    assert_eq!(f.as_words(), [0x0000_0010_0002_0000]);
}

#[test]
fn go_thousand_keys_match_statistics() {
    // NewWithEstimates(1000, 0.01) + key0..key999: count=4973 approx=1002
    let mut f = BloomFilter::from_spec(Spec::preset(Preset::Go, 1000, 0.01).unwrap()).unwrap();
    for i in 0..1000 {
        f.insert(&format!("key{i}"));
    }
    assert_eq!(f.count_ones(), 4973);
    // Go: ApproximatedSize = floor(-m/k * ln(1 - X/m) + 0.5)
    assert_eq!((f.estimated_len() + 0.5).floor(), 1002.0);
}

/// Every `tryInit(n,p): size=.. hashIterations=..` of the recorded file, with the
/// `idx("element")=[..]` lines under it: bloomkit's Redisson preset gives the same size, hash
/// count and positions.
#[test]
fn redisson_filters_set_redissons_bits() {
    let mut spec = None;
    let mut checked = 0;
    for line in data::VECTORS.lines() {
        if let Some(rest) = line.strip_prefix("tryInit(") {
            let (args, fields) = rest.split_once("):").unwrap();
            let (n, p) = args.split_once(',').unwrap();
            let s = Spec::preset(Preset::Redisson, n.parse().unwrap(), p.parse().unwrap()).unwrap();
            let size: u64 = data::field(fields, "size").parse().unwrap();
            let k: u32 = data::field(fields, "hashIterations").parse().unwrap();
            assert_eq!((s.bits(), s.hashes()), (size, k), "{line}");
            spec = Some(s);
        } else if let Some(rest) = line.trim_start().strip_prefix("idx(\"") {
            let (element, positions) = rest.split_once("\")=").unwrap();
            let want: Vec<u64> = data::list(positions)
                .into_iter()
                .map(|i| i as u64)
                .collect();
            let spec = spec.as_ref().expect("idx lines follow a tryInit line");
            assert_eq!(spec.positions(element), want, "{line}");
            checked += 1;
        }
    }
    assert_eq!(checked, 3, "the recorded file has three position lists");
}
