//! Every kernel variant the backend generates, validated by naga (what wgpu runs before any
//! driver sees a shader), so codegen is checked on machines without an adapter too.

use std::sync::Arc;

use polycompute_core::expr::Program;
use polycompute_core::plan::{Access, MapSignature};
use polycompute_core::{BackendKind, BinaryOp, DType, DeviceId, Expr, ReduceKind, UnaryOp};

use super::reduce::Pass;
use super::KernelSource;

/// The device named in the errors of kernels generated here (no device is involved).
const TEST_DEVICE: DeviceId = DeviceId::new(BackendKind::Wgpu, 0);

fn check(what: &str, src: &KernelSource) {
    let module = naga::front::wgsl::parse_str(&src.wgsl)
        .unwrap_or_else(|e| panic!("{what}: {}\n{}", e.emit_to_string(&src.wgsl), src.wgsl));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::FLOAT64 | naga::valid::Capabilities::SUBGROUP,
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{what}: {e:?}\n{}", src.wgsl));
}

#[test]
fn every_map_instruction_in_every_dtype() {
    for d in all_dtypes() {
        let x = Expr::arg(0);
        let y = Expr::arg(1);
        let mut exprs: Vec<(String, Expr)> = Vec::new();
        for op in UnaryOp::ALL {
            if !(op.float_only() && d.is_int()) {
                exprs.push((op.name().into(), x.clone().unary(op)));
            }
        }
        for op in BinaryOp::ALL {
            if !(op.int_only() && d.is_float()) {
                exprs.push((op.name().into(), x.clone().binary(op, y.clone())));
            }
        }
        for to in all_dtypes() {
            exprs.push((format!("cast to {to}"), x.clone().cast(to)));
        }
        exprs.push(("select".into(), Expr::select(x.clone(), y.clone(), x.clone())));
        exprs.push(("index".into(), Expr::index().cast(d) + x.clone()));
        for (name, e) in exprs {
            let program = Arc::new(Program::compile(&e, &[d, d]).unwrap());
            // A strided walk over three dims, and no walk at all.
            for (access, ndim) in [([Access::Same, Access::Strided], 3), ([Access::Scalar, Access::Same], 0)] {
                let sig = MapSignature { program: program.clone(), access: access.to_vec(), ndim };
                match super::map::kernel(&sig, TEST_DEVICE) {
                    Ok(src) => check(&format!("map {name} {d} {access:?}"), &src),
                    // Only f64 transcendentals may be refused.
                    Err(polycompute_core::Error::Unsupported { dtype: DType::F64, .. }) => {}
                    Err(e) => panic!("map {name} {d}: {e}"),
                }
            }
        }
    }
}

/// The dtypes this backend generates kernels for (i64, u8 and bool are `Unsupported` before
/// any kernel is made: `device::not_yet`).
fn all_dtypes() -> impl Iterator<Item = DType> {
    DType::ALL.into_iter().filter(|&d| !crate::device::not_yet(d))
}

/// The dtypes the 32-bit kernels are generated for: halves run through them widened
/// (ops/half.rs), never as such.
fn kernel_dtypes() -> impl Iterator<Item = DType> {
    all_dtypes().filter(|d| !d.is_half())
}

#[test]
fn every_reduction_pass_fill_matmul_and_transpose() {
    for d in kernel_dtypes() {
        for kind in ReduceKind::ALL {
            let acc = if kind == ReduceKind::Mean { kind.output_dtype(d) } else { d };
            for (first, last) in [(true, true), (true, false), (false, false), (false, true)] {
                for tj in [1, 4, 16] {
                    for items in [super::reduce::ITEMS, super::reduce::LONG_ITEMS] {
                        // The subgroup stage only along r alone, with 4 to 64 subgroups.
                        let slots: &[u32] = if tj == 1 { &[0, 8, 64] } else { &[0] };
                        for &subgroup_slots in slots {
                            let pass = Pass { kind, input: d, acc, first, last, tj, items, subgroup_slots };
                            check(&format!("{pass:?}"), &super::reduce::kernel(&pass));
                        }
                    }
                }
            }
            for width in [1, 2, 8, 32] {
                let pass = super::reduce_rows::RowPass { kind, input: d, acc, width };
                check(&format!("{pass:?}"), &super::reduce_rows::kernel(&pass));
            }
        }
        for normal in [false, true] {
            if let Ok(src) = super::fill::random(d, normal, TEST_DEVICE) {
                check(&format!("fill {d} normal={normal}"), &src);
            }
        }
        for ndim in 2..5 {
            for q in 0..ndim - 1 {
                check(&format!("transpose {d} {ndim} {q}"), &super::layout::transpose(d, ndim, q));
            }
        }
    }
    check("constant 1", &super::fill::constant(1));
    check("constant 2", &super::fill::constant(2));
    check("matmul f32", &super::matmul::kernel(DType::F32));
    check("matmul f64", &super::matmul::kernel(DType::F64));
    for n in [1, 8, 16] {
        for batched in [false, true] {
            check(&format!("skinny matmul f32 n={n}"), &super::matmul_skinny::kernel(DType::F32, n, batched));
            check(&format!("skinny matmul f64 n={n}"), &super::matmul_skinny::kernel(DType::F64, n, batched));
        }
    }
    for (lhs, rhs) in [(true, false), (false, true), (true, true)] {
        let t = polycompute_core::MatmulTranspose { lhs, rhs };
        check(&format!("matmul f32 {t:?}"), &super::matmul::kernel_for(DType::F32, t));
        check(&format!("matmul f64 {t:?}"), &super::matmul::kernel_for(DType::F64, t));
    }
}

