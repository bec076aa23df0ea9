//! The cases of issue 29's dtypes, i64, u8 and bool: every op on each where numpy allows
//! the pair, over their specials (i64 extremes and the values past 2^32 and 2^53, u8's
//! wrap-around corners, both bools) and Philox inputs; casts from and to every dtype; and
//! comparisons of every dtype as bool masks, NaN included (always false except `ne`). Every
//! case is exact but the f32 scatter_add with i64 indices (the scatter_add bound). A backend without these dtypes answers `Unsupported` (wgpu and CUDA for
//! now), which the suite counts as such.

use polycompute::{BinaryOp, DType, Expr, Fill, ReduceKind, Scalar, ScanKind, UnaryOp};

use super::corpus::{input, label, CaseOp, InputSpec};
use super::inputs::{specials_len, Gen};
use super::tolerance::Tolerance;

type Add<'a> = dyn FnMut(String, &str, DType, CaseOp, Vec<InputSpec>, Tolerance) + 'a;

/// The new dtypes.
pub(crate) const NEW: [DType; 3] = [DType::I64, DType::U8, DType::Bool];

/// The comparisons, which give masks.
const COMPARISONS: [BinaryOp; 6] = [BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge];

/// True when the program compiler accepts `op` on `dtype` (numpy 2 refuses `- / % pow` on
/// bools; floats have no bitwise ops).
pub(crate) fn binary_defined(op: BinaryOp, dtype: DType) -> bool {
    match dtype {
        DType::Bool => !matches!(op, BinaryOp::Sub | BinaryOp::Div | BinaryOp::Rem | BinaryOp::Pow),
        d if d.is_float() => !op.int_only(),
        _ => true,
    }
}

/// True when `op` is defined on `dtype` (bools keep only `abs`; integers lose the float-only
/// functions).
pub(crate) fn unary_defined(op: UnaryOp, dtype: DType) -> bool {
    match dtype {
        DType::Bool => op == UnaryOp::Abs,
        d if d.is_float() => true,
        _ => !op.float_only(),
    }
}

/// Every pair of specials as two broadcast inputs, `[n, 1]` and `[1, n]`.
fn pairs(dtype: DType) -> Vec<InputSpec> {
    let n = specials_len(dtype);
    vec![input(&[n, 1], dtype, Gen::Specials), input(&[1, n], dtype, Gen::Specials)]
}

/// Adds every case, in a fixed order.
pub(crate) fn add_all(add: &mut Add<'_>) {
    for dtype in NEW {
        elementwise(add, dtype);
        reductions(add, dtype);
        movement(add, dtype);
    }
    masks(add);
    casts(add);
    indices(add);
    fills(add);
}

fn elementwise(add: &mut Add<'_>, dtype: DType) {
    let n = specials_len(dtype);
    for op in UnaryOp::ALL.into_iter().filter(|&op| unary_defined(op, dtype)) {
        let e = Expr::arg(0).unary(op);
        let name = format!("{}_{dtype}", op.name());
        add(
            format!("{name}_{n}_specials"),
            op.name(),
            dtype,
            CaseOp::Map(e.clone()),
            vec![input(&[n], dtype, Gen::Specials)],
            Tolerance::Exact,
        );
        add(
            format!("{name}_257"),
            op.name(),
            dtype,
            CaseOp::Map(e),
            vec![input(&[257], dtype, wide())],
            Tolerance::Exact,
        );
    }
    for op in BinaryOp::ALL.into_iter().filter(|&op| binary_defined(op, dtype)) {
        let e = Expr::arg(0).binary(op, Expr::arg(1));
        let row = match op {
            BinaryOp::Min => "minimum",
            BinaryOp::Max => "maximum",
            _ => op.name(),
        };
        let name = format!("{}_{dtype}", op.name());
        add(format!("{name}_{n}x{n}_specials"), row, dtype, CaseOp::Map(e.clone()), pairs(dtype), Tolerance::Exact);
        let rhs = match op {
            // Small divisors and exponents (zero included), as the i32 cases have.
            BinaryOp::Div | BinaryOp::Rem if dtype != DType::Bool => Gen::Ints { lo: 0, hi: 10 },
            BinaryOp::Pow => Gen::Ints { lo: 0, hi: 70 },
            _ => wide(),
        };
        let ins = vec![input(&[257], dtype, wide()), input(&[257], dtype, rhs)];
        add(format!("{name}_257"), row, dtype, CaseOp::Map(e), ins, Tolerance::Exact);
    }
    // `where_` with a bool mask: the mask selects, the branches are of `dtype`.
    let select = Expr::select(Expr::arg(0), Expr::arg(1), Expr::arg(2));
    let ins =
        vec![input(&[257], DType::Bool, wide()), input(&[257], dtype, wide()), input(&[257], dtype, Gen::Specials)];
    add(format!("select_bool_mask_{dtype}_257"), "select", dtype, CaseOp::Map(select), ins, Tolerance::Exact);
}

