//! The lazy elementwise layer: an elementwise op's result is *pending* (the program over
//! materialized leaf arrays, its shape and dtype) and an elementwise op on a pending array
//! composes into one program instead of launching. The chain runs as one `Op::Map` (or
//! `Op::MapViews`) the first time anything needs the buffer: a read-back, a
//! non-elementwise op, `Device::synchronize`, a move to another device. The buffer is then
//! cached, so a pending array read twice is computed once.
//!
//! Validation (dtypes, shapes, broadcasting) stays at the call ([`crate::array`]'s map);
//! only execution is deferred, so a device fault surfaces at the next read or synchronize.
//!
//! Bounds: a composed program has at most [`MAX_INSTS`] instructions and [`MAX_LEAVES`]
//! leaf inputs (wgpu's guaranteed 8 storage bindings per kernel, one of them the output);
//! past either, the biggest pending input is materialized first. A pending input consumed
//! under broadcasting to a larger shape is materialized, not recomputed per element (and
//! its flat index would mean another element).

mod compose;
mod control;

pub use control::{FusionStats, FUSION_ENV};

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use smallvec::SmallVec;

use crate::backend::BufferRef;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::Result;
use crate::expr::{InstOp, Program};
use crate::layout::Layout;
use crate::op::Op;
use crate::shape::Shape;
use crate::sync::LockUnpoisoned;

use compose::Part;

/// The most instructions a composed program may have.
pub const MAX_INSTS: usize = 64;
/// The most leaf inputs a composed program may have (unless one op alone has more).
pub const MAX_LEAVES: usize = 7;

/// Where an array's elements are: a buffer, or a pending computation of one.
#[derive(Clone)]
pub(crate) enum Storage {
    Ready(BufferRef),
    Pending(Arc<Pending>),
}

impl Storage {
    /// Elements in the buffer (known without computing it).
    pub(crate) fn len(&self) -> usize {
        match self {
            Storage::Ready(b) => b.len(),
            Storage::Pending(p) => p.shape.numel(),
        }
    }

    /// The buffer, computed now if it is pending (and kept).
    pub(crate) fn buffer(&self) -> Result<&BufferRef> {
        match self {
            Storage::Ready(b) => Ok(b),
            Storage::Pending(p) => p.buffer(),
        }
    }

    /// The buffer, computed now if pending, by value.
    pub(crate) fn into_buffer(self) -> Result<BufferRef> {
        match self {
            Storage::Ready(b) => Ok(b),
            Storage::Pending(p) => p.buffer().cloned(),
        }
    }
}

/// A leaf of a pending program: a materialized buffer and the view of it the program reads.
#[derive(Clone)]
struct Leaf {
    buffer: BufferRef,
    layout: Layout,
}

/// What a pending array computes.
#[derive(Clone)]
struct Recipe {
    program: Arc<Program>,
    leaves: SmallVec<[Leaf; 4]>,
    /// The elementwise ops composed into it.
    ops: u32,
}

/// A pending elementwise result.
pub(crate) struct Pending {
    device: Device,
    shape: Shape,
    done: OnceLock<BufferRef>,
    /// Taken when the buffer is computed, which frees the leaves.
    recipe: Mutex<Option<Recipe>>,
    /// Inlined into a later op: `synchronize` leaves it to be computed when read (the
    /// consumer computes its elements already; computing it too would rerun the prefix).
    consumed: AtomicBool,
}

impl Pending {
    pub(crate) fn is_done(&self) -> bool {
        self.done.get().is_some()
    }

