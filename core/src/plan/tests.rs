//! The planning layer against naive index arithmetic, on randomized shapes (fixed seeds):
//! empty dimensions, size-1 axes, scalars, ranks 0 to 6.

use std::sync::Arc;

use super::*;
use crate::dtype::DType;
use crate::expr::{Expr, Program};
use crate::shape::Shape;

/// SplitMix64: a tiny deterministic generator, enough to draw shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// A dimension: mostly small, often 1, sometimes 0.
    fn dim(&mut self) -> usize {
        match self.below(12) {
            0 => 0,
            1..=4 => 1,
            k => k - 3,
        }
    }
    fn dims(&mut self, max_rank: usize) -> Vec<usize> {
        let rank = self.below(max_rank + 1);
        let mut d: Vec<usize> = (0..rank).map(|_| self.dim()).collect();
        // Keep empty arrays a minority so that most cases walk real data.
        if self.below(4) != 0 {
            d.iter_mut().filter(|x| **x == 0).for_each(|x| *x = 2);
        }
        d
    }
    /// A shape that broadcasts to `out`: leading axes dropped, some axes set to 1.
    fn broadcast_input(&mut self, out: &[usize]) -> Vec<usize> {
        let drop = self.below(out.len() + 1);
        out[drop..].iter().map(|&d| if self.below(3) == 0 { 1 } else { d }).collect()
    }
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            p.swap(i, self.below(i + 1));
        }
        p
    }
}

/// The offset read for each output element, walking `dims` row-major with `strides`.
fn offsets(dims: &[usize], strides: &[usize]) -> Vec<usize> {
    let n: usize = dims.iter().product();
    (0..n)
        .map(|mut i| {
            let mut off = 0;
            for ax in (0..dims.len()).rev() {
                off += (i % dims[ax]) * strides[ax];
                i /= dims[ax];
            }
            off
        })
        .collect()
}

fn shape(d: &[usize]) -> Shape {
    Shape::new(d).unwrap()
}

#[test]
fn coalesce_walks_the_same_offsets_in_fewest_dims() {
    let mut rng = Rng(11);
    for case in 0..3000 {
        let dims = rng.dims(6);
        let inputs = 1 + rng.below(3);
        let strides: Vec<Vec<usize>> = (0..inputs)
            .map(|_| match rng.below(3) {
                // A permuted read (as a transpose makes).
                0 => {
                    let p = rng.permutation(dims.len());
                    let own = shape(&p.iter().map(|&a| dims[a]).collect::<Vec<_>>()).strides();
                    let mut s = vec![0; dims.len()];
                    for (k, &a) in p.iter().enumerate() {
                        s[a] = own[k];
                    }
                    s
                }
                _ => shape(&rng.broadcast_input(&dims)).broadcast_strides(&shape(&dims)),
            })
            .collect();
        let c = coalesce(&dims, &strides);
        let n: usize = dims.iter().product();
        let what = format!("case {case}: {dims:?} {strides:?} -> {c:?}");
        assert_eq!(c.strides.len(), inputs, "{what}");
        assert!(c.strides.iter().all(|s| s.len() == c.ndim()), "{what}");
        assert_eq!(c.dims.iter().product::<usize>(), n, "{what}");
        assert!(!c.dims.contains(&1), "{what}");
        match n {
            0 => assert_eq!((c.dims.clone(), c.strides.clone()), (vec![0], vec![vec![0]; inputs]), "{what}"),
            1 => assert!(c.dims.is_empty(), "{what}"),
            _ => assert!(!c.dims.contains(&0), "{what}"),
        }
        for (s, cs) in strides.iter().zip(&c.strides) {
            assert_eq!(offsets(&dims, s), offsets(&c.dims, cs), "{what}");
        }
        // Fewest dimensions: no neighbours left that every input walks as one.
        for a in 1..c.ndim() {
            let mergeable = c.strides.iter().all(|s| s[a - 1] == s[a] * c.dims[a]);
            assert!(!mergeable || n == 0, "{what}: axes {} and {a} merge", a - 1);
        }
    }
}

#[test]
fn coalesce_known_cases() {
    let c = coalesce(&[3, 4], &[vec![1, 0]]);
    assert_eq!((c.dims, c.strides), (vec![3, 4], vec![vec![1, 0]]));
    let c = coalesce(&[1, 6, 1], &[vec![0, 1, 0]]);
    assert_eq!((c.dims, c.strides), (vec![6], vec![vec![1]]));
    let c = coalesce(&[], &[vec![], vec![]]);
    assert_eq!((c.dims, c.strides), (vec![], vec![vec![], vec![]]));
    let c = coalesce(&[2, 0, 3], &[vec![3, 3, 1]]);
    assert_eq!((c.dims, c.strides), (vec![0], vec![vec![0]]));
}

/// Naive transpose of `0..n` laid out as `dims`: output axis `i` is input axis `perm[i]`.
fn transposed(dims: &[usize], perm: &[usize]) -> Vec<usize> {
    let own = shape(dims).strides();
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let strides: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
    offsets(&out_dims, &strides)
}

