//! The corpus cases of the views and data movement: maps over views, concat, take, take_along_axis,
//! scatter_add, pad, cumsum/cumprod, sort/argsort and topk, for every dtype, over edge
//! shapes (empty, one element, sizes around 64/256/1024 multiples, negative-step views,
//! indices at both ends of the axis).

use polycompute::{BinaryOp, DType, Expr, Layout, MatmulTranspose, Scalar, ScanKind, Shape};

use super::corpus::{input, label, CaseOp, InputSpec};
use super::inputs::{specials_len, Gen};
use super::tolerance::{self, Tolerance};

/// The corpus's `add` method, as a callback.
type Add<'a> = dyn FnMut(String, &str, DType, CaseOp, Vec<InputSpec>, Tolerance) + 'a;

/// Lengths around the workgroup and block multiples GPU kernels use.
const LENGTHS: [usize; 10] = [0, 1, 7, 63, 65, 255, 256, 257, 1023, 1025];

/// Adds every case, in a fixed order.
pub(crate) fn add_all(add: &mut Add<'_>) {
    for dtype in crate::corpus::DTYPES {
        view_cases(add, dtype);
        concat_cases(add, dtype);
        index_cases(add, dtype);
        pad_cases(add, dtype);
        scan_cases(add, dtype);
        sort_cases(add, dtype);
        if dtype.is_float() {
            matmul_view_cases(add, dtype);
        }
    }
}

/// Elements with every special value for floats, the whole range for integers.
fn data(dtype: DType) -> Gen {
    if dtype.is_float() {
        Gen::Specials
    } else {
        Gen::Wide { max_exp: 0 }
    }
}

fn layout(dims: &[usize], strides: &[isize], offset: usize) -> Layout {
    Layout { shape: Shape::from(dims), strides: strides.to_vec(), offset }
}

fn view_cases(add: &mut Add<'_>, dtype: DType) {
    let id = Expr::arg(0);
    let base = |d: &[usize]| Layout::contiguous(Shape::from(d));
    let views: Vec<(&str, Vec<usize>, Layout)> = vec![
        ("flip_257", vec![257], base(&[257]).flip(0).unwrap_or_else(|_| base(&[257]))),
        // x[1:200:3]
        ("step3_257", vec![257], layout(&[67], &[3], 1)),
        // x[::-2] of 1025
        ("negstep2_1025", vec![1025], layout(&[513], &[-2], 1024)),
        // x.T[::-1] of [7, 65]: permuted and flipped
        ("transpose_flip_7x65", vec![7, 65], layout(&[65, 7], &[-1, 65], 64)),
        // row 2 of [5, 33] broadcast to [4, 33]
        ("broadcast_row_5x33", vec![5, 33], layout(&[4, 33], &[0, 1], 66)),
        ("empty_step_7", vec![7], layout(&[0], &[2], 0)),
        ("one_0d_7", vec![7], layout(&[], &[], 6)),
    ];
    for (what, dims, l) in views {
        let ins = vec![input(&dims, dtype, data(dtype))];
        let compute = CaseOp::MapViews { expr: id.clone(), layouts: vec![l] };
        add(format!("view_{dtype}_{what}"), "view", dtype, compute, ins, Tolerance::Exact);
    }
    // A step-2 view plus a flipped view, broadcast against each other.
    let ins = vec![input(&[3, 514], dtype, data(dtype)), input(&[257], dtype, data(dtype))];
    let layouts = vec![layout(&[3, 257], &[514, 2], 1), layout(&[257], &[-1], 256)];
    let compute = CaseOp::MapViews { expr: Expr::arg(0) + Expr::arg(1), layouts };
    let tol = tolerance::binary(BinaryOp::Add, dtype);
    add(format!("view_add_{dtype}_3x257_step2_plus_flip"), "view", dtype, compute, ins, tol);
}

