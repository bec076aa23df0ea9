//! The f16 steps of the block-wise evaluator: each block of a chunk is widened to f32 once
//! (with x86's F16C `vcvtph2ps` where the CPU has it), the f32 kernel runs on it, and its
//! result is rounded to f16 once (`vcvtps2ph`, round to nearest even): one rounding per
//! instruction, the same values as `num_half.rs`'s per-element arithmetic, several times
//! faster than converting each element with integer bit arithmetic. bf16 keeps the generic
//! path: its conversions are shifts that LLVM vectorises already.

use polycompute_core::{f16, BinaryOp, UnaryOp};

use super::fuse::Pair;
use super::kernels::{self, op, BinOp, Src, UnOp};
use super::lane::DestMut;
use super::step::{dest, Ctx, Step};
use crate::num_half::Bits16;

/// Elements widened at a time: the f32 blocks of a step (operands, intermediate, result)
/// stay in L1, and the per-block dispatch is amortised over hundreds of elements.
const BLOCK: usize = 512;

/// Whether the CPU converts f16 blocks in hardware (std caches the answer).
#[inline]
fn has_f16c() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("f16c") && std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the fused loop's F16C + AVX2 version runs here.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2_f16c() -> bool {
    has_f16c() && std::arch::is_x86_feature_detected!("avx2")
}

/// x86's F16C block conversions, eight elements per instruction, inlined into one loop
/// (the `half` crate's slice conversions make an out-of-line call per eight elements,
/// measured 2.5× slower here).
#[cfg(target_arch = "x86_64")]
mod f16c {
    use std::arch::x86_64::{
        __m128i, __m256, _mm256_cvtph_ps, _mm256_cvtps_ph, _mm256_loadu_ps, _mm256_storeu_ps, _mm_loadu_si128,
        _mm_storeu_si128, _MM_FROUND_TO_NEAREST_INT,
    };

    use polycompute_core::f16;

    use super::BinOp;

    /// # Safety
    /// The CPU must have F16C and AVX.
    #[target_feature(enable = "avx,f16c")]
    pub(super) unsafe fn widen(src: &[f16], dst: &mut [f32]) {
        let n = src.len().min(dst.len());
        let (src, dst) = (&src[..n], &mut dst[..n]);
        let mut d8 = dst.chunks_exact_mut(8);
        let mut s8 = src.chunks_exact(8);
        for (d, s) in (&mut d8).zip(&mut s8) {
            // SAFETY: `s` holds 8 f16 (16 bytes) and `d` 8 f32 (32 bytes); both intrinsics
            // take unaligned pointers; the caller guarantees F16C and AVX.
            unsafe { _mm256_storeu_ps(d.as_mut_ptr(), _mm256_cvtph_ps(_mm_loadu_si128(s.as_ptr().cast::<__m128i>()))) };
        }
        for (d, s) in d8.into_remainder().iter_mut().zip(s8.remainder()) {
            *d = s.to_f32();
        }
    }

    /// `out[i] = O2(round(O1(x[i], s)), y[i])` (operands swapped as flagged), eight
    /// elements at a time in registers: widen, compute in f32, round once per instruction.
    ///
    /// # Safety
    /// The CPU must have F16C and AVX2.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn fused<O1: BinOp<f32>, O2: BinOp<f32>>(
        x: &[f16],
        s: f32,
        y: &[f16],
        out: &mut [f16],
        (sw1, sw2): (bool, bool),
    ) {
        let n = out.len().min(x.len()).min(y.len());
        let (x, y, out) = (&x[..n], &y[..n], &mut out[..n]);
        let mut o8 = out.chunks_exact_mut(8);
        let (mut x8, mut y8) = (x.chunks_exact(8), y.chunks_exact(8));
        for ((o, x), y) in (&mut o8).zip(&mut x8).zip(&mut y8) {
            // SAFETY: each chunk holds 8 f16 (16 bytes); unaligned loads and stores; the
            // caller guarantees F16C and AVX2.
            unsafe {
                let xv: [f32; 8] = std::mem::transmute(_mm256_cvtph_ps(_mm_loadu_si128(x.as_ptr().cast::<__m128i>())));
                let yv: [f32; 8] = std::mem::transmute(_mm256_cvtph_ps(_mm_loadu_si128(y.as_ptr().cast::<__m128i>())));
                let t: [f32; 8] = std::array::from_fn(|i| if sw1 { O1::f(s, xv[i]) } else { O1::f(xv[i], s) });
                let t = _mm256_cvtph_ps(_mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(std::mem::transmute::<
                    [f32; 8],
                    __m256,
                >(t)));
                let t: [f32; 8] = std::mem::transmute(t);
                let r: [f32; 8] = std::array::from_fn(|i| if sw2 { O2::f(yv[i], t[i]) } else { O2::f(t[i], yv[i]) });
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(std::mem::transmute::<[f32; 8], __m256>(r));
                _mm_storeu_si128(o.as_mut_ptr().cast::<__m128i>(), h);
            }
        }
        for ((o, x), y) in o8.into_remainder().iter_mut().zip(x8.remainder()).zip(y8.remainder()) {
            let t = if sw1 { O1::f(s, x.to_f32()) } else { O1::f(x.to_f32(), s) };
            let t = f16::from_f32(t).to_f32();
            *o = f16::from_f32(if sw2 { O2::f(y.to_f32(), t) } else { O2::f(t, y.to_f32()) });
        }
    }

    /// # Safety
    /// The CPU must have F16C and AVX.
    #[target_feature(enable = "avx,f16c")]
    pub(super) unsafe fn narrow(src: &[f32], dst: &mut [f16]) {
        let n = src.len().min(dst.len());
        let (src, dst) = (&src[..n], &mut dst[..n]);
        let mut d8 = dst.chunks_exact_mut(8);
        let mut s8 = src.chunks_exact(8);
        for (d, s) in (&mut d8).zip(&mut s8) {
            // SAFETY: as in `widen`; `vcvtps2ph` with round to nearest even, overflow to
            // ±Inf, subnormals kept, NaN quieted with its sign.
            unsafe {
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(s.as_ptr()));
                _mm_storeu_si128(d.as_mut_ptr().cast::<__m128i>(), h);
            }
        }
        for (d, s) in d8.into_remainder().iter_mut().zip(s8.remainder()) {
            *d = f16::from_f32(*s);
        }
    }
}