fn reductions(add: &mut Add<'_>, dtype: DType) {
    let n = specials_len(dtype);
    for kind in ReduceKind::ALL {
        // numpy promotes the sum and product of bools to an integer: refused here (`Unsupported`).
        if dtype == DType::Bool && matches!(kind, ReduceKind::Sum | ReduceKind::Prod) {
            continue;
        }
        let name = format!("{}_{dtype}", kind.name());
        let all = CaseOp::Reduce { kind, axis: None };
        add(
            format!("{name}_{n}_specials"),
            kind.name(),
            dtype,
            all.clone(),
            vec![input(&[n], dtype, Gen::Specials)],
            Tolerance::Exact,
        );
        add(format!("{name}_7x257"), kind.name(), dtype, all, vec![input(&[7, 257], dtype, wide())], Tolerance::Exact);
        let rows = CaseOp::Reduce { kind, axis: Some(1) };
        add(
            format!("{name}_7x257_axis1"),
            kind.name(),
            dtype,
            rows,
            vec![input(&[7, 257], dtype, wide())],
            Tolerance::Exact,
        );
    }
    if dtype != DType::Bool {
        for kind in ScanKind::ALL {
            let scan = CaseOp::Scan { kind, axis: 1 };
            let ins = vec![input(&[7, 257], dtype, wide())];
            add(format!("{}_{dtype}_7x257_axis1", kind.name()), kind.name(), dtype, scan, ins, Tolerance::Exact);
        }
    }
}

fn movement(add: &mut Add<'_>, dtype: DType) {
    let n = specials_len(dtype);
    add(format!("copy_{dtype}_257"), "copy", dtype, CaseOp::Copy, vec![input(&[257], dtype, wide())], Tolerance::Exact);
    let ins = vec![input(&[7, 257], dtype, wide())];
    add(
        format!("transpose_{dtype}_7x257_to_257x7"),
        "transpose",
        dtype,
        CaseOp::Transpose(vec![1, 0]),
        ins,
        Tolerance::Exact,
    );
    for (what, op) in [("sort", CaseOp::Sort(0)), ("argsort", CaseOp::Argsort(0))] {
        add(
            format!("{what}_{dtype}_{n}_specials"),
            what,
            dtype,
            op.clone(),
            vec![input(&[n], dtype, Gen::Specials)],
            Tolerance::Exact,
        );
        // Many ties (a bool lane has only two values): stability shows.
        add(
            format!("{what}_{dtype}_257"),
            what,
            dtype,
            op,
            vec![input(&[257], dtype, Gen::Ints { lo: 0, hi: 1 })],
            Tolerance::Exact,
        );
    }
    let topk = CaseOp::TopK { k: 5, axis: 1 };
    add(format!("topk_{dtype}_7x257_k5"), "topk", dtype, topk, vec![input(&[7, 257], dtype, wide())], Tolerance::Exact);
    let value = match dtype {
        DType::I64 => Scalar::I64(i64::MIN),
        DType::U8 => Scalar::U8(u8::MAX),
        _ => Scalar::Bool(true),
    };
    let pad = CaseOp::Pad { widths: vec![(1, 2), (0, 3)], value };
    add(format!("pad_{dtype}_7x5"), "pad", dtype, pad, vec![input(&[7, 5], dtype, wide())], Tolerance::Exact);
    let ins = vec![input(&[2, 5], dtype, wide()), input(&[3, 5], dtype, Gen::Specials)];
    add(format!("concat_{dtype}_2x5_3x5"), "concat", dtype, CaseOp::Concat(0), ins, Tolerance::Exact);
}

