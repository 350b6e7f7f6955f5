//! Codecs: native round trips, Guava and Go golden streams byte for byte, and hostile input.

use bloomkit::codec::native::{self, Design};
use bloomkit::codec::{go, guava};
use bloomkit::key::Utf16;
use bloomkit::probe::blocked::BlockLayout;
use bloomkit::storage::CounterWidth;
use bloomkit::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, Error, Hashing, Preset,
    ScalableBloomFilter, Scheme, Spec,
};
use proptest::prelude::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn classic() -> BloomFilter {
    let mut f = BloomFilter::new(1000, 0.01).unwrap();
    for i in 0..300u32 {
        f.insert(&i);
    }
    f
}

fn counting() -> CountingBloomFilter {
    let mut f =
        CountingBloomFilter::from_spec(Spec::for_capacity(500, 0.01).unwrap(), CounterWidth::Eight)
            .unwrap();
    for i in 0..200u32 {
        f.insert(&(i % 50));
    }
    f
}

/// `f` with 300 elements inserted.
fn blocked(mut f: BlockedBloomFilter) -> BlockedBloomFilter {
    for i in 0..300u32 {
        f.insert(&i);
    }
    f
}

/// One filter of each blocked layout: compact (`Bits(k)`), 512-bit split blocks, 256-bit half
/// blocks.
fn blocked_layouts() -> [BlockedBloomFilter; 3] {
    let filters = [
        blocked(BlockedBloomFilter::new_compact(500, 0.001).unwrap()),
        blocked(BlockedBloomFilter::new_split_block(500, 0.01).unwrap()),
        blocked(BlockedBloomFilter::new_split_block_256(500, 0.01).unwrap()),
    ];
    assert!(matches!(filters[0].layout(), BlockLayout::Bits(_)));
    assert_eq!(filters[1].layout(), BlockLayout::SplitBlock);
    assert_eq!(filters[2].layout(), BlockLayout::SplitBlock256);
    filters
}

fn scalable() -> ScalableBloomFilter {
    let mut f = ScalableBloomFilter::new(50, 0.01).unwrap();
    for i in 0..1000u32 {
        f.insert(&i).unwrap();
    }
    f
}

#[test]
fn native_round_trips_every_kind() {
    let design = Some(Design {
        capacity: 1000,
        fpp: 0.01,
    });
    let [compact, split, half] = blocked_layouts();
    for (filter, design) in [
        (AnyFilter::from(classic()), design),
        (AnyFilter::from(counting()), None),
        (AnyFilter::from(compact), design),
        (AnyFilter::from(split), None),
        (AnyFilter::from(half), design),
        (AnyFilter::from(scalable()), None),
    ] {
        let bytes = native::to_bytes(&filter, design).unwrap();
        assert_eq!(&bytes[..8], b"BLOOMKIT");
        let back = native::from_bytes(&bytes, &[]).unwrap();
        assert_eq!(back.filter, filter);
        assert_eq!(back.design, design);
        // Deterministic: encoding again gives the same bytes.
        assert_eq!(native::to_bytes(&back.filter, back.design).unwrap(), bytes);
    }
}

#[test]
fn keyed_filters_need_their_key() {
    let key = Hashing::siphash(*b"0123456789abcdef");
    let spec = Spec::for_capacity(100, 0.01)
        .unwrap()
        .with_hashing(key.clone());
    let mut f = BloomFilter::from_spec(spec).unwrap();
    f.insert("secret element");
    let bytes = native::to_bytes(&f.clone().into(), None).unwrap();
    // The key itself is never written.
    assert!(!bytes.windows(16).any(|w| w == b"0123456789abcdef"));
    assert!(matches!(
        native::from_bytes(&bytes, &[]),
        Err(Error::MissingKey(_))
    ));
    let wrong = Hashing::siphash(*b"fedcba9876543210");
    assert!(matches!(
        native::from_bytes(&bytes, &[wrong]),
        Err(Error::MissingKey(_))
    ));
    let back = native::from_bytes(&bytes, &[key]).unwrap();
    assert_eq!(back.filter, f.into());
}

