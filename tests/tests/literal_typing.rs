//! Weak literals (numpy's NEP 50) end to end, on every device of every backend compiled in:
//! f32 work with literals stays f32 (so it runs on adapters without f64), and an explicit
//! `cast(F64)` still needs f64, where a device without it names the sub-expression.
//! Expected values are computed here in plain Rust.

use polycompute::{BackendKind, DType, Device, DeviceArray, Error, Expr};

/// Every device that opens: the CPU, then each device of the other backends linked in.
fn devices() -> Vec<Device> {
    let mut out = vec![Device::cpu()];
    for kind in [BackendKind::Wgpu, BackendKind::Cuda] {
        let Ok(infos) = polycompute::registry::backend(kind).and_then(|b| b.devices()) else { continue };
        for info in infos {
            match Device::open(kind, info.ordinal) {
                Ok(d) => out.push(d),
                Err(e) => eprintln!("literal_typing: {} does not open ({e}); not tested", info.id()),
            }
        }
    }
    out
}

/// False for a wgpu adapter without `SHADER_F64` (Mesa's llvmpipe GL, Apple's Metal).
fn has_f64(dev: &Device) -> bool {
    dev.info().details.iter().find(|(k, _)| k == "shader_f64").is_none_or(|(_, v)| v == "true")
}

const VALUES: [f32; 8] = [0.25, 1.0, 1.5, -0.75, 0.999_999_94, 1.000_000_1, -3.0, 0.0];

fn upload(dev: &Device) -> DeviceArray<f32> {
    dev.from_slice(&VALUES, &[VALUES.len()]).unwrap_or_else(|e| panic!("upload on {}: {e}", dev.id()))
}

#[test]
fn a_select_of_float_literals_cast_to_f32_runs_everywhere() {
    for dev in devices() {
        let got = upload(&dev).map(|r| Expr::select(r.le(1.0), 1.0, 0.0).cast(DType::F32));
        let got = got.and_then(|a| a.to_vec()).unwrap_or_else(|e| panic!("on {}: {e}", dev.id()));
        let want: Vec<f32> = VALUES.iter().map(|&v| if v <= 1.0 { 1.0 } else { 0.0 }).collect();
        assert_eq!(got, want, "on {}", dev.id());
    }
}

#[test]
fn float_and_integer_literals_take_the_array_dtype() {
    for dev in devices() {
        let x = upload(&dev);
        // f32 stays f32: x * 2.0 is exact in f32, and no f64 is needed.
        let doubled = x.map(|v| v * 2.0).and_then(|a| a.to_vec());
        let doubled = doubled.unwrap_or_else(|e| panic!("x * 2.0 on {}: {e}", dev.id()));
        assert_eq!(doubled, VALUES.iter().map(|v| v * 2.0).collect::<Vec<_>>(), "on {}", dev.id());
        // Integer literals with a float array are floats: (x + 3) / 2 is a float division.
        let halves = x.map(|v| (v + 3) / 2).and_then(|a| a.to_vec());
        let halves = halves.unwrap_or_else(|e| panic!("(x + 3) / 2 on {}: {e}", dev.id()));
        assert_eq!(halves, VALUES.iter().map(|v| (v + 3.0) / 2.0).collect::<Vec<_>>(), "on {}", dev.id());
        // A literal alone takes the result dtype (f32), not the f64 default.
        let ones = x.map(|_| Expr::float(1.0) / 4.0).and_then(|a| a.to_vec());
        assert_eq!(ones.unwrap_or_else(|e| panic!("on {}: {e}", dev.id())), vec![0.25; VALUES.len()]);
        // An integer array's mask with float literals, as f32: the map's result type decides.
        let ints = dev.from_slice(&[-2i32, 0, 5], &[3]).unwrap();
        let mask = ints.map_to::<f32>(|v| Expr::select(v.gt(0), 1.5, -0.5)).and_then(|a| a.to_vec());
        assert_eq!(mask.unwrap_or_else(|e| panic!("on {}: {e}", dev.id())), vec![-0.5, -0.5, 1.5]);
    }
}

#[test]
fn an_explicit_f64_cast_needs_f64_and_is_named_where_it_is_missing() {
    let mut without_f64 = 0;
    for dev in devices() {
        let r = upload(&dev).map(|v| (v.cast(DType::F64) * 0.1).cast(DType::F32));
        if has_f64(&dev) {
            let got = r.and_then(|a| a.to_vec()).unwrap_or_else(|e| panic!("on {}: {e}", dev.id()));
            let want: Vec<f32> = VALUES.iter().map(|&v| (f64::from(v) * 0.1) as f32).collect();
            assert_eq!(got, want, "the product is computed in f64 on {}", dev.id());
            continue;
        }
        without_f64 += 1;
        match r {
            Err(Error::Unsupported { op, dtype: DType::F64, device: Some(d) }) => {
                assert_eq!(d, dev.id());
                assert!(op.contains("cast(arg0, f64)"), "the error names the sub-expression: {op}");
            }
            other => panic!("an f64 cast on {} (no f64) must be Unsupported, got {other:?}", dev.id()),
        }
    }
    if without_f64 == 0 {
        eprintln!("literal_typing: no device without f64 here; the Unsupported path was not exercised");
    }
}
