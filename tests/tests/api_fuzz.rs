//! A seeded random walk over the public array API (operators, elementwise methods, `where_`,
//! reductions over random axes, constructors, reshapes, permutes, printing) with shapes
//! that do and do not broadcast, axes in and out of range, empty and 0-d arrays, and
//! special values. Every call must end in a value or a typed error, never a panic; a value
//! must have numpy's shape, and a broadcast operator numpy's elements.
//!
//! `POLYCOMPUTE_FUZZ_ITERS` (default 3000) and `POLYCOMPUTE_FUZZ_SEED` change the walk.

use std::panic::{catch_unwind, AssertUnwindSafe};

use polycompute::{keepdims, philox, where_, Axes, Device, DeviceArray, Error, Result};

/// The walk's random stream: polycompute's own Philox (`philox::uniform_u32`), counter by
/// counter, so a step is reproduced from the seed and its counter.
struct Rng {
    seed: u64,
    counter: u64,
}

impl Rng {
    fn next(&mut self) -> u64 {
        let (hi, lo) = (philox::uniform_u32(self.seed, self.counter), philox::uniform_u32(self.seed, self.counter + 1));
        self.counter += 2;
        (u64::from(hi) << 32) | u64::from(lo)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }
    fn shape(&mut self) -> Vec<usize> {
        let ndim = self.below(5);
        (0..ndim).map(|_| self.pick(&[0, 1, 1, 2, 3, 5])).collect()
    }
    /// A shape that broadcasts with `a` (numpy's rule), or, one time in four, any shape.
    fn partner(&mut self, a: &[usize]) -> Vec<usize> {
        if self.below(4) == 0 {
            return self.shape();
        }
        let keep = self.below(a.len() + 1);
        let mut b: Vec<usize> = a[a.len() - keep..].iter().map(|&d| if self.below(3) == 0 { 1 } else { d }).collect();
        if self.below(4) == 0 {
            b.insert(0, self.pick(&[1, 2]));
        }
        b
    }
    fn value(&mut self) -> f32 {
        let specials = [0.0, -0.0, 1.0, -1.5, 2.5, 1e-30, -3e7, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        if self.below(4) == 0 {
            self.pick(&specials)
        } else {
            (self.next() % 2001) as f32 / 100.0 - 10.0
        }
    }
    fn axis(&mut self) -> isize {
        self.below(11) as isize - 5
    }
    fn axes(&mut self) -> Axes {
        let axes = match self.below(4) {
            0 => Axes::all(),
            1 => Axes::from(self.axis()),
            2 => Axes::none(),
            _ => {
                let n = 1 + self.below(3);
                Axes::from((0..n).map(|_| self.axis()).collect::<Vec<isize>>())
            }
        };
        if self.below(2) == 0 {
            keepdims(axes)
        } else {
            axes
        }
    }
}

/// numpy's broadcast of two shapes, or `None`.
fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
    (0..n)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Element `flat` of `out` read from an operand of shape `s` broadcast to `out`.
fn broadcast_index(s: &[usize], out: &[usize], mut flat: usize) -> usize {
    let mut index = 0;
    let mut stride = 1;
    for i in (0..out.len()).rev() {
        let coord = flat % out[i];
        flat /= out[i];
        let k = i as isize - (out.len() - s.len()) as isize;
        if k >= 0 {
            let d = s[k as usize];
            index += if d == 1 { 0 } else { coord * stride };
            stride *= d;
        }
    }
    index
}

/// The typed errors a random call may give: anything else (or a panic) fails the walk.
fn expected(e: &Error) -> bool {
    matches!(
        e,
        Error::ShapeMismatch { .. }
            | Error::AxisOutOfRange { .. }
            | Error::DuplicateAxis { .. }
            | Error::InvalidArgument { .. }
            | Error::EmptyReduction { .. }
            | Error::LengthMismatch { .. }
            | Error::InvalidShape(_)
            | Error::TooLarge(_)
            | Error::Unsupported { .. }
    )
}

fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// One random call; `Ok(())` when it gave a right value or an expected error.
fn step(dev: &Device, rng: &mut Rng) -> std::result::Result<(), String> {
    let sa = rng.shape();
    let sb = rng.partner(&sa);
    let va: Vec<f32> = (0..sa.iter().product()).map(|_| rng.value()).collect();
    let vb: Vec<f32> = (0..sb.iter().product()).map(|_| rng.value()).collect();
    let a = dev.from_slice(&va, &sa).map_err(|e| e.to_string())?;
    let b = dev.from_slice(&vb, &sb).map_err(|e| e.to_string())?;
    let what = rng.below(12);
    let outcome: Result<DeviceArray<f32>> = match what {
        0 => {
            let op = rng.below(4);
            let r = match op {
                0 => &a + &b,
                1 => &a - &b,
                2 => &a * &b,
                _ => &a / &b,
            };
            // A broadcast operator has numpy's shape and, element by element, the host's
            // IEEE results (+ - * / are correctly rounded everywhere).
            match (&r, broadcast(&sa, &sb)) {
                (Ok(out), Some(shape)) => {
                    if out.shape() != shape.as_slice() {
                        return Err(format!("{sa:?} op {sb:?} gave shape {:?}, numpy {shape:?}", out.shape()));
                    }
                    let got = out.to_vec().map_err(|e| e.to_string())?;
                    for (k, g) in got.iter().enumerate() {
                        let (x, y) = (va[broadcast_index(&sa, &shape, k)], vb[broadcast_index(&sb, &shape, k)]);
                        let want = [x + y, x - y, x * y, x / y][op];
                        if !same(*g, want) {
                            return Err(format!("{sa:?} op{op} {sb:?} [{k}]: {g} vs {want}"));
                        }
                    }
                }
                (Ok(out), None) => return Err(format!("{sa:?} and {sb:?} do not broadcast, got {:?}", out.shape())),
                (Err(e), Some(_)) => return Err(format!("{sa:?} and {sb:?} broadcast, got {e}")),
                (Err(_), None) => {}
            }
            r
        }
        1 => {
            let s = rng.value();
            match rng.below(3) {
                0 => &a % s,
                1 => s - &a,
                _ => -&a,
            }
        }
        2 => match rng.below(8) {
            0 => a.exp(),
            1 => a.log(),
            2 => a.sqrt(),
            3 => a.abs(),
            4 => a.tanh(),
            5 => a.round(),
            6 => a.expm1(),
            _ => a.log1p(),
        },
        3 => a.maximum(&b).and_then(|m| m.minimum(rng.value())),
        4 => a.clip(&b, rng.value()),
        5 => where_(&b, &a, rng.value()),
        6 => {
            let axes = rng.axes();
            match rng.below(6) {
                0 => a.sum(axes),
                1 => a.max(axes),
                2 => a.mean(axes),
                3 => a.var(axes, rng.below(3)),
                4 => a.logsumexp(axes),
                _ => a.prod(axes),
            }
        }
        7 => {
            let axis = rng.axis();
            let kept = if rng.below(2) == 0 { keepdims(axis) } else { Axes::from(axis) };
            a.argmax(kept).and_then(|i| i.cast::<f32>())
        }
        8 => {
            let v = [0.0, 1.0, -2.5, 3.0, 0.25, f32::NAN, f32::INFINITY, 1e-40];
            let (start, stop, step) = (rng.pick(&v), rng.pick(&v), rng.pick(&v));
            match rng.below(3) {
                0 => dev.arange(start, stop, step),
                1 => dev.linspace(start, stop, rng.pick(&[0, 1, 2, 7, usize::MAX])),
                _ => dev.eye(rng.pick(&[0, 1, 3, 1 << 17, usize::MAX])),
            }
        }
        9 => {
            let target = rng.shape();
            a.reshape(&target)
        }
        10 => {
            let perm: Vec<isize> = (0..sa.len()).map(|_| rng.axis()).collect();
            a.permute(&perm)
        }
        _ => {
            // Printing reads back and must not fail for any value.
            let (text, debug) = (format!("{a}"), format!("{a:?}"));
            if text.contains("not readable") || !debug.contains("dtype=f32") {
                return Err(format!("printing {sa:?}: {text} / {debug}"));
            }
            Ok(a.clone())
        }
    };
    match outcome {
        Ok(out) => out.to_vec().map(|_| ()).map_err(|e| format!("call {what} on {sa:?}/{sb:?}: read back: {e}")),
        Err(e) if expected(&e) => Ok(()),
        Err(e) => Err(format!("call {what} on {sa:?}/{sb:?}: unexpected error {e:?}")),
    }
}

#[test]
fn random_calls_give_values_or_typed_errors() {
    let iters: usize = std::env::var("POLYCOMPUTE_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let seed: u64 = std::env::var("POLYCOMPUTE_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(2026);
    let dev = Device::cpu();
    let mut rng = Rng { seed, counter: 0 };
    for i in 0..iters {
        let before = rng.counter;
        match catch_unwind(AssertUnwindSafe(|| step(&dev, &mut rng))) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => panic!("step {i} (seed {seed}, counter {before}): {why}"),
            Err(_) => panic!("step {i} (seed {seed}, counter {before}) panicked"),
        }
    }
}