fn concat_cases(add: &mut Add<'_>, dtype: DType) {
    let cases: [(&[&[usize]], usize); 6] = [
        (&[&[0], &[7]], 0),
        (&[&[1], &[256]], 0),
        (&[&[255], &[257], &[1]], 0),
        (&[&[3, 5], &[3, 0], &[3, 252]], 1),
        (&[&[2, 3, 4], &[1, 3, 4]], 0),
        (&[&[2, 3, 65], &[2, 3, 63]], 2),
    ];
    for (shapes, axis) in cases {
        let ins: Vec<InputSpec> = shapes.iter().map(|d| input(d, dtype, data(dtype))).collect();
        let what: Vec<String> = shapes.iter().map(|d| label(d)).collect();
        let name = format!("concat_{dtype}_{}_axis{axis}", what.join("_"));
        add(name, "concat", dtype, CaseOp::Concat(axis), ins, Tolerance::Exact);
    }
}

/// Index arrays of `len` elements in `-n..n` (`0..n` for u32) whose first two elements are
/// the two ends of the range.
fn indices(dims: &[usize], dtype: DType, n: usize) -> InputSpec {
    let lo = if dtype == DType::I32 { -(n as i64) } else { 0 };
    let hi = n as i64 - 1;
    let len: usize = dims.iter().product();
    let ends: Vec<(usize, f64)> = [(0, lo as f64), (1, hi as f64)].into_iter().filter(|(p, _)| *p < len).collect();
    input(dims, dtype, Gen::With(Box::new(Gen::Ints { lo, hi }), ends))
}

fn index_cases(add: &mut Add<'_>, dtype: DType) {
    for idx in [DType::U32, DType::I32] {
        // take: (array dims, axis, index dims)
        let takes: [(&[usize], usize, &[usize]); 5] =
            [(&[257], 0, &[300]), (&[5, 257], 1, &[2, 7]), (&[1025, 3], 0, &[65]), (&[7], 0, &[0]), (&[1], 0, &[1])];
        for (dims, axis, idims) in takes {
            let ins = vec![input(dims, dtype, data(dtype)), indices(idims, idx, dims[axis])];
            let name = format!("take_{dtype}_{}_axis{axis}_{idx}_{}", label(dims), label(idims));
            add(name, "take", dtype, CaseOp::Take(axis), ins, Tolerance::Exact);
        }
        let alongs: [(&[usize], usize, &[usize]); 3] =
            [(&[7, 65], 1, &[7, 9]), (&[7, 65], 0, &[3, 65]), (&[257], 0, &[257])];
        for (dims, axis, idims) in alongs {
            let ins = vec![input(dims, dtype, data(dtype)), indices(idims, idx, dims[axis])];
            let name = format!("take_along_axis_{dtype}_{}_axis{axis}_{idx}_{}", label(dims), label(idims));
            add(name, "take_along_axis", dtype, CaseOp::TakeAlongAxis(axis), ins, Tolerance::Exact);
        }
        // scatter_add: repeated indices accumulate.
        let scatters: [(&[usize], usize, &[usize]); 3] = [(&[257], 0, &[1000]), (&[5, 7], 1, &[9]), (&[0], 0, &[0])];
        for (dims, axis, idims) in scatters {
            let mut vdims = dims[..axis].to_vec();
            vdims.extend_from_slice(idims);
            vdims.extend_from_slice(&dims[axis + 1..]);
            let gen = if dtype.is_float() { Gen::Uniform { lo: -1.0, hi: 1.0 } } else { Gen::Wide { max_exp: 0 } };
            let ins = vec![input(dims, dtype, gen.clone()), indices(idims, idx, dims[axis]), input(&vdims, dtype, gen)];
            let tol = if dtype.is_float() { Tolerance::Bound } else { Tolerance::Exact };
            let name = format!("scatter_add_{dtype}_{}_axis{axis}_{idx}_{}", label(dims), label(idims));
            add(name, "scatter_add", dtype, CaseOp::ScatterAdd(axis), ins, tol);
        }
    }
}