#[test]
fn every_map_over_views_variant() {
    for d in all_dtypes() {
        let program = Arc::new(Program::compile(&(Expr::arg(0) + Expr::arg(1)), &[d, d]).unwrap());
        for (access, ndim) in [
            (vec![Access::Strided, Access::Strided], 3),
            (vec![Access::Same, Access::Strided], 1),
            (vec![Access::Strided, Access::Same], 0),
        ] {
            let sig = MapSignature { program: program.clone(), access: access.clone(), ndim };
            let src = super::map::kernel_over_views(&sig, TEST_DEVICE).unwrap();
            check(&format!("map views {d} {access:?} {ndim}"), &src);
        }
    }
}

#[test]
fn every_movement_scan_and_sort_kernel() {
    check("concat", &super::movement::concat());
    check("pad", &super::movement::pad());
    for index in [DType::U32, DType::I32] {
        for along in [false, true] {
            check(&format!("take {index} along={along}"), &super::movement::take(index, along));
        }
        for d in kernel_dtypes() {
            check(&format!("scatter_add {d} {index}"), &super::movement::scatter_add(d, index));
        }
    }
    for d in kernel_dtypes() {
        for product in [false, true] {
            for serial in [false, true] {
                check(&format!("scan {d} product={product} serial={serial}"), &super::scan::scan(d, product, serial));
            }
        }
        check(&format!("sort init {d}"), &super::sort::init(d));
        check(&format!("sort step {d}"), &super::sort::step(d));
        check(&format!("sort local {d}"), &super::sort::local(d));
    }
    check("sort output", &super::sort::output());
    use super::radix::RadixKernel;
    let init: Vec<RadixKernel> = all_dtypes().map(RadixKernel::Init).collect();
    for k in [RadixKernel::Hist, RadixKernel::Scatter, RadixKernel::ScanBlock, RadixKernel::ScanAdd].iter().chain(&init)
    {
        check(&format!("radix {k:?}"), &super::radix::kernel(*k));
    }
}

#[test]
fn every_half_kernel() {
    check("half narrow", &super::half::narrow());
    for d in [DType::F16, DType::BF16] {
        for kind in ReduceKind::ALL {
            for (first, last) in [(true, true), (true, false)] {
                let pass = Pass { kind, input: d, acc: DType::F32, first, last, tj: 4, items: 8, subgroup_slots: 0 };
                check(&format!("{pass:?}"), &super::reduce::kernel(&pass));
                let pass = Pass { kind, input: d, acc: DType::F32, first, last, tj: 1, items: 64, subgroup_slots: 32 };
                check(&format!("{pass:?}"), &super::reduce::kernel(&pass));
            }
            let pass = super::reduce_rows::RowPass { kind, input: d, acc: DType::F32, width: 8 };
            check(&format!("{pass:?}"), &super::reduce_rows::kernel(&pass));
        }
    }
    for d in [DType::F16, DType::BF16] {
        for to_f64 in [false, true] {
            check(&format!("{d} f64 cast to_f64={to_f64}"), &super::half::f64_cast(d, to_f64));
        }
    }
    for d in [DType::F16, DType::BF16] {
        for index in [DType::U32, DType::I32] {
            check(&format!("scatter_add {d} {index}"), &super::movement::scatter_add(d, index));
        }
    }
    check("half widen", &super::half::widen(None));
    for d in [DType::F16, DType::BF16] {
        check(&format!("half sort keys {d}"), &super::half::widen(Some(d)));
    }
}