#[test]
fn native_refuses_what_it_cannot_read() {
    let bytes = native::to_bytes(&classic().into(), None).unwrap();
    // Unknown version: a clear error, never a misread (checksum recomputed so only the version
    // is wrong). This build reads versions 1 and 2.
    let mut v3 = bytes.clone();
    v3[8] = 3;
    reseal(&mut v3);
    assert!(matches!(
        native::from_bytes(&v3, &[]),
        Err(Error::UnsupportedVersion { version: 3, .. })
    ));
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(matches!(
        native::from_bytes(&bad, &[]),
        Err(Error::Corrupt { .. })
    ));
    let mut flipped = bytes.clone();
    let last_payload = bytes.len() - 9;
    flipped[last_payload] ^= 1;
    assert!(matches!(
        native::from_bytes(&flipped, &[]),
        Err(Error::Checksum { .. })
    ));
    assert!(matches!(
        native::from_bytes(&bytes[..100], &[]),
        Err(Error::Truncated { .. })
    ));
    // A hostile header announcing a gigantic filter, correctly checksummed, is refused before
    // any allocation: its layer size exceeds the input.
    let mut huge = bytes.clone();
    huge[128..136].copy_from_slice(&(1u64 << 60).to_le_bytes());
    reseal(&mut huge);
    assert!(matches!(
        native::from_bytes(&huge, &[]),
        Err(Error::Truncated { .. })
    ));
    // k = 0 and unknown kinds are named.
    let mut k0 = bytes.clone();
    k0[136..140].copy_from_slice(&0u32.to_le_bytes());
    reseal(&mut k0);
    let err = native::from_bytes(&k0, &[]).unwrap_err().to_string();
    assert!(err.contains("hash function"), "{err}");
    let mut kind = bytes.clone();
    kind[10] = 200;
    reseal(&mut kind);
    let err = native::from_bytes(&kind, &[]).unwrap_err().to_string();
    assert!(err.contains("unknown filter kind 200"), "{err}");
}

/// Recomputes the trailing checksum after a deliberate edit.
fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - 8;
    let sum = xxh3(&bytes[..n]);
    bytes[n..].copy_from_slice(&sum.to_le_bytes());
}

/// The format's checksum: XXH3-64 of everything before the trailer (docs/FORMAT.md).
fn xxh3(b: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(b)
}

/// Guava 31.1 `writeTo` streams from `tests/data/vectors.txt`, reproduced exactly.
#[test]
fn guava_streams_are_byte_identical() {
    let guava_filter =
        |preset, n, p| BloomFilter::from_spec(Spec::preset(preset, n, p).unwrap()).unwrap();
    let mut f = guava_filter(Preset::Guava, 10, 0.01);
    assert_eq!(
        hex(&guava::to_bytes(&f).unwrap()),
        "01070000000200000000000000000000000000000000"
    );
    f.insert("hello");
    f.insert("world");
    let stream = guava::to_bytes(&f).unwrap();
    assert_eq!(hex(&stream), "01070000000200100010090010048000044040042040");
    assert_eq!(guava::approximate_element_count(&f), 2);
    assert_eq!(guava::expected_fpp(&f), 1.1146375733517289E-7);
    let back = guava::from_bytes(&stream).unwrap();
    assert_eq!(back, f);
    assert!(back.contains("hello") && !back.contains("foo"));

    let mut f = guava_filter(Preset::Guava32, 10, 0.01);
    f.insert("hello");
    f.insert("world");
    assert_eq!(
        hex(&guava::to_bytes(&f).unwrap()),
        "00070000000200310000118001020010201002004000"
    );

    let mut f = guava_filter(Preset::Guava, 100, 0.03);
    for i in 0..10i32 {
        f.insert(&i);
    }
    assert_eq!(
        hex(&guava::to_bytes(&f).unwrap()),
        "01050000000c080000010000000040200001000000000000200000008c02080000000c08010400008000010200000200000000000000d00000010000400040000408200008204008000001000014040000000000002000100000d00088010009001000000000"
    );
    assert_eq!(guava::approximate_element_count(&f), 10);
    assert_eq!(guava::expected_fpp(&f), 9.5367431640625E-7);

    let mut f = guava_filter(Preset::Guava, 10, 0.01);
    f.insert(&Utf16("hello"));
    f.insert(&Utf16("\u{e9}\u{4e2d}\u{1F600}"));
    assert_eq!(
        hex(&guava::to_bytes(&f).unwrap()),
        "01070000000292480000808080800000000008080824"
    );

    // stringFunnel n=1000 p=0.01 key0..key999: serLen=1206 header=010700000096
    let mut f = guava_filter(Preset::Guava, 1000, 0.01);
    for i in 0..1000 {
        f.insert(&format!("key{i}"));
    }
    let stream = guava::to_bytes(&f).unwrap();
    assert_eq!(stream.len(), 1206);
    assert_eq!(hex(&stream[..6]), "010700000096");
    assert_eq!(guava::approximate_element_count(&f), 1010);
    assert_eq!(guava::expected_fpp(&f), 0.010454962414527185);
}

