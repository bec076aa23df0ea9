//! Map, Cast and maps over views (`Op::MapViews`): one host path, since a map over views is a
//! strided map whose inputs start at an offset and may step backwards. A plain map walks the
//! geometry core's plan (`plan::MapLayout`) coalesced; a map over views reads each input
//! through its layout (signed strides, offset, broadcast axes) directly, without a copy.
//!
//! Every map, whichever entry point it comes from (the transposes and f64 copies of
//! `layout.rs`, the half transposes of `half.rs` too), passes the same checks before it
//! launches: [`gate`] (the dtypes the device must support, the storage bindings it allows) and
//! [`Geometry::params`] (each uniform word within u32: element count, dimensions, strides,
//! offsets).

use std::collections::BTreeSet;
use std::sync::Arc;

use polycompute_core::expr::Program;
use polycompute_core::plan::{Access, MapLayout, MapSignature};
use polycompute_core::{DType, DeviceBuffer, Error, Layout, Result, Shape};

use super::movement::word;
use crate::buffer::WgpuBuffer;
use crate::codegen::map::{kernel, kernel_over_views, threads};
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::pipeline_cache::KernelKey;

/// Runs `program` over `inputs` broadcast to `shape` (`Op::Map`).
pub(crate) fn run(
    dev: &WgpuDevice,
    program: &Arc<Program>,
    input_shapes: &[Shape],
    shape: &Shape,
    inputs: &[&WgpuBuffer],
) -> Result<WgpuBuffer> {
    gate(dev, program, inputs.len())?;
    let n = shape.numel();
    let out = dev.alloc(program.output_dtype(), n)?;
    if n == 0 {
        return Ok(out);
    }
    let geometry = Geometry::plain(&MapLayout::new(input_shapes, shape))?;
    launch(dev, program, &geometry, n, inputs, &out)?;
    Ok(out)
}

/// Runs `program` over the views `layouts` of `inputs`, broadcast to `shape` (`Op::MapViews`).
pub(crate) fn run_views(
    dev: &WgpuDevice,
    program: &Arc<Program>,
    layouts: &[Layout],
    shape: &Shape,
    inputs: &[&WgpuBuffer],
) -> Result<WgpuBuffer> {
    // A copy of an f64 view (what `contiguous` asks for) moves words: no SHADER_F64 needed.
    if **program == Program::identity(DType::F64) {
        return copy_f64_as_words(dev, &layouts[0], shape, inputs[0]);
    }
    gate(dev, program, inputs.len())?;
    let n = shape.numel();
    let out = dev.alloc(program.output_dtype(), n)?;
    if n == 0 {
        return Ok(out);
    }
    let geometry = Geometry::views(program, layouts, shape, inputs)?;
    launch(dev, program, &geometry, n, inputs, &out)?;
    Ok(out)
}

/// A copy of an f64 view as a u32 map over the view's words: one more axis of two words,
/// strides and offset doubled. No f64 arithmetic, so it runs on adapters without
/// `SHADER_F64` too.
pub(crate) fn copy_f64_as_words(
    dev: &WgpuDevice,
    layout: &Layout,
    shape: &Shape,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let program = Arc::new(Program::identity(DType::U32));
    gate(dev, &program, 1)?;
    let out = dev.alloc(DType::F64, shape.numel())?;
    if shape.numel() == 0 {
        return Ok(out);
    }
    let mut dims = layout.shape.dims().to_vec();
    dims.push(2);
    let mut strides: Vec<isize> = layout.strides.iter().map(|s| s * 2).collect();
    strides.push(1);
    let words = Layout { shape: Shape::new(&dims)?, strides, offset: layout.offset * 2 };
    let mut out_dims = shape.dims().to_vec();
    out_dims.push(2);
    let out_shape = Shape::new(&out_dims)?;
    // Twice the elements as words: the count is checked against u32 with the other words.
    let geometry = Geometry::views(&program, std::slice::from_ref(&words), &out_shape, &[input])?;
    launch(dev, &program, &geometry, out_shape.numel(), &[input], &out)?;
    Ok(out)
}

