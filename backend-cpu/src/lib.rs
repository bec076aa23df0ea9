//! polycompute-cpu: the CPU backend (rayon).

use std::any::Any;
use std::sync::Arc;

use polycompute_core::backend::downcast_buffer;
use polycompute_core::registry::BACKEND_FACTORIES;
use polycompute_core::{
    Backend, BackendKind, BufferRef, DType, DeviceBackend, DeviceBuffer, DeviceInfo, Error, HostSlice, HostVec, Op,
    Result,
};

#[linkme::distributed_slice(BACKEND_FACTORIES)]
static CPU_BACKEND: fn() -> Arc<dyn Backend> = || Arc::new(CpuBackend);

/// The CPU backend: one device, `cpu:0`, using every core through rayon.
#[derive(Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        Ok(vec![device_info()])
    }
    fn open(&self, ordinal: usize) -> Result<Arc<dyn DeviceBackend>> {
        if ordinal != 0 {
            return Err(Error::NoSuchDevice { kind: BackendKind::Cpu, ordinal, count: 1 });
        }
        Ok(Arc::new(CpuDevice { info: device_info() }))
    }
}

fn device_info() -> DeviceInfo {
    let threads = rayon::current_num_threads();
    DeviceInfo {
        kind: BackendKind::Cpu,
        ordinal: 0,
        name: format!("{} CPU ({threads} threads)", std::env::consts::ARCH),
        is_cpu: true,
        memory_bytes: None,
        details: vec![("threads".into(), threads.to_string())],
    }
}

/// A CPU buffer: host memory.
#[derive(Debug)]
pub struct CpuBuffer(pub HostVec);

impl DeviceBuffer for CpuBuffer {
    fn dtype(&self) -> DType {
        self.0.dtype()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The open CPU device.
pub struct CpuDevice {
    info: DeviceInfo,
}

impl DeviceBackend for CpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn upload(&self, data: HostSlice<'_>) -> Result<BufferRef> {
        Ok(Arc::new(CpuBuffer(data.to_host_vec())))
    }
    fn download(&self, buffer: &BufferRef) -> Result<HostVec> {
        Ok(downcast_buffer::<CpuBuffer>(buffer, &self.info)?.0.clone())
    }
    fn execute(&self, op: &Op, _inputs: &[&BufferRef]) -> Result<BufferRef> {
        Err(Error::Unsupported { op: op.name().into(), dtype: DType::F32, device: self.info.id() })
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}
