//! Guava 31.1's own results, reproduced bit for bit (values from `tests/data/vectors.txt`,
//! recorded by running the real Guava jar; the sizing table and the false-positive lists are
//! read from that file).

mod data;

use bloomkit::key::Utf16;
use bloomkit::math::{self, GuavaHashes};
use bloomkit::{BloomFilter, Key, Preset, Spec};

/// Guava's BloomFilterTest golden: n = 1,000,000, p = 0.03, the even numbers 0..1999998
/// inserted as decimal strings, then the odd numbers tested.
fn guava_golden(preset: Preset, utf16: bool) -> (Vec<u32>, u32, BloomFilter) {
    let mut f = BloomFilter::from_spec(Spec::preset(preset, 1_000_000, 0.03).unwrap()).unwrap();
    let mut buf = String::new();
    let mut key = |i: u32, f: &mut dyn FnMut(&[u8]) -> bool| {
        use std::fmt::Write;
        buf.clear();
        write!(buf, "{i}").unwrap();
        if utf16 {
            Utf16(&buf).with_bytes(f)
        } else {
            f(buf.as_bytes())
        }
    };
    for i in (0..2_000_000).step_by(2) {
        key(i, &mut |b| f.insert(b));
    }
    let mut below_900 = Vec::new();
    let mut total = 0;
    for i in (1..2_000_000).step_by(2) {
        if key(i, &mut |b| f.contains(b)) {
            total += 1;
            if i < 900 {
                below_900.push(i);
            }
        }
    }
    (below_900, total, f)
}

/// Guava's result for the golden run of `line` (`MITZ_64 utf8`, ...): the false positives
/// below 900, their total, `approximateElementCount` and `expectedFpp`.
fn recorded(line: &str) -> (Vec<u32>, u32, f64, f64) {
    let line = data::lines_starting(line)[0];
    let fp = line.split("FP<900=").nth(1).unwrap();
    let fp = data::list(&fp[..=fp.find(']').unwrap()]);
    (
        fp.into_iter().map(|i| i as u32).collect(),
        data::field(line, "totalFP").parse().unwrap(),
        data::field(line, "approx").parse().unwrap(),
        data::field(line, "expectedFpp").parse().unwrap(),
    )
}

/// Runs Guava's false-positive golden test with `preset` and the encoding, and compares the
/// false positives, the estimated length and the estimated FPP with Guava's recorded `label` line.
fn assert_matches_recorded(preset: Preset, utf16: bool, label: &str) {
    let (fp, total, f) = guava_golden(preset, utf16);
    let (want_fp, want_total, approx, fpp) = recorded(label);
    assert_eq!((fp, total), (want_fp, want_total));
    assert_eq!(f.estimated_len().round(), approx);
    assert!((f.estimated_fpp() - fpp).abs() < 1e-15);
}

#[test]
fn mitz64_utf8_false_positives() {
    assert_matches_recorded(Preset::Guava, false, "MITZ_64 utf8:");
}

#[test]
fn mitz64_utf16_false_positives() {
    assert_matches_recorded(Preset::Guava, true, "MITZ_64 unencodedChars:");
}

#[test]
fn mitz32_utf16_false_positives() {
    assert_matches_recorded(Preset::Guava32, true, "MITZ_32 unencodedChars:");
}

/// The words of a Guava `writeTo` stream after its 6-byte header, as hex (big-endian longs).
fn words_hex(f: &BloomFilter) -> String {
    f.as_words().iter().map(|w| format!("{w:016x}")).collect()
}

fn guava(preset: Preset, n: u64, p: f64) -> BloomFilter {
    BloomFilter::from_spec(Spec::preset(preset, n, p).unwrap()).unwrap()
}

