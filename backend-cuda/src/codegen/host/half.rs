//! Runs the half-precision conversions of `codegen/cuda/half.cuh` (the prelude every kernel
//! starts with) on the host, compiled with the system C++ compiler, and compares them bit for
//! bit with the `half` crate: every f16 and bf16 bit pattern widened to f32; f32 → f16/bf16
//! over every upper half-word with the lower half-words that decide rounding (ties, just
//! above and below them, subnormals, overflow to Inf, NaN payloads); and f64 and 32-bit
//! integers → f16/bf16 rounded once (against a round-to-odd reference: rounding through f32
//! would round twice).

use std::path::Path;

use crate::codegen::semantics::PRELUDE;
use polycompute_core::philox;
use polycompute_core::{bf16, f16};

use super::shim::{build_and_run, compiler};

const SHIM: &str = cuda_host_shim!("");

/// Low half-words of f32 inputs: around f16's rounding point (bit 12 of 13 dropped) and
/// bf16's (bit 15 of 16), ties, and their neighbours.
const LOW: [u32; 18] = [
    0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x3001, 0x5000, 0x7000, 0x7fff, 0x8000, 0x8001,
    0x9000, 0xb000, 0xe000, 0xffff,
];

/// `x` rounded to f32 with round-to-odd (inexact results get their last bit set), so that
/// rounding that f32 to a format of at most 22 bits of precision is the correct rounding of `x`.
fn round_to_odd(x: f64) -> f32 {
    let f = x as f32;
    if x.is_nan() || (f as f64) == x || f.is_infinite() && x.is_infinite() {
        return f;
    }
    // Step toward zero when `as` rounded away from it, then mark the result inexact.
    let mut bits = f.to_bits();
    if (f as f64).abs() > x.abs() {
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

fn write(path: &Path, words: &[u64]) {
    std::fs::write(path, words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
}

fn read(path: &Path) -> Vec<u64> {
    std::fs::read(path).unwrap().chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The conversions under test, each reading 64-bit words and writing 64-bit words.
const MAIN: &str = r#"
typedef unsigned long long w64;
static w64 *pc_in(const char *dir, const char *name, size_t *n) {
  char p[4096]; snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "rb"); fseek(f, 0, SEEK_END); *n = (size_t)ftell(f) / 8; fclose(f);
  return (w64 *)pc_read(p);
}
static void pc_out(const char *dir, const char *name, const w64 *v, size_t n) {
  char p[4096]; snprintf(p, sizeof p, "%s/%s", dir, name); pc_write(p, v, n * 8);
}
#define CONVERT(file_in, file_out, expr) { size_t n; w64 *x = pc_in(dir, file_in, &n); \
  w64 *y = (w64 *)malloc(n * 8 + 8); for (size_t i = 0; i < n; ++i) { const w64 v = x[i]; y[i] = (w64)(expr); } \
  pc_out(dir, file_out, y, n); }
static float f32_of(w64 v) { return __int_as_float((int)(unsigned)v); }
int main(int argc, char **argv) {
  const char *dir = argv[1];
  CONVERT("halves", "f16_to_f32", (unsigned)__float_as_int(pc_to_f32(pc_f16_bits((u32)v))))
  CONVERT("halves", "bf16_to_f32", (unsigned)__float_as_int(pc_to_f32(pc_bf16_bits((u32)v))))
  CONVERT("floats", "f32_to_f16", pc_to_f16(f32_of(v)).bits)
  CONVERT("floats", "f32_to_bf16", pc_to_bf16(f32_of(v)).bits)
  CONVERT("floats", "f32_to_f16_via_f64", pc_to_f16((double)f32_of(v)).bits)
  CONVERT("floats", "f32_to_bf16_via_f64", pc_to_bf16((double)f32_of(v)).bits)
  CONVERT("doubles", "f64_to_f16", pc_to_f16(__longlong_as_double((long long)v)).bits)
  CONVERT("doubles", "f64_to_bf16", pc_to_bf16(__longlong_as_double((long long)v)).bits)
  CONVERT("ints", "i32_to_f16", pc_to_f16((i32)(u32)v).bits)
  CONVERT("ints", "i32_to_bf16", pc_to_bf16((i32)(u32)v).bits)
  CONVERT("ints", "u32_to_f16", pc_to_f16((u32)v).bits)
  CONVERT("ints", "u32_to_bf16", pc_to_bf16((u32)v).bits)
  CONVERT("halves", "f16_to_i32", (u32)pc_to_i32(pc_f16_bits((u32)v)))
  CONVERT("halves", "bf16_to_u32", pc_to_u32(pc_bf16_bits((u32)v)))
  return 0;
}
"#;

#[test]
fn half_conversions_match_the_half_crate_bit_for_bit() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("polycompute-host-half-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let halves: Vec<u64> = (0..=0xffffu64).collect();
    let floats: Vec<u64> =
        (0..=0xffffu64).flat_map(|hi| LOW.iter().map(move |&lo| (hi << 16) | lo as u64)).collect::<Vec<_>>();
    // Doubles: exact halves and their midpoints, nudged by one f64 ulp either way (where
    // rounding through f32 goes wrong), plus random bit patterns.
    let mut doubles = Vec::new();
    for h in 0..=0xffffu16 {
        for x in [f16::from_bits(h).to_f64(), bf16::from_bits(h).to_f64()] {
            let next = f64::from_bits(x.to_bits() + 1);
            for v in [x, (x + next) / 2.0] {
                doubles.extend([v.to_bits(), v.to_bits().wrapping_add(1), v.to_bits().wrapping_sub(1)]);
            }
        }
    }
    let mid = |h: u16| (f16::from_bits(h).to_f64() + f16::from_bits(h + 1).to_f64()) / 2.0;
    for h in [0x3c00u16, 0x3c01, 0x0001, 0x03ff, 0x7bfe] {
        let m = mid(h);
        doubles.extend([m.to_bits(), m.to_bits() + 1, m.to_bits() - 1, (m + m * 1e-12).to_bits()]);
    }
    doubles.extend(
        (0..100_000u64)
            .map(|i| ((philox::uniform_u32(5, 2 * i) as u64) << 32) | philox::uniform_u32(5, 2 * i + 1) as u64),
    );
    // Integers: every 2^k ± 1 neighbourhood (ties at bf16's and f16's precision) and random.
    let mut ints: Vec<u64> =
        (0..32).flat_map(|k| [-1i64, 0, 1, 2].map(|d| ((1u64 << k) as i64 + d) as u32 as u64)).collect();
    ints.extend([0x0101_0001u64, 0x0101_0000, 0x8000_0000, 0xffff_ffff, 65504, 65519, 65520, 65535]);
    ints.extend((0..50_000u64).map(|i| philox::uniform_u32(6, i) as u64));
    for (name, words) in [("halves", &halves), ("floats", &floats), ("doubles", &doubles), ("ints", &ints)] {
        write(&dir.join(name), words);
    }
    build_and_run(&cxx, &dir, "half", &format!("{SHIM}{PRELUDE}{MAIN}"), &["-O1"], &[&dir]);

    let mut failures = Vec::new();
    let mut check = |what: &str, input: &[u64], want: &dyn Fn(u64) -> u64| {
        let got = read(&dir.join(what));
        assert_eq!(got.len(), input.len(), "{what}");
        let bad: Vec<String> = input
            .iter()
            .zip(&got)
            .filter(|(&x, &g)| want(x) != g)
            .take(5)
            .map(|(&x, &g)| format!("{what}({x:#x}): cuda C {g:#x}, want {:#x}", want(x)))
            .collect();
        failures.extend(bad);
    };
    check("f16_to_f32", &halves, &|h| f16::from_bits(h as u16).to_f32().to_bits() as u64);
    check("bf16_to_f32", &halves, &|h| bf16::from_bits(h as u16).to_f32().to_bits() as u64);
    let f32_of = |v: u64| f32::from_bits(v as u32);
    check("f32_to_f16", &floats, &|v| f16::from_f32(f32_of(v)).to_bits() as u64);
    check("f32_to_bf16", &floats, &|v| bf16::from_f32(f32_of(v)).to_bits() as u64);
    check("f32_to_f16_via_f64", &floats, &|v| f16::from_f32(f32_of(v)).to_bits() as u64);
    check("f32_to_bf16_via_f64", &floats, &|v| bf16::from_f32(f32_of(v)).to_bits() as u64);
    let f64_of = |v: u64| f64::from_bits(v);
    check("f64_to_f16", &doubles, &|v| f16::from_f32(round_to_odd(f64_of(v))).to_bits() as u64);
    check("f64_to_bf16", &doubles, &|v| bf16::from_f32(round_to_odd(f64_of(v))).to_bits() as u64);
    let i = |v: u64| v as u32 as i32 as f64;
    check("i32_to_f16", &ints, &|v| f16::from_f32(round_to_odd(i(v))).to_bits() as u64);
    check("i32_to_bf16", &ints, &|v| bf16::from_f32(round_to_odd(i(v))).to_bits() as u64);
    check("u32_to_f16", &ints, &|v| f16::from_f32(round_to_odd(v as u32 as f64)).to_bits() as u64);
    check("u32_to_bf16", &ints, &|v| bf16::from_f32(round_to_odd(v as u32 as f64)).to_bits() as u64);
    // Half -> int: Rust's saturating `as` on the exact value.
    check("f16_to_i32", &halves, &|h| f16::from_bits(h as u16).to_f32() as i32 as u32 as u64);
    check("bf16_to_u32", &halves, &|h| bf16::from_bits(h as u16).to_f32() as u32 as u64);
    let _ = std::fs::remove_dir_all(&dir);
    let total = 4 * halves.len() + 4 * floats.len() + 2 * doubles.len() + 4 * ints.len();
    println!("{total} half conversions run on the host, {} mismatches", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn round_to_odd_reference_rounds_once() {
    // 1 + 2^-11 + 2^-40 is just above the f16 tie between 1 and 1 + 2^-10: correct rounding
    // goes up; rounding to f32 first lands on the tie, which goes to the even 1.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(f16::from_f32(x as f32).to_bits(), 0x3c00);
    assert_eq!(f16::from_f32(round_to_odd(x)).to_bits(), 0x3c01);
    assert_eq!(round_to_odd(1.5).to_bits(), 1.5f32.to_bits());
    assert_eq!(round_to_odd(f64::INFINITY), f32::INFINITY);
    assert_eq!(round_to_odd(1e300), f32::from_bits(0x7f7f_ffff));
}