    /// The buffer: computed by one fused kernel on first use.
    fn buffer(&self) -> Result<&BufferRef> {
        if let Some(b) = self.done.get() {
            return Ok(b);
        }
        let mut guard = self.recipe.lock_unpoisoned();
        if let Some(b) = self.done.get() {
            return Ok(b);
        }
        let Some(recipe) = guard.as_ref() else {
            // Unreachable: the recipe is taken only after `done` is set.
            return Err(crate::Error::Backend {
                device: self.device.id(),
                message: "pending array lost its recipe".into(),
            });
        };
        let buffer = launch(&self.device, &recipe.program, &recipe.leaves, &self.shape)?;
        tracing::debug!(
            target: "polycompute::fusion",
            device = %self.device.id(),
            ops = recipe.ops,
            inputs = recipe.leaves.len(),
            shape = %self.shape,
            program = %describe(&recipe.program),
            "fused flush"
        );
        control::state(&self.device).launched.fetch_add(1, Ordering::Relaxed);
        let _ = self.done.set(buffer);
        *guard = None;
        drop(guard);
        self.done.get().ok_or_else(|| crate::Error::Backend { device: self.device.id(), message: "unset".into() })
    }

    /// The recipe, or `None` when the buffer exists (computed meanwhile).
    fn recipe(&self) -> Option<Recipe> {
        self.recipe.lock_unpoisoned().clone()
    }
}

/// The one map that computes `program` over `leaves` at `shape`: `Op::Map` when every
/// leaf is a plain array, else `Op::MapViews`.
fn map_op(program: &Arc<Program>, leaves: &[Leaf], shape: &Shape) -> Op {
    if leaves.iter().all(|l| l.layout.is_plain(l.buffer.len())) {
        Op::Map {
            program: program.clone(),
            input_shapes: leaves.iter().map(|l| l.layout.shape.clone()).collect(),
            shape: shape.clone(),
        }
    } else {
        Op::MapViews {
            program: program.clone(),
            inputs: leaves.iter().map(|l| l.layout.clone()).collect(),
            shape: shape.clone(),
        }
    }
}

/// Runs `program` over `leaves` as one map of `shape`.
fn launch(device: &Device, program: &Arc<Program>, leaves: &[Leaf], shape: &Shape) -> Result<BufferRef> {
    let buffers: SmallVec<[&BufferRef; 8]> = leaves.iter().map(|l| &l.buffer).collect();
    device.backend().execute(&map_op(program, leaves, shape), &buffers)
}

/// Runs `reduce` (an `Op::Reduce` over an array of `layout` held in `storage`) with the
/// pending chain as its element source, one backend call
/// ([`crate::backend::DeviceBackend::map_reduce`]) and no buffer for the chain; `None`
/// when the array is not a whole pending array (the caller reduces its buffer).
pub(crate) fn reduce(device: &Device, storage: &Storage, layout: &Layout, reduce: &Op) -> Result<Option<BufferRef>> {
    let Storage::Pending(p) = storage else {
        return Ok(None);
    };
    if p.is_done() || layout.shape != p.shape || !layout.is_plain(p.shape.numel()) {
        return Ok(None);
    }
    let Some(recipe) = p.recipe() else {
        return Ok(None);
    };
    let map = map_op(&recipe.program, &recipe.leaves, &p.shape);
    let buffers: SmallVec<[&BufferRef; 8]> = recipe.leaves.iter().map(|l| &l.buffer).collect();
    let out = device.backend().map_reduce(&map, reduce, &buffers)?;
    tracing::debug!(
        target: "polycompute::fusion",
        device = %device.id(),
        ops = recipe.ops + 1,
        inputs = recipe.leaves.len(),
        shape = %p.shape,
        reduce = reduce.name(),
        program = %describe(&recipe.program),
        "fused map-reduce"
    );
    control::state(device).launched.fetch_add(1, Ordering::Relaxed);
    Ok(Some(out))
}