/// `dst[i] = src[i]` widened (exact).
pub(crate) fn widen_block(src: &[f16], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_f16c() {
        // SAFETY: the CPU has F16C and AVX (checked above).
        unsafe { f16c::widen(src, dst) };
        return;
    }
    // The portable path: branch-free bit arithmetic that LLVM vectorises.
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s.widen();
    }
}

/// `dst[i] = src[i]` rounded to nearest even (±Inf past the largest finite value, NaN stays
/// NaN with its sign).
pub(crate) fn narrow_block(src: &[f32], dst: &mut [f16]) {
    #[cfg(target_arch = "x86_64")]
    if has_f16c() {
        // SAFETY: the CPU has F16C and AVX (checked above).
        unsafe { f16c::narrow(src, dst) };
        return;
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = <f16 as Bits16>::round(s);
    }
}

/// Operand `src` over elements `lo..hi` of the chunk as f32: a slice widened into `buf`, or
/// a splatted value widened once.
#[inline]
fn load<'b>(src: Src<'_, f16>, lo: usize, hi: usize, buf: &'b mut [f32; BLOCK]) -> Src<'b, f32> {
    match src {
        Src::Slice(s) => {
            let buf = &mut buf[..hi - lo];
            widen_block(&s[lo..hi], buf);
            Src::Slice(buf)
        }
        Src::Splat(v) => Src::Splat(v.widen()),
    }
}

/// Runs `f` on each block of `out`, with its bounds and an f32 result buffer that is then
/// rounded into the block.
#[inline]
fn blocks(out: &mut [f16], mut f: impl FnMut(usize, usize, &mut [f32])) {
    let mut res = [0.0f32; BLOCK];
    for (k, o) in out.chunks_mut(BLOCK).enumerate() {
        let (lo, hi) = (k * BLOCK, k * BLOCK + o.len());
        let r = &mut res[..o.len()];
        f(lo, hi, r);
        narrow_block(r, o);
    }
}

fn unary<O: UnOp<f32>>(a: usize) -> Step {
    Box::new(move |ctx: &Ctx<'_>, d: DestMut<'_>| {
        let sa = ctx.src::<f16>(a);
        let mut ba = [0.0f32; BLOCK];
        blocks(dest::<f16>(d), |lo, hi, r| kernels::unary::<f32, O>(load(sa, lo, hi, &mut ba), r));
    })
}

fn binary<O: BinOp<f32>>(x: usize, y: usize) -> Step {
    Box::new(move |ctx: &Ctx<'_>, d: DestMut<'_>| {
        let (sx, sy) = (ctx.src::<f16>(x), ctx.src::<f16>(y));
        let (mut bx, mut by) = ([0.0f32; BLOCK], [0.0f32; BLOCK]);
        blocks(dest::<f16>(d), |lo, hi, r| {
            kernels::binary::<f32, O>(load(sx, lo, hi, &mut bx), load(sy, lo, hi, &mut by), r)
        });
    })
}

