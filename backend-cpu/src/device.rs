//! [`CpuDevice`]: the open CPU device, which hands each op to `ops::execute`.
//! Buffers, lengths and the op itself were checked before `execute` runs, by core's
//! blanket `DeviceBackend` implementation over [`BackendDevice`].

use std::sync::Arc;

use polycompute_core::{BackendDevice, DeviceInfo, DeviceToken, HostSlice, HostVec, MemoryStats, Op, Result};

use crate::buffer::CpuBuffer;
use crate::memory::{self, CacheStats, Pool};
use crate::ops::{self, map::PlanCache};

/// The open CPU device. Holds the cache of prepared map programs and the caching
/// allocator its buffers live in.
pub struct CpuDevice {
    info: DeviceInfo,
    token: DeviceToken,
    plans: PlanCache,
    pool: Arc<Pool>,
}

impl CpuDevice {
    /// A device described by `info`; its buffers are its own (another `CpuDevice` refuses
    /// them). Its allocator caches up to 1 GiB of freed buffers (less on a machine with
    /// under 4 GiB of memory).
    pub fn new(info: DeviceInfo) -> CpuDevice {
        CpuDevice::with_cache_limit(info, memory::default_limit())
    }

    /// A device whose allocator caches at most `limit_bytes` of freed buffers (0: none).
    ///
    /// ```
    /// use polycompute_cpu::{CpuBackend, CpuDevice};
    /// use polycompute_core::Backend;
    ///
    /// let info = CpuBackend.devices()?.remove(0);
    /// let device = CpuDevice::with_cache_limit(info, 64 << 20);
    /// assert_eq!(device.cache_stats().limit_bytes, 64 << 20);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn with_cache_limit(info: DeviceInfo, limit_bytes: usize) -> CpuDevice {
        let pool = Arc::new(Pool::new(info.id(), limit_bytes));
        CpuDevice { info, token: DeviceToken::fresh(), plans: PlanCache::default(), pool }
    }

    /// What the caching allocator holds and has done: cached and live bytes, hits, misses,
    /// bytes released to the system.
    pub fn cache_stats(&self) -> CacheStats {
        self.pool.stats()
    }

    /// Hands every cached (free) buffer back to the system; live buffers are untouched.
    pub fn release_cached(&self) {
        self.pool.release_cached();
    }

    /// The cache of prepared map programs.
    pub(crate) fn plans(&self) -> &PlanCache {
        &self.plans
    }

    /// The caching allocator every buffer of this device lives in.
    pub(crate) fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }
}

impl Drop for CpuDevice {
    /// The cached blocks go back to the system; blocks of buffers that outlive the device
    /// follow when those are dropped.
    fn drop(&mut self) {
        self.pool.close();
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
        Ok(CpuBuffer::new(ops::copy(data, &self.pool)?, self.token))
    }

    fn download(&self, buffer: &CpuBuffer) -> Result<HostVec> {
        Ok(buffer.to_host_vec())
    }

    fn execute(&self, op: &Op, inputs: &[&CpuBuffer]) -> Result<CpuBuffer> {
        // Ops take at most two inputs except maps; a small array on the stack covers the
        // common case without a heap allocation per call.
        let out = if inputs.len() <= 4 {
            let mut data = [HostSlice::F32(&[]); 4];
            for (d, b) in data.iter_mut().zip(inputs) {
                *d = b.as_slice();
            }
            ops::execute(self, op, &data[..inputs.len()])?
        } else {
            let data: Vec<HostSlice<'_>> = inputs.iter().map(|b| b.as_slice()).collect();
            ops::execute(self, op, &data)?
        };
        Ok(CpuBuffer::new(out, self.token))
    }

    fn map_reduce(&self, map: &Op, reduce: &Op, inputs: &[&CpuBuffer]) -> Result<Option<CpuBuffer>> {
        let data: Vec<HostSlice<'_>> = inputs.iter().map(|b| b.as_slice()).collect();
        Ok(ops::map_reduce(self, map, reduce, &data)?.map(|out| CpuBuffer::new(out, self.token)))
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn memory_stats(&self) -> Option<MemoryStats> {
        Some(self.pool.stats())
    }

    fn release_cached_memory(&self) {
        self.pool.release_cached();
    }
}
