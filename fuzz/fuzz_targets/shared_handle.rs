//! `polycompute_core::fuzzing::shared_handle` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| polycompute_core::fuzzing::shared_handle(data));
