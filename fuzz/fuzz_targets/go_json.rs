//! Any input: Go's JSON decoder returns a typed error or a filter that survives a round trip
//! through the JSON encoder.
#![no_main]
use bloomkit::codec::go;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = go::from_json(data) {
        let json = go::to_json(&f).expect("re-encode");
        assert_eq!(go::from_json(json.as_bytes()).expect("re-decode"), f);
    }
});
