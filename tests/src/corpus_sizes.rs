//! The size tier: every op family at shapes past each backend's limits, compared with the
//! reference like every other case. The limits crossed are 65,535 workgroups or blocks along
//! a dimension (rows, columns, batches, tiles), 65,535 loop iterations per invocation (Mesa's
//! llvmpipe ends longer loops early: a matmul's K, a scatter-add's indices), 2^24-element
//! accumulations, and the sort's switch between its in-workgroup and radix paths.
//!
//! Representative dtypes: f32, one integer dtype (i32, whose sums are exact and wrap) and one
//! half (f16). [`add_all`] is in the corpus, with golden snapshots, and runs in CI on every
//! device; [`add_large`] is the larger variant, run when `POLYCOMPUTE_SIZE_TIER=large` (see
//! docs/conformance.md), compared with the reference only.

use polycompute::{DType, ReduceKind, ScanKind};

use super::corpus::{input, label, CaseOp, InputSpec};
use super::inputs::Gen;
use super::tolerance::{self, Tolerance};

/// The corpus's `add` method, as a callback.
type Add<'a> = dyn FnMut(String, &str, DType, CaseOp, Vec<InputSpec>, Tolerance) + 'a;

/// Past 65,535 workgroups, rows, columns, batches or indices.
const PAST_GRID: usize = 70_000;
/// Past 2^24 elements.
const PAST_F32_COUNT: usize = (1 << 24) + 3;

fn uniform() -> Gen {
    Gen::Uniform { lo: -1.0, hi: 1.0 }
}

/// Values of `dtype` for sums: uniform floats, small integers (exact sums).
fn addends(dtype: DType) -> Gen {
    if dtype.is_float() {
        uniform()
    } else {
        Gen::Ints { lo: -100, hi: 100 }
    }
}

fn matmul(add: &mut Add<'_>, dtype: DType, batch: usize, m: usize, k: usize, n: usize) {
    let (l, r, name) = if batch == 0 {
        (vec![m, k], vec![k, n], format!("matmul_{dtype}_{m}x{k}x{n}"))
    } else {
        (vec![batch, m, k], vec![batch, k, n], format!("matmul_{dtype}_{batch}x{m}x{k}x{n}"))
    };
    let ins = vec![input(&l, dtype, uniform()), input(&r, dtype, uniform())];
    add(name, "matmul", dtype, CaseOp::Matmul, ins, tolerance::matmul());
}

fn reduce(add: &mut Add<'_>, kind: ReduceKind, dtype: DType, dims: &[usize], axis: Option<usize>) {
    let gen = match kind {
        ReduceKind::Sum | ReduceKind::Mean => addends(dtype),
        // Few distinct values: ties, where argmin/argmax must find the first.
        _ => Gen::Ints { lo: 0, hi: 50 },
    };
    let at = axis.map_or(String::new(), |a| format!("_axis{a}"));
    let name = format!("{}_{dtype}_{}{at}", kind.name(), label(dims));
    let ins = vec![input(dims, dtype, gen)];
    add(name, kind.name(), dtype, CaseOp::Reduce { kind, axis }, ins, tolerance::reduce(kind, dtype));
}

fn cumsum(add: &mut Add<'_>, dtype: DType, dims: &[usize], axis: usize) {
    let tol = if dtype.is_float() { Tolerance::Bound } else { Tolerance::Exact };
    let name = format!("cumsum_{dtype}_{}_axis{axis}", label(dims));
    let op = CaseOp::Scan { kind: ScanKind::Sum, axis };
    add(name, "cumsum", dtype, op, vec![input(dims, dtype, addends(dtype))], tol);
}

/// Index arrays of `dims` in `0..n`.
fn indices(dims: &[usize], n: usize) -> InputSpec {
    input(dims, DType::I32, Gen::Ints { lo: 0, hi: n as i64 - 1 })
}