#[test]
fn simplified_permutation_moves_the_same_data() {
    let mut rng = Rng(23);
    for case in 0..3000 {
        let dims = rng.dims(6);
        let perm = rng.permutation(dims.len());
        let p = simplify_permutation(&dims, &perm);
        let what = format!("case {case}: {dims:?} by {perm:?} -> {p:?}");
        let want = transposed(&dims, &perm);
        let n = want.len();
        assert_eq!(p.dims.iter().product::<usize>(), n, "{what}");
        assert_eq!(transposed(&p.dims, &p.perm), want, "{what}");
        assert_eq!(offsets(&p.out_dims(), &p.in_strides()), want, "{what}");
        let mut sorted = p.perm.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..p.dims.len()).collect::<Vec<_>>(), "{what}");
        assert!(!p.dims.contains(&1), "{what}");
        assert!(p.perm.windows(2).all(|w| w[1] != w[0] + 1), "{what}");
        // The elements are distinct, so "nothing moves" is exactly an identity.
        assert_eq!(p.is_identity(), want.iter().enumerate().all(|(i, &x)| i == x), "{what}");
        if n == 0 {
            assert_eq!((p.dims.clone(), p.perm.clone()), (vec![0], vec![0]), "{what}");
        }
    }
}

#[test]
fn simplified_permutation_known_cases() {
    let p = simplify_permutation(&[2, 1, 3], &[1, 0, 2]);
    assert_eq!((p.dims, p.perm), (vec![6], vec![0]));
    let p = simplify_permutation(&[2, 3, 4, 5], &[2, 3, 0, 1]);
    assert_eq!((p.dims, p.perm), (vec![6, 20], vec![1, 0]));
    let p = simplify_permutation(&[], &[]);
    assert!(p.dims.is_empty() && p.is_identity());
}

#[test]
fn access_and_layout_read_what_broadcasting_reads() {
    let mut rng = Rng(37);
    for case in 0..2000 {
        let out = rng.dims(6);
        let inputs: Vec<Shape> = (0..1 + rng.below(4)).map(|_| shape(&rng.broadcast_input(&out))).collect();
        let out = shape(&out);
        let layout = MapLayout::new(&inputs, &out);
        let what = format!("case {case}: {inputs:?} -> {out} gives {layout:?}");
        let mut strided = layout.strides.iter();
        for (input, &access) in inputs.iter().zip(&layout.access) {
            assert_eq!(access, Access::classify(input, &out), "{what}");
            let want = offsets(out.dims(), &input.broadcast_strides(&out));
            let got: Vec<usize> = match access {
                Access::Same => (0..out.numel()).collect(),
                Access::Scalar => vec![0; out.numel()],
                Access::Strided => offsets(&layout.dims, strided.next().expect("strides per strided input")),
            };
            assert_eq!(got, want, "{what}");
        }
        assert!(strided.next().is_none(), "{what}");
        let any_strided = layout.access.contains(&Access::Strided);
        assert_eq!(layout.ndim() > 0, any_strided, "{what}");
        let words = layout.words();
        assert_eq!(words.len(), layout.ndim() * (1 + layout.strides.len()), "{what}");
    }
}

#[test]
fn signature_ignores_sizes() {
    let program = Arc::new(Program::compile(&(Expr::arg(0) + Expr::arg(1)), &[DType::F32, DType::F32]).unwrap());
    let a = MapLayout::new(&[shape(&[4, 5]), shape(&[5])], &shape(&[4, 5]));
    let b = MapLayout::new(&[shape(&[40, 7]), shape(&[7])], &shape(&[40, 7]));
    assert_eq!(a.signature(&program), b.signature(&program));
    assert_eq!(a.signature(&program).strided().collect::<Vec<_>>(), vec![1]);
    let c = MapLayout::new(&[shape(&[4, 5]), shape(&[4, 1])], &shape(&[4, 5]));
    assert_eq!(a.signature(&program), c.signature(&program));
    let d = MapLayout::new(&[shape(&[3, 4, 5]), shape(&[5])], &shape(&[3, 4, 5]));
    assert_eq!(d.words(), vec![12, 5, 0, 1]);
    assert_eq!(a.words(), vec![4, 5, 0, 1]);
    assert_eq!(c.words(), vec![4, 5, 1, 0]);
}

#[test]
fn program_constructors_equal_compiled_programs() {
    for from in DType::ALL {
        assert_eq!(Program::identity(from), Program::compile(&Expr::arg(0), &[from]).unwrap());
        assert!(Program::identity(from).is_identity());
        for to in DType::ALL {
            let compiled = Program::compile(&Expr::arg(0).cast(to), &[from]).unwrap();
            assert_eq!(Program::cast(from, to), compiled, "{from} -> {to}");
            assert_eq!(Program::cast(from, to).output_dtype(), to);
        }
    }
}
