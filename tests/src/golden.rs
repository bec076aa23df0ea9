//! The golden text of a case: the reference output in full precision (round-trip decimal),
//! or for large outputs a digest of every value plus a fixed sample of positions. One text per
//! case, shared by every backend; `tests/tests/conformance.rs` pins it with an insta snapshot,
//! one file per case in [`snapshot_dir`].

use std::path::PathBuf;

use polycompute::HostVec;

use super::corpus::Case;
use super::reference::Reference;
use super::scalar::get;

/// Outputs up to this many elements are written out in full.
pub const FULL_LIMIT: usize = 1024;
/// Number of sampled positions of a larger output.
pub const SAMPLES: usize = 64;

/// The folder of the golden snapshots, `conformance__{case}.snap` (this crate's `snapshots/`,
/// beside its `src/` and `tests/`: the corpus's data, not one test file's).
pub fn snapshot_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"))
}

/// FNV-1a, 64-bit: a small, stable hash for digests and seeds.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The bits of element `i`, with every NaN made the same (payloads differ between CPUs).
fn canonical_bits(v: &HostVec, i: usize) -> u64 {
    match v {
        HostVec::F32(x) if x[i].is_nan() => f32::NAN.to_bits() as u64,
        HostVec::F64(x) if x[i].is_nan() => f64::NAN.to_bits(),
        HostVec::F16(x) if x[i].is_nan() => polycompute::f16::NAN.to_bits() as u64,
        HostVec::BF16(x) if x[i].is_nan() => polycompute::bf16::NAN.to_bits() as u64,
        _ => get(v, i).to_bits(),
    }
}

/// FNV-1a over the little-endian canonical bits of every element.
pub fn digest(v: &HostVec) -> u64 {
    let mut h = fnv1a(&[]);
    for i in 0..v.len() {
        for b in canonical_bits(v, i).to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// One element in full precision: round-trip decimal (`-0.0`, `NaN`, `inf` as such).
pub fn format_value(v: &HostVec, i: usize) -> String {
    match v {
        HostVec::F32(x) => format!("{:?}", x[i]),
        HostVec::F64(x) => format!("{:?}", x[i]),
        HostVec::I32(x) => x[i].to_string(),
        HostVec::U32(x) => x[i].to_string(),
        HostVec::F16(x) => format!("{:?}", x[i]),
        HostVec::BF16(x) => format!("{:?}", x[i]),
        HostVec::I64(x) => x[i].to_string(),
        HostVec::U8(x) => x[i].to_string(),
        HostVec::Bool(x) => x[i].to_string(),
    }
}

/// The sampled positions of an output of `len` elements: the first and last eight, and
/// evenly spread ones between.
pub fn sample_positions(len: usize) -> Vec<usize> {
    let mut pos: Vec<usize> = (0..8.min(len)).chain(len.saturating_sub(8)..len).collect();
    let spread = SAMPLES - 16;
    pos.extend((1..=spread).map(|k| k * len / (spread + 1)));
    pos.sort_unstable();
    pos.dedup();
    pos
}

/// The golden text of `case` from its reference output.
pub fn golden_text(case: &Case, reference: &Reference) -> String {
    let v = &reference.values;
    let mut out = format!(
        "case: {}\nop: {}\noutput: {} {:?}\ndigest: {:#018x}\n",
        case.name,
        case.describe(),
        v.dtype(),
        reference.dims,
        digest(v)
    );
    if v.len() <= FULL_LIMIT {
        out.push_str("values:\n");
        for i in 0..v.len() {
            out.push_str(&format_value(v, i));
            out.push('\n');
        }
    } else {
        out.push_str(&format!("sample of {} positions:\n", sample_positions(v.len()).len()));
        for i in sample_positions(v.len()) {
            out.push_str(&format!("{i}: {}\n", format_value(v, i)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_ignores_nan_payloads_but_not_zero_signs() {
        let a = HostVec::F32(vec![f32::NAN, 0.0]);
        let b = HostVec::F32(vec![f32::from_bits(0xffc0_0001), 0.0]);
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&HostVec::F32(vec![f32::NAN, -0.0])));
        // The FNV-1a test vector for "a".
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn values_round_trip() {
        let v = HostVec::F32(vec![0.1, -0.0, f32::from_bits(1), f32::INFINITY]);
        let text: Vec<String> = (0..4).map(|i| format_value(&v, i)).collect();
        assert_eq!(text[1], "-0.0");
        assert_eq!(text[0].parse::<f32>().unwrap(), 0.1);
        assert_eq!(text[2].parse::<f32>().unwrap().to_bits(), 1);
        assert_eq!(text[3], "inf");
    }

    #[test]
    fn samples_are_fixed_and_in_range() {
        let s = sample_positions(16_777_219);
        assert_eq!(s.len(), SAMPLES);
        assert_eq!((s[0], s[SAMPLES - 1]), (0, 16_777_218));
        assert_eq!(sample_positions(3), vec![0, 1, 2]);
    }
}