#[test]
fn guava_refuses_bad_streams() {
    let ok = unhex("01070000000200100010090010048000044040042040");
    assert!(matches!(
        guava::from_bytes(&[2, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
        Err(Error::UnsupportedVersion { version: 2, .. })
    ));
    assert!(matches!(
        guava::from_bytes(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        guava::from_bytes(&[1, 7, 0, 0, 0, 0]),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        guava::from_bytes(&[1, 7, 0xff, 0xff, 0xff, 0xff]),
        Err(Error::Corrupt { .. })
    ));
    // 2^31-1 words announced, 16 bytes given: refused before allocating 16 GiB.
    let mut huge = ok.clone();
    huge[2..6].copy_from_slice(&i32::MAX.to_be_bytes());
    assert!(
        matches!(guava::from_bytes(&huge), Err(Error::Truncated { needed, .. }) if needed == i32::MAX as u64 * 8)
    );
    assert!(matches!(
        guava::from_bytes(&ok[..ok.len() - 1]),
        Err(Error::Truncated { .. })
    ));
    let mut long = ok.clone();
    long.push(0);
    assert!(matches!(
        guava::from_bytes(&long),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        guava::from_bytes(&[]),
        Err(Error::Truncated { .. })
    ));
    // Writing a non-Guava filter is refused.
    assert!(matches!(
        guava::to_bytes(&BloomFilter::new(10, 0.1).unwrap()),
        Err(Error::NotRepresentable { .. })
    ));
}

fn go_filter(m: u64, k: u32) -> BloomFilter {
    BloomFilter::from_spec(
        Spec::with_bits(m, k)
            .unwrap()
            .with_scheme(Scheme::Go)
            .with_hashing(Hashing::Murmur3),
    )
    .unwrap()
}

/// Go bits-and-blooms 3.3.1 `WriteTo` and JSON from `tests/data/vectors.txt`.
#[test]
fn go_streams_are_byte_identical() {
    let mut f = go_filter(100, 3);
    assert_eq!(
        hex(&go::to_bytes(&f).unwrap()),
        "00000000000000640000000000000003000000000000006400000000000000000000000000000000"
    );
    f.insert("hello");
    assert_eq!(
        hex(&go::to_bytes(&f).unwrap()),
        "00000000000000640000000000000003000000000000006400002000000000400000000400000000"
    );
    let json = go::to_json(&f).unwrap();
    assert_eq!(
        json,
        r#"{"m":100,"k":3,"b":"AAAAAAAAAGQAACAAAAAAQAAAAAQAAAAA"}"#
    );
    assert_eq!(go::from_json(json.as_bytes()).unwrap(), f);
    f.insert("world");
    let bytes = go::to_bytes(&f).unwrap();
    assert_eq!(
        hex(&bytes),
        "00000000000000640000000000000003000000000000006404402000000000500000000400000000"
    );
    assert_eq!(go::from_bytes(&bytes).unwrap(), f);

    let mut f = BloomFilter::from_spec(Spec::preset(Preset::Go, 1000, 0.01).unwrap()).unwrap();
    for i in 0..1000 {
        f.insert(&format!("key{i}"));
    }
    let bytes = go::to_bytes(&f).unwrap();
    assert_eq!(bytes.len(), 1224);
    assert_eq!(
        hex(&bytes[..24]),
        "000000000000257200000000000000070000000000002572"
    );
    assert_eq!(go::approximated_size(&f), 1002);
}

#[test]
fn go_refuses_bad_input() {
    let ok =
        unhex("00000000000000640000000000000003000000000000006400002000000000400000000400000000");
    let mut len_mismatch = ok.clone();
    len_mismatch[23] = 0x65;
    assert!(matches!(
        go::from_bytes(&len_mismatch),
        Err(Error::Corrupt { .. })
    ));
    let mut k0 = ok.clone();
    k0[15] = 0;
    assert!(matches!(go::from_bytes(&k0), Err(Error::Corrupt { .. })));
    let mut huge = ok.clone();
    huge[..8].copy_from_slice(&(1u64 << 62).to_be_bytes());
    huge[16..24].copy_from_slice(&(1u64 << 62).to_be_bytes());
    let err = go::from_bytes(&huge);
    assert!(matches!(err, Err(Error::Truncated { .. })), "{err:?}");
    let mut stray = ok.clone();
    stray[32] = 0x80; // bit 127 of a 100-bit filter: past m
    assert!(matches!(go::from_bytes(&stray), Err(Error::Corrupt { .. })));
    assert!(matches!(
        go::from_bytes(&ok[..30]),
        Err(Error::Truncated { .. })
    ));
    for bad in [
        &b"not json"[..],
        br#"{"m":100,"k":3}"#,
        br#"{"m":-1,"k":3,"b":""}"#,
        br#"{"m":100,"k":3,"b":"!!!"}"#,
        br#"{"m":100,"k":3,"b":"AAAA"}"#,
        br#"{"m":0,"k":3,"b":"AAAAAAAAAAA="}"#,
    ] {
        assert!(
            matches!(
                go::from_json(bad),
                Err(Error::Corrupt { .. } | Error::Truncated { .. })
            ),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

fn valid_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let mut g = BloomFilter::from_spec(Spec::preset(Preset::Guava, 50, 0.01).unwrap()).unwrap();
    let mut gf = go_filter(200, 4);
    for i in 0..20u32 {
        g.insert(&i);
        gf.insert(&i);
    }
    vec![
        (
            "native-classic",
            native::to_bytes(&classic().into(), None).unwrap(),
        ),
        (
            "native-counting",
            native::to_bytes(&counting().into(), None).unwrap(),
        ),
        (
            "native-scalable",
            native::to_bytes(&scalable().into(), None).unwrap(),
        ),
        (
            "native-blocked",
            native::to_bytes(
                &blocked(BlockedBloomFilter::new_compact(500, 0.001).unwrap()).into(),
                None,
            )
            .unwrap(),
        ),
        ("guava", guava::to_bytes(&g).unwrap()),
        ("go", go::to_bytes(&gf).unwrap()),
        ("go-json", go::to_json(&gf).unwrap().into_bytes()),
    ]
}

fn decode(kind: &str, bytes: &[u8]) -> Result<(), Error> {
    match kind {
        "guava" => guava::from_bytes(bytes).map(drop),
        "go" => go::from_bytes(bytes).map(drop),
        "go-json" => go::from_json(bytes).map(drop),
        _ => native::from_bytes(bytes, &[]).map(drop),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any truncation is an error (never a panic, never a silently shorter filter).
    #[test]
    fn truncations_are_errors(which in 0usize..7, cut in any::<prop::sample::Index>()) {
        let (kind, bytes) = &valid_inputs()[which];
        let cut = cut.index(bytes.len());
        prop_assert!(decode(kind, &bytes[..cut]).is_err(), "{kind} cut at {cut}");
    }

    /// Bit flips never panic. In the native format they are always detected (checksum); in
    /// Guava's and Go's formats, which carry no checksum, a flip in the bit array yields a
    /// valid filter and a flip in the header a typed error or a valid filter.
    #[test]
    fn bit_flips_never_panic(which in 0usize..7, flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4)) {
        let (kind, bytes) = &valid_inputs()[which];
        let mut bytes = bytes.clone();
        for (at, bit) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        let result = decode(kind, &bytes);
        if kind.starts_with("native") {
            prop_assert!(result.is_err());
        }
    }
}