/// The step of f16 unary op `u` on instruction `a` (f16 has every unary op).
pub(crate) fn unary_step(u: UnaryOp, a: usize) -> Step {
    match u {
        UnaryOp::Neg => unary::<op::Neg>(a),
        UnaryOp::Abs => unary::<op::Abs>(a),
        UnaryOp::Floor => unary::<op::Floor>(a),
        UnaryOp::Ceil => unary::<op::Ceil>(a),
        UnaryOp::Round => unary::<op::Round>(a),
        UnaryOp::Sqrt => unary::<op::Sqrt>(a),
        UnaryOp::Recip => unary::<op::Recip>(a),
        UnaryOp::Exp => unary::<op::Exp>(a),
        UnaryOp::Expm1 => unary::<op::Expm1>(a),
        UnaryOp::Ln => unary::<op::Ln>(a),
        UnaryOp::Log1p => unary::<op::Log1p>(a),
        UnaryOp::Log2 => unary::<op::Log2>(a),
        UnaryOp::Log10 => unary::<op::Log10>(a),
        UnaryOp::Sin => unary::<op::Sin>(a),
        UnaryOp::Cos => unary::<op::Cos>(a),
        UnaryOp::Tan => unary::<op::Tan>(a),
        UnaryOp::Tanh => unary::<op::Tanh>(a),
    }
}

/// The step of f16 binary op `b` on instructions `x`, `y`, or `None` for a bitwise op.
pub(crate) fn binary_step(b: BinaryOp, x: usize, y: usize) -> Option<Step> {
    Some(match b {
        BinaryOp::Add => binary::<op::Add>(x, y),
        BinaryOp::Sub => binary::<op::Sub>(x, y),
        BinaryOp::Mul => binary::<op::Mul>(x, y),
        BinaryOp::Div => binary::<op::Div>(x, y),
        BinaryOp::Rem => binary::<op::Rem>(x, y),
        BinaryOp::Pow => binary::<op::Pow>(x, y),
        BinaryOp::Min => binary::<op::Min>(x, y),
        BinaryOp::Max => binary::<op::Max>(x, y),
        // Comparisons give 0 or 1, which f16 holds exactly.
        BinaryOp::Eq => binary::<op::Eq>(x, y),
        BinaryOp::Ne => binary::<op::Ne>(x, y),
        BinaryOp::Lt => binary::<op::Lt>(x, y),
        BinaryOp::Le => binary::<op::Le>(x, y),
        BinaryOp::Gt => binary::<op::Gt>(x, y),
        BinaryOp::Ge => binary::<op::Ge>(x, y),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => return None,
    })
}

/// The f16 step of a fused pair (see `fuse.rs`): both instructions in one pass over each
/// block, the inner result rounded to f16 (and widened back) before the outer one reads it,
/// so each instruction still rounds once.
pub(crate) fn fused_step(pair: Pair) -> Step {
    match (pair.inner_op, pair.outer_op) {
        (BinaryOp::Mul, BinaryOp::Add) => fused::<op::Mul, op::Add>(pair),
        (BinaryOp::Mul, BinaryOp::Sub) => fused::<op::Mul, op::Sub>(pair),
        (BinaryOp::Mul, _) => fused::<op::Mul, op::Mul>(pair),
        (BinaryOp::Add, BinaryOp::Add) => fused::<op::Add, op::Add>(pair),
        (BinaryOp::Add, BinaryOp::Sub) => fused::<op::Add, op::Sub>(pair),
        (BinaryOp::Add, _) => fused::<op::Add, op::Mul>(pair),
        (_, BinaryOp::Add) => fused::<op::Sub, op::Add>(pair),
        (_, BinaryOp::Sub) => fused::<op::Sub, op::Sub>(pair),
        _ => fused::<op::Sub, op::Mul>(pair),
    }
}

