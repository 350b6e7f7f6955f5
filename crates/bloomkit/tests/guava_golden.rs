//! Guava 31.1's own results, reproduced bit for bit (values from ../shared/interop/vectors.txt,
//! produced by the real Guava jar).

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

#[test]
fn mitz64_utf8_false_positives() {
    let (fp, total, f) = guava_golden(Preset::Guava, false);
    assert_eq!(fp, [89, 129, 471, 723, 751, 835, 871]);
    assert_eq!(total, 29763);
    // approximateElementCount = 1000100, expectedFpp = 0.0300140770265523
    assert_eq!(f.estimated_len().round(), 1_000_100.0);
    assert!((f.estimated_fpp() - 0.0300140770265523).abs() < 1e-15);
}

#[test]
fn mitz64_utf16_false_positives() {
    let (fp, total, f) = guava_golden(Preset::Guava, true);
    assert_eq!(
        fp,
        [15, 25, 287, 319, 381, 399, 421, 465, 529, 697, 767, 857]
    );
    assert_eq!(total, 30104);
    assert_eq!(f.estimated_len().round(), 999_784.0);
}

#[test]
fn mitz32_utf16_false_positives() {
    let (fp, total, f) = guava_golden(Preset::Guava32, true);
    assert_eq!(
        fp,
        [49, 51, 59, 163, 199, 321, 325, 363, 367, 469, 545, 561, 727, 769, 773, 781]
    );
    assert_eq!(total, 29824);
    assert_eq!(f.estimated_len().round(), 999_555.0);
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

/// `n p -> numBits dataLongs k(31.1) k(33.x)` as printed by Guava.
const SIZING: &str = "\
1 0.5 1 1 1 1
1 0.1 4 1 3 3
1 0.03 7 1 5 5
1 0.01 9 1 6 7
1 0.001 14 1 10 10
1 1.0E-6 28 1 19 20
10 0.5 14 1 1 1
10 0.1 47 1 3 3
10 0.03 72 2 5 5
10 0.01 95 2 7 7
10 0.001 143 3 10 10
10 1.0E-6 287 5 20 20
100 0.5 144 3 1 1
100 0.1 479 8 3 3
100 0.03 729 12 5 5
100 0.01 958 15 7 7
100 0.001 1437 23 10 10
100 1.0E-6 2875 45 20 20
1000 0.5 1442 23 1 1
1000 0.1 4792 75 3 3
1000 0.03 7298 115 5 5
1000 0.01 9585 150 7 7
1000 0.001 14377 225 10 10
1000 1.0E-6 28755 450 20 20
1000000 0.5 1442695 22543 1 1
1000000 0.1 4792529 74884 3 3
1000000 0.03 7298440 114039 5 5
1000000 0.01 9585058 149767 7 7
1000000 0.001 14377587 224650 10 10
1000000 1.0E-6 28755175 449300 20 20";

#[test]
fn sizing_matches_guava() {
    for line in SIZING.lines() {
        let v: Vec<&str> = line.split(' ').collect();
        let n: u64 = v[0].parse().unwrap();
        let p: f64 = v[1].parse().unwrap();
        let (num_bits, longs, k31, k33): (u64, u64, u32, u32) = (
            v[2].parse().unwrap(),
            v[3].parse().unwrap(),
            v[4].parse().unwrap(),
            v[5].parse().unwrap(),
        );
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
    let a = math::guava_params(1, 0.002, GuavaHashes::V31).unwrap();
    let b = math::guava_params(1, 0.002, GuavaHashes::V33).unwrap();
    assert_eq!((a.hashes, b.hashes), (8, 9));
}
