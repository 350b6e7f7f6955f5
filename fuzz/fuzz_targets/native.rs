//! Any input: the native decoder returns a typed error or a filter that re-encodes to bytes
//! decoding to the same filter. Never a panic, never an allocation beyond the input's size.
#![no_main]
use bloomkit::codec::native;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(decoded) = native::from_bytes(data, &[]) {
        let again = native::to_bytes(&decoded.filter, decoded.design).expect("re-encode");
        let back = native::from_bytes(&again, &[]).expect("re-decode");
        assert_eq!(back.filter, decoded.filter);
    }
});