fn pad_cases(add: &mut Add<'_>, dtype: DType) {
    let value = match dtype {
        DType::F32 => Scalar::F32(-0.0),
        DType::F64 => Scalar::F64(f64::NAN),
        DType::I32 => Scalar::I32(i32::MIN),
        DType::U32 => Scalar::U32(u32::MAX),
        DType::F16 => Scalar::F16(polycompute::f16::NEG_ZERO),
        DType::BF16 => Scalar::BF16(polycompute::bf16::NAN),
        DType::I64 => Scalar::I64(i64::MIN),
        DType::U8 => Scalar::U8(u8::MAX),
        DType::Bool => Scalar::Bool(true),
    };
    type Widths<'a> = &'a [(usize, usize)];
    let cases: [(&[usize], Widths<'_>); 4] = [
        (&[7, 5], &[(1, 2), (0, 3)]),
        (&[0, 3], &[(2, 0), (1, 1)]),
        (&[257], &[(0, 0)]),
        (&[2, 3, 63], &[(0, 1), (1, 0), (1, 1)]),
    ];
    for (dims, widths) in cases {
        let ins = vec![input(dims, dtype, data(dtype))];
        let w: Vec<String> = widths.iter().map(|(a, b)| format!("{a}.{b}")).collect();
        let name = format!("pad_{dtype}_{}_by_{}", label(dims), w.join("_"));
        add(name, "pad", dtype, CaseOp::Pad { widths: widths.to_vec(), value }, ins, Tolerance::Exact);
    }
}

fn scan_cases(add: &mut Add<'_>, dtype: DType) {
    for kind in ScanKind::ALL {
        let gen = match (kind, dtype.is_float()) {
            (ScanKind::Sum, true) => Gen::Uniform { lo: -1.0, hi: 1.0 },
            (ScanKind::Prod, true) => Gen::Uniform { lo: 0.5, hi: 1.5 },
            _ => Gen::Wide { max_exp: 0 },
        };
        let tol = if dtype.is_float() { Tolerance::Bound } else { Tolerance::Exact };
        let op = |axis| CaseOp::Scan { kind, axis };
        for n in LENGTHS {
            let ins = vec![input(&[n], dtype, gen.clone())];
            add(format!("{}_{dtype}_{n}", kind.name()), kind.name(), dtype, op(0), ins, tol);
        }
        for axis in 0..3 {
            let ins = vec![input(&[5, 7, 33], dtype, gen.clone())];
            add(format!("{}_{dtype}_5x7x33_axis{axis}", kind.name()), kind.name(), dtype, op(axis), ins, tol);
        }
        if dtype.is_float() {
            let n = specials_len(dtype);
            let ins = vec![input(&[n], dtype, Gen::Specials)];
            add(format!("{}_{dtype}_{n}_specials", kind.name()), kind.name(), dtype, op(0), ins, tol);
        }
    }
}

fn sort_cases(add: &mut Add<'_>, dtype: DType) {
    // Few distinct values: many ties, whose input order a stable sort keeps.
    let ties = Gen::Ints { lo: 0, hi: 4 };
    let wide = if dtype.is_float() { Gen::Wide { max_exp: 20 } } else { Gen::Wide { max_exp: 0 } };
    let n = specials_len(dtype);
    let mut shapes: Vec<(Vec<usize>, usize, Gen, String)> = Vec::new();
    for len in LENGTHS {
        shapes.push((vec![len], 0, wide.clone(), String::new()));
    }
    // Specials: NaN, both zeros and the infinities, each repeated, for numpy's order.
    shapes.push((vec![3 * n], 0, Gen::Specials, "_specials".into()));
    shapes.push((vec![257], 0, ties.clone(), "_ties".into()));
    for axis in 0..3 {
        shapes.push((vec![5, 7, 33], axis, ties.clone(), "_ties".into()));
    }
    for (dims, axis, gen, tag) in &shapes {
        let what = format!("{dtype}_{}_axis{axis}{tag}", label(dims));
        let ins = || vec![input(dims, dtype, gen.clone())];
        add(format!("sort_{what}"), "sort", dtype, CaseOp::Sort(*axis), ins(), Tolerance::Exact);
        add(format!("argsort_{what}"), "argsort", dtype, CaseOp::Argsort(*axis), ins(), Tolerance::Exact);
        let len = dims[*axis];
        let mut ks = vec![0, 1.min(len), len.min(10), len];
        ks.dedup();
        for k in ks {
            let name = format!("topk_{what}_k{k}");
            add(name, "topk", dtype, CaseOp::TopK { k, axis: *axis }, ins(), Tolerance::Exact);
        }
    }
}

/// A matmul's sizes: (batch, m, k, n); batch 0 means 2-D.
type Bmkn = (usize, usize, usize, usize);

/// Matmul of transposed views (`a.transpose() @ b`, `a @ b.transpose()`, both; batched
/// `permute([0, 2, 1])`): each input is the buffer as stored, `[.., k, m]` for a transposed
/// lhs and `[.., n, k]` for a transposed rhs, read in place by the GEMM.
fn matmul_view_cases(add: &mut Add<'_>, dtype: DType) {
    let t = |lhs, rhs| MatmulTranspose { lhs, rhs };
    let all = [t(true, false), t(false, true), t(true, true)];
    // Sizes around the GPU tiles (128, 32), odd, vectors, k = 0.
    let shapes: [(Bmkn, &[MatmulTranspose]); 6] = [
        ((0, 7, 7, 7), &all),
        ((0, 130, 65, 129), &all),
        ((0, 1, 257, 129), &[t(true, false)]),
        ((0, 129, 257, 1), &[t(false, true)]),
        ((0, 4, 0, 5), &[t(true, true)]),
        ((3, 33, 17, 9), &all),
    ];
    for ((b, m, k, n), flags) in shapes {
        for &f in flags {
            let stored = |rows: usize, cols: usize, on: bool| {
                let (r, c) = if on { (cols, rows) } else { (rows, cols) };
                if b == 0 {
                    vec![r, c]
                } else {
                    vec![b, r, c]
                }
            };
            let ins = vec![
                input(&stored(m, k, f.lhs), dtype, Gen::Uniform { lo: -1.0, hi: 1.0 }),
                input(&stored(k, n, f.rhs), dtype, Gen::Uniform { lo: -1.0, hi: 1.0 }),
            ];
            let which = format!("{}{}", if f.lhs { "t" } else { "n" }, if f.rhs { "t" } else { "n" });
            let size = if b == 0 { format!("{m}x{k}x{n}") } else { format!("{b}x{m}x{k}x{n}") };
            let name = format!("matmul_{which}_{dtype}_{size}");
            add(name, "matmul", dtype, CaseOp::MatmulTransposed(f), ins, tolerance::matmul());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::corpus::corpus;
    use super::*;

    #[test]
    fn every_new_op_runs_on_every_dtype_with_views_and_edges() {
        let all = corpus();
        let rows = [
            "view",
            "concat",
            "take",
            "take_along_axis",
            "scatter_add",
            "pad",
            "cumsum",
            "cumprod",
            "sort",
            "argsort",
            "topk",
        ];
        for dtype in crate::corpus::DTYPES {
            for row in rows {
                assert!(all.iter().any(|c| c.op == row && c.dtype == dtype), "{row} {dtype}");
            }
        }
        let views = all.iter().filter(|c| matches!(&c.compute, CaseOp::MapViews { layouts, .. } if layouts.iter().any(|l| l.strides.iter().any(|&s| s < 0))));
        assert!(views.count() >= 4 * 3, "negative-stride views on every dtype");
        for dtype in [DType::F32, DType::F64] {
            let flags = |c: &&super::super::corpus::Case| match c.compute {
                CaseOp::MatmulTransposed(t) if c.dtype == dtype => Some((t.lhs, t.rhs)),
                _ => None,
            };
            let mut seen: Vec<(bool, bool)> = all.iter().filter_map(|c| flags(&c)).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen, [(false, true), (true, false), (true, true)], "matmul of transposed views, {dtype}");
        }
        for name in ["sort_f32_0_axis0", "topk_u32_1_axis0_k1", "cumsum_i32_1025", "take_f64_7_axis0_i32_0"] {
            assert!(all.iter().any(|c| c.name == name), "{name}");
        }
    }
}
