//! Any input: Guava's stream decoder returns a typed error or a filter whose re-encoding is
//! exactly the input (the format has one encoding per filter).
#![no_main]
use bloomkit::codec::guava;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = guava::from_bytes(data) {
        assert_eq!(guava::to_bytes(&f).expect("re-encode"), data);
    }
});
