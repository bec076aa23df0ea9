//! `polycompute_pool::fuzzing::frames` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| polycompute_pool::fuzzing::frames(data));