fn scatter_add(add: &mut Add<'_>, dtype: DType, bins: usize, m: usize) {
    let tol = if dtype.is_float() { Tolerance::Bound } else { Tolerance::Exact };
    let ins =
        vec![input(&[bins, 2], dtype, addends(dtype)), indices(&[m], bins), input(&[m, 2], dtype, addends(dtype))];
    let name = format!("scatter_add_{dtype}_{bins}x2_axis0_i32_{m}");
    add(name, "scatter_add", dtype, CaseOp::ScatterAdd(0), ins, tol);
}

fn take(add: &mut Add<'_>, dtype: DType, n: usize, m: usize) {
    let ins = vec![input(&[n, 3], dtype, addends(dtype)), indices(&[m], n)];
    let name = format!("take_{dtype}_{n}x3_axis0_i32_{m}");
    add(name, "take", dtype, CaseOp::Take(0), ins, Tolerance::Exact);
}

fn sorts(add: &mut Add<'_>, dtype: DType, dims: &[usize], axis: usize) {
    let what = format!("{dtype}_{}_axis{axis}", label(dims));
    let gen = Gen::Ints { lo: -1000, hi: 1000 };
    add(
        format!("sort_{what}"),
        "sort",
        dtype,
        CaseOp::Sort(axis),
        vec![input(dims, dtype, gen.clone())],
        Tolerance::Exact,
    );
    add(
        format!("argsort_{what}"),
        "argsort",
        dtype,
        CaseOp::Argsort(axis),
        vec![input(dims, dtype, gen)],
        Tolerance::Exact,
    );
}

/// The tier CI runs (a few minutes on both lavapipe adapters).
pub(crate) fn add_all(add: &mut Add<'_>) {
    // K past llvmpipe's loop budget, in one launch and in two (of 262,144 each).
    matmul(add, DType::F32, 0, 4, 100_000, 3);
    matmul(add, DType::F32, 0, 2, 300_000, 2);
    matmul(add, DType::F16, 0, 2, PAST_GRID, 2);
    // Rows (tiles along y on CUDA) and batches (along z) past 65,535.
    matmul(add, DType::F32, 0, PAST_GRID, 3, 2);
    matmul(add, DType::F32, PAST_GRID, 2, 3, 2);
    for dtype in [DType::F32, DType::I32, DType::F16] {
        reduce(add, ReduceKind::Sum, dtype, &[PAST_GRID, 3], Some(1));
        reduce(add, ReduceKind::Max, dtype, &[3, PAST_GRID], Some(0));
        reduce(add, ReduceKind::ArgMax, dtype, &[PAST_GRID, 4], Some(1));
        reduce(add, ReduceKind::ArgMin, dtype, &[2, PAST_GRID], Some(1));
        cumsum(add, dtype, &[PAST_GRID, 3], 0);
        scatter_add(add, dtype, 5, 200_000);
        take(add, dtype, 1000, 200_000);
        // Rows below and above the switch from in-workgroup sorts to the radix path, both
        // layouts (the sorted axis contiguous, and strided).
        sorts(add, dtype, &[PAST_GRID, 4], 1);
        sorts(add, dtype, &[4, PAST_GRID], 0);
        sorts(add, dtype, &[2, PAST_GRID], 1);
        sorts(add, dtype, &[PAST_GRID, 2], 0);
    }
    // 2^24 elements and more in one accumulation (f32's is in the reduce cases).
    reduce(add, ReduceKind::Sum, DType::I32, &[PAST_F32_COUNT], None);
    cumsum(add, DType::I32, &[PAST_F32_COUNT], 0);
}

/// The larger variant (`POLYCOMPUTE_SIZE_TIER=large`): inner dimensions of a million,
/// 2^26-element accumulations, a million indices.
pub(crate) fn add_large(add: &mut Add<'_>) {
    matmul(add, DType::F32, 0, 3, 1_000_000, 2);
    matmul(add, DType::F16, 0, 2, 1_000_000, 2);
    matmul(add, DType::F32, 0, 300, PAST_GRID, 30);
    for dtype in [DType::F32, DType::I32] {
        reduce(add, ReduceKind::Sum, dtype, &[1 << 26], None);
        cumsum(add, dtype, &[(1 << 26) + 1], 0);
        scatter_add(add, dtype, 3, 1_000_000);
        sorts(add, dtype, &[1 << 22], 0);
    }
}
