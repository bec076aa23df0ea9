//! `polycompute_pool::fuzzing::segment_header` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| polycompute_pool::fuzzing::segment_header(data));
