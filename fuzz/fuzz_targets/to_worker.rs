//! `polycompute_pool::fuzzing::to_worker` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| polycompute_pool::fuzzing::to_worker(data));