/// `program` (one input) gathering `input` through `strides` over the output dims `dims`,
/// row-major: the strided copy of a transpose that keeps its contiguous axis last.
pub(crate) fn gather(
    dev: &WgpuDevice,
    program: &Arc<Program>,
    dims: &[usize],
    strides: &[usize],
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    gate(dev, program, 1)?;
    let n = dims.iter().product();
    let out = dev.alloc(program.output_dtype(), n)?;
    if n == 0 {
        return Ok(out);
    }
    let geometry = Geometry::plain(&MapLayout {
        access: vec![Access::Strided],
        dims: dims.to_vec(),
        strides: vec![strides.to_vec()],
    })?;
    launch(dev, program, &geometry, n, &[input], &out)?;
    Ok(out)
}

/// Elementwise conversion to `to`: a one-instruction map (a copy when the dtype is the same).
pub(crate) fn cast(dev: &WgpuDevice, input: &WgpuBuffer, to: DType) -> Result<WgpuBuffer> {
    let from = input.dtype();
    if from == to {
        return super::layout::copy(dev, input);
    }
    let program = Arc::new(Program::cast(from, to));
    let shape = Shape::new(&[input.len()])?;
    run(dev, &program, std::slice::from_ref(&shape), &shape, &[input])
}

/// What the device must allow for `program` over `inputs` buffers, checked before anything
/// is allocated: every dtype the program touches (`Unsupported` naming where it enters the
/// expression, such as an explicit `cast(arg0, f64)`), and one storage binding per input
/// plus the output.
fn gate(dev: &WgpuDevice, program: &Program, inputs: usize) -> Result<()> {
    let dtypes: BTreeSet<DType> = program.insts.iter().map(|i| i.dtype).chain(program.inputs.iter().copied()).collect();
    for d in &dtypes {
        let what = program.first_use_of(*d).map_or_else(|| "map".to_string(), |e| format!("map's {e}"));
        dev.require(*d, &what)?;
    }
    let max_buffers = dev.limits.max_storage_buffers_per_shader_stage as usize;
    if inputs + 1 > max_buffers {
        return Err(Error::Unsupported {
            op: format!(
                "map over {inputs} inputs (max_storage_buffers_per_shader_stage is {max_buffers}; fuse fewer arrays per map)"
            ),
            dtype: program.output_dtype(),
            device: Some(dev.id),
        });
    }
    Ok(())
}

/// How a map's kernel walks its inputs: each input's access class, the output dims the strided
/// ones are walked over, their strides and (views only) their offsets.
struct Geometry {
    access: Vec<Access>,
    /// The kernel's output dimensions (empty when no input is strided).
    dims: Vec<usize>,
    /// `dims.len()` strides per strided input, in argument order, as uniform words.
    strides: Vec<u32>,
    /// The strided inputs' offsets for a map over views; `None` for a plain map, whose
    /// kernel takes none.
    offsets: Option<Vec<usize>>,
}

impl Geometry {
    /// The geometry of core's plan for plain inputs.
    fn plain(plan: &MapLayout) -> Result<Geometry> {
        let strides = plan.strides.iter().flatten().map(|&s| word(s, "map stride")).collect::<Result<_>>()?;
        Ok(Geometry { access: plan.access.clone(), dims: plan.dims.clone(), strides, offsets: None })
    }