#[test]
fn small_filters_set_guavas_bits() {
    // stringFunnel(UTF_8), n = 10, p = 0.01
    let mut f = guava(Preset::Guava, 10, 0.01);
    assert_eq!((f.bits(), f.hashes()), (128, 7));
    f.insert("hello");
    assert_eq!(words_hex(&f), "00100000090000048000004000002000");
    f.insert("world");
    assert_eq!(words_hex(&f), "00100010090010048000044040042040");
    assert_eq!(f.estimated_len().round(), 2.0);
    assert!((f.estimated_fpp() - 1.1146375733517289E-7).abs() < 1e-20);

    let mut f = guava(Preset::Guava32, 10, 0.01);
    f.insert("hello");
    assert_eq!(words_hex(&f), "00300000018000020000001000004000");
    f.insert("world");
    assert_eq!(words_hex(&f), "00310000118001020010201002004000");

    // integerFunnel, n = 100 (p = 0.03), put 0..9
    let mut f = guava(Preset::Guava, 100, 0.03);
    for i in 0..10i32 {
        f.insert(&i);
    }
    assert_eq!(
        words_hex(&f),
        "080000010000000040200001000000000000200000008c02080000000c08010400008000010200000200000000000000d00000010000400040000408200008204008000001000014040000000000002000100000d00088010009001000000000"
    );

    // longFunnel, n = 5, p = 0.1, put 1, -1, 1234567890123
    let mut f = guava(Preset::Guava, 5, 0.1);
    for v in [1i64, -1, 1_234_567_890_123] {
        f.insert(&v);
    }
    assert_eq!(f.hashes(), 3);
    assert_eq!(words_hex(&f), "0028000400530400");

    // byteArrayFunnel, n = 20, p = 0.05, put [], [1,2,3], "abc"
    let mut f = guava(Preset::Guava, 20, 0.05);
    for b in [&[][..], &[1, 2, 3], b"abc"] {
        f.insert(b);
    }
    assert_eq!(f.hashes(), 4);
    assert_eq!(words_hex(&f), "02000200000048010008008021000000");

    // unencodedCharsFunnel, n = 10, p = 0.01, put "hello", "é中😀"
    let mut f = guava(Preset::Guava, 10, 0.01);
    f.insert(&Utf16("hello"));
    f.insert(&Utf16("\u{e9}\u{4e2d}\u{1F600}"));
    assert_eq!(words_hex(&f), "92480000808080800000000008080824");
    let mut f = guava(Preset::Guava32, 10, 0.01);
    f.insert(&Utf16("hello"));
    assert_eq!(words_hex(&f), "10002000000000000001020204000800");
}

#[test]
fn thousand_keys_match_guava_statistics() {
    // stringFunnel n=1000 p=0.01 put key0..key999: bitCount=5004
    // fp(key1000..key10999)=105 approxCount=1010 expectedFpp=0.010454962414527185
    let mut f = guava(Preset::Guava, 1000, 0.01);
    for i in 0..1000 {
        f.insert(&format!("key{i}"));
    }
    assert_eq!(f.count_ones(), 5004);
    let fp = (1000..11000)
        .filter(|i| f.contains(&format!("key{i}")))
        .count();
    assert_eq!(fp, 105);
    assert_eq!(f.estimated_len().round(), 1010.0);
    assert!((f.estimated_fpp() - 0.010454962414527185).abs() < 1e-17);
}

/// Guava's sizing table (`n p -> numBits dataLongs k(31.1) k(33.x)`), from
/// `tests/data/vectors.txt`.
#[test]
fn sizing_matches_guava() {
    let rows: Vec<&str> = data::section("sizing")
        .into_iter()
        .filter(|l| l.starts_with("n=") && l.contains(" m="))
        .collect();
    assert_eq!(rows.len(), 30, "the recorded table has 30 rows");
    for line in rows {
        let n: u64 = data::field(line, "n").parse().unwrap();
        let p: f64 = data::field(line, "p").parse().unwrap();
        let num_bits: u64 = data::field(line, "m").parse().unwrap();
        let longs: u64 = data::field(line, "longs").parse().unwrap();
        let k31: u32 = data::field(line, "k31").parse().unwrap();
        let k33: u32 = data::field(line, "k33").parse().unwrap();
        let a = math::guava_params(n, p, GuavaHashes::V31).unwrap();
        let b = math::guava_params(n, p, GuavaHashes::V33).unwrap();
        assert_eq!((a.bits, a.hashes), (longs * 64, k31), "{line}");
        assert_eq!((b.bits, b.hashes), (longs * 64, k33), "{line}");
        // Redisson uses the same truncated numBits, unrounded.
        if num_bits > 0 {
            assert_eq!(
                math::redisson_params(n, p).unwrap().bits,
                num_bits,
                "{line}"
            );
        }
    }
    // The first disagreement between the two k policies for n <= 2000.
    let line = data::lines_starting("k disagreements")[0];
    let first = line.split("first: ").nth(1).unwrap();
    let (n, p) = (data::field(first, "n"), data::field(first, "p"));
    let a = math::guava_params(n.parse().unwrap(), p.parse().unwrap(), GuavaHashes::V31).unwrap();
    let b = math::guava_params(n.parse().unwrap(), p.parse().unwrap(), GuavaHashes::V33).unwrap();
    let k31: u32 = data::field(first, "k31").parse().unwrap();
    let k33: u32 = data::field(first, "k33").parse().unwrap();
    assert_eq!((a.hashes, b.hashes), (k31, k33));
}
