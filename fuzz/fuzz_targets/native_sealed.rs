//! Any input, with its trailing checksum recomputed first: the mutations of `native` almost
//! all stop at the checksum, so this target is the one that reaches the parsing of headers,
//! layer tables and every kind's body (counting, scalable, windows, d-left, bitmaps). The same
//! property: a typed error, or a filter that re-encodes to bytes decoding to the same filter;
//! never a panic, never an allocation beyond the input's size.
#![no_main]
use bloomkit::codec::native;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let mut sealed = data.to_vec();
    let body = sealed.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&sealed[..body]);
    sealed[body..].copy_from_slice(&sum.to_le_bytes());
    if let Ok(decoded) = native::from_bytes(&sealed, &[]) {
        let again = native::to_bytes(&decoded.filter, decoded.design).expect("re-encode");
        let back = native::from_bytes(&again, &[]).expect("re-decode");
        assert_eq!(back.filter, decoded.filter);
    }
});