/// Comparisons of every dtype as bool masks over every pair of its specials: NaN is unequal
/// to everything, itself included, so only `ne` is true with it; `-0.0 == 0.0`.
fn masks(add: &mut Add<'_>) {
    for dtype in DType::ALL {
        let n = specials_len(dtype);
        for op in COMPARISONS {
            let e = Expr::arg(0).binary(op, Expr::arg(1)).cast(DType::Bool);
            let row = format!("{}_mask", op.name());
            add(format!("{row}_{dtype}_{n}x{n}_specials"), &row, dtype, CaseOp::Map(e), pairs(dtype), Tolerance::Exact);
        }
    }
}

/// Casts from each new dtype to every dtype and from every dtype to each new one.
fn casts(add: &mut Add<'_>) {
    for from in DType::ALL {
        for to in DType::ALL {
            if !NEW.contains(&from) && !NEW.contains(&to) {
                continue;
            }
            let op = format!("cast_to_{to}");
            let n = specials_len(from);
            let ins = vec![input(&[n], from, Gen::Specials)];
            add(format!("cast_{from}_to_{to}_{n}_specials"), &op, from, CaseOp::Cast(to), ins, Tolerance::Exact);
            // Magnitudes up to 2^70: past every integer's range, saturating or wrapping.
            let ins = vec![input(&[257], from, Gen::Wide { max_exp: 70 })];
            add(format!("cast_{from}_to_{to}_257"), &op, from, CaseOp::Cast(to), ins, Tolerance::Exact);
        }
    }
}

/// i64 index arrays (negative ones from the end) for take, take_along_axis and scatter_add,
/// and the new dtypes gathered and scattered with i32 indices.
fn indices(add: &mut Add<'_>) {
    let dims = [7, 5];
    let idx = |d: &[usize], dtype| input(d, dtype, Gen::Ints { lo: -7, hi: 6 });
    for data in [DType::F32, DType::I64, DType::U8, DType::Bool] {
        for index in [DType::I64, DType::I32] {
            if data.is_float() && index == DType::I32 {
                continue;
            }
            let tag = format!("{data}_{}_{index}_indices", label(&dims));
            let ins = vec![input(&dims, data, wide()), idx(&[9], index)];
            add(format!("take_{tag}"), "take", data, CaseOp::Take(0), ins, Tolerance::Exact);
            let ins = vec![input(&dims, data, wide()), idx(&[4, 5], index)];
            add(
                format!("take_along_axis_{tag}"),
                "take_along_axis",
                data,
                CaseOp::TakeAlongAxis(0),
                ins,
                Tolerance::Exact,
            );
            if data != DType::Bool {
                // Repeated indices accumulate (integers wrap).
                let ins = vec![input(&dims, data, wide()), idx(&[9], index), input(&[9, 5], data, wide())];
                // Float sums round in any order: the scatter_add bound, as the f32 cases have.
                let tol = if data.is_float() { Tolerance::Bound } else { Tolerance::Exact };
                add(format!("scatter_add_{tag}"), "scatter_add", data, CaseOp::ScatterAdd(0), ins, tol);
            }
        }
    }
}

fn fills(add: &mut Add<'_>) {
    for value in [Scalar::I64(i64::MIN + 1), Scalar::U8(255), Scalar::Bool(true)] {
        let dtype = value.dtype();
        let fill = CaseOp::Fill { fill: Fill::Constant(value), dtype, len: 257 };
        add(format!("fill_constant_{dtype}_257"), "fill_constant", dtype, fill, vec![], Tolerance::Exact);
    }
}

/// Philox inputs over the whole range: raw bits for the integers, a fair coin for bools.
fn wide() -> Gen {
    Gen::Wide { max_exp: 0 }
}