/// The program in one line, `%2 = mul.f32(%0, %1)`, for the flush event.
fn describe(p: &Program) -> String {
    let mut s = String::new();
    for (i, inst) in p.insts.iter().enumerate() {
        let d = inst.dtype.name();
        let _ = match inst.op {
            InstOp::Arg(n) => write!(s, "%{i} = arg{n}.{d}; "),
            InstOp::Lit(v) => write!(s, "%{i} = {v}; "),
            InstOp::Index => write!(s, "%{i} = index; "),
            InstOp::Unary(op, a) => write!(s, "%{i} = {}.{d}(%{a}); ", op.name()),
            InstOp::Binary(op, a, b) => write!(s, "%{i} = {}.{d}(%{a}, %{b}); ", op.name()),
            InstOp::Select(c, a, b) => write!(s, "%{i} = select.{d}(%{c}, %{a}, %{b}); "),
            InstOp::Cast(a) => write!(s, "%{i} = cast.{d}(%{a}); "),
        };
    }
    s.truncate(s.trim_end_matches("; ").len());
    s
}

/// One input of an elementwise op as the lazy layer sees it.
pub(crate) struct Input<'a> {
    pub(crate) storage: &'a Storage,
    pub(crate) layout: &'a Layout,
}

/// Records `program` over `inputs` as a pending result of `shape`, composing pending
/// inputs into it; `None` when the device runs ops at their call (fusion off, or a result
/// below the device's minimum size).
pub(crate) fn record(
    device: &Device,
    inputs: &[Input<'_>],
    program: &Arc<Program>,
    shape: &Shape,
) -> Result<Option<Storage>> {
    let state = control::state(device);
    if !state.records(shape.numel()) || !always_runs(device, program, inputs.len()) {
        return Ok(None);
    }
    let recipe = plan(inputs, program, shape)?;
    state.recorded.fetch_add(1, Ordering::Relaxed);
    let pending = Arc::new(Pending {
        device: device.clone(),
        shape: shape.clone(),
        done: OnceLock::new(),
        recipe: Mutex::new(Some(recipe)),
        consumed: AtomicBool::new(false),
    });
    state.note_pending(&pending);
    Ok(Some(Storage::Pending(pending)))
}

/// Records the cast of one array from `from` to `to` (the map `arg0.cast(to)`, which is
/// how `Op::Cast` is defined); `None` when the device runs it at the call.
pub(crate) fn cast(
    device: &Device,
    storage: &Storage,
    layout: &Layout,
    from: DType,
    to: DType,
) -> Result<Option<Storage>> {
    if !control::state(device).records(layout.shape.numel()) {
        return Ok(None);
    }
    let program = Arc::new(Program::cast(from, to));
    record(device, &[Input { storage, layout }], &program, &layout.shape)
}

/// Whether `program` over `inputs` arrays is one the device cannot refuse, so deferring it
/// cannot move an `Unsupported` from the call to the read: on the CPU everything; on a GPU
/// backend only f32, i32 and u32 instructions (a device may lack f64, halves or a function
/// of them: wgpu has no f64 `pow`; any other dtype counts as such) and no more inputs than
/// every device binds. Others run at the call.
fn always_runs(device: &Device, program: &Program, inputs: usize) -> bool {
    if device.kind() == crate::backend::BackendKind::Cpu {
        return true;
    }
    inputs <= MAX_LEAVES && program.insts.iter().all(|i| matches!(i.dtype, DType::F32 | DType::I32 | DType::U32))
}

/// What each input contributes: its leaf, or the recipe to inline.
enum Source {
    Leaf(Leaf),
    Inline(Arc<Pending>, Box<Recipe>),
}

fn plan(inputs: &[Input<'_>], program: &Arc<Program>, shape: &Shape) -> Result<Recipe> {
    let mut sources: SmallVec<[Source; 4]> = SmallVec::new();
    for input in inputs {
        let leaf = |buffer: &BufferRef| Source::Leaf(Leaf { buffer: buffer.clone(), layout: input.layout.clone() });
        let source = match input.storage {
            Storage::Ready(buffer) => leaf(buffer),
            Storage::Pending(p) => match p.done.get() {
                Some(buffer) => leaf(buffer),
                None => {
                    // Only a whole pending array of the result's shape is inlined: a view or
                    // a broadcast one would be recomputed per element it is read at.
                    let whole = input.layout.shape == *shape && input.layout.is_plain(p.shape.numel());
                    match whole.then(|| p.recipe()).flatten() {
                        Some(recipe) => {
                            p.consumed.store(true, Ordering::Relaxed);
                            Source::Inline(p.clone(), Box::new(recipe))
                        }
                        None => leaf(p.buffer()?),
                    }
                }
            },
        };
        sources.push(source);
    }
    if sources.iter().all(|s| matches!(s, Source::Leaf(_))) {
        let leaves = sources
            .into_iter()
            .filter_map(|s| match s {
                Source::Leaf(l) => Some(l),
                Source::Inline(..) => None,
            })
            .collect();
        return Ok(Recipe { program: program.clone(), leaves, ops: 1 });
    }
    let leaf_cap = MAX_LEAVES.max(inputs.len());
    loop {
        let (composed, leaves, ops) = compose_sources(program, &sources);
        if composed.insts.len() <= MAX_INSTS && leaves.len() <= leaf_cap {
            return Ok(Recipe { program: Arc::new(composed), leaves, ops });
        }
        // Over a bound: the biggest inlined producer runs on its own and becomes a leaf.
        let biggest = sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Source::Inline(p, r) => Some((r.program.insts.len(), i, p.clone())),
                Source::Leaf(_) => None,
            })
            .max_by_key(|(n, i, _)| (*n, *i));
        let Some((_, i, p)) = biggest else {
            return Ok(Recipe { program: Arc::new(composed), leaves, ops });
        };
        let buffer = p.buffer()?.clone();
        let layout = inputs[i].layout.clone();
        // Every use of the same producer becomes the same leaf.
        for s in sources.iter_mut() {
            if matches!(s, Source::Inline(q, _) if Arc::ptr_eq(q, &p)) {
                *s = Source::Leaf(Leaf { buffer: buffer.clone(), layout: layout.clone() });
            }
        }
    }
}