fn fused<O1: BinOp<f32>, O2: BinOp<f32>>(pair: Pair) -> Step {
    Box::new(move |ctx: &Ctx<'_>, d: DestMut<'_>| {
        let (sx, ss, sy) = (ctx.src::<f16>(pair.x), ctx.src::<f16>(pair.s), ctx.src::<f16>(pair.y));
        #[cfg(target_arch = "x86_64")]
        if let (Src::Slice(x), Src::Splat(s), Src::Slice(y), true) = (sx, ss, sy, has_avx2_f16c()) {
            // SAFETY: the CPU has F16C and AVX2 (checked in the pattern).
            unsafe { f16c::fused::<O1, O2>(x, s.widen(), y, dest::<f16>(d), (pair.inner_swapped, pair.outer_swapped)) };
            return;
        }
        let (mut bx, mut by, mut bs) = ([0.0f32; BLOCK], [0.0f32; BLOCK], [0.0f32; BLOCK]);
        let mut inner = [0.0f32; BLOCK];
        let mut inner_h = [f16::ZERO; BLOCK];
        blocks(dest::<f16>(d), |lo, hi, r| {
            let n = hi - lo;
            let (x, s) = (load(sx, lo, hi, &mut bx), load(ss, lo, hi, &mut bs));
            let t = &mut inner[..n];
            if pair.inner_swapped {
                kernels::binary::<f32, O1>(s, x, t);
            } else {
                kernels::binary::<f32, O1>(x, s, t);
            }
            // The inner instruction's one rounding.
            narrow_block(t, &mut inner_h[..n]);
            widen_block(&inner_h[..n], t);
            let (t, y) = (Src::Slice(&t[..]), load(sy, lo, hi, &mut by));
            if pair.outer_swapped {
                kernels::binary::<f32, O2>(y, t, r);
            } else {
                kernels::binary::<f32, O2>(t, y, r);
            }
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every f32 whose low 13 bits sit at an f16 rounding corner (0, below, at and above the
    /// tie, all ones), for every high part: normal, subnormal, overflow, Inf and NaN inputs.
    fn corners() -> Vec<f32> {
        let lows = [0u32, 0xfff, 0x1000, 0x1001, 0x1fff];
        (0..1u32 << 19).flat_map(|hi| lows.map(|lo| f32::from_bits((hi << 13) | lo))).collect()
    }

    /// The block conversions (F16C where the CPU has it) give the bits of the per-element
    /// arithmetic the rest of the CPU backend uses, NaNs aside: a NaN stays a NaN of its sign.
    fn same(ours: f16, theirs: f16) -> bool {
        ours.to_bits() == theirs.to_bits()
            || (ours.is_nan() && theirs.is_nan() && ours.is_sign_negative() == theirs.is_sign_negative())
    }

    #[test]
    fn block_widening_matches_the_scalar_path_on_every_f16() {
        let all: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        let mut wide = vec![0.0f32; all.len()];
        widen_block(&all, &mut wide);
        for (h, w) in all.iter().zip(&wide) {
            let s = h.widen();
            assert!(s.to_bits() == w.to_bits() || (s.is_nan() && w.is_nan()), "{:#06x}", h.to_bits());
        }
    }

    #[test]
    fn block_rounding_matches_the_scalar_path_at_every_corner() {
        let xs = corners();
        let mut got = vec![f16::ZERO; xs.len()];
        narrow_block(&xs, &mut got);
        for (&x, &g) in xs.iter().zip(&got) {
            assert!(same(g, <f16 as Bits16>::round(x)), "{x:e} ({:#010x}) gave {:#06x}", x.to_bits(), g.to_bits());
        }
    }

    /// The fused f16 step (in registers under F16C, by blocks otherwise) against the
    /// per-element arithmetic of `num_half.rs`, which rounds after each instruction: every
    /// f16 as `x`, against `y` values that make ties, overflows and NaNs.
    #[test]
    fn fused_axpy_rounds_once_per_instruction() {
        use crate::num::Num;
        let x: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        let ys = [0.0f32, -0.0, 1.0, -65504.0, 65504.0, 6.1e-5, 1e-7, f32::INFINITY, f32::NAN, 3.0009765];
        for (k, &yv) in ys.iter().enumerate() {
            let y: Vec<f16> = x.iter().enumerate().map(|(i, _)| f16::from_f32(yv * (1 + (i + k) % 3) as f32)).collect();
            let s = f16::from_f32(1.5);
            let mut got = vec![f16::ZERO; x.len()];
            blocks_fused(&x, s, &y, &mut got);
            for i in 0..x.len() {
                let want = <f16 as Num>::add(<f16 as Num>::mul(x[i], s), y[i]);
                assert!(
                    same(got[i], want),
                    "x {:#06x} y {:#06x}: {:#06x}",
                    x[i].to_bits(),
                    y[i].to_bits(),
                    got[i].to_bits()
                );
            }
        }
    }

    /// Runs the fused `x*s + y` step the way the plan does.
    fn blocks_fused(x: &[f16], s: f16, y: &[f16], out: &mut [f16]) {
        #[cfg(target_arch = "x86_64")]
        if has_avx2_f16c() {
            // SAFETY: checked just above.
            unsafe { f16c::fused::<op::Mul, op::Add>(x, s.widen(), y, out, (false, false)) };
            return;
        }
        let (mut bx, mut by, mut t) = ([0.0f32; BLOCK], [0.0f32; BLOCK], [0.0f32; BLOCK]);
        let mut th = [f16::ZERO; BLOCK];
        blocks(out, |lo, hi, r| {
            let n = hi - lo;
            kernels::binary::<f32, op::Mul>(load(Src::Slice(x), lo, hi, &mut bx), Src::Splat(s.widen()), &mut t[..n]);
            narrow_block(&t[..n], &mut th[..n]);
            widen_block(&th[..n], &mut t[..n]);
            kernels::binary::<f32, op::Add>(Src::Slice(&t[..n]), load(Src::Slice(y), lo, hi, &mut by), r);
        });
    }
}