    /// The geometry of `program` over the views `layouts` of `inputs`, broadcast to `shape`: a
    /// view that is its whole buffer in order is read as is, any other through its strides
    /// and offset over all of `shape`'s axes.
    fn views(program: &Program, layouts: &[Layout], shape: &Shape, inputs: &[&WgpuBuffer]) -> Result<Geometry> {
        let (n, ndim) = (shape.numel(), shape.ndim());
        let mut access = Vec::with_capacity(layouts.len());
        let mut strides = Vec::new();
        let mut offsets = Vec::new();
        for (l, b) in layouts.iter().zip(inputs) {
            if l.is_plain(b.len() * words_per(b, program)) && l.numel() == n {
                access.push(Access::Same);
                continue;
            }
            access.push(Access::Strided);
            // Right-aligned to the output's axes; 0 where the view broadcasts (numpy rules).
            let lead = ndim - l.shape.ndim();
            for d in 0..ndim {
                let s = if d < lead || l.shape.dims()[d - lead] == 1 { 0 } else { l.strides[d - lead] };
                word(s.unsigned_abs(), "view stride")?;
                // Two's complement: the kernel's u32 arithmetic wraps back into the buffer.
                strides.push(s as i64 as u32);
            }
            offsets.push(l.offset);
        }
        Ok(Geometry { access, dims: shape.dims().to_vec(), strides, offsets: Some(offsets) })
    }

    /// The kernel's uniform words for `n` output elements: `n`, the dims, the strides, then
    /// the offsets (see `codegen::map::param_count` and `param_count_views`).
    fn params(&self, n: usize) -> Result<Vec<u32>> {
        let mut params = vec![word(n, "map elements")?];
        for &d in &self.dims {
            params.push(word(d, "map dimension")?);
        }
        params.extend(&self.strides);
        for &o in self.offsets.iter().flatten() {
            params.push(word(o, "view offset")?);
        }
        Ok(params)
    }
}

/// Launches `program` with `geometry` into `out` (of `n` elements): the one launch of every
/// map. The caller has passed [`gate`].
fn launch(
    dev: &WgpuDevice,
    program: &Arc<Program>,
    geometry: &Geometry,
    n: usize,
    inputs: &[&WgpuBuffer],
    out: &WgpuBuffer,
) -> Result<()> {
    let params = geometry.params(n)?;
    let sig = MapSignature { program: program.clone(), access: geometry.access.clone(), ndim: geometry.dims.len() };
    let kernel = if geometry.offsets.is_some() {
        dev.kernel(KernelKey::MapViews(sig.clone()), || kernel_over_views(&sig, dev.id))?
    } else {
        dev.kernel(KernelKey::Map(sig.clone()), || kernel(&sig, dev.id))?
    };
    let mut buffers: Vec<wgpu::Buffer> = inputs.iter().map(|b| b.raw().clone()).collect();
    buffers.push(out.raw().clone());
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(threads(n, program.output_dtype()), WG) }])
}

/// How many of the program's input elements one buffer element holds (2 when an f64
/// buffer is read as u32 words).
fn words_per(b: &WgpuBuffer, program: &Program) -> usize {
    if b.dtype() == DType::F64 && program.inputs.first() == Some(&DType::U32) {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Geometry words beyond u32 are typed errors, not truncated: a view's offset and stride
    /// (as before) and, new for maps over views and the f64 word copies, the element count
    /// and dimensions (an f64 copy runs over twice its elements as words).
    #[test]
    fn geometry_words_beyond_u32_are_too_large() {
        let big = u32::MAX as usize + 1;
        let views = |offsets: Option<Vec<usize>>, dims: Vec<usize>| Geometry {
            access: vec![Access::Strided],
            strides: vec![1; dims.len()],
            dims,
            offsets,
        };
        let too_large = |r: Result<Vec<u32>>, what: &str| match r {
            Err(Error::TooLarge(m)) => assert!(m.contains(what), "{m}"),
            other => panic!("{what}: {other:?}"),
        };
        too_large(views(Some(vec![big]), vec![4]).params(4), "view offset");
        too_large(views(Some(vec![0]), vec![2, big / 2]).params(big), "map elements");
        too_large(views(None, vec![big, 1]).params(3), "map dimension");
        assert_eq!(views(Some(vec![7]), vec![2, 3]).params(6).unwrap(), vec![6, 2, 3, 1, 1, 7]);
        let plan = MapLayout { access: vec![Access::Strided], dims: vec![2], strides: vec![vec![big]] };
        assert!(matches!(Geometry::plain(&plan), Err(Error::TooLarge(m)) if m.contains("map stride")));
    }
}