/// The consumer with every inlined source spliced in, its deduplicated leaves, its op count.
fn compose_sources(program: &Program, sources: &[Source]) -> (Program, SmallVec<[Leaf; 4]>, u32) {
    let mut leaves: SmallVec<[Leaf; 4]> = SmallVec::new();
    let mut leaf_index = |leaf: &Leaf| -> usize {
        if let Some(i) = leaves.iter().position(|l| Arc::ptr_eq(&l.buffer, &leaf.buffer) && l.layout == leaf.layout) {
            return i;
        }
        leaves.push(leaf.clone());
        leaves.len() - 1
    };
    let mut ops = 1u32;
    let mut inlined: SmallVec<[*const Pending; 4]> = SmallVec::new();
    let parts: Vec<Part<'_>> = sources
        .iter()
        .map(|s| match s {
            Source::Leaf(l) => Part::Leaf(leaf_index(l)),
            Source::Inline(p, r) => {
                if !inlined.contains(&Arc::as_ptr(p)) {
                    inlined.push(Arc::as_ptr(p));
                    ops += r.ops;
                }
                Part::Inline { program: &r.program, leaves: r.leaves.iter().map(&mut leaf_index).collect() }
            }
        })
        .collect();
    let dtypes: Vec<DType> = leaves.iter().map(|l| l.buffer.dtype()).collect();
    (compose::compose(program, &parts, dtypes), leaves, ops)
}

/// Materializes every pending array of `device` still alive that no later op consumed
/// (for `synchronize`): the ends of the recorded chains. A consumed intermediate still
/// alive is computed when it is read.
pub(crate) fn flush(device: &Device) -> Result<()> {
    for weak in control::state(device).take_pending() {
        if let Some(p) = weak.upgrade() {
            if !p.consumed.load(Ordering::Relaxed) {
                p.buffer()?;
            }
        }
    }
    Ok(())
}
