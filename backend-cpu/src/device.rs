//! [`CpuDevice`]: the open CPU device, which checks each op against its buffers and hands
//! it to the module that runs it.

use polycompute_core::{BufferRef, DType, DeviceBackend, DeviceInfo, Error, HostSlice, HostVec, Op, Result, Shape};

use crate::map::PlanCache;
use crate::storage::{host, CpuBuffer};
use crate::{fill, layout, map, matmul, reduce};

/// The open CPU device. Holds the cache of prepared map programs.
pub struct CpuDevice {
    info: DeviceInfo,
    plans: PlanCache,
}

impl CpuDevice {
    /// A device described by `info`.
    pub fn new(info: DeviceInfo) -> CpuDevice {
        CpuDevice { info, plans: PlanCache::default() }
    }

    /// Checks the buffers against the shapes the op declares (so that no kernel can index
    /// out of bounds, whoever calls `execute`) and the op itself with [`Op::output`].
    fn check(&self, op: &Op, data: &[HostSlice<'_>]) -> Result<()> {
        let flat: Vec<Shape>;
        let shapes: Vec<&Shape> = match op {
            Op::Map { input_shapes, .. } => input_shapes.iter().collect(),
            Op::Reduce { shape, .. } | Op::Transpose { shape, .. } => vec![shape],
            Op::Matmul { lhs, rhs } => vec![lhs, rhs],
            _ => {
                flat = data.iter().map(|d| Shape::from(&[d.len()][..])).collect();
                flat.iter().collect()
            }
        };
        if shapes.len() != data.len() {
            return Err(Error::InvalidShape(format!(
                "{} takes {} input(s), got {}",
                op.name(),
                shapes.len(),
                data.len()
            )));
        }
        for (d, s) in data.iter().zip(&shapes) {
            if d.len() != s.numel() {
                return Err(Error::LengthMismatch { len: d.len(), shape: s.dims().to_vec(), expected: s.numel() });
            }
        }
        let typed: Vec<(DType, &Shape)> = data.iter().zip(shapes).map(|(d, s)| (d.dtype(), s)).collect();
        op.output(&typed)?;
        Ok(())
    }
}

impl DeviceBackend for CpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn upload(&self, data: HostSlice<'_>) -> Result<BufferRef> {
        Ok(std::sync::Arc::new(CpuBuffer(data.to_host_vec())))
    }

    fn download(&self, buffer: &BufferRef) -> Result<HostVec> {
        Ok(polycompute_core::backend::downcast_buffer::<CpuBuffer>(buffer, &self.info)?.0.clone())
    }

    fn execute(&self, op: &Op, inputs: &[&BufferRef]) -> Result<BufferRef> {
        let data = inputs.iter().map(|b| host(b, &self.info)).collect::<Result<Vec<_>>>()?;
        self.check(op, &data)?;
        let device = self.info.id();
        match op {
            Op::Map { program, input_shapes, shape } => {
                let plan = self.plans.get(op, program, input_shapes, shape)?;
                Ok(map::run(&plan, &data, shape.numel()))
            }
            Op::Reduce { kind, axis, shape } => Ok(reduce::reduce(*kind, *axis, shape, data[0])),
            Op::Matmul { lhs, rhs } => matmul::matmul(lhs, rhs, data[0], data[1], &device),
            Op::Copy => Ok(layout::copy(data[0])),
            Op::Transpose { shape, perm } => Ok(layout::transpose(data[0], shape, perm)),
            Op::Cast { to } => Ok(layout::cast(data[0], *to)),
            Op::Fill { fill, dtype, len } => fill::fill(*fill, *dtype, *len, &device),
            _ => Err(Error::Unsupported {
                op: op.name().into(),
                dtype: data.first().map_or(DType::F32, |d| d.dtype()),
                device,
            }),
        }
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}
