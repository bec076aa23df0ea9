//! `polycompute_pool::fuzzing::payload_ref` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| polycompute_pool::fuzzing::payload_ref(data));
