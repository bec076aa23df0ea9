//! [`CpuDevice`]: the open CPU device, which hands each op to the module that runs it.
//! Buffers, lengths and the op itself were checked before `execute` runs, by core's
//! blanket `DeviceBackend` implementation over [`BackendDevice`].

use polycompute_core::{BackendDevice, DeviceInfo, DeviceToken, HostSlice, HostVec, Op, Result};

use crate::map::PlanCache;
use crate::storage::CpuBuffer;
use crate::{fill, layout, map, matmul, reduce};

/// The open CPU device. Holds the cache of prepared map programs.
pub struct CpuDevice {
    info: DeviceInfo,
    token: DeviceToken,
    plans: PlanCache,
}

impl CpuDevice {
    /// A device described by `info`; its buffers are its own (another `CpuDevice` refuses
    /// them).
    pub fn new(info: DeviceInfo) -> CpuDevice {
        CpuDevice { info, token: DeviceToken::fresh(), plans: PlanCache::default() }
    }

    fn run(&self, op: &Op, data: &[HostSlice<'_>]) -> Result<HostVec> {
        let device = self.info.id();
        Ok(match op {
            Op::Map { program, input_shapes, shape } => {
                let plan = self.plans.get(op, program, input_shapes, shape)?;
                map::run(&plan, data, shape.numel())
            }
            Op::Reduce { kind, axis, shape } => reduce::reduce(*kind, *axis, shape, data[0]),
            Op::Matmul { lhs, rhs } => matmul::matmul(lhs, rhs, data[0], data[1], device)?,
            Op::Copy => layout::copy(data[0]),
            Op::Transpose { shape, perm } => layout::transpose(data[0], shape, perm),
            Op::Cast { to } => layout::cast(data[0], *to),
            Op::Fill { fill, dtype, len } => fill::fill(*fill, *dtype, *len, device)?,
            // The ops of issue 14 (views, data movement, scans, sorting): see `views.rs`.
            _ => crate::views::run(self, op, data)?,
        })
    }
}

impl BackendDevice for CpuDevice {
    type Buffer = CpuBuffer;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn token(&self) -> DeviceToken {
        self.token
    }

    fn upload(&self, data: HostSlice<'_>) -> Result<CpuBuffer> {
        Ok(CpuBuffer::new(data.to_host_vec(), self.token))
    }

    fn download(&self, buffer: &CpuBuffer) -> Result<HostVec> {
        Ok(buffer.data().clone())
    }

    fn execute(&self, op: &Op, inputs: &[&CpuBuffer]) -> Result<CpuBuffer> {
        let data: Vec<HostSlice<'_>> = inputs.iter().map(|b| b.as_slice()).collect();
        Ok(CpuBuffer::new(self.run(op, &data)?, self.token))
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}
