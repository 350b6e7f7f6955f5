//! Any input: Go's binary decoder returns a typed error or a filter whose re-encoding is
//! exactly the input.
#![no_main]
use bloomkit::codec::go;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = go::from_bytes(data) {
        assert_eq!(go::to_bytes(&f).expect("re-encode"), data);
    }
});
